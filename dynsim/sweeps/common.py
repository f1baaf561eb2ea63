"""What every setting's point summary shares: the checker's verdict and its largest error, the
stability flags of a run's loss, censoring of event times by the horizon, event times in flow time
(t = eta * steps), the gradient flow's keywords for a point and the table that says which heatmaps
a level does not offer."""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np
from scipy import stats

from dynsim import tolerances
from dynsim.cli import flow
from dynsim.setting import STABILITY, VERDICT, time_name  # noqa: F401 (the columns' names)

OSCILLATING_SIGN_CHANGES = 3  # down, up, down, up: at least two separate rises of the loss
# family-wise, over a run's increments, for a loss recorded with a standard error
SE_CONFIDENCE = 0.999


def verdict(report) -> dict:
    """{"verdict": AGREE/DISAGREE, "max_error": largest max |a - b| over the compared observables,
    "worst_observable", "check_kind"}; all None when only one level ran."""
    if report is None:
        return {"verdict": None, "max_error": None, "worst_observable": None, "check_kind": None}
    worst: Optional[str] = max(report.errors, key=lambda k: report.errors[k].max_abs, default=None)
    return {
        "verdict": "AGREE" if report.passed else "DISAGREE",
        "max_error": None if worst is None else report.errors[worst].max_abs,
        "worst_observable": worst,
        "check_kind": report.kind,
    }


def increment_threshold(
    loss: np.ndarray, terms: int, dtype: str, se: Optional[np.ndarray] = None
) -> np.ndarray:
    """Per increment loss[k+1] - loss[k], the largest size rounding (and, with `se`, sampling)
    explains.

    A recorded loss is a sum of `terms` nonnegative terms; summing M nonnegative numbers in any
    order errs by at most (M - 1) u times the sum (Higham, Accuracy and Stability, eq. 4.4, worst
    case), and each term's own few roundings (exp, powers, softplus, its weight) add the checker's
    SAFETY u: a recorded loss errs by at most SAFETY M u max|loss|, and a difference of two by twice
    that. With a standard error per record (replicate runs), an increment is also within z
    sqrt(se_k^2 + se_k+1^2) by chance, z the normal quantile at SE_CONFIDENCE family-wise over the
    increments (Bonferroni)."""
    loss = np.asarray(loss, np.float64)
    finite = loss[np.isfinite(loss)]
    scale = float(np.max(np.abs(finite))) if finite.size else 0.0
    tol = np.full(
        max(loss.size - 1, 0),
        2.0 * tolerances.SAFETY * max(terms, 1) * tolerances.unit_roundoff(dtype) * scale,
    )
    if se is not None and loss.size > 1:
        se = np.asarray(se, np.float64)
        z = stats.norm.ppf(1.0 - (1.0 - SE_CONFIDENCE) / (2.0 * (loss.size - 1)))
        tol = tol + z * np.sqrt(se[1:] ** 2 + se[:-1] ** 2)
    return tol


def stability(t, loss_name: str = "loss") -> dict:
    """Flags of a run's recorded loss beyond rounding (`increment_threshold`): "loss_sign_changes"
    (sign changes between consecutive significant increments), "non_monotone" (some significant
    rise: GD on a smooth loss with a small enough step decreases it every step, so a rise means eta
    is past the local 2/L), "unstable" (at least OSCILLATING_SIGN_CHANGES sign changes: the loss
    oscillates, and such a run amplifies rounding, so its numbers after the oscillation starts
    depend on e.g. --batch-size; docs/sweeps.md). Only the finite records count."""
    loss = np.asarray(t[loss_name], np.float64)
    se = (
        np.asarray(t[loss_name + "_se"], np.float64) if loss_name + "_se" in t.observables else None
    )
    keep = np.isfinite(loss) & (np.isfinite(se) if se is not None else True)
    loss, se = loss[keep], (se[keep] if se is not None else None)
    step = np.diff(loss)
    significant = step[
        np.abs(step)
        > increment_threshold(loss, tolerances.term_count(t), t.meta.get("dtype", "float64"), se)
    ]
    changes = int(np.count_nonzero(np.sign(significant[1:]) != np.sign(significant[:-1])))
    return {
        "loss_sign_changes": changes,
        "non_monotone": bool(np.any(significant > 0)),
        "unstable": changes >= OSCILLATING_SIGN_CHANGES,
    }


def censored(times: dict, horizon: float) -> dict:
    """{event: time, event + "_censored": None} for an event reached; {event: None, event +
    "_censored": horizon} for one not established within the run (it happens, if at all, after the
    last recorded step `horizon`)."""
    out = {}
    for name, value in times.items():
        out[name] = value
        out[name + "_censored"] = horizon if value is None else None
    return out


def clock(t) -> np.ndarray:
    """Each record's time t = eta * step: a flow's exact save times (its observable "t"), else eta
    times the recorded steps."""
    if "t" in t.observables:
        return np.asarray(t["t"], np.float64)
    return float(t.meta["config"]["eta"]) * np.asarray(t.steps, np.float64)


def in_time(t, steps: Mapping[str, Optional[int]]) -> dict:
    """Event times given as recorded steps ({event: step or None}) in time t = eta * steps, with
    their censoring at the last record's time (a flow: its t_max; GD: eta * steps):
    {time_name(event): t or None, time_name(event) + "_censored": None or that horizon}."""
    times = clock(t)
    at = {
        time_name(k): None if v is None else float(times[np.searchsorted(t.steps, v)])
        for k, v in steps.items()
    }
    return censored(at, float(times[-1]))


def flow_keywords(cfg, options: Mapping) -> dict:
    """The keywords the reduced simulate takes for the gradient flow of a sweep point:
    method="flow", t_max (options["t_max"], default eta * steps) and the save times, exactly those
    of `dynsim compare --method flow` (`dynsim.cli.flow`, one implementation: eta times GD's
    recorded steps, log-spaced beyond eta * steps); t_max is checked before any work."""
    return flow.flow_keywords(cfg, options.get("t_max"))
