"""The checker's tolerance terms: each a small function returning a `Term` (the per-step or
per-entry tolerance and its one-line reason), summed by `combine`.

`rounding` holds every comparison (deterministic runs: float rounding, `rounding_tolerance`);
`monte_carlo_band` runs carrying standard errors; `approximation` a named approximation's stated
tolerance; `allowance` a truncated sum's bound, declared by the setting (`Checks.allowance`).
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from scipy.stats import t as student_t

# default for a named approximation: relative to the observable's largest magnitude
APPROXIMATION_TOLERANCE = 0.05
# constant of the rounding model: covers the few roundings per term (exp, powers, softplus)
SAFETY = 10.0


def unit_roundoff(dtype: str) -> float:
    """u = 2^-53 for float64, 2^-24 for float32."""
    return float(np.finfo(np.dtype(dtype)).eps) / 2


def term_count(t) -> int:
    """Number of terms the run sums per step (configurations, or the batch): what rounding grows
    with."""
    m = t.meta
    truncation = m.get("truncation") or {}
    for value in (m.get("configurations"), truncation.get("configurations"), m.get("batch_size")):
        if value:
            return int(value)
    return 1


def rounding_tolerance(steps: np.ndarray, scale: float, terms: int, dtype: str) -> np.ndarray:
    """Per-step float rounding tolerance: SAFETY (t+1) sqrt(M) u max(1, scale).

    Each step each level sums its own expectation (M = the larger of the two term counts); the
    probabilistic rounding model (Higham and Mary 2019) puts a sum's relative error at about
    sqrt(M) u, and while GD is stable each step's error is at most carried forward, so t steps add
    up to t times that. A model of typical rounding, not a worst-case bound: an unstable run
    (amplified errors) fails it, and the report says so.
    """
    return SAFETY * (steps + 1.0) * math.sqrt(terms) * unit_roundoff(dtype) * max(1.0, scale)


def t_quantile(confidence: float, comparisons: int, dof: int) -> float:
    """Two-sided Student-t quantile at family-wise `confidence` over `comparisons` (Bonferroni)."""
    tail = (1.0 - confidence) / (2.0 * comparisons)
    return float(student_t.ppf(1.0 - tail, dof))


class Term(NamedTuple):
    """One tolerance term: per-step (first axis: the common steps) or per-entry, and why."""

    tolerance: Any  # an array, or a float that holds at every entry
    reason: str


def rounding(steps: np.ndarray, scale: float, terms: int, dtype: str) -> Term:
    """Float rounding at each recorded step (`rounding_tolerance`): held by every comparison."""
    reason = (
        f"{dtype} rounding: {SAFETY:g} (t+1) sqrt(M) u max(1, scale), M = {terms} terms per "
        f"step, u = {unit_roundoff(dtype):.2e}"
    )
    return Term(rounding_tolerance(steps, scale, terms, dtype), reason)


def monte_carlo_band(se, replicates: int, confidence: float, steps: int, entries: int) -> Term:
    """t_{R-1} x se: the Student-t quantile at family-wise `confidence` over steps x entries
    comparisons (Bonferroni), R = `replicates`, times the standard error of the mean `se`."""
    z = t_quantile(confidence, steps * entries, replicates - 1)
    return Term(
        z * se,
        f"Monte Carlo band: t quantile {z:.2f} ({replicates - 1} dof, "
        f"{confidence:.1%} family-wise over {steps} steps x {entries} compared "
        f"entries, Bonferroni) x standard error of the mean of {replicates} runs, "
        "plus rounding",
    )


def approximation(name: str, scale: float, approx: str, fraction: float) -> Term:
    """A named approximation's stated tolerance: `fraction` of `scale`, the observable's largest
    magnitude (kept above 0, so that equal runs pass where the observable is 0)."""
    return Term(
        fraction * max(scale, 1e-300),
        f"approximation {approx!r}: |difference| <= {fraction:g} x max |{name}| = "
        f"{fraction * scale:.3g} (a stated tolerance, not a rounding bound)",
    )


def allowance(bound) -> Term:
    """A truncated reduced sum's bound at each step, as a setting's `Checks.allowance` gives it."""
    return Term(bound, "plus the truncation bound of the reduced sum accumulated over the steps")


def combine(
    shape: tuple, base: Term, regime: Term | None = None, extra: Term | None = None
) -> Term:
    """The tolerance of an observable of `shape` (first axis: the steps): base + extra + regime,
    summed in that order, a per-step term broadcast over the entries. The reason: the regime's (a
    Monte Carlo band, which says "plus rounding", or an approximation, whose stated tolerance
    dwarfs rounding) in place of the base's, then the extra term's."""
    tol = _per_step(base.tolerance, len(shape))
    if extra is not None:
        tol = tol + _per_step(extra.tolerance, len(shape))
    tol = np.broadcast_to(tol, shape)
    if regime is not None:
        tol = tol + regime.tolerance
    reasons = [(regime or base).reason] + ([extra.reason] if extra is not None else [])
    return Term(tol, "; ".join(reasons))


def _per_step(tolerance, ndim: int) -> np.ndarray:
    """A per-step tolerance (or a scalar) shaped to broadcast over the entries of each step."""
    tolerance = np.asarray(tolerance, float)
    return tolerance.reshape(tolerance.shape + (1,) * (ndim - max(tolerance.ndim, 1)))
