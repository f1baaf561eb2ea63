"""Theorem 4.2: the realistic process (E) approaches the idealized one (P) as N grows, measured.

For each training-set size N, `approach` runs the realistic full model over several seeds (one
vmapped program), runs the reduced dynamics from each seed's projected initial state, and compares
the reduced mean with the seed mean in the checker's statistical mode. It then fits, per
observable, the log-log slope of the largest deviation against N.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Sequence

import numpy as np

import full.jsl
import reduced.jsl
from dynsim.checker import Report, compare
from dynsim.runoptions import CONFIDENCE
from dynsim.trajectory import Trajectory, strict_json

from .config import JSLConfig

OBSERVABLES = ("alpha", "gamma", "rho", "loss", "own_set_attention")


def reduced_from_projection(cfg: JSLConfig, full_traj: Trajectory) -> Trajectory:
    """Reduced runs from each seed's projected start (alpha0 = <v0, w*>, gamma0, rho0 = orbit means
    of A0).

    The observables are the mean over seeds, with each seed's run under `<name>_seeds` (steps, R).
    """
    proj = full_traj.meta["initial_projection"]
    inits = np.stack([proj["alpha"], proj["gamma"], proj["rho"]], axis=1)
    return reduced.jsl.simulate_many(cfg, inits)


@dataclasses.dataclass
class Approach:
    """Deviation of the realistic seed mean from the reduced trajectory, per N and observable."""

    N: list[int]
    seeds: int
    reports: list[Report]  # one checker report per N (statistical mode)
    # observable -> max over steps of |realistic mean - reduced|, per N
    max_abs: dict[str, list[float]]
    max_z: dict[str, list[float]]  # the same in units of the seed-to-seed standard error
    # least-squares slope of log max_abs against log N (None with one N)
    slope: dict[str, Optional[float]]

    def table(self) -> str:
        lines = [
            f"Theorem 4.2: realistic (E) seed mean ({self.seeds} seeds) against reduced (P) "
            f"from the projected starts",
            "max over steps of |realistic - reduced| (and in units of the standard error of "
            "the seed mean):",
        ]
        head = (
            f"{'observable':<18}"
            + "".join(f"{'N=' + str(n):>22}" for n in self.N)
            + f"{'slope in N':>12}"
        )
        lines += [head, "-" * len(head)]
        for name in self.max_abs:
            cells = "".join(
                f"{a:>12.3e} ({z:>6.1f}se)" for a, z in zip(self.max_abs[name], self.max_z[name])
            )
            slope = self.slope[name]
            lines.append(f"{name:<18}{cells}{'' if slope is None else f'{slope:>12.2f}':>12}")
        lines.append(
            "slope: d log(max deviation) / d log N; Monte Carlo noise alone gives about -0.5, "
            "and 0 means no approach"
        )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "N": self.N,
            "seeds": self.seeds,
            "max_abs": self.max_abs,
            "max_z": self.max_z,
            "slope": self.slope,
            "reports": [r.to_dict() for r in self.reports],
        }

    def to_json(self) -> str:
        return strict_json(self.to_dict())


def ladder(N: int, low: int = 16) -> list[int]:
    """The default sizes for the approach table: N/16, N/4, N (those >= `low`, at least N
    itself)."""
    return sorted({n for n in (N // 16, N // 4, N) if n >= low} | {N})


def slope(N: Sequence[int], values: Sequence[float]) -> Optional[float]:
    """Least-squares slope of log(values) against log(N); None with fewer than two positive
    points."""
    pts = [(math.log(n), math.log(v)) for n, v in zip(N, values) if v > 0 and math.isfinite(v)]
    if len(pts) < 2:
        return None
    x, y = np.array(pts).T
    return float(np.polyfit(x, y, 1)[0])


def approach(
    cfg: JSLConfig,
    N_values: Optional[Sequence[int]] = None,
    seeds: int = 8,
    confidence: float = CONFIDENCE,
    runs: Optional[dict] = None,
) -> Approach:
    """Run realistic (E) at each N (default `ladder(cfg.N)`) and the reduced dynamics; measure how
    they approach.

    `runs`, if given, is filled with {N: (reduced, full)} trajectories.
    """
    N_values = sorted(set(N_values or ladder(cfg.N)))
    reports, max_abs, max_z = [], {n: [] for n in OBSERVABLES}, {n: [] for n in OBSERVABLES}
    for N in N_values:
        c = cfg.replace(N=int(N))
        ful = full.jsl.simulate(c, mode="realistic", seeds=seeds)
        red = reduced_from_projection(c, ful)
        rep = compare(red, ful, observables=OBSERVABLES, confidence=confidence)
        reports.append(rep)
        for name in OBSERVABLES:
            e = rep.errors[name]
            max_abs[name].append(e.max_abs)
            max_z[name].append(math.nan if e.max_z is None else e.max_z)
        if runs is not None:
            runs[N] = (red, ful)
    slopes = {name: slope(N_values, max_abs[name]) for name in OBSERVABLES}
    return Approach([int(n) for n in N_values], seeds, reports, max_abs, max_z, slopes)
