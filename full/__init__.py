"""The full level: the full-matrix model trained by gradient descent in JAX. Each setting's package
loads on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(__name__, submodules=["engine", "icl", "jsl", "mim"])
