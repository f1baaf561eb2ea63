"""Full JSL: the D x D attention matrix A and v in R^d trained by gradient descent (flax + optax)."""

from . import observables, population
from .module import PositionalAttentionViT
from .training import check, initial_params, model_for, optimizer, simulate
from . import realistic  # after .training: realistic imports it
from . import fig2, glm, transfer  # after .realistic: they use it

__all__ = ["simulate", "check", "PositionalAttentionViT", "model_for", "optimizer", "initial_params", "observables", "population",
           "realistic", "glm", "transfer", "fig2"]
