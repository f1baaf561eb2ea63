"""Reduced MIM: per-query-class dynamics of the FP and PP correlations (Lemmas 5.1, 5.2), gradients
from sympy; with several clusters and B free, per query and joint type (`joint`)."""

from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: eta traced, shapes static)

from . import classes, symbolic
from .dynamics import APPROXIMATIONS, Indices, approximations, label, pp_corr, validate_run_options
from .simulation import simulate

__all__ = [
    "simulate",
    "pp_corr",
    "Indices",
    "validate_run_options",
    "approximations",
    "label",
    "APPROXIMATIONS",
    "classes",
    "symbolic",
]
