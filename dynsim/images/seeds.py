"""Seeds of the image experiments: the one seed interval (`dynsim.statistic.mean`: the seed mean and
its two-sided Student-t 95 % interval, n - 1 degrees of freedom) and the pairing of runs seed by
seed (same seed: same split, same permutation, same masks), from which every claim of
docs/images.md takes its statistic."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from dynsim import statistic
from dynsim.statistic import Statistic

__all__ = ["mean", "paired", "CONFIDENCE", "UNIT"]

CONFIDENCE = 0.95  # two-sided, of every seed interval
UNIT = "seeds"


def mean(values) -> Statistic:
    """The seed mean of `values` and its interval; missing (NaN ends) with fewer than 2 seeds or a
    NaN among them."""
    return statistic.mean(np.asarray(values, dtype=np.float64).ravel(), CONFIDENCE, UNIT)


def paired(runs: Mapping[str, object]) -> tuple[dict[str, np.ndarray], str]:
    """The runs (name -> per-seed values) as float arrays, and why they give no paired interval
    ("" when they do): seeds not paired (different counts), fewer than 2 seeds, or a NaN."""
    arrays = {name: np.asarray(v, dtype=np.float64).ravel() for name, v in runs.items()}
    sizes = {a.size for a in arrays.values()}
    if len(sizes) > 1:
        counts = ", ".join(f"{a.size} {name}" for name, a in arrays.items())
        return arrays, f"the seeds are not paired ({counts})"
    n = sizes.pop() if sizes else 0
    if n < 2:
        return arrays, f"{n} seed{'s' * (n != 1)}: the interval needs at least 2 seeds"
    nan = [f"{name} {a.tolist()}" for name, a in arrays.items() if np.isnan(a).any()]
    if nan:
        return arrays, "a NaN among the seeds: " + "; ".join(nan)
    return arrays, ""
