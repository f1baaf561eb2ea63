"""Reduced MIM: per-query-class dynamics of the FP and PP correlations (Lemmas 5.1, 5.2), gradients
from sympy; with several clusters and B free, per query and joint type (`joint`). What the level
accepts is in `reduced.mim.spec`; the names below load on first use (`dynsim.lazy`)."""

from dynsim.lazy import attach

__getattr__, __dir__, __all__ = attach(
    __name__,
    submodules=["cells", "classes", "dynamics", "flow", "joint", "simulation", "spec", "symbolic"],
    attrs={
        "simulation": ["simulate", "simulate_with_first_step"],
        "dynamics": ["Indices", "pp_corr", "validate_run_options"],
        "spec": ["APPROXIMATIONS", "approximations", "label"],
    },
)
