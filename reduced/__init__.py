"""The reduced level: scalar recurrences whose gradients sympy derives. Each setting's package
loads on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, submodules=["flow", "gd", "icl", "jsl", "mim"])
