"""The reduced level: scalar recurrences whose gradients sympy derives."""

from . import jsl

__all__ = ["jsl"]
