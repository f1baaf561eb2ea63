"""A claim's statistic: a measured value with its uncertainty, and the one rule that reads a verdict
from it (docs/claims.md, "The one verdict rule").

A `Statistic` is a point value and an interval [low, high] that holds the truth with the stated
confidence: exact (low = value = high: an enumeration, an exact probability, a deterministic run),
the Student-t interval of a mean over independent runs (`mean`), a large-sample normal interval
(`normal`), the interval of a fitted slope (`slope`), or the Clopper-Pearson interval of a
fraction of yes/no outcomes (`proportion`). `decide(stat, relation, threshold)` is the rule every
claim of every setting goes through: the statement `value relation threshold`

- holds when the whole interval lies on the statement's side,
- fails only when the whole interval lies on the other side,
- is inconclusive otherwise (the data decide neither way), and missing when anything is NaN.

An exact statistic reduces the rule to `value relation threshold`.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np

HOLDS, FAILS, INCONCLUSIVE, MISSING = "holds", "fails", "inconclusive", "missing"
OUTCOMES = (HOLDS, FAILS, INCONCLUSIVE, MISSING)
RELATIONS = ("<=", "<", ">=", ">", "==")
EXACT = "exact"


@dataclasses.dataclass(frozen=True)
class Statistic:
    """A measured value and an interval [low, high] around it; `how` says where the interval
    comes from ("exact", "95% Student-t over 4 seeds", ...), `decide` what would narrow it (shown
    when the interval leaves a statement undecided)."""

    value: float
    low: float
    high: float
    how: str = EXACT
    decide: str = ""

    def __post_init__(self) -> None:
        for name in ("value", "low", "high"):
            object.__setattr__(self, name, _float(getattr(self, name)))
        if self.low > self.high:
            raise ValueError(f"Statistic interval [{self.low}, {self.high}] is reversed")

    @property
    def exact(self) -> bool:
        """True when the interval is the point (no uncertainty to carry)."""
        return self.how == EXACT

    @property
    def missing(self) -> bool:
        return any(math.isnan(x) for x in (self.value, self.low, self.high))

    def describe(self) -> str:
        """'0.42' when exact, else '-0.42 [-1.29, 0.445] (95% slope interval over 3 rungs)'."""
        if self.exact:
            return _fmt(self.value)
        return f"{_fmt(self.value)} [{_fmt(self.low)}, {_fmt(self.high)}] ({self.how})"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def exact(value: float) -> Statistic:
    """A value known without sampling error (NaN stays NaN: missing)."""
    v = _float(value)
    return Statistic(v, v, v)


def of(measured) -> Statistic:
    """`measured` as a Statistic: itself, or an exact one of a number."""
    return measured if isinstance(measured, Statistic) else exact(measured)


def mean(samples: Sequence[float], confidence: float = 0.95, unit: str = "seeds") -> Statistic:
    """The mean of independent `samples` and its two-sided Student-t `confidence` interval (n - 1
    degrees of freedom). Fewer than two samples, or a NaN among them, give a missing interval."""
    x = np.asarray(samples, dtype=np.float64).ravel()
    _check_confidence(confidence)
    centre = float(np.mean(x)) if x.size else math.nan
    how = f"{confidence:.0%} Student-t over {x.size} {unit}"
    more = f"more {unit}"
    if x.size < 2 or np.isnan(x).any():
        return Statistic(centre, math.nan, math.nan, how, more)
    from scipy.stats import t as student_t  # light callers (the table, the checks) never need it

    half = float(student_t.ppf(0.5 + confidence / 2, x.size - 1)) * float(
        np.std(x, ddof=1) / math.sqrt(x.size)
    )
    return Statistic(centre, centre - half, centre + half, how, more)


def normal(
    value: float, se: float, confidence: float = 0.95, how: str = "", decide: str = ""
) -> Statistic:
    """`value` with its two-sided normal `confidence` interval from the standard error `se` (a
    large-sample mean: a test-set error rate, a Monte Carlo estimate); `how` names the source."""
    _check_confidence(confidence)
    from scipy.stats import norm

    half = float(norm.ppf(0.5 + confidence / 2)) * float(se)
    return Statistic(value, value - half, value + half, f"{confidence:.0%} normal, {how}", decide)


def proportion(hits: Sequence[bool], confidence: float = 0.95, unit: str = "seeds") -> Statistic:
    """The fraction of independent yes/no outcomes `hits` and its two-sided Clopper-Pearson (exact
    binomial) `confidence` interval; no outcome gives a missing one."""
    x = np.asarray(hits, dtype=bool).ravel()
    _check_confidence(confidence)
    n, k = x.size, int(np.sum(x))
    how = f"{confidence:.0%} Clopper-Pearson over {n} {unit} ({k} yes)"
    if n == 0:
        return Statistic(math.nan, math.nan, math.nan, how, f"{unit}")
    from scipy.stats import beta

    tail = (1.0 - confidence) / 2
    low = float(beta.ppf(tail, k, n - k + 1)) if k > 0 else 0.0
    high = float(beta.ppf(1.0 - tail, k + 1, n - k)) if k < n else 1.0
    return Statistic(k / n, low, high, how, f"more {unit}")


def slope(trend, unit: str = "sizes") -> Statistic:
    """The slope of a `dynsim.trends.Trend` and its interval (infinite on two points)."""
    how = f"{trend.confidence:.0%} slope interval over {trend.n} {unit}"
    return Statistic(trend.slope, trend.slope_low, trend.slope_high, how, f"more {unit}")


def largest(values: Sequence[float], relative: Sequence[float], how: str) -> Statistic:
    """The largest of `values`, each a leading-order quantity known to within its relative
    correction k >= 0 (the size of its next order): the truth of each lies in [v / (1 + k), v (1 +
    k)], so the largest lies in [max v / (1 + k), max v (1 + k)]."""
    v, k = np.asarray(values, float), np.asarray(relative, float)
    if v.size == 0 or v.shape != k.shape or np.any(k < 0):
        raise ValueError("largest needs as many relative corrections >= 0 as values, at least one")
    return Statistic(float(np.max(v)), float(np.max(v / (1 + k))), float(np.max(v * (1 + k))), how)


def decide(stat: Statistic, relation: str, threshold: float) -> str:
    """The one verdict rule: HOLDS when [low, high] lies wholly on the side of `threshold` that
    `value relation threshold` states, FAILS when it lies wholly on the other side, INCONCLUSIVE
    otherwise, MISSING when the statistic or the threshold is NaN."""
    if relation not in RELATIONS:
        raise ValueError(f"relation = {relation!r} is invalid: must be one of {RELATIONS}")
    threshold = _float(threshold)
    if stat.missing or math.isnan(threshold):
        return MISSING
    lo, hi = stat.low, stat.high
    holds, fails = {
        "<=": (hi <= threshold, lo > threshold),
        "<": (hi < threshold, lo >= threshold),
        ">=": (lo >= threshold, hi < threshold),
        ">": (lo > threshold, hi <= threshold),
        "==": (lo == threshold == hi, hi < threshold or lo > threshold),
    }[relation]
    return HOLDS if holds else FAILS if fails else INCONCLUSIVE


def combine(outcomes: Sequence[str]) -> str:
    """The outcome of a conjunction: FAILS when any part fails, MISSING when none fails and one
    is missing, INCONCLUSIVE when none fails or is missing and one is undecided, HOLDS when all
    hold."""
    for outcome in (FAILS, MISSING, INCONCLUSIVE):
        if outcome in outcomes:
            return outcome
    return HOLDS


def undecided(stat: Statistic, relation: str, threshold: float) -> str:
    """Why `stat` decides nothing about `value relation threshold`: its interval and what would
    narrow it."""
    return (
        f"the interval [{_fmt(stat.low)}, {_fmt(stat.high)}] of {_fmt(stat.value)} ({stat.how}) "
        f"lies on both sides of {relation} {_fmt(threshold)}"
        + (f": {stat.decide} would decide it" if stat.decide else "")
    )


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence = {confidence} is invalid: must lie strictly between 0 and 1")


def _float(v) -> float:
    return math.nan if v is None else float(v)


def _fmt(v: float) -> str:
    return f"{v:.4g}"
