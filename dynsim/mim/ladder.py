"""The P ladder of the MIM claims: one B-free reduced run per size, summarised by the numbers the
claims judge.

Each rung runs `reduced.mim.simulate(cfg, "mean_field")` (B free, unmasked counts at their means)
for T(P) = ceil(steps (P / P_ref)^(1 - kappa_s) (gamma_ref / gamma) (eta_ref / eta) K) steps, the
phases' time scale K P^(1 - kappa_s) / (gamma eta z^3) of docs/derivations/mim-model.md §5-§6 (z =
1) scaled to `steps` at the reference problem (P_ref = 1024, gamma_ref = 0.5, eta_ref = 1, K = 1),
so every rung and every problem spends the same time in its convergence stage; beside it the
theory's approximation "pp_frozen+mean_field" (B = 0) on the same config, reported, not judged, and
one GD step from Q = 0 for the initial rates. A rung keeps only `Rung` (scalars and short arrays),
not the trajectories.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable, Optional

import numpy as np
from scipy import stats

import reduced.mim
from dynsim.claims import LOG
from dynsim.trajectory import Trajectory
from reduced.gd import step_series

from . import phases, records
from .config import MIMConfig

JUDGED = "mean_field"  # B free, counts at their means: the judged dynamics
THEORY = "pp_frozen+mean_field"  # the theory's approximation (B = 0), reported beside
P_REF, GAMMA_REF, ETA_REF = 1024, 0.5, 1.0  # the reference problem of `steps` (the defaults)


@dataclasses.dataclass(frozen=True)
class Rung:
    """What the claims read from one size of the ladder (all at the run's last recorded step T
    unless named)."""

    cfg: MIMConfig
    min_attention: float  # min over patches of Attn_{p -> U_{k,a_k(p)}}(T)
    # max over query classes of L_p(T) = (1/K) sum_k l_{p,k}, l = z^2/2 [(1 - A_n)^2 + sum_{j != n}
    # A_j^2]
    max_query_loss: float
    initial_query_loss: float  # the same at step 0
    labels: tuple  # phases.classify label of every local patch
    # -A_global at Lemma 5.3's switch of the representative local patch (NaN: no switch)
    drop_at_switch: float
    switch_step: float
    # Lemma 5.3's condition Attn_1^2 = Attn_n at Q = 0 attentions with p's own area sizes
    switch_predicted_sizes: float
    # |dA_global| / dA_target over one step from Q = 0, representative local patch
    initial_ratio: float
    predicted_ratio: float  # (1 - gamma) P^Delta
    max_abs_B: float  # max_t max_{p,q} |B_{p,q}|
    max_abs_A: float  # max_t max_p |A_{p, v_{k,a_k(p)}}|
    # max_t max_p |A_own(B free) - A_own(B = 0)| / max|A| (NaN when not run beside)
    frozen_difference: float
    seconds: float
    # the exact probability that a masked query's own area has no unmasked patch, max over areas
    # (mean field drops it)
    own_area_empty: float = math.nan
    # per local area class n: (n, C_n, A_global at its switch, -log((1 - gamma) C_1^2 / (P C_n)) /
    # 2z); NaN level: no switch
    switches: tuple = ()
    # the representative local query up to its switch T1: max |A_{p,v_m}| (m not in {1, n}), max
    # projected |B_k| (every cluster and query, every step)
    phase1_other_fp: float = math.nan
    phase1_max_B: float = math.nan
    # the global patches (Appendix E): max competitor ratio on the first step, min own-area
    # attention at T
    global_competitor: float = math.nan
    global_min_attention: float = math.nan
    # ((k, max competitor ratio of cluster k's global queries on the first step), ...) (App. E)
    global_competitors: tuple = ()
    # the run's loss became non-finite: every trained reading is NaN (claims not evaluated) per
    # cluster k: its representative local query's readings (`Cluster`); the scalar fields above are
    # the worst cluster's (K = 1: cluster 0's), and `worst` names it per reading
    diverged: bool = False
    clusters: tuple = ()
    worst: tuple = ()  # ((reading, k), ...): the cluster of max_query_loss, initial_ratio, ...
    max_cluster_loss: float = math.nan  # max over classes and clusters of l_{p,k}(T) (K = 1: L_p)
    # the last takeoff (first recorded step with own-area attention >= 1/2) over the local query
    # classes and over the global ones: inf when one never took off, NaN for a diverged run
    takeoff_local: float = math.nan
    takeoff_global: float = math.nan
    # the phases.classify label of each row of `switches` (the same classes, the same order)
    class_labels: tuple = ()

    @property
    def delta(self) -> float:
        return self.cfg.delta

    @property
    def pp_ratio(self) -> float:
        """max|B| / max|A| over the run (NaN when A never moved: eta too small to leave Q = 0)."""
        return self.max_abs_B / self.max_abs_A if self.max_abs_A > 0 else math.nan


@dataclasses.dataclass(frozen=True)
class Cluster:
    """One cluster's representative local query (the first patch of its first local area): what
    the phase claims read from it."""

    k: int
    initial_ratio: float
    drop_at_switch: float
    switch_step: float
    switch_predicted_sizes: float
    phase1_other_fp: float
    phase1_max_B: float
    c_min: int  # the smallest area of cluster k
    # |dA_global| of the representative over the first GD step from Q = 0: Phase I's largest step
    # (the fall rate Attn_1 [Attn_1 (1 - Attn_1) + ...] shrinks as Attn_1 falls below 2/3)
    first_step_move: float = math.nan


def steps_at(
    P: int, steps: int, kappa_s: float, gamma: float = GAMMA_REF, eta: float = ETA_REF, K: int = 1
) -> int:
    """T = ceil(steps (P / P_ref)^(1 - kappa_s) (gamma_ref / gamma) (eta_ref / eta) K), >= 1: the
    phases' time scale K P^(1 - kappa_s) / (gamma eta z^3) (docs/derivations/mim-model.md §6, z = 1)
    relative to the reference problem, so `steps` means the same training at every P, gamma, eta and
    K."""
    scale = (P / P_REF) ** (1.0 - kappa_s) * (GAMMA_REF / gamma) * (ETA_REF / eta) * K
    return max(1, math.ceil(steps * scale))


# the reference run length of `steps` (check-theorems mim's default): the record interval
STEPS_REF = 1000
EPS_REF = 0.01  # the eps of the reference run length (check-theorems mim's default --eps)


def steps_for(steps: int, eps: float) -> int:
    """`steps` for Theorem 4.1's eps: T* = (the phases) + O(K / (gamma eta eps)), so below EPS_REF
    the run is lengthened by EPS_REF / eps (conservative: the phases' part does not grow); never
    shortened. At most 2^63 - 1 (an eps so small that the run is longer is then refused by its
    time estimate, never overflowed)."""
    scaled = steps * max(1.0, EPS_REF / eps)
    return max(1, math.ceil(scaled)) if scaled < 2**63 else 2**63 - 1


def rung_config(base: MIMConfig, P: int, steps: int, scaled: bool = True) -> MIMConfig:
    """`base` at P with T(P) steps (`steps` at every P unless `scaled`), recorded every 1/100 of the
    phases' time scale at the reference length (`steps_at(P, STEPS_REF)`), or of T when shorter: the
    switch sits at a fixed point of that scale, so a longer run records more often instead of
    letting the switch fall inside its first recorded interval."""
    T = steps_at(P, steps, base.kappa_s, base.mask_ratio, base.eta, base.K) if scaled else steps
    scale = steps_at(P, STEPS_REF, base.kappa_s, base.mask_ratio, base.eta, base.K)
    return base.replace(P=P, steps=T, record_every=max(1, min(T, scale) // 100))


def query_loss(t, step: int, cfg: MIMConfig) -> tuple[float, int]:
    """max over query classes (K > 1: joint cells) of L_p = (1/K) sum_k l_{p,k}, l_{p,k} = z^2/2
    [(1 - A_n)^2 + sum_{j != n} A_j^2] with n = a_k(p), at one recorded index (z = 1: const law),
    and the cluster k with the largest l_{p,k} in that class."""
    if "area_attention_cell" in t.observables:
        per = cluster_query_losses(t, step, cfg)
        mean = np.mean(per, axis=1)
        if np.all(np.isnan(mean)):
            return math.nan, 0
        g = int(np.nanargmax(mean))
        return float(np.max(mean)), int(np.nanargmax(per[g]))
    att = np.asarray(t["area_attention_class"])[step]  # (classes, N), own area first, NaN padding
    per = 0.5 * ((1.0 - att[:, 0]) ** 2 + np.nansum(att[:, 1:] ** 2, axis=1))
    worst = int(np.nanargmax(per)) if not np.all(np.isnan(per)) else 0
    of_area = records.class_index(cfg).of_area
    return float(np.max(per)), int(np.flatnonzero(np.any(of_area == worst, axis=1))[0])


def cluster_query_losses(t, step: int, cfg: MIMConfig) -> np.ndarray:
    """l_{p,k} per joint cell and cluster (cells, K) at one recorded index (K > 1 records)."""
    att = np.asarray(t["area_attention_cell"])[step]  # (cells, K, N) in area order, NaN padding
    cells = records.cell_index(cfg)
    g = np.arange(cells.size.size)
    return np.stack([_loss(att[g, k], cells.labels[:, k]) for k in range(cfg.K)], axis=1)


def _loss(att: np.ndarray, own: np.ndarray) -> np.ndarray:
    """z^2/2 [(1 - A_n)^2 + sum_{j != n} A_j^2] per row of `att` (rows, N), own area `own` (rows,),
    z = 1."""
    rows = np.arange(att.shape[0])
    others = np.where(np.arange(att.shape[1])[None, :] == own[:, None], np.nan, att)
    return 0.5 * ((1.0 - att[rows, own]) ** 2 + np.nansum(others**2, axis=1))


def run_rung(
    base: MIMConfig,
    P: int,
    steps: int,
    log: LOG,
    dynamics: str = JUDGED,
    advance: Optional[Callable[[], None]] = None,
    scaled: bool = True,
    beside: bool = True,
) -> Rung:
    """Run and summarise one size (the B-free run, B = 0 beside it unless not `beside`, one step
    from Q = 0). Every cluster's queries are read: each reading is the worst cluster's
    (`Rung.worst` names it)."""
    if base.z != "const":
        raise ValueError(
            f"MIMConfig.z = {base.z!r} is invalid for the ladder: the claims' per-query loss "
            f"needs z = 'const'"
        )
    cfg = rung_config(base, P, steps, scaled)
    t0 = time.perf_counter()
    t, first = _simulate(cfg, dynamics, first=True)
    frozen = _simulate(cfg, THEORY) if beside and dynamics != THEORY else t
    classes = [c for k in range(cfg.K) for c in phases.classify_all(t, k, cfg=cfg, initial=first)]
    local = [c for c in classes if c.own_area > 0]
    glob = [c for c in classes if c.own_area == 0]  # K = 1: the global patches share one class
    a_free, a_frozen = phases.own_area_fp(t, cfg=cfg), phases.own_area_fp(frozen, cfg=cfg)
    # a diverged run: every reading NaN (not evaluated)
    finite = bool(np.all(np.isfinite(np.asarray(t["loss"]))))
    max_a = float(np.nanmax(np.abs(a_free))) if finite else math.nan
    ran = (beside or dynamics == THEORY) and max_a > 0
    diff = float(np.nanmax(np.abs(a_free - a_frozen))) / max_a if ran else math.nan
    nan_if = (lambda v: v) if finite else (lambda v: math.nan)
    reps = tuple(representative(t, first, cfg, k) for k in range(cfg.K))
    by_ratio, by_drop = _worst_ratio(reps, cfg), _worst_drop(reps)
    rep = reps[by_drop]
    loss, loss_k = query_loss(t, -1, cfg)
    competitor = [c.competitor_ratio for c in glob]
    out = Rung(
        cfg=cfg,
        min_attention=nan_if(float(phases.own_area_attention(t, cfg=cfg).min())),
        max_query_loss=nan_if(loss),
        initial_query_loss=query_loss(t, 0, cfg)[0],
        max_cluster_loss=nan_if(
            float(np.max(cluster_query_losses(t, -1, cfg))) if cfg.K > 1 else loss
        ),
        labels=tuple(c.label for c in local) if finite else (),
        drop_at_switch=nan_if(rep.drop_at_switch),
        switch_step=nan_if(rep.switch_step),
        switch_predicted_sizes=rep.switch_predicted_sizes,
        initial_ratio=reps[by_ratio].initial_ratio,
        predicted_ratio=predicted_ratio(cfg),
        max_abs_B=nan_if(float(np.max(t["pp_max"]))),
        max_abs_A=max_a,
        frozen_difference=nan_if(diff),
        seconds=time.perf_counter() - t0,
        diverged=not finite,
        own_area_empty=own_area_empty(cfg),
        switches=class_switches(local, cfg) if finite else (),
        class_labels=class_labels(local, cfg) if finite else (),
        takeoff_local=nan_if(last_takeoff(local)),
        takeoff_global=nan_if(last_takeoff(glob)),
        phase1_other_fp=nan_if(rep.phase1_other_fp),
        phase1_max_B=nan_if(rep.phase1_max_B),
        global_competitor=float(np.max(competitor)) if glob else math.nan,
        global_competitors=tuple(
            (k, float(np.max([c.competitor_ratio for c in glob if c.k == k])))
            for k in sorted({c.k for c in glob})
        ),
        global_min_attention=nan_if(
            float(np.min([c.attention_final for c in glob])) if glob else math.nan
        ),
        clusters=tuple(
            dataclasses.replace(r, **{f: nan_if(getattr(r, f)) for f in TRAINED}) for r in reps
        ),
        worst=(
            ("max_query_loss", loss_k),
            ("initial_ratio", by_ratio),
            ("drop_at_switch", by_drop),
            ("global", _worst_global(glob)),
        ),
    )
    log(
        f"  P = {P}, K = {cfg.K}, T = {cfg.steps}, Delta = {cfg.delta:.3f}: min attention "
        f"{out.min_attention:.4f}, max|B|/max|A| {out.pp_ratio:.4g}, {out.seconds:.1f} s"
    )
    if advance is not None:
        advance()
    return out


TRAINED = ("drop_at_switch", "switch_step", "phase1_other_fp", "phase1_max_B")  # NaN: diverged


def predicted_ratio(cfg: MIMConfig) -> float:
    """(1 - gamma) P^Delta, the initial rate ratio's leading order (`phases.initial_rate_ratio`)."""
    return (1 - phases.gamma_of(cfg)) * cfg.P**cfg.delta


def representative(t, first, cfg: MIMConfig, k: int) -> Cluster:
    """Cluster k's representative local query: its initial rate ratio, the switch and Phase I."""
    p = local_query(cfg, k)
    sw = phases.classify(t, p, k, cfg=cfg, initial=first).switch
    ph1 = phase1(t, cfg, sw, k)
    return Cluster(
        k=k,
        initial_ratio=phases.initial_rate_ratio(first, p, k, cfg=cfg).measured,
        drop_at_switch=-sw.A_global_interpolated if sw else math.nan,
        switch_step=sw.step_interpolated if sw else math.nan,
        switch_predicted_sizes=sw.predicted_sizes if sw else math.nan,
        phase1_other_fp=ph1["phase1_other_fp"],
        phase1_max_B=ph1["phase1_max_B"],
        c_min=min(len(a) for a in cfg.areas[k]),
        first_step_move=first_move(first, p, k, cfg),
    )


def first_move(first, p: int, k: int, cfg: MIMConfig) -> float:
    """|A_{p,v_{k,1}}(1) - A_{p,v_{k,1}}(0)|: how far one GD step from Q = 0 moves query p's global
    FP correlation (`first` is `first_step`'s run)."""
    fp = records.patch_series(first, "fp_corr", p, k, cfg)
    return float(abs(fp[1, 0] - fp[0, 0]))


def first_nan_or(values: np.ndarray, pick) -> int:
    """The index of the first NaN of `values`, else pick(values)."""
    nan = np.isnan(values)
    return int(np.flatnonzero(nan)[0]) if np.any(nan) else int(pick(values))


def _worst_ratio(reps, cfg: MIMConfig) -> int:
    """The cluster whose initial ratio sits least on the prediction's side of 1 (a NaN first)."""
    side = math.copysign(1.0, math.log(predicted_ratio(cfg)))
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = np.array([np.log(r.initial_ratio) * side for r in reps])
    return first_nan_or(agree, np.argmin)


def _worst_drop(reps) -> int:
    """The cluster with the smallest Phase-I drop (one without a switch first)."""
    return first_nan_or(np.array([r.drop_at_switch for r in reps]), np.argmin)


def _worst_global(glob) -> int:
    """The cluster of the global query with the largest competitor ratio (0 without any)."""
    ratios = [c.competitor_ratio for c in glob]
    if not glob or all(math.isnan(x) for x in ratios):
        return glob[0].k if glob else 0
    return glob[int(np.nanargmax(ratios))].k


def own_area_empty(cfg: MIMConfig) -> float:
    """max over the areas of every cluster of Pr(U cap P_n = {} | p in M): the C_n - 1 other
    patches of p's area all masked when the P - |M| unmasked patches are drawn from the P - 1
    others (exact hypergeometric, Lemma A.7)."""
    unmasked = cfg.P - cfg.masked
    sizes = sorted({len(a) for cl in cfg.areas for a in cl})
    return max(float(stats.hypergeom(cfg.P - 1, n - 1, unmasked).pmf(0)) for n in sizes)


def class_switches(local: list, cfg: MIMConfig) -> tuple:
    """(k, n, C_n, A_global at the switch, size-corrected prediction) per local query class: per
    own area n for K = 1, per cluster k and joint cell for K > 1 (NaN: no switch)."""
    cell = records.cell_index(cfg).cell if cfg.K > 1 else None
    seen: dict = {}
    for c in local:
        key = (c.k, c.own_area if cell is None else int(cell[c.p]))
        if key not in seen:
            sw = c.switch
            seen[key] = (
                c.k,
                c.own_area,
                len(cfg.areas[c.k][c.own_area]),
                sw.A_global_interpolated if sw else math.nan,
                sw.predicted_sizes if sw else math.nan,
            )
    return tuple(seen.values())


def class_labels(local: list, cfg: MIMConfig) -> tuple:
    """The phases.classify label of each class `class_switches` lists, in its order."""
    cell = records.cell_index(cfg).cell if cfg.K > 1 else None
    seen: dict = {}
    for c in local:
        seen.setdefault((c.k, c.own_area if cell is None else int(cell[c.p])), c.label)
    return tuple(seen.values())


def last_takeoff(classes: list) -> float:
    """The latest takeoff step over `classes` (inf when one never took off; -inf with none)."""
    steps = [math.inf if c.takeoff is None else float(c.takeoff) for c in classes]
    return max(steps, default=-math.inf)


def phase1(t, cfg: MIMConfig, sw, k: int = 0) -> dict:
    """Up to cluster k's representative local query's switch T1 (Phase I): the largest
    |A_{p,v_{k,m}}| off its global and own areas (at the records, and at T1 interpolated as the
    scale |A_1(T1)| is), and the largest projected |B_{k'}| of any cluster k' and query at every
    step up to T1 (`projected_pp_max`); NaN without a switch."""
    if sw is None:
        return {"phase1_other_fp": math.nan, "phase1_max_B": math.nan}
    p = local_query(cfg, k)
    n = phases.own_area(t, p, k, cfg=cfg)
    steps = np.asarray(t.steps, dtype=float)
    upto = steps <= sw.step_interpolated
    fp = records.patch_series(t, "fp_corr", p, k, cfg)
    others = [m for m in range(1, cfg.areas_per_cluster[k]) if m != n]
    other = 0.0
    if others:
        at_t1 = [np.interp(sw.step_interpolated, steps, fp[:, m]) for m in others]
        other = max(float(np.nanmax(np.abs(fp[upto][:, others]))), float(np.max(np.abs(at_t1))))
    return {"phase1_other_fp": other, "phase1_max_B": projected_pp_max(t, sw.step_interpolated)}


def projected_pp_max(t, until: float) -> float:
    """max over the times s <= until, the clusters k' and (p, q) of |B_{k',p,q}| (K = 1: |B|), read
    at every step (`reduced.mim.simulate(every_step=True)`) and at `until` itself, interpolated
    linearly between its two steps (as the scale A_1(T1) is); NaN when the run did not record every
    step."""
    if "pp_cluster_max_steps" not in t.observables:
        return math.nan
    steps, values = step_series(t.steps, t["pp_cluster_max_steps"])
    steps = np.concatenate([[0], steps])  # step 0: Q = 0
    values = np.concatenate(
        [np.asarray(t["pp_max"])[:1, None] * np.ones((1, values.shape[1])), values]
    )
    at = [np.interp(until, steps, values[:, k]) for k in range(values.shape[1])]
    return float(np.max(np.concatenate([np.ravel(values[steps <= until]), at])))


def first_step(cfg: MIMConfig, dynamics: str = JUDGED) -> Trajectory:
    """One GD step from Q = 0 under `dynamics`, recorded at steps 0 and 1 (the phases'
    resolution-free start)."""
    return _simulate(cfg.replace(steps=1, record_every=1), dynamics)


def initial_rate_ratio(cfg: MIMConfig, dynamics: str = JUDGED) -> phases.RateRatio:
    """The representative local query's |dA_global| / dA_target over one GD step from Q = 0 under
    `dynamics`."""
    return phases.initial_rate_ratio(first_step(cfg, dynamics), local_query(cfg), cfg=cfg)


def local_query(cfg: MIMConfig, k: int = 0) -> int:
    """The first patch of the first local area of cluster k (its representative local query)."""
    return int(cfg.areas[k][1][0])


def _simulate(cfg: MIMConfig, approximation: str, first: bool = False):
    """reduced.mim.simulate without the P x P pp_corr (max |B| stays as pp_max), max |B_k| recorded
    at every step; `first`: (the run, its `first_step`) from one compiled program
    (`reduced.mim.simulate_with_first_step`)."""
    if first and cfg.steps < 1:  # no first step inside the run: a run of its own
        return _simulate(cfg, approximation), first_step(cfg, approximation)
    if first:
        return tuple(
            _without_pp(t)
            for t in reduced.mim.simulate_with_first_step(cfg, approximation, every_step=True)
        )
    return _without_pp(reduced.mim.simulate(cfg, approximation, every_step=True))


def _without_pp(t: Trajectory) -> Trajectory:
    return Trajectory(
        t.steps, {k: v for k, v in t.observables.items() if k != "pp_corr"}, t.meta, t.final
    )
