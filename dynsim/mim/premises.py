"""The premises of the MIM claims, each a measurement that can come out false (docs/mim.md §6):
Delta > 0, a Phase I the ladder can resolve, and the mean field standing for the model."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from dynsim.claims import Premise

from . import ladder, phases

CONFIDENCE = 0.95  # two-sided interval of every ladder slope (dynsim.trends.fit)
# (1 - gamma) P^Delta >= 4: the leading order's Phase-I drop (1/2) log of it reaches log 2
PHASE_MARGIN = 4.0
# the mean field drops the event "own area wholly masked" (probability q): its loss infimum L*_p ~ q
# z^2 / 2 is then at most half of eps when q <= eps (Theorem 4.1's claims); an expected rate loses
# at most the factor (1 - q), so with q <= 0.1 a log rate moves by <= -log(0.9) = 0.105 and a
# Phase-I drop by <= 0.053, under a tenth of log 2
MEAN_FIELD_Q_RATES = 0.1


def where(rungs: Sequence[ladder.Rung]) -> str:
    c = rungs[0].cfg
    areas = "grid areas" if c.partition == "grid" else f"random areas (seed {c.seed})"
    return (
        f"reduced level, {ladder.JUDGED} (B free, unmasked counts at their means), K = {c.K}, "
        f"{areas}, kappa = ({c.kappa_c}, {c.kappa_s}), gamma = {c.mask_ratio}, z = 1, eta = "
        f"{c.eta}, P ladder "
        + ", ".join(f"{r.cfg.P} (T = {r.cfg.steps}, Delta = {r.delta:.3f})" for r in rungs)
    )


def mean_field_premise(rungs: Sequence[ladder.Rung], bound: float) -> Premise:
    """The judged dynamics stand for the model: Pr(own area wholly masked | p in M) <= bound at
    every rung."""
    q = [r.own_area_empty for r in rungs]
    worst = int(np.argmax(q))
    return Premise(
        f"mean field valid (own area wholly masked with probability <= {bound:g}, every rung)",
        q[worst],
        "<=",
        bound,
        "exact hypergeometric, max over areas"
        + (" of every cluster" if rungs[worst].cfg.K > 1 else "")
        + f", at P = {rungs[worst].cfg.P}",
    )


def cluster_delta(cfg) -> float:
    """The smallest realised gap over the clusters, 2 kappa_c,k - kappa_s,k - 1 of each cluster's
    own areas (`MIMConfig.delta` averages the clusters; equal when their sizes are)."""
    logP = math.log(cfg.P)
    gaps = [
        2 * math.log(len(a[0])) / logP
        - math.log(sum(len(x) for x in a[1:]) / (len(a) - 1)) / logP
        - 1
        for a in cfg.areas
        if len(a) > 1
    ]
    return min(gaps) if gaps else math.nan  # no local area: no gap (the premise cannot hold)


def delta_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """Delta > 0 (the realised gap of the areas, every cluster's) at every rung."""
    low = min(rungs, key=lambda r: cluster_delta(r.cfg))
    return Premise(
        "Delta > 0 (realised, every cluster and rung)",
        cluster_delta(low.cfg),
        ">",
        0.0,
        f"smallest at P = {low.cfg.P}",
    )


def margin_premise(rung: ladder.Rung) -> Premise:
    """|Delta| large enough at this P: (1 - gamma) P^Delta >= PHASE_MARGIN, gamma realised, Delta
    every cluster's."""
    c = rung.cfg
    ratio = (1 - phases.gamma_of(c)) * c.P ** cluster_delta(c)
    return Premise(
        f"(1 - gamma) P^Delta >= {PHASE_MARGIN:g} (a Phase I the ladder can resolve)",
        ratio,
        ">=",
        PHASE_MARGIN,
        f"at P = {c.P}",
    )


def quick_note(rungs: Sequence[ladder.Rung]) -> list[str]:
    """The trends' caveat on three rungs (1 dof: Student-t 12.7 at 95%)."""
    if len(rungs) > 3:
        return []
    return [
        f"{len(rungs)} rungs leave the slope {len(rungs) - 2} degree(s) of freedom: the "
        "interval is wide, so this trend may not reproduce the default ladder's verdict "
        "(--quick)"
    ]
