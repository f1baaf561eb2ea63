"""The three Events of JSL Section 4.1 detected on any recorded trajectory (reduced or full).

Event I: only v moves, alpha rises to a plateau (ends at T0). Event II: attention moves until T1,
when the own set dominates (docs/derivations/jsl.md §5: (C-1) Gamma > (D-C) Xi; the paper's literal
criterion gamma > max_t |rho| is reported beside it). Event III: the loss then falls towards its
floor (over at T3). The paper's thresholds are in its unavailable appendix (docs/derivations/jsl.md
§7), so the ones here are explicit parameters, recorded with the result. Every time is the first
*recorded* step meeting its criterion: the crossing itself lies in (previous recorded step, reported
step], a window of at most `record_every` steps.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from . import reference
from .config import JSLConfig

EVENTS = ("T0", "T1_attention", "T1_gamma_rho", "T3")
REQUIRED = ("alpha", "gamma", "rho", "loss", "within_attention", "between_attention")

DEFINITIONS = {
    "T0": "end of Event I: first recorded step with alpha >= alpha_0 + alpha_fraction (peak - "
    "alpha_0), peak = max alpha over the recorded steps up to T1_attention (the whole "
    "run if T1 is not reached; then not reached while alpha's peak is the last record: "
    "alpha still rising, its peak would be the horizon's)",
    "T1_attention": "end of Event II (docs/derivations/jsl.md §5): first recorded step with "
    "within_attention > between_attention, i.e. (C-1) Gamma > (D-C) Xi",
    "T1_gamma_rho": "end of Event II, the paper's literal criterion (Section 4.1): first "
    "recorded step t before the last with gamma > max over the whole recorded "
    "run of |rho|, |rho| having reached that max at or before t (else a "
    "still-growing |rho| would put the crossing at a fixed fraction of the "
    "horizon)",
    "T3": "end of Event III: first recorded step >= max(T0, T1_attention) with loss - floor <= "
    "loss_margin (loss(T0) - floor); loss = test_loss if recorded, else loss",
}


@dataclasses.dataclass(frozen=True)
class Events:
    """Event times (recorded steps; None = not reached) and the thresholds that define them (Section
    4.1)."""

    T0: Optional[int]
    T1_attention: Optional[int]
    T1_gamma_rho: Optional[int]
    T3: Optional[int]
    alpha_0: float  # alpha at the first recorded step
    alpha_peak: float  # max alpha up to T1_attention (or over the run)
    alpha_threshold: float  # alpha_0 + alpha_fraction (alpha_peak - alpha_0)
    rho_max_abs: float  # max |rho| over the recorded run (the T1_gamma_rho threshold)
    loss_name: str  # "test_loss" or "loss"
    loss_at_T0: Optional[float]
    floor: float  # the loss floor, default reference.loss_floor of the run's config
    loss_threshold: Optional[float]  # floor + loss_margin (loss_at_T0 - floor)
    alpha_fraction: float
    loss_margin: float
    record_every: int  # resolution: each time is exact to within this many steps
    last_step: int
    level: str
    definitions: dict = dataclasses.field(default_factory=lambda: dict(DEFINITIONS))

    def times(self) -> dict[str, Optional[int]]:
        """{event name: recorded step or None}."""
        return {name: getattr(self, name) for name in EVENTS}

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _first(mask: np.ndarray, start: int = 0) -> Optional[int]:
    """Index of the first True at or after `start`, None if there is none."""
    hits = np.flatnonzero(mask[start:])
    return int(hits[0]) + start if hits.size else None


def _default_floor(traj) -> float:
    config = (traj.meta.get("config") if isinstance(traj.meta, dict) else None) or {}
    lacking = [k for k in ("D", "C", "q") if k not in config]
    if lacking:
        raise ValueError(
            f"floor = None needs {lacking} in traj.meta['config'] to compute reference.loss_floor; "
            "pass floor= explicitly"
        )
    fields = {f.name for f in dataclasses.fields(JSLConfig)}
    return reference.loss_floor(JSLConfig(**{k: v for k, v in config.items() if k in fields}))


def _record_every(traj) -> int:
    config = traj.meta.get("config") or {}
    if "record_every" in config:
        return int(config["record_every"])
    gaps = np.diff(traj.steps)
    return int(gaps.max()) if gaps.size else 0


def detect(
    traj, *, alpha_fraction: float = 0.95, loss_margin: float = 0.1, floor: Optional[float] = None
) -> Events:
    """Times of Events I-III (Section 4.1) on a Trajectory that records alpha, gamma, rho, loss and
    within/between attention."""
    if not 0.0 < alpha_fraction <= 1.0:
        raise ValueError(f"alpha_fraction = {alpha_fraction!r} is invalid: must lie in (0, 1]")
    if not 0.0 < loss_margin < 1.0:
        raise ValueError(f"loss_margin = {loss_margin!r} is invalid: must lie in (0, 1)")
    missing = [name for name in REQUIRED if name not in traj.observables]
    if missing:
        raise ValueError(
            f"traj ({traj.level}) lacks the observables {missing}; detect needs {list(REQUIRED)}"
        )
    if traj.steps.size == 0:
        raise ValueError("traj has no recorded step")
    if floor is None:
        floor = _default_floor(traj)
    steps = traj.steps
    alpha, gamma, rho = (np.asarray(traj[k], float) for k in ("alpha", "gamma", "rho"))
    loss_name = "test_loss" if "test_loss" in traj.observables else "loss"
    loss = np.asarray(traj[loss_name], float)

    i1 = _first(np.asarray(traj["within_attention"]) > np.asarray(traj["between_attention"]))
    rho_max_abs = float(np.nanmax(np.abs(rho)))
    # counted only once |rho| has reached its max and before the last record: with |rho| still
    # growing at the end, the max is the last record's and the crossing sits at a fixed fraction of
    # the horizon (0.28 x steps at q = 0.2)
    index = np.arange(steps.size)
    i1_literal = _first(
        (gamma > rho_max_abs) & (index >= int(np.nanargmax(np.abs(rho)))) & (index < steps.size - 1)
    )

    alpha_0 = float(alpha[0])
    window = alpha if i1 is None else alpha[: i1 + 1]
    alpha_peak = float(np.nanmax(window))
    alpha_threshold = alpha_0 + alpha_fraction * (alpha_peak - alpha_0)
    # alpha never rising above its start is no Event I: T0 is then not reached; nor while alpha
    # still rises at the end of a run without Event II (its peak, hence the threshold, would be the
    # horizon's)
    rising = i1 is None and int(np.nanargmax(alpha)) == steps.size - 1
    i0 = _first(alpha >= alpha_threshold) if alpha_peak > alpha_0 and not rising else None

    loss_at_T0 = loss_threshold = i3 = None
    if i0 is not None:
        loss_at_T0 = float(loss[i0])
        loss_threshold = float(floor + loss_margin * (loss_at_T0 - floor))
        if i1 is not None:
            i3 = _first(loss - floor <= loss_margin * (loss_at_T0 - floor), max(i0, i1))

    def at(i):
        return None if i is None else int(steps[i])

    return Events(
        T0=at(i0),
        T1_attention=at(i1),
        T1_gamma_rho=at(i1_literal),
        T3=at(i3),
        alpha_0=alpha_0,
        alpha_peak=alpha_peak,
        alpha_threshold=float(alpha_threshold),
        rho_max_abs=rho_max_abs,
        loss_name=loss_name,
        loss_at_T0=loss_at_T0,
        floor=float(floor),
        loss_threshold=loss_threshold,
        alpha_fraction=float(alpha_fraction),
        loss_margin=float(loss_margin),
        record_every=_record_every(traj),
        last_step=int(steps[-1]),
        level=traj.level,
    )


def compare_events(
    a, b, *, labels: Optional[tuple[str, str]] = None, **detect_kwargs
) -> dict[str, Any]:
    """Event times at two levels: {event: {"a", "b", "difference" = b - a}} (None where either is
    not reached).

    a and b are Events, or Trajectories (then `detect(traj, **detect_kwargs)` is applied). Also
    returned: the resolution (the coarser record interval), the labels (default: the levels) and
    both Events in full.
    """
    a, b = (x if isinstance(x, Events) else detect(x, **detect_kwargs) for x in (a, b))
    out: dict[str, Any] = {}
    for name in EVENTS:
        ta, tb = getattr(a, name), getattr(b, name)
        out[name] = {"a": ta, "b": tb, "difference": None if ta is None or tb is None else tb - ta}
    out["resolution"] = max(a.record_every, b.record_every)
    out["labels"] = list(labels or (a.level, b.level))
    out["details"] = {"a": a.to_dict(), "b": b.to_dict()}
    return out


def table(a, b=None, labels: Optional[tuple[str, str]] = None, definitions: bool = True) -> str:
    """Plain text: event, time at a, time at b, difference b - a ("-" = not reached), thresholds and
    (`definitions`) what each event is, else where to read it.

    Takes the dict of `compare_events`, or two Events / Trajectories.
    """
    cmp = a if isinstance(a, dict) and b is None else compare_events(a, b, labels=labels)
    la, lb = labels or cmp["labels"]
    da, db = cmp["details"]["a"], cmp["details"]["b"]

    def cell(x):
        return "-" if x is None else f"{x:,}"

    head = f"{'event':<14} {la:>12} {lb:>12} {'difference':>12}"
    lines = [head, "-" * len(head)]
    for name in EVENTS:
        row = cmp[name]
        lines.append(
            f"{name:<14} {cell(row['a']):>12} {cell(row['b']):>12} {cell(row['difference']):>12}"
        )
    lines.append(
        f"times are first recorded steps: resolution {cmp['resolution']:,} steps; '-' = not reached"
    )
    lines.append(
        f"thresholds ({la} / {lb}): alpha_fraction {da['alpha_fraction']:g} / "
        f"{db['alpha_fraction']:g}, loss_margin {da['loss_margin']:g} / {db['loss_margin']:g}, "
        f"floor {da['floor']:.4g} / {db['floor']:.4g} ({da['loss_name']} / {db['loss_name']})"
    )
    if definitions:
        lines.extend(f"{name}: {text}" for name, text in DEFINITIONS.items())
    else:
        lines.append("what each event is: --explain, or docs/jsl.md section 10")
    return "\n".join(lines)
