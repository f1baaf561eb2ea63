"""The divergence flag of a run: meta["nonfinite_from_step"], the first step whose state is not
finite (checked after every step by `dynsim.recording.run`), else the first recorded step with a
non-finite record."""

from __future__ import annotations

import warnings
from typing import Mapping, MutableMapping, Optional

import numpy as np

# the record of the first step whose state is not finite (-1: none), `recording.run`
NONFINITE = "nonfinite_step"


def nonfinite(records: Mapping, steps: np.ndarray) -> np.ndarray:
    """(len(steps),) True at the recorded steps where some record (recorded steps on its leading
    axis) is not finite."""
    bad = np.zeros(np.shape(steps), bool)
    for k, v in records.items():
        if k == NONFINITE:
            continue
        v = np.asarray(v)
        bad |= ~np.isfinite(v).reshape(v.shape[0], -1).all(axis=1)
    return bad


def take(records: MutableMapping) -> Optional[int]:
    """Remove the NONFINITE record from `records` (one run, or runs on any axes) and return the
    first step at which a run's state stopped being finite (the earliest over runs); None when no
    run diverged or it was not tracked."""
    exact = records.pop(NONFINITE, None)
    if exact is None:
        return None
    exact = np.asarray(exact)
    hit = exact[exact >= 0]
    return int(hit.min()) if hit.size else None


def earliest(values: np.ndarray, axis: int = -1) -> np.ndarray:
    """The NONFINITE records of R runs (R along `axis`) as one: each record's earliest step >= 0, -1
    where none."""
    values = np.asarray(values)
    hit = values >= 0
    return np.where(hit.any(axis), np.where(hit, values, np.iinfo(values.dtype).max).min(axis), -1)


def flag(
    bad: np.ndarray,
    steps: np.ndarray,
    meta: dict,
    level: str,
    eta,
    stacklevel: int = 1,
    exact: Optional[int] = None,
) -> None:
    """Set meta["nonfinite_from_step"] to `exact` (the step `take` found), else to the first
    recorded step where `bad`, with a RuntimeWarning naming the level.

    stacklevel counts from the caller of `flag` (1: the caller itself), as `warnings.warn` counts
    from itself."""
    if exact is not None or np.any(bad):
        first = exact if exact is not None else int(steps[np.argmax(bad)])
        meta["nonfinite_from_step"] = first
        warnings.warn(
            f"{level} trajectory is not finite from step {first}: the run diverged; lower eta "
            f"(now {eta})",
            RuntimeWarning,
            stacklevel=stacklevel + 1,
        )
