"""The premises of the MIM claims, each a measurement that can come out false (docs/mim.md §6):
the run reached its horizon, Delta > 0 and |Delta| = Omega(1) at the judged P, a leading-order
prediction outside its own correction's band, and the mean field standing for the model. Declared
once here; every claim names the ones its statement assumes."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from dynsim.claims import Premise, reached_horizon, resolved

from . import ladder, phases

CONFIDENCE = 0.95  # two-sided interval of every ladder slope (dynsim.trends.fit)
# (1 - gamma) P^Delta >= 4: the leading order's Phase-I drop (1/2) log of it reaches log 2
PHASE_MARGIN = 4.0
# an expected rate under the mean field loses at most the factor (1 - q), so with q <= 0.1 a log
# rate moves by <= -log(0.9) = 0.105 and a Phase-I drop by <= 0.053, under a tenth of log 2
MEAN_FIELD_Q_RATES = 0.1
# The switch level's own correction (Lemma 5.3 (a) beyond the leading order), at most 1/4 / z.
# Through Phase I the target grows too: with x = -A_global, dA_target / dx = 1 / r and the rate
# ratio r = R0 e^{-2x - A_target} (Lemma 5.1 at leading order, R0 = (1 - gamma) C_1^2 / (P C_n)),
# so A_target(T1) = int_0^{X} e^{2x} / R0 dx = (1 - 1 / R0) / 2 < 1/2 at X = (1/2) log R0, and the
# switch r = 1 sits at x = (log R0 - A_target(T1)) / 2: the drop falls short of (1/2) log R0 by
# (1 - 1 / R0) / 4 < 1/4 (the other corrections, the shrinking normaliser and the (1 - Attn_1)
# factor, deepen the drop). Derived from the spec's rates, not read from any run.
SWITCH_CORRECTION = 0.25
# Theorem 4.1's convergence stage, 2 K / (eta eps) steps after the takeoff. Past the takeoff
# (Attn_n >= 1/2) Lemma 5.1 moves A_target by >= (eta gamma / K) Attn_n delta^2 per step (delta = 1
# - Attn_n, z = 1) and d delta / dA_target = -Attn_n delta, so d delta / dt <= -(eta gamma / 4K)
# delta^3 and delta^2 <= 2K / (eta gamma t) after t steps; the loss given p in M is l_p <= delta^2
# (sum_{j != n} Attn_j <= delta), so L_p = gamma l_p <= 2K / (eta t) <= eps once t >= 2K / (eta eps)
CONVERGENCE_FACTOR = 2.0


def where(rungs: Sequence[ladder.Rung]) -> str:
    c = rungs[0].cfg
    areas = "grid areas" if c.partition == "grid" else f"random areas (seed {c.seed})"
    return (
        f"reduced level, {ladder.JUDGED} (B free, unmasked counts at their means), K = {c.K}, "
        f"{areas}, kappa = ({c.kappa_c}, {c.kappa_s}), gamma = {c.mask_ratio}, z = 1, eta = "
        f"{c.eta}, P ladder "
        + ", ".join(f"{r.cfg.P} (T = {r.cfg.steps}, Delta = {r.delta:.3f})" for r in rungs)
    )


def loss_gap_q_bound(rungs: Sequence[ladder.Rung], eps: float) -> float:
    """The mean-field premise's bound for Theorem 4.1's loss gap: q <= eps / gamma. The mean field
    drops the event "own area wholly masked | p in M" (probability q), the only part of the
    infimum: L*_p = (1/2) Pr(p in M) q z^2 = gamma q / 2 on eq. 4.2's scale (the factor |M| / P =
    gamma the loss reading carries), at most half of eps when q <= eps / gamma (gamma realised, the
    largest over the rungs: the strictest bound)."""
    return eps / max(phases.gamma_of(r.cfg) for r in rungs)


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


def horizon_premise(rungs: Sequence[ladder.Rung], eps: float = math.nan) -> Premise:
    """The run reached its horizon, measured: every query class took off (own-area attention >= 1/2
    at a recorded step, the end of Phase II's rapid growth: every phase the claims read has
    happened) at every rung; with `eps` (claims read at T*), every class (global ones too) took
    off at least the convergence stage 2K / (eta eps) steps before T. Measured: the smallest T minus
    the last takeoff over the rungs (-inf where a class never took off, NaN for a diverged run)."""
    settle = not math.isnan(eps)
    c = rungs[0].cfg
    need = CONVERGENCE_FACTOR * c.K / (c.eta * eps) if settle else 0.0
    # the fraction of the run spent before the horizon: (last takeoff + need) / T <= 1
    late = [
        ((max(r.takeoff_local, r.takeoff_global) if settle else r.takeoff_local) + need)
        / r.cfg.steps
        for r in rungs
    ]
    worst = ladder.first_nan_or(np.array(late, dtype=float), np.argmax)
    return reached_horizon(
        late[worst],
        1.0,
        f"(last takeoff + {need:.4g}) / T, largest at P = {rungs[worst].cfg.P}",
        (
            "every query class took off (own-area attention >= 1/2) at least the convergence "
            f"stage 2K / (eta eps) = {need:.4g} steps before T"
        )
        if settle
        else "every local query class took off (own-area attention >= 1/2) by T",
    )


def omega_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """|Delta| = Omega(1) read as an order at each judged P: (1 - gamma) P^|Delta| >= PHASE_MARGIN
    at every rung, the margin the phase claims ask of (1 - gamma) P^Delta (the gap moves the rates
    apart by at least the factor the leading order resolves; Delta = 0 never meets it)."""
    ratios = [(1 - phases.gamma_of(r.cfg)) * r.cfg.P ** abs(cluster_delta(r.cfg)) for r in rungs]
    worst = ladder.first_nan_or(np.array(ratios), np.argmin)
    return Premise(
        f"|Delta| = Omega(1): (1 - gamma) P^|Delta| >= {PHASE_MARGIN:g} (every rung)",
        ratios[worst],
        ">=",
        PHASE_MARGIN,
        f"smallest at P = {rungs[worst].cfg.P}",
    )


def drop_resolved(margin: float) -> bool:
    """A class's predicted Phase-I drop (1/2) log(margin) exceeds log 2 by more than the leading
    order's own correction SWITCH_CORRECTION: outside the leading order's resolution."""
    return margin >= PHASE_MARGIN * math.exp(2 * SWITCH_CORRECTION)


def rate_band(cfg, k: int = 0) -> tuple[float, float]:
    """The factor between cluster k's representative initial rate ratio and its leading order
    Attn_1^2 / Attn_n, bounded from Lemma 5.1 at Q = 0 (Attn_j = (1 - gamma) C_j / P, z = 1): the
    global falls at Attn_1 [Attn_1 (1 - Attn_1) + Attn_n (1 - Attn_n) - S], the target grows at
    Attn_n [(1 - Attn_n)^2 + Attn_1^2 + S], S = sum_{j not in {1, n}} Attn_j^2, so the factor lies
    in [(1 - Attn_1 - S / Attn_1) / (1 + Attn_1^2 + S), (1 + Attn_n / Attn_1) / (1 - Attn_n)^2]."""
    g = 1 - phases.gamma_of(cfg)
    att = [g * len(a) / cfg.P for a in cfg.areas[k]]
    a1, an = att[0], att[1]
    S = sum(a * a for a in att[2:])
    return (1 - a1 - S / a1) / (1 + a1 * a1 + S), (1 + an / a1) / (1 - an) ** 2


def rate_resolution_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """The leading order log((1 - gamma) P^Delta) against 0 (the side of 1) decides only outside its
    own correction, the larger log end of `rate_band`, at every rung and cluster (the least
    resolved named)."""
    out = []
    for r in rungs:
        for k in range(r.cfg.K):
            lo, hi = rate_band(r.cfg, k)
            out.append(
                resolved(
                    math.log(r.predicted_ratio),
                    0.0,
                    max(-math.log(lo), math.log(hi)),
                    f"log of the prediction against its correction's band from Lemma 5.1 at Q = 0 "
                    f"(premises.rate_band), at P = {r.cfg.P}",
                )
            )
    return min(out, key=lambda p: (not math.isnan(p.measured), p.measured))


def drop_resolution_premise(rung: ladder.Rung, margins: Sequence[float]) -> Premise:
    """F.3's leading-order drop (1/2) log R0 of the best-resolved local class against log 2, with
    the switch level's own correction SWITCH_CORRECTION."""
    top = max(margins, default=math.nan)
    return resolved(
        0.5 * math.log(top),
        math.log(2.0),
        SWITCH_CORRECTION,
        f"(1/2) log of the largest margin (1 - gamma) C_1^2 / (P C_n) = {top:.4g} at P = "
        f"{rung.cfg.P}; the switch level's correction <= {SWITCH_CORRECTION:g} (derived)",
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
