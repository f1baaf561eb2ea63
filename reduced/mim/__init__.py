"""Reduced MIM: per-query-class dynamics of the FP and PP correlations (Lemmas 5.1, 5.2), gradients from sympy."""

from . import classes, symbolic
from .dynamics import APPROXIMATIONS, approximations, check, label, simulate

__all__ = ["simulate", "check", "approximations", "label", "APPROXIMATIONS", "classes", "symbolic"]
