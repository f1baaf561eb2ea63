"""The finite-P boundary Delta*(P, gamma) of the two-phase regime: where the initial rate ratio
crosses 1.

The leading order (docs/derivations/mim-model.md §5) puts the ratio at (1 - gamma) P^Delta, so Phase
I exists when Delta > Delta*_pred = log(1 / (1 - gamma)) / log P (0.10 at P = 1024, gamma = 0.5),
not at Delta > 0. `delta_star` measures it: one GD step from Q = 0 (mean_field, B free) on grid
problems with kappa_s fixed and kappa_c scanned, and log(ratio) interpolated linearly in the
realised Delta between the two problems that bracket 1.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from . import ladder
from .config import MIMConfig


def initial_ratio(cfg: MIMConfig) -> float:
    """|dA_global| / dA_target of the first local patch over one GD step from Q = 0 (B free, counts
    at their means)."""
    return ladder.initial_rate_ratio(cfg, "mean_field").measured


def predicted(P: int, gamma: float) -> float:
    """Delta*_pred = log(1 / (1 - gamma)) / log P: where (1 - gamma) P^Delta = 1."""
    return math.log(1.0 / (1.0 - gamma)) / math.log(P)


def delta_star(base: MIMConfig, kappa_cs: Sequence[float]) -> dict:
    """Measured Delta* at base's P and gamma: the realised Delta where log(ratio) crosses 0 over the
    kappa_c scan."""
    points = {}
    for kc in kappa_cs:
        cfg = base.replace(kappa_c=float(kc))
        if round(cfg.delta, 12) not in points:  # grid problems repeat: one run per realised Delta
            points[round(cfg.delta, 12)] = initial_ratio(cfg)
    d = np.array(sorted(points))
    lr = np.log(np.array([points[x] for x in d]))
    up = np.flatnonzero((lr[:-1] < 0) & (lr[1:] >= 0))
    if up.size == 0:
        raise ValueError(
            f"kappa_cs = {list(kappa_cs)} do not bracket the boundary at P = {base.P}, gamma = "
            f"{base.mask_ratio}: the log ratios are {lr.round(3).tolist()} at Delta "
            f"{d.round(3).tolist()}"
        )
    i = int(up[0])
    measured = float(d[i] + (d[i + 1] - d[i]) * (-lr[i]) / (lr[i + 1] - lr[i]))
    return {
        "P": base.P,
        "gamma": base.mask_ratio,
        "measured": measured,
        "predicted": predicted(base.P, base.masked / base.P),
        "bracket": (float(d[i]), float(d[i + 1])),
        "ratios": dict(zip(d.tolist(), np.exp(lr).tolist())),
    }
