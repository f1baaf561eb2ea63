"""The P ladder of the MIM claims: one B-free reduced run per size, summarised by the numbers the claims judge.

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

from . import phases, records
from .config import MIMConfig

JUDGED = "mean_field"  # B free, counts at their means: the judged dynamics
THEORY = "pp_frozen+mean_field"  # the theory's approximation (B = 0), reported beside
LADDER = (256, 1024, 4096, 16384)  # the full ladder of perfect squares (grid areas)
P_REF, GAMMA_REF, ETA_REF = 1024, 0.5, 1.0  # the reference problem of `steps` (the defaults)
QUICK_LADDER = (256, 1024, 4096)  # CI-sized (the tests and --quick): the smallest three grid sizes that realise the same Delta (0.404, 0.400, 0.396; P = 64 realises 0.44, another problem)


@dataclasses.dataclass(frozen=True)
class Rung:
    """What the claims read from one size of the ladder (all at the run's last recorded step T unless named)."""

    cfg: MIMConfig
    min_attention: float  # min over patches of Attn_{p -> U_{k,a_k(p)}}(T)
    max_query_loss: float  # max over query classes of l_p(T) = z^2/2 [(1 - A_n)^2 + sum_{j != n} A_j^2]
    initial_query_loss: float  # the same at step 0
    labels: tuple  # phases.classify label of every local patch
    drop_at_switch: float  # -A_global at Lemma 5.3's switch of the representative local patch (NaN: no switch)
    switch_step: float
    switch_predicted_sizes: float  # Lemma 5.3's condition Attn_1^2 = Attn_n at Q = 0 attentions with p's own area sizes
    initial_ratio: float  # |dA_global| / dA_target over one step from Q = 0, representative local patch
    predicted_ratio: float  # (1 - gamma) P^Delta
    max_abs_B: float  # max_t max_{p,q} |B_{p,q}|
    max_abs_A: float  # max_t max_p |A_{p, v_{k,a_k(p)}}|
    frozen_difference: float  # max_t max_p |A_own(B free) - A_own(B = 0)| / max|A| (NaN when not run beside)
    seconds: float
    # the exact probability that a masked query's own area has no unmasked patch, max over areas
    # (mean field drops it)
    own_area_empty: float = math.nan
    # per local area class n: (n, C_n, A_global at its switch, -log((1 - gamma) C_1^2 / (P C_n)) /
    # 2z); NaN level: no switch
    switches: tuple = ()
    # the representative local query up to its switch T1: max |A_{p,v_m}| (m not in {1, n}), max |B|
    # (all queries)
    phase1_other_fp: float = math.nan
    phase1_max_B: float = math.nan
    # the global patches (Appendix E): max competitor ratio on the first step, min own-area
    # attention at T
    global_competitor: float = math.nan
    global_min_attention: float = math.nan
    diverged: bool = False  # the run's loss became non-finite: every trained reading is NaN (claims not evaluated)

    @property
    def delta(self) -> float:
        return self.cfg.delta

    @property
    def pp_ratio(self) -> float:
        """max|B| / max|A| over the run (NaN when A never moved: eta too small to leave Q = 0)."""
        return self.max_abs_B / self.max_abs_A if self.max_abs_A > 0 else math.nan


def steps_at(P: int, steps: int, kappa_s: float, gamma: float = GAMMA_REF, eta: float = ETA_REF,
             K: int = 1) -> int:
    """T = ceil(steps (P / P_ref)^(1 - kappa_s) (gamma_ref / gamma) (eta_ref / eta) K), >= 1: the
    phases' time scale K P^(1 - kappa_s) / (gamma eta z^3) (docs/derivations/mim-model.md §6, z = 1)
    relative to the reference problem, so `steps` means the same training at every P, gamma, eta and
    K."""
    scale = (P / P_REF) ** (1.0 - kappa_s) * (GAMMA_REF / gamma) * (ETA_REF / eta) * K
    return max(1, math.ceil(steps * scale))


STEPS_REF = 1000  # the reference run length of `steps` (check-theorems mim's default): the record interval
EPS_REF = 0.01  # the eps of the reference run length (check-theorems mim's default --eps)


def steps_for(steps: int, eps: float) -> int:
    """`steps` for Theorem 4.1's eps: T* = (the phases) + O(K / (gamma eta eps)), so below EPS_REF the run is
    lengthened by EPS_REF / eps (conservative: the phases' part does not grow); never shortened."""
    return max(1, math.ceil(steps * max(1.0, EPS_REF / eps)))


def rung_config(base: MIMConfig, P: int, steps: int, scaled: bool = True) -> MIMConfig:
    """`base` at P with T(P) steps (`steps` at every P unless `scaled`), recorded every 1/100 of the
    phases' time scale at the reference length (`steps_at(P, STEPS_REF)`), or of T when shorter: the
    switch sits at a fixed point of that scale, so a longer run records more often instead of letting
    the switch fall inside its first recorded interval."""
    T = steps_at(P, steps, base.kappa_s, base.mask_ratio, base.eta, base.K) if scaled else steps
    scale = steps_at(P, STEPS_REF, base.kappa_s, base.mask_ratio, base.eta, base.K)
    return base.replace(P=P, steps=T, record_every=max(1, min(T, scale) // 100))


def query_loss(t, step: int) -> float:
    """max over query classes of z^2/2 [(1 - A_n)^2 + sum_{j != n} A_j^2] at one recorded index (z = 1: const law)."""
    att = np.asarray(t["area_attention_class"])[step]  # (classes, N), own area first, NaN padding
    per = 0.5 * ((1.0 - att[:, 0]) ** 2 + np.nansum(att[:, 1:] ** 2, axis=1))
    return float(np.max(per))


def run_rung(base: MIMConfig, P: int, steps: int, log: LOG, dynamics: str = JUDGED,
             advance: Optional[Callable[[], None]] = None, scaled: bool = True, beside: bool = True) -> Rung:
    """Run and summarise one size (the B-free run, B = 0 beside it unless not `beside`, one step from Q = 0)."""
    if base.z != "const":
        raise ValueError(f"MIMConfig.z = {base.z!r} is invalid for the ladder: the claims' per-query loss needs z = 'const'")
    cfg = rung_config(base, P, steps, scaled)
    t0 = time.perf_counter()
    t = _simulate(cfg, dynamics)
    frozen = _simulate(cfg, THEORY) if beside and dynamics != THEORY else t
    first = first_step(cfg, dynamics)
    classes = phases.classify_all(t, cfg=cfg, initial=first)
    local = [c for c in classes if c.own_area > 0]
    rep = phases.classify(t, local_query(cfg), cfg=cfg, initial=first)
    glob = [c for c in classes if c.own_area == 0][:1]  # the global patches share one class
    a_free, a_frozen = phases.own_area_fp(t, cfg=cfg), phases.own_area_fp(frozen, cfg=cfg)
    finite = bool(np.all(np.isfinite(np.asarray(t["loss"]))))  # a diverged run: every reading NaN (not evaluated)
    max_a = float(np.nanmax(np.abs(a_free))) if finite else math.nan
    rr = phases.initial_rate_ratio(first, local_query(cfg), cfg=cfg)
    ran = (beside or dynamics == THEORY) and max_a > 0
    diff = float(np.nanmax(np.abs(a_free - a_frozen))) / max_a if ran else math.nan
    nan_if = (lambda v: v) if finite else (lambda v: math.nan)
    out = Rung(cfg=cfg, min_attention=nan_if(float(phases.own_area_attention(t, cfg=cfg).min())),
               max_query_loss=nan_if(query_loss(t, -1)), initial_query_loss=query_loss(t, 0),
               labels=tuple(c.label for c in local) if finite else (),
               drop_at_switch=nan_if(-rep.switch.A_global_interpolated if rep.switch else math.nan),
               switch_step=nan_if(rep.switch.step_interpolated if rep.switch else math.nan),
               switch_predicted_sizes=rep.switch.predicted_sizes if rep.switch else math.nan,
               initial_ratio=rr.measured, predicted_ratio=rr.predicted, max_abs_B=nan_if(float(np.max(t["pp_max"]))),
               max_abs_A=max_a, frozen_difference=nan_if(diff), seconds=time.perf_counter() - t0,
               diverged=not finite, own_area_empty=own_area_empty(cfg),
               switches=class_switches(local, cfg) if finite else (),
               **{k: nan_if(v) for k, v in phase1(t, cfg, rep.switch).items()},
               global_competitor=glob[0].competitor_ratio if glob else math.nan,
               global_min_attention=nan_if(glob[0].attention_final if glob else math.nan))
    log(f"  P = {P}, T = {cfg.steps}, Delta = {cfg.delta:.3f}: min attention {out.min_attention:.4f}, "
        f"max|B|/max|A| {out.pp_ratio:.4g}, {out.seconds:.1f} s")
    if advance is not None:
        advance()
    return out


def own_area_empty(cfg: MIMConfig) -> float:
    """max over the areas of cluster 0 of Pr(U cap P_n = {} | p in M): the C_n - 1 other patches of
    p's area all masked when the P - |M| unmasked patches are drawn from the P - 1 others (exact
    hypergeometric, Lemma A.7)."""
    unmasked = cfg.P - cfg.masked
    return max(float(stats.hypergeom(cfg.P - 1, len(a) - 1, unmasked).pmf(0)) for a in cfg.areas[0])


def class_switches(local: list, cfg: MIMConfig) -> tuple:
    """(n, C_n, A_global at the switch, size-corrected prediction) per local area class (NaN: no
    switch)."""
    seen: dict = {}
    for c in local:
        if c.own_area not in seen:
            sw = c.switch
            seen[c.own_area] = (c.own_area, len(cfg.areas[0][c.own_area]),
                                sw.A_global_interpolated if sw else math.nan,
                                sw.predicted_sizes if sw else math.nan)
    return tuple(seen.values())


def phase1(t, cfg: MIMConfig, sw) -> dict:
    """Up to the representative local query's switch T1 (Phase I): the largest |A_{p,v_m}| off its
    global and own areas, and the largest |B| of any query; NaN without a switch."""
    if sw is None:
        return {"phase1_other_fp": math.nan, "phase1_max_B": math.nan}
    p = local_query(cfg)
    n = phases.own_area(t, p, cfg=cfg)
    upto = np.asarray(t.steps, dtype=float) <= sw.step_interpolated
    fp = records.patch_series(t, "fp_corr", p, 0, cfg)[upto]
    others = [m for m in range(1, cfg.areas_per_cluster[0]) if m != n]
    return {"phase1_other_fp": float(np.nanmax(np.abs(fp[:, others]))) if others else 0.0,
            "phase1_max_B": float(np.max(np.asarray(t["pp_max"])[upto]))}


def first_step(cfg: MIMConfig, dynamics: str = JUDGED) -> Trajectory:
    """One GD step from Q = 0 under `dynamics`, recorded at steps 0 and 1 (the phases' resolution-free start)."""
    return _simulate(cfg.replace(steps=1, record_every=1), dynamics)


def initial_rate_ratio(cfg: MIMConfig, dynamics: str = JUDGED) -> phases.RateRatio:
    """The representative local query's |dA_global| / dA_target over one GD step from Q = 0 under `dynamics`."""
    return phases.initial_rate_ratio(first_step(cfg, dynamics), local_query(cfg), cfg=cfg)


def local_query(cfg: MIMConfig) -> int:
    """The first patch of the first local area of cluster 0 (the representative local query)."""
    return int(cfg.areas[0][1][0])


def _simulate(cfg: MIMConfig, approximation: str) -> Trajectory:
    """reduced.mim.simulate without the P x P pp_corr (max |B| stays as pp_max)."""
    t = reduced.mim.simulate(cfg, approximation)
    return Trajectory(t.steps, {k: v for k, v in t.observables.items() if k != "pp_corr"}, t.meta)
