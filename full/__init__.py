"""The full level: the full-matrix model trained by gradient descent in JAX."""

from . import jsl

__all__ = ["jsl"]
