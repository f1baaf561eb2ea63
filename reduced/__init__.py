"""The reduced level: scalar recurrences whose gradients sympy derives."""

from . import jsl, mim

__all__ = ["jsl", "mim"]
