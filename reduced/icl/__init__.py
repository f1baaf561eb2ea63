"""Reduced ICL: the scalar u = w22^PV and the diagonal a of W11^KQ, by GD or gradient flow, their
gradients derived in sympy from the reduced loss (`symbolic`); it takes no options beyond the
config and the flow's. The names below load on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    submodules=["simulation", "symbolic"],
    attrs={"simulation": ["simulate"], "symbolic": ["derive", "render"]},
)
