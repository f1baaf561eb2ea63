"""Full JSL: the D x D attention matrix A and v in R^d trained by gradient descent (flax +
optax)."""

from dynsim.jsl import traced  # noqa: F401 (JSLConfig as a pytree: numbers traced, shapes static)

from . import fig2, glm, observables, population, realistic, sampling, transfer
from .module import PositionalAttentionViT
from .simulation import simulate, validate_run_options
from .training import initial_params, model_for, optimizer

__all__ = [
    "simulate",
    "validate_run_options",
    "PositionalAttentionViT",
    "model_for",
    "optimizer",
    "initial_params",
    "observables",
    "population",
    "realistic",
    "sampling",
    "glm",
    "transfer",
    "fig2",
]
