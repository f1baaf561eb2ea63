"""The full level: the full-matrix model trained by gradient descent in JAX."""

from . import jsl, mim

__all__ = ["jsl", "mim"]
