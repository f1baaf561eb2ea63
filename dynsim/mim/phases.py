"""Phase analysis of one MIM trajectory for one query patch p of cluster k
(docs/derivations/mim-model.md §5-§6, Theorem 4.1 / F.3).

Everything is read from the recorded FP correlations A_{p,v_{k,j}} = `fp_corr[:, p, k, j]` and the
unmasked-area attention `area_attention[:, p, k, j]` (or their per-class records,
`records.patch_series`), for the global area j = 0 ("global") and p's own area n = a_k(p)
("target"). Rates are finite differences per step over each recorded interval (s_i, s_{i+1}], so
their resolution is the trajectory's `record_every`; a trajectory whose first interval is one step
long measures the rates at Q = 0, which is what the initial prediction (1 - gamma) P^Delta
(docs/derivations/mim-model.md §5) is about. Vocabulary (docs/derivations/mim-model.md §6, "Phase
narrative"), for a local query (n > 0):
  - stage 1 interval: the global FP correlation falls faster than the target grows, dA_global < 0
    and
    |dA_global| > dA_target (rate ratio |dA_global| / dA_target > 1);
  - switch (Lemma 5.3): the first interval, after a stage-1 interval, whose target growth exceeds
    the global's
    rate of change, dA_target > |dA_global|;
  - takeoff: the first recorded step at which the own-area attention Attn_{p -> U_{k,n}} reaches 1/2
    (the rapid
    growth stage of Phase II has made the own area's unmasked patches the majority of p's
      attention).
A global query (n = 0) has no separate global area to decouple from: its target is the global area
itself, which goes straight to Phase II (docs/derivations/mim-model.md §6, Appendix E); its rate
ratio is undefined (NaN) and it has no switch.

Pure functions of a `Trajectory` (numpy); the config (areas, gamma, P, the latent law) is rebuilt
from `t.meta["config"]` unless passed as `cfg`."""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache
from typing import Any, Optional

import numpy as np

from . import records
from .config import MIMConfig
from .partition import area_of

# own-area attention that marks the takeoff (the own area holds half of p's attention)
TAKEOFF_LEVEL = 0.5


# ------------------------------------------------------------------------------------------ helpers


def config_of(t, cfg: Optional[MIMConfig] = None) -> MIMConfig:
    """The MIMConfig of a trajectory: `cfg` if given, else rebuilt from `t.meta["config"]`
    (environment.meta)."""
    if cfg is not None:
        return cfg
    try:
        return MIMConfig(**t.meta["config"])
    except KeyError:
        raise ValueError(
            "the trajectory has no meta['config']: pass cfg= (the MIMConfig that produced it)"
        ) from None


def own_area(t, p: int, k: int = 0, *, cfg: Optional[MIMConfig] = None) -> int:
    """a_k(p): the index of the area of cluster k that holds patch p (0 = the global area),
    docs/derivations/mim-model.md §1."""
    c = config_of(t, cfg)
    _check_pk(c, p, k)
    return int(area_index(c)[k, p])


@lru_cache(maxsize=32)
def area_index(cfg: MIMConfig) -> np.ndarray:
    """a_k(p) for every cluster and patch, shape (K, P) (cached per config; read-only)."""
    out = area_of(cfg.areas, cfg.P)
    out.setflags(write=False)
    return out


def z_scale(cfg: MIMConfig) -> tuple[float, str]:
    """The z that divides the switching point -(Delta/2) log P / z (Lemma 5.3): 1 for "const", else
    the law's mean."""
    if cfg.z == "const":
        return 1.0, "z = 1 (const)"
    if cfg.z[0] == "uniform":
        L, U = cfg.z[1], cfg.z[2]
        return 0.5 * (
            L + U
        ), f"z = E[z] = {0.5 * (L + U):.4g} of Uniform[{L:g}, {U:g}] (the lemma is for one z)"
    mean = float(sum(v * q for v, q in cfg.z))
    return mean, f"z = E[z] = {mean:.4g} of the finite law (the lemma is for one z)"


def gamma_of(cfg: MIMConfig) -> float:
    """The realised masking ratio |M| / P (equal to mask_ratio up to the rounding of |M|)."""
    return cfg.masked / cfg.P


def _check_pk(cfg: MIMConfig, p: int, k: int) -> None:
    if not 0 <= int(p) < cfg.P:
        raise ValueError(f"patch p = {p} is out of range: must lie in 0..{cfg.P - 1}")
    if not 0 <= int(k) < cfg.K:
        raise ValueError(f"cluster k = {k} is out of range: must lie in 0..{cfg.K - 1}")


def _series(t, p: int, k: int, cfg: Optional[MIMConfig]):
    """(cfg, n, steps, A_global, A_target, own-area attention) for query p of cluster k (per patch
    or per class)."""
    c = config_of(t, cfg)
    n = own_area(t, p, k, cfg=c)
    fp = records.patch_series(t, "fp_corr", p, k, c)
    steps = np.asarray(t.steps, dtype=float)
    att = (
        records.patch_series(t, "area_attention", p, k, c)[:, n]
        if records.recorded(t, "area_attention")
        else None
    )
    return c, n, steps, fp[:, 0], fp[:, n], att


# -------------------------------------------------------------------------------------------- rates


@dataclasses.dataclass(frozen=True)
class Rates:
    """Per recorded interval (start, stop]: dA/dt of the global area (0) and of the own area (n),
    per step."""

    start: np.ndarray  # (intervals,) recorded step at the start of each interval
    stop: np.ndarray  # (intervals,) recorded step at its end
    d_global: np.ndarray  # (A_global(stop) - A_global(start)) / (stop - start)
    d_target: np.ndarray  # same for the own area's A_target
    own_area: int  # n = a_k(p); 0 means p is a global patch and d_global == d_target

    @property
    def ratio(self) -> np.ndarray:
        """|dA_global| / dA_target per interval (inf where the target does not grow, NaN for a
        global patch)."""
        if self.own_area == 0:
            return np.full(self.d_global.shape, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                self.d_target > 0,
                np.abs(self.d_global) / np.where(self.d_target > 0, self.d_target, 1.0),
                np.inf,
            )

    @property
    def stage1(self) -> np.ndarray:
        """Intervals where the global falls faster than the target grows: dA_global < 0 and
        |dA_global| > dA_target."""
        if self.own_area == 0:
            return np.zeros(self.d_global.shape, dtype=bool)
        return (self.d_global < 0) & (-self.d_global > self.d_target)

    @property
    def target_leads(self) -> np.ndarray:
        """Intervals where the target grows faster than the global moves: dA_target > |dA_global|
        (Lemma 5.3)."""
        if self.own_area == 0:
            return np.zeros(self.d_global.shape, dtype=bool)
        return self.d_target > np.abs(self.d_global)


def rates(t, p: int, k: int = 0, *, cfg: Optional[MIMConfig] = None) -> Rates:
    """dA_global/dt and dA_target/dt per recorded interval for query p of cluster k (Lemma 5.1,
    docs/derivations/mim-model.md §6)."""
    _, n, steps, g, a, _ = _series(t, p, k, cfg)
    if steps.size < 2:
        raise ValueError("the trajectory has fewer than two recorded steps: no rate can be formed")
    dt = np.diff(steps)
    return Rates(
        steps[:-1].astype(np.int64), steps[1:].astype(np.int64), np.diff(g) / dt, np.diff(a) / dt, n
    )


# ------------------------------------------------------------------------------- initial rate ratio


@dataclasses.dataclass(frozen=True)
class RateRatio:
    """|dA_global| / dA_target over the first recorded interval beside its leading-order prediction
    (docs/derivations/mim-model.md §5)."""

    measured: float  # NaN for a global patch (undefined)
    predicted: float  # (1 - gamma) P^Delta with the realised Delta of the config (cluster means)
    # (1 - gamma) C_{k,1}^2 / (P C_{k,n}): the same formula with p's own area sizes
    predicted_sizes: float
    # predicted_sizes (1 - Attn_1(0)): the next-order factor of the global rate
    predicted_corrected: float
    delta: float  # Delta = 2 kappa_c - kappa_s - 1 of the realised areas
    interval: tuple[int, int]  # the first recorded interval (start, stop)
    d_global: float
    d_target: float
    own_area: int
    note: str

    @property
    def factor(self) -> float:
        """measured / predicted (reported, not judged: the prediction is leading order)."""
        return self.measured / self.predicted


def initial_rate_ratio(t, p: int, k: int = 0, *, cfg: Optional[MIMConfig] = None) -> RateRatio:
    """|dA_global| / dA_target over the first recorded interval vs (1 - gamma) P^Delta
    (docs/derivations/mim-model.md §5, derivation of eq. 4.1)."""
    c = config_of(t, cfg)
    r = rates(t, p, k, cfg=c)
    n = r.own_area
    gamma = gamma_of(c)
    sizes = [len(a) for a in c.areas[k]]
    predicted = (1 - gamma) * c.P**c.delta
    # Attn_1 at Q = 0: every score 0, (1 - gamma) C_1 of the P keys unmasked
    at0 = (1 - gamma) * sizes[0] / c.P
    if n == 0:
        return RateRatio(
            math.nan,
            predicted,
            math.nan,
            math.nan,
            c.delta,
            (int(r.start[0]), int(r.stop[0])),
            float(r.d_global[0]),
            float(r.d_target[0]),
            0,
            "global patch: the target is the global area itself, the ratio is undefined (not used)",
        )
    pred_sizes = (1 - gamma) * sizes[0] ** 2 / (c.P * sizes[n])
    note = (
        f"first interval ({int(r.start[0])}, {int(r.stop[0])}]; prediction leading order: "
        f"Attn_j(0) = (1 - gamma) C_j / P, the global rate ~ Attn_1^2 and the target rate ~ "
        f"Attn_n; the global rate carries a factor (1 - Attn_1(0)) = {1 - at0:.3f} the leading "
        f"order drops"
    )
    return RateRatio(
        float(r.ratio[0]),
        predicted,
        pred_sizes,
        pred_sizes * (1 - at0),
        c.delta,
        (int(r.start[0]), int(r.stop[0])),
        float(r.d_global[0]),
        float(r.d_target[0]),
        n,
        note,
    )


# ------------------------------------------------------------------------------------------- switch


@dataclasses.dataclass(frozen=True)
class Switch:
    """The switching point of Lemma 5.3: where the target's growth overtakes the global's fall."""

    # the recorded step that starts the first interval with dA_target > |dA_global| after a stage-1
    # one
    step: int
    A_global: float  # A_{p,v_{k,1}} at `step`
    # where log(|dA_global| / dA_target) crosses 0, linear between interval midpoints
    step_interpolated: float
    A_global_interpolated: float  # A_global there (linear interpolation of the recorded values)
    predicted: float  # -(Delta / 2) log P / z (Lemma 5.3, leading order in log P)
    # -log((1 - gamma) C_1^2 / (P C_n)) / (2 z): the same condition Attn_1^2 = Attn_n at
    predicted_sizes: float
    #                         Q = 0 attentions, keeping the O(1) term -log(1 - gamma) / (2 z) the
    #                           leading order drops
    stage1_from: int  # start of the first stage-1 interval
    z: float
    z_note: str


def switch(t, p: int, k: int = 0, *, cfg: Optional[MIMConfig] = None) -> Optional[Switch]:
    """Lemma 5.3's switch: first recorded step with dA_target > |dA_global| after a stage-1
    interval; None if none."""
    c = config_of(t, cfg)
    r = rates(t, p, k, cfg=c)
    if r.own_area == 0:
        return None
    s1 = np.flatnonzero(r.stage1)
    if s1.size == 0:
        return None
    after = np.flatnonzero(r.target_leads[s1[0] + 1 :])
    if after.size == 0:
        return None
    i = int(s1[0] + 1 + after[0])
    _, n, steps, g, _, _ = _series(t, p, k, c)
    z, z_note = z_scale(c)
    sizes = [len(a) for a in c.areas[k]]
    gamma = gamma_of(c)
    # interpolate log ratio between the midpoints of the last interval before i and interval i
    mid = 0.5 * (r.start + r.stop).astype(float)
    with np.errstate(divide="ignore"):
        lr = np.log(r.ratio[i - 1 : i + 1])
    if np.all(np.isfinite(lr)) and lr[0] > 0 >= lr[1]:
        x = float(mid[i - 1] + (mid[i] - mid[i - 1]) * lr[0] / (lr[0] - lr[1]))
    else:
        x = float(r.start[i])
    return Switch(
        step=int(r.start[i]),
        A_global=float(g[np.searchsorted(steps, r.start[i])]),
        step_interpolated=x,
        A_global_interpolated=float(np.interp(x, steps, g)),
        predicted=-(c.delta / 2) * math.log(c.P) / z,
        predicted_sizes=-math.log((1 - gamma) * sizes[0] ** 2 / (c.P * sizes[n])) / (2 * z),
        stage1_from=int(r.start[s1[0]]),
        z=z,
        z_note=z_note,
    )


# ------------------------------------------------------------------------------------------ takeoff


def takeoff(
    t, p: int, k: int = 0, *, level: float = TAKEOFF_LEVEL, cfg: Optional[MIMConfig] = None
) -> Optional[int]:
    """First recorded step where Attn_{p -> U_{k,n}} >= level (docs/derivations/mim-model.md §5
    "exit of the rapid-growth stage"); None if never."""
    *_, att = _series(t, p, k, cfg)
    if att is None:
        raise ValueError("the trajectory has no area_attention observable")
    hit = np.flatnonzero(att >= level)
    return int(t.steps[hit[0]]) if hit.size else None


# ----------------------------------------------------------------------------------------- classify


@dataclasses.dataclass(frozen=True)
class Phases:
    """The verdict for one query and the numbers behind it."""

    label: str  # "two-phase", "one-phase" or "undetermined"
    reason: str
    p: int
    k: int
    own_area: int
    initial_ratio: float  # |dA_global| / dA_target over the first interval (NaN for a global patch)
    # global patch only: max_{m > 0} (-dA_m) / dA_target over the first interval (else NaN)
    competitor_ratio: float
    first_interval_stage1: bool
    switch: Optional[Switch]
    takeoff: Optional[int]
    A_global_at_takeoff: float
    A_global_min: float
    A_global_final: float
    A_target_final: float
    attention_final: float  # own-area attention at the last recorded step

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def classify(t, p: int, k: int = 0, *, cfg: Optional[MIMConfig] = None, initial=None) -> Phases:
    """Two-phase vs one-phase dynamics of query p (Theorem 4.1 / F.3, docs/derivations/mim-model.md
    §6 "Phase narrative").

    "two-phase": p is local (n = a_k(p) > 0), the first interval is stage 1 (dA_global < 0 and
    |dA_global| > dA_target: the global FP correlation falls faster than the target grows from the
    start, a real stage and not a later blip), and a switch (dA_target > |dA_global|) follows.
    "one-phase": p is local and the first interval is not stage 1 (Delta < 0); or p is global (its
    target is the global area, Appendix E) and no other area's FP correlation falls faster than the
    target grows on the first interval (competitor ratio <= 1). "undetermined": stage 1 first but no
    switch recorded, or a global patch with competitor ratio > 1. The first interval is the first
    recorded one, or with `initial` (a one-step run, `ladder.first_step`) the first GD step, which
    makes the label independent of record_every (docs/mim.md §6b)."""
    c = config_of(t, cfg)
    r = rates(t if initial is None else initial, p, k, cfg=c)
    _, n, steps, g, a, att = _series(t, p, k, c)
    sw = switch(t, p, k, cfg=c)
    to = takeoff(t, p, k, cfg=c) if att is not None else None
    first = bool(r.stage1[0])
    ratio0 = float(r.ratio[0])
    competitor = math.nan
    if n == 0:
        competitor = _competitor_ratio(t if initial is None else initial, p, k, c)
        if competitor <= 1:
            label = "one-phase"
            reason = (
                f"global patch: its target is the global area; the fastest-falling other area "
                f"falls {competitor:.3g} times as fast as the target grows on the first "
                f"interval (<= 1)"
            )
        else:
            label = "undetermined"
            reason = (
                f"global patch, but a local area's FP correlation falls {competitor:.3g} times "
                f"as fast as the "
                "target grows on the first interval: not the straight-to-Phase-II dynamics of "
                "Appendix E"
            )
    elif first and sw is not None:
        label = "two-phase"
        reason = (
            f"|dA_global| / dA_target = {ratio0:.3g} > 1 on the first interval, switch at step "
            f"{sw.step} (A_global = {sw.A_global:.3g})"
        )
    elif first and initial is not None and bool(rates(t, p, k, cfg=c).target_leads[0]):
        label, reason = (
            "undetermined",
            (
                f"stage 1 at the first GD step (ratio {ratio0:.3g} > 1), but the switch "
                f"falls inside the first recorded interval (0, {int(steps[1])}]"
            ),
        )
    elif first:
        label = "undetermined"
        reason = (
            f"stage 1 from the start (ratio {ratio0:.3g} > 1) but no switch by step "
            f"{int(steps[-1])}: run longer"
        )
    else:
        label = "one-phase"
        reason = (
            f"|dA_global| / dA_target = {ratio0:.3g} <= 1 on the first interval: the "
            f"target leads from the start"
        )
    return Phases(
        label=label,
        reason=reason,
        p=int(p),
        k=int(k),
        own_area=n,
        initial_ratio=ratio0,
        competitor_ratio=competitor,
        first_interval_stage1=first,
        switch=sw,
        takeoff=to,
        A_global_at_takeoff=float(g[np.searchsorted(steps, to)]) if to is not None else math.nan,
        A_global_min=float(np.min(g)),
        A_global_final=float(g[-1]),
        A_target_final=float(a[-1]),
        attention_final=float(att[-1]) if att is not None else math.nan,
    )


def _competitor_ratio(t, p: int, k: int, cfg: MIMConfig) -> float:
    """For a global query: the fastest fall of another area's FP correlation over the target's
    growth, first interval."""
    fp = records.patch_series(t, "fp_corr", p, k, cfg)[:2, : cfg.areas_per_cluster[k]]
    d = (fp[1] - fp[0]) / float(t.steps[1] - t.steps[0])
    fall = float(np.max(-d[1:]))
    return fall / d[0] if d[0] > 0 else math.inf


def classify_all(t, k: int = 0, *, cfg: Optional[MIMConfig] = None, initial=None) -> list[Phases]:
    """`classify` for every patch p of cluster k (a loop over patches, not over steps); each area
    (per-class records) or joint cell (per-cell records, K > 1 mean field) is classified once."""
    c = config_of(t, cfg)
    if records.CELL_KEYS["fp_corr"] in t.observables:  # K > 1 mean field: one series per cell
        cells = records.cell_index(c)
        first = [classify(t, int(p), k, cfg=c, initial=initial) for p in cells.first]
        return [dataclasses.replace(first[g], p=p) for p, g in enumerate(cells.cell.tolist())]
    if "fp_corr" in t.observables:
        return [classify(t, p, k, cfg=c, initial=initial) for p in range(c.P)]
    a = area_index(c)[k]
    first = {
        int(n): classify(t, int(np.flatnonzero(a == n)[0]), k, cfg=c, initial=initial)
        for n in np.unique(a)
    }
    return [dataclasses.replace(first[int(a[p])], p=p) for p in range(c.P)]


def own_area_attention(t, step: int = -1, *, cfg: Optional[MIMConfig] = None) -> np.ndarray:
    """Attn_{p -> U_{k,a_k(p)}} at one recorded index for every (p, k), shape (P, K) (Theorem 4.1,
    area-wide attention)."""
    return records.own(t, "area_attention", config_of(t, cfg), step)


def own_area_fp(t, *, cfg: Optional[MIMConfig] = None) -> np.ndarray:
    """A_{p, v_{k, a_k(p)}} for every recorded step, p and k, shape (steps, P, K) (the target FP
    correlations)."""
    return records.own(t, "fp_corr", config_of(t, cfg))
