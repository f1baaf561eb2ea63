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
# Lemma 5.3 (a)'s "~" read as Attn_1^2 / Attn_n within [1/4, 4]: a level offset <= log(4) / 2z
SWITCH_BAND = 4.0
# The largest GD step of A_global that resolves Phase I. The claims read the switch level and the
# drop on GD's trajectory, interpolated between steps; the gradient flow's level lies within
# SWITCH_CORRECTION of the leading order, and a step that moves A_global by s can carry the
# discrete crossing up to about s past the flow's. The switch band log(4) / 2 minus the flow's own
# correction leaves s <= log(4) / 2 - 1/4 = 0.443 for the step (the paper's step-size condition is
# not recoverable; a larger step is outside it: Phase I is then a step or two, not a phase).
STEP_RESOLUTION = math.log(SWITCH_BAND) / 2 - SWITCH_CORRECTION
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


def rate_band(cfg, k: int = 0, n: int = 1) -> tuple[float, float]:
    """The factor between the initial rate ratio of cluster k's local area n (the representative:
    n = 1) and its leading order Attn_1^2 / Attn_n, bounded from Lemma 5.1 at Q = 0 (Attn_j = (1 -
    gamma) C_j / P, z = 1): the global falls at Attn_1 [Attn_1 (1 - Attn_1) + Attn_n (1 - Attn_n) -
    S], the target grows at Attn_n [(1 - Attn_n)^2 + Attn_1^2 + S], S = sum_{j not in {1, n}}
    Attn_j^2, so the factor lies in [(1 - Attn_1 - S / Attn_1) / (1 + Attn_1^2 + S), (1 + Attn_n /
    Attn_1) / (1 - Attn_n)^2]."""
    g = 1 - phases.gamma_of(cfg)
    att = [g * len(a) / cfg.P for a in cfg.areas[k]]
    a1, an = att[0], att[n]
    S = sum(a * a for a in att[1:]) - an * an
    return (1 - a1 - S / a1) / (1 + a1 * a1 + S), (1 + an / a1) / (1 - an) ** 2


def rate_correction(cfg, k: int = 0) -> float:
    """The log half-width of the prediction (1 - gamma) P^Delta's own band for every local area of
    cluster k. (1 - gamma) P^Delta is (1 - gamma) C_1^2 / (P C_bar) (Delta realised with the mean
    local size C_bar, `cluster_delta`); area n's own leading order Attn_1^2 / Attn_n = (1 - gamma)
    C_1^2 / (P C_n) differs from it by the factor C_bar / C_n (local areas are Theta(P^kappa_s), not
    equal), and its measured ratio lies within `rate_band(cfg, k, n)` of that: the largest |log|
    over the local areas of C_bar / C_n times either end of the band."""
    local = [len(a) for a in cfg.areas[k][1:]]
    mean = sum(local) / len(local)
    out = 0.0
    for n, size in enumerate(local, start=1):
        lo, hi = rate_band(cfg, k, n)
        out = max(out, -math.log(lo * mean / size), math.log(hi * mean / size))
    return out


def rate_resolution_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """The leading order log((1 - gamma) P^Delta) against 0 (the side of 1) decides only outside its
    own correction (`rate_correction`: every local area's size and rate band) at every rung and
    cluster (the least resolved named). The claim reads the representative's ratio and every local
    patch's phase label, so every local area's own leading order must sit on the prediction's
    side."""
    out = []
    for r in rungs:
        for k in range(r.cfg.K):
            out.append(
                resolved(
                    math.log(r.predicted_ratio),
                    0.0,
                    rate_correction(r.cfg, k),
                    "log of the prediction against its correction from Lemma 5.1 at Q = 0 and "
                    f"the local areas' sizes (premises.rate_correction), at P = {r.cfg.P}"
                    + (f", cluster {k}" if r.cfg.K > 1 else ""),
                )
            )
    return min(out, key=lambda p: (not math.isnan(p.measured), p.measured))


def step_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """GD resolves Phase I: one step from Q = 0 moves A_global of every cluster's representative
    local query by at most STEP_RESOLUTION (Phase I's largest step), at every rung."""
    moves = [max(c.first_step_move for c in r.clusters) if r.clusters else math.nan for r in rungs]
    worst = ladder.first_nan_or(np.array(moves, dtype=float), np.argmax)
    return Premise(
        f"GD resolves Phase I (one step moves A_global by <= {STEP_RESOLUTION:.3g})",
        moves[worst],
        "<=",
        STEP_RESOLUTION,
        f"|dA_global| over the first GD step from Q = 0, largest at P = {rungs[worst].cfg.P}",
    )


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
