"""The premises of the MIM claims, each a measurement that can come out false (docs/mim.md §6):
the run reached its horizon, Delta > 0 and |Delta| = Omega(1) at the judged P, a leading-order
prediction outside its own correction's band, and the mean field standing for the model. Declared
once here; every claim names the ones its statement assumes, and reads them per rung (`select`: a
premise met on some rungs judges those rungs). The bands of the phase claims' predictions are
derived here from Lemma 5.1 and the config: the Phase-I drop (`drop_band`) and the global
patches' first step (`competitor_band`)."""

from __future__ import annotations

import dataclasses
import functools
import math
from typing import Callable, Sequence

import numpy as np

from dynsim.claims import Premise, reached_horizon, resolved

from . import ladder, phases

CONFIDENCE = 0.95  # two-sided interval of every ladder slope (dynsim.trends.fit)
# (1 - gamma) P^Delta >= 4: the leading order's Phase-I drop (1/2) log of it reaches log 2
PHASE_MARGIN = 4.0
# an expected rate under the mean field loses at most the factor (1 - q), so with q <= 0.1 a log
# rate moves by <= -log(0.9) = 0.105 and a Phase-I drop by <= 0.053, under a tenth of log 2
MEAN_FIELD_Q_RATES = 0.1
# Lemma 5.3 (a)'s "~" read as Attn_1^2 / Attn_n within [1/4, 4]: a level offset <= log(4) / 2z
SWITCH_BAND = 4.0
# The switch level's own correction beyond the leading order and GD's step are derived per class
# from the config (`drop_band`, Lemma 5.1's rates); a class is judged where that band puts its
# drop beyond log 2, and GD resolves Phase I where the band lies within the switch band log(4) / 2
# (`step_premise`). The bands' bounds depend on each other: iterated to their fixed point, until
# they move by less than a rounding-level tolerance (they settle within a few dozen steps: each
# step shrinks the change by the factor ~ alpha / 2 < 1/2), at most FIXED_POINT_STEPS times (a band
# that has not settled by then is no band: its class is never judged)
FIXED_POINT_TOL, FIXED_POINT_STEPS = 1e-12, 500
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


@dataclasses.dataclass(frozen=True)
class Selection:
    """The rungs a claim judges, the premises it passes to `judge`, and the rungs left out (P ->
    the premises they do not meet)."""

    rungs: list
    premises: list
    excluded: dict


def select(
    rungs: Sequence[ladder.Rung],
    premises_of: Callable[[Sequence[ladder.Rung]], list],
    need: int = 1,
) -> Selection:
    """A premise met on some rungs judges those rungs: each rung's premises (`premises_of([rung])`)
    are read on it alone; a rung where one is measured false is left out and reported
    (`excluded`), and the claim judges the others with its premises read over them (one not
    measured there, a diverged run, makes the claim "not evaluated", never a pass). When rungs are
    left out, the claim also assumes that at least `need` remain (a trend in P needs 3: one degree
    of freedom); too few, and every rung's premises are passed, so "not applicable" names what
    failed."""
    rungs = list(rungs)
    per = [[p for p in premises_of([r]) if not p.met and not p.missing] for r in rungs]
    excluded = {r.cfg.P: "; ".join(map(Premise.describe, ps)) for r, ps in zip(rungs, per) if ps}
    if not excluded:
        return Selection(rungs, premises_of(rungs), {})
    keep = [r for r, false in zip(rungs, per) if not false]
    enough = Premise(
        f"at least {need} rung{'s' if need > 1 else ''} that no per-rung premise rules out"
        + (" (a trend in P)" if need > 1 else ""),
        len(keep),
        ">=",
        need,
        "judged: P = "
        + (", ".join(str(r.cfg.P) for r in keep) or "none")
        + "; left out: P = "
        + ", ".join(str(P) for P in excluded)
        + " (details: excluded_rungs)",
    )
    if len(keep) < need:
        return Selection(rungs, premises_of(rungs) + [enough], excluded)
    return Selection(keep, premises_of(keep) + [enough], excluded)


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
    """GD resolves Phase I: every local class with a Phase I (leading order R0 > 1) has its derived
    band (`drop_band`: the flow's own correction plus one GD step from Q = 0, both from the config)
    within the switch band log(SWITCH_BAND) / 2, at every rung. Read from the config, not the run:
    a step the setting makes large is outside the statement; a gradient the code gets wrong is not
    a reason to skip it."""
    bands = [[b for b in class_bands(r.cfg) if b.predicted > 0] for r in rungs]
    widths = [max((b.width for b in bs), default=math.inf) for bs in bands]
    worst = int(np.argmax(widths))
    band = max(bands[worst], key=lambda b: b.width, default=None)
    return Premise(
        "GD resolves Phase I (the switch level's derived band, the flow's correction plus one GD "
        f"step, within log({SWITCH_BAND:g}) / 2 = {math.log(SWITCH_BAND) / 2:.3g})",
        widths[worst],
        "<=",
        math.log(SWITCH_BAND) / 2,
        (
            f"the widest local class at P = {rungs[worst].cfg.P}: first step {band.step:.3g} "
            f"(Lemma 5.1 at Q = 0) + the flow's {band.width - band.step:.3g}"
        )
        if band
        else f"no local class with a Phase I at P = {rungs[worst].cfg.P}",
    )


def class_bands(cfg) -> list:
    """`drop_band` of every local area of every cluster."""
    return [drop_band(cfg, k, n) for k in range(cfg.K) for n in range(1, len(cfg.areas[k]))]


def drop_resolution_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """F.3's leading-order drop (1/2) log R0 of the best-resolved local class of every rung against
    log 2, with that class's own derived correction on the shallow side (`drop_band`: -lo): the
    least resolved rung named."""
    out = []
    for r in rungs:
        best = max(class_bands(r.cfg), key=lambda b: b.predicted + b.lo, default=None)
        pred, lo = (best.predicted, best.lo) if best else (math.nan, math.nan)
        out.append(
            resolved(
                pred,
                math.log(2.0),
                -lo,
                f"(1/2) log R0 = {pred:.4g} of the best-resolved local class at P = {r.cfg.P}, "
                f"its drop's derived correction {lo:.3g} (premises.drop_band)",
            )
        )
    return min(out, key=lambda p: (not math.isnan(p.measured), p.measured))


@dataclasses.dataclass(frozen=True)
class DropBand:
    """The derived band of one local class's Phase-I drop x1 = -A_global(T1) (`drop_band`): x1 -
    predicted lies in [lo, hi]."""

    predicted: float  # (1/2) log R0, R0 = (1 - gamma) C_1^2 / (P C_n): the leading order
    lo: float  # the shallow side: the target's own Phase-I growth and the rest, minus one step
    hi: float  # the deep side: the shrinking normaliser, the counts, plus one step
    step: float  # s: the first GD step of A_global from Q = 0 (Lemma 5.1), Phase I's largest
    feedback: float  # Y: the bound on the target's growth A_target(T1)

    @property
    def width(self) -> float:
        """The larger side: what the switch band log(4) / 2 must hold (`step_premise`)."""
        return max(-self.lo, self.hi)


def shares(cfg, k: int, own: int) -> np.ndarray:
    """Every area's share of a masked query's attention at Q = 0 under the mean field, the query in
    area `own` of cluster k: E|U cap P_j - {p}| / P = (1 - gamma) C'_j / (P - 1), C'_own = C_own -
    1 (the query is masked), gamma realised (Lemma A.7)."""
    sizes = np.array([len(a) for a in cfg.areas[k]], dtype=float)
    sizes[own] -= 1
    return (1 - phases.gamma_of(cfg)) * sizes / (cfg.P - 1)


def _switch_root(b: float, S: float) -> float:
    """Attn_1 at the switch r = 1 of Lemma 5.1 (z = 1) given the target's share b and the others'
    sum of squares S: the smallest positive root of a [a (1 - a) + b (1 - b) - S] = b [(1 - b)^2 +
    a^2 + S] (r > 1 between it and the next root, where Phase I starts); NaN when r < 1 for every a
    (no Phase I at these shares)."""
    roots = np.roots([-1.0, 1 - b, b * (1 - b) - S, -b * ((1 - b) ** 2 + S)])
    # a real root comes back with an imaginary part of rounding size
    real = [x.real for x in roots if abs(x.imag) < 1e-10 and x.real > 0]
    return float(min(real, default=math.nan))


@functools.lru_cache(maxsize=8192)
def drop_band(cfg, k: int, n: int) -> DropBand:
    """The band of local class (k, n)'s Phase-I drop x1 about its leading order (1/2) log R0,
    derived from Lemma 5.1 (z = 1) and the config alone (B = 0 and the other areas' FP
    correlations at 0: Lemma 5.3 (b, c), judged beside, keeps them small). At Q = 0 the shares are
    alpha, beta, b_j (`shares`); in Phase I a = alpha e^-x / zeta, b = beta e^y / zeta (x =
    -A_global, y = A_target, zeta = Z / Z(0)), and the rate ratio r = a [a (1 - a) + b (1 - b) - S]
    / (b [(1 - b)^2 + a^2 + S]) (S = sum_{j not in {1, n}} b_j^2) crosses 1 at a1 (`_switch_root`),
    g = a1^2 / b1, so exactly x1 - (1/2) log R0 = c - (1/2) log g - y1 / 2 - (1/2) log zeta1 with c
    = (1/2) log(alpha^2 / (beta R0)) (the query's own patch is masked). Bounds: zeta1 in [1 -
    alpha (1 - e^-x_hi), 1 + beta (e^Y - 1)]; g over the corners b1 in [beta / zeta_hi, beta e^Y /
    zeta_lo], S1 in [0, S(0) / zeta_lo^2]; y1 in [0, Y]: with f = r b / a^2, dy/dx = 1 / r gives
    e^y1 - 1 = int_0^x1 psi e^(2 (x - x1)) dx, psi = (zeta / f) (f1 / zeta1) <= psi_max = (zeta_hi
    / f_lo) / (g_lo zeta_lo), f_lo the smaller end (a in {a1_lo, alpha}: quasi-concave; a =
    alpha / (alpha + (1 - alpha) e^x) <= alpha falls through Phase I) of (1 - a - S_hi / a) / (1 +
    a^2 + S_hi); so Y = log(1 + psi_max (1 - e^(-2 x_hi)) / 2) (the
    leading order alone: log 1.5). The bounds depend on each other: iterated to their fixed
    point. GD: the first step moves A_global by s = eta (gamma / K) alpha [alpha (1 - alpha) + beta
    (1 - beta) - S(0)], Phase I's largest, and the discrete crossing lies within s of the flow's."""
    share = shares(cfg, k, n)
    alpha, beta = float(share[0]), float(share[n])
    S0 = float(np.sum(share[1:] ** 2) - beta**2)
    R0 = (1 - phases.gamma_of(cfg)) * len(cfg.areas[k][0]) ** 2 / (cfg.P * len(cfg.areas[k][n]))
    c = 0.5 * math.log(alpha**2 / (beta * R0))
    step = (
        cfg.eta
        * phases.gamma_of(cfg)
        / cfg.K
        * alpha
        * (alpha * (1 - alpha) + beta * (1 - beta) - S0)
    )
    if R0 <= 1:  # r(0) <= 1 at the leading order: no Phase I to bound (the class is never judged)
        return DropBand(0.5 * math.log(R0), -math.inf, math.inf, step, math.inf)
    Y, z_lo, z_hi = math.log(1.5), 1 - alpha, 1.0
    for _ in range(FIXED_POINT_STEPS):
        prev = (Y, z_lo, z_hi)
        S_hi = S0 / z_lo**2
        corners = [(b, S) for b in (beta / z_hi, beta * math.exp(Y) / z_lo) for S in (0.0, S_hi)]
        roots = [_switch_root(b, S) for b, S in corners]
        f_lo = min((1 - a - S_hi / a) / (1 + a * a + S_hi) for a in (min(roots), alpha))
        if any(math.isnan(a) for a in roots) or not f_lo > 0:  # no switch at some corner, or
            # f not bounded away from 0: the derivation gives no band (the class is never judged)
            return DropBand(0.5 * math.log(R0), -math.inf, math.inf, step, math.inf)
        g = [a * a / b for a, (b, _) in zip(roots, corners)]
        x_hi = 0.5 * math.log(R0) + c - 0.5 * math.log(min(g) * z_lo)
        psi = z_hi / f_lo / (min(g) * z_lo)
        Y = math.log(1 + 0.5 * psi * (1 - math.exp(-2 * x_hi)))
        z_lo, z_hi = 1 - alpha * (1 - math.exp(-x_hi)), 1 + beta * (math.exp(Y) - 1)
        if max(abs(u - v) for u, v in zip(prev, (Y, z_lo, z_hi))) <= FIXED_POINT_TOL:
            break
    else:  # the bounds did not settle: no band (the class is never judged)
        return DropBand(0.5 * math.log(R0), -math.inf, math.inf, step, math.inf)
    lo = c - 0.5 * math.log(max(g)) - Y / 2 - 0.5 * math.log(z_hi) - step
    hi = c - 0.5 * math.log(min(g) * z_lo) + step
    return DropBand(0.5 * math.log(R0), lo, hi, step, Y)


def competitor_band(cfg, k: int = 0) -> tuple[float, float, float]:
    """Appendix E: the first GD step's competitor ratio of cluster k's global query, max over its
    local areas m of (-dA_m) / dA_global, predicted from Lemma 5.1 at Q = 0 (z = 1) with the
    leading shares pi_j = (1 - gamma) C_j / P: R_m = b_m [b_m (1 - b_m) + a (1 - a) - S_m] / (a [(1
    - a)^2 + S]), a = pi_1, b_m = pi_m, S = sum_{j > 1} b_j^2, S_m = S - b_m^2; and the band of
    log(measured / predicted). The first step is Lemma 5.1 at Q = 0 at the mean field's shares
    (`shares`), which differ from pi_j by the relative eps = max_j |C'_j P / (C_j (P - 1)) - 1|
    (the query's own patch, P - 1 other keys); a monomial of degree d then moves by at most the
    factor (1 + eps)^d - 1, so numerator and denominator move by at most the sums of their
    monomials' |values| times that. Returns (predicted, lo, hi): log(measured / predicted) lies in
    [lo, hi]."""
    sizes = np.array([len(a) for a in cfg.areas[k]], dtype=float)
    pi = (1 - phases.gamma_of(cfg)) * sizes / cfg.P
    eps = float(np.max(np.abs(shares(cfg, k, 0) / pi - 1)))
    e2, e3 = (1 + eps) ** 2 - 1, (1 + eps) ** 3 - 1
    a, b = float(pi[0]), pi[1:]
    S = float(np.sum(b**2))
    den = a * ((1 - a) ** 2 + S)
    d_den = a * eps + 2 * a * a * e2 + (a**3 + a * S) * e3
    num = b * (b * (1 - b) + a * (1 - a) - (S - b**2))
    d_num = (b * b + a * b) * e2 + (b**3 + a * a * b + b * (S - b**2)) * e3
    pred = float(np.max(num / den))
    lo = float(np.max((num - d_num) / (den + d_den)))
    hi = float(np.max((num + d_num) / (den - d_den)))
    return pred, math.log(lo / pred), math.log(hi / pred)


def quick_note(rungs: Sequence[ladder.Rung]) -> list[str]:
    """The trends' caveat on three rungs (1 dof: Student-t 12.7 at 95%)."""
    if len(rungs) > 3:
        return []
    return [
        f"{len(rungs)} rungs leave the slope {len(rungs) - 2} degree(s) of freedom: the "
        "interval is wide, so this trend may not reproduce the default ladder's verdict "
        "(--quick)"
    ]
