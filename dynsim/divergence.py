"""The divergence flag of a run: meta["nonfinite_from_step"], the first recorded step with a non-finite record."""

from __future__ import annotations

import warnings
from typing import Mapping

import numpy as np


def nonfinite(records: Mapping, steps: np.ndarray) -> np.ndarray:
    """(len(steps),) True at the recorded steps where some record (recorded steps on its leading axis) is not finite."""
    bad = np.zeros(np.shape(steps), bool)
    for v in records.values():
        v = np.asarray(v)
        bad |= ~np.isfinite(v).reshape(v.shape[0], -1).all(axis=1)
    return bad


def flag(bad: np.ndarray, steps: np.ndarray, meta: dict, level: str, eta, stacklevel: int = 1) -> None:
    """Set meta["nonfinite_from_step"] to the first step where `bad`, with a RuntimeWarning naming the level.

    stacklevel counts from the caller of `flag` (1: the caller itself), as `warnings.warn` counts from itself."""
    if np.any(bad):
        first = int(steps[np.argmax(bad)])
        meta["nonfinite_from_step"] = first
        warnings.warn(f"{level} trajectory is not finite from step {first}: the run diverged; lower eta (now {eta})",
                      RuntimeWarning, stacklevel=stacklevel + 1)
