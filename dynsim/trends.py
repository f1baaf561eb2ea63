"""Trends over a ladder of sizes: an asymptotic claim ("o(1)", "decreasing in P", "grows like log
P") is judged on the fitted slope of y against x (either on a log scale) and its confidence
interval, not at one size.

`fit(x, y)` is ordinary least squares (scipy.stats.linregress) with the two-sided Student-t interval
of the slope on n - 2 degrees of freedom; with n = 2 points the interval is infinite (no claim can
be judged from two points).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Sequence

import numpy as np
from scipy import stats


@dataclasses.dataclass(frozen=True)
class Trend:
    """y ~ intercept + slope x on the stated scales, with the slope's two-sided `confidence`
    interval."""

    x: tuple[float, ...]
    y: tuple[float, ...]
    logx: bool
    logy: bool
    slope: float
    intercept: float
    slope_low: float
    slope_high: float
    confidence: float

    @property
    def n(self) -> int:
        return len(self.x)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def describe(self) -> str:
        xs = "log x" if self.logx else "x"
        ys = "log y" if self.logy else "y"
        return (
            f"{ys} = {self.intercept:.4g} + {self.slope:.4g} {xs} over {self.n} sizes, slope "
            f"{self.confidence:.0%} interval [{self.slope_low:.4g}, {self.slope_high:.4g}]"
        )


def fit(
    x: Sequence[float],
    y: Sequence[float],
    *,
    logx: bool = False,
    logy: bool = False,
    confidence: float = 0.95,
) -> Trend:
    """Least-squares line through (x, y) (natural logs where asked) and its slope's confidence
    interval."""
    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if xa.shape != ya.shape or xa.ndim != 1:
        raise ValueError(f"x and y must be 1-D of one length, got shapes {xa.shape} and {ya.shape}")
    if xa.size < 2:
        raise ValueError(f"a trend needs at least 2 sizes, got {xa.size}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence = {confidence} is invalid: must lie strictly between 0 and 1")
    for name, a, on in (("x", xa, logx), ("y", ya, logy)):
        if on and np.any(a <= 0):
            raise ValueError(f"{name} must be > 0 on a log scale, got {a.tolist()}")
    u = np.log(xa) if logx else xa
    v = np.log(ya) if logy else ya
    res = stats.linregress(u, v)
    if xa.size > 2:
        half = float(stats.t.ppf(0.5 + confidence / 2, xa.size - 2)) * float(res.stderr)
    else:
        half = math.inf
    return Trend(
        tuple(xa.tolist()),
        tuple(ya.tolist()),
        logx,
        logy,
        float(res.slope),
        float(res.intercept),
        float(res.slope) - half,
        float(res.slope) + half,
        confidence,
    )
