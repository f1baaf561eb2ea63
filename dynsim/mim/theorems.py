"""Executable claims of the MIM paper (Huang, Wen, Chi, Liang 2024) judged on a P ladder of B-free
reduced runs.

`check_theorems(quick=..., steps=..., log=..., only=...)` runs `ladder.run_rung` at every size of
the ladder (mean_field: B free, counts at their means; pp_frozen+mean_field beside it, reported), a
Delta < 0 run at the largest rung and a trained model for Section 6's diversity measurement, and
returns `dynsim.claims` Claims and Measurements (docs/mim.md §6). Every claim carries its premises
(Delta > 0, a resolvable Phase I, mean field valid), read per rung: a claim judges the rungs that
meet them and reports the others (`premises.select`); it is "not applicable" only when too few
rungs remain (one; three for a trend in P).
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

import reduced.mim
from dynsim import progress
from dynsim.claims import LITERAL, LOG, ORDER, Measurement, guarded, wanted
from dynsim.results import Results

from . import diversity, ladder, setting
from .claims_convergence import (
    STATEMENT_41,
    attention_measurement,
    attention_trend,
    loss_gap_claim,
    pp_claim,
)
from .claims_phases import (
    PHASE_DROP,
    STATEMENT_53,
    SWITCH_BAND,
    global_claim,
    rate_ratio_claim,
    small_claim,
    switch_claim,
    two_phase_claim,
)
from .config import MIMConfig
from .premises import CONFIDENCE, MEAN_FIELD_Q_RATES, PHASE_MARGIN
from .setting import EPS, LADDER, QUICK_LADDER

# Section 6: random masks per model, top-k of the metric (the paper's k = 10)
IMAGES, TOP_K = 64, 10
NEGATIVE_DELTA = -0.2  # the Delta < 0 run: kappa = (0.6, 0.4) at the defaults (mim-model.md §10d)
MIN_AREA_GAP = 0.1  # kappa_c - kappa_s of that run: the global area clearly larger than the local


def base_config(
    P: int = 1024,
    steps: int = 1000,
    eta: float = 1.0,
    mask_ratio: float = 0.5,
    kappa_c: float = 0.9,
    kappa_s: float = 0.4,
    K: int = 1,
    partition: str = "grid",
    seed: int = 0,
) -> MIMConfig:
    """The Delta > 0 problem (docs/derivations/mim-model.md §10d): K clusters (default 1), grid
    areas of P^kappa (or random areas drawn from `seed`), z = 1, `steps` at P."""
    return MIMConfig(
        P=P,
        K=K,
        kappa_c=kappa_c,
        kappa_s=kappa_s,
        mask_ratio=mask_ratio,
        z="const",
        eta=eta,
        steps=steps,
        record_every=max(1, steps // 100),
        partition=partition,
        seed=seed,
    )


def negative_kappa_c(kappa_s: float) -> float:
    """kappa_c of the Delta < 0 run at the problem's kappa_s: Delta = 2 kappa_c - kappa_s - 1 =
    NEGATIVE_DELTA (kappa_c = 0.6 at kappa_s = 0.4) where that leaves kappa_c - kappa_s >=
    MIN_AREA_GAP (kappa_s <= 0.6), else the middle of the Delta < 0 range (kappa_s, (1 +
    kappa_s) / 2): kappa_c = (3 kappa_s + 1) / 4, Delta = (kappa_s - 1) / 2 < 0."""
    target = (1 + kappa_s + NEGATIVE_DELTA) / 2
    return target if target - kappa_s >= MIN_AREA_GAP - 1e-12 else (3 * kappa_s + 1) / 4


def negative_base(base: MIMConfig) -> MIMConfig:
    """The Delta < 0 problem beside the ladder: base with kappa_c = `negative_kappa_c` of its
    kappa_s (Delta = -0.2 at exact sizes where kappa_s <= 0.6)."""
    return base.replace(kappa_c=negative_kappa_c(base.kappa_s))


def negative_size(base: MIMConfig, Ps: Sequence[int]) -> int:
    """The rung of the Delta < 0 run: the largest with one cluster; the smallest with K > 1, where
    the Delta < 0 problem's many small local areas cut the patches into many more joint cells
    (random areas, K = 2, P = 4096: 3689 cells against 1376 at Delta > 0; the run's cost grows like
    their square)."""
    return Ps[-1] if base.K == 1 else Ps[0]


def diversity_size(Ps: Sequence[int]) -> int:
    """The rung closest to P = 256 (a ViT-like 16x16 grid): Section 6's trained model."""
    return min(Ps, key=lambda P: abs(P - 256))


def run_configs(base: MIMConfig, Ps: Sequence[int], steps: int) -> dict:
    """The configs `check_theorems` runs: every rung, the Delta < 0 run and the Section 6 model."""
    return {
        "runs": {P: ladder.rung_config(base, P, steps) for P in Ps},
        "negative_delta": ladder.rung_config(negative_base(base), negative_size(base, Ps), steps),
        "diversity": ladder.rung_config(base, diversity_size(Ps), steps),
    }


def sizes(quick: bool) -> tuple[int, ...]:
    return QUICK_LADDER if quick else LADDER


# ------------------------------------------------------------------------------------------- claims

CLAIMS = setting.CLAIMS  # the names, declared where --help reads them
__all__ = [
    "CLAIMS",
    "CONFIDENCE",
    "EPS",
    "MEAN_FIELD_Q_RATES",
    "PHASE_DROP",
    "PHASE_MARGIN",
    "STATEMENT_41",
    "STATEMENT_53",
    "SWITCH_BAND",
    "attention_measurement",
    "attention_trend",
    "check_theorems",
    "global_claim",
    "loss_gap_claim",
    "pp_claim",
    "rate_ratio_claim",
    "small_claim",
    "switch_claim",
    "two_phase_claim",
]


# ------------------------------------------------------------------------------------- measurements


def diversity_measurements(div: dict, cfg: MIMConfig) -> list[Measurement]:
    """Section 6: the top-k diversity of the trained model and the reference maps (not judged)."""
    why = (
        "the paper compares trained ViT-B/16 models (MAE against MoCo v3, DINO, DeiT), never "
        "random attention; the top-k metric is largest for scattered top-k sets, so no "
        "comparison here is a claim"
    )
    out = []
    for name in diversity.MAPS:
        det, rnd = (float(np.mean(div[name, rule])) for rule in diversity.RULES)
        images = f" (image i from cluster i mod {cfg.K})" if cfg.K > 1 else ""
        out.append(
            Measurement(
                f"Sec. 6 diversity: {name}",
                f"top-{TOP_K} diversity, mean over "
                f"{div[name, 'random'].size} masks{images} at P = {cfg.P} "
                f"({math.isqrt(cfg.P)}x{math.isqrt(cfg.P)} grid), T = "
                f"{cfg.steps}; ties to the lowest index (random "
                f"tie-breaking: {rnd:.4g}); {why}",
                det,
                {"lowest_index_ties": det, "random_ties": rnd},
            )
        )
    return out


def negative_delta_measurement(rung: ladder.Rung) -> Measurement:
    """Delta < 0: the initial rate ratio is < 1 by algebra (<= 1 - gamma (1 - Attn_1)): reported,
    not judged."""
    return Measurement(
        "ratio Delta < 0",
        "initial |dA_global| / dA_target of the Delta < 0 run (one phase; < 1 "
        f"by algebra once Delta < 0, so not a claim), P = {rung.cfg.P}, Delta "
        f"= {rung.delta:.3f}",
        rung.initial_ratio,
        {
            "predicted": rung.predicted_ratio,
            "labels": sorted(set(rung.labels)),
            "min_attention_at_T": rung.min_attention,
        },
    )


def frozen_measurement(rungs: Sequence[ladder.Rung]) -> Measurement:
    """pp_frozen+mean_field (the theory's B = 0) beside the judged B-free run: max |A_own
    difference| / max|A|."""
    return Measurement(
        "pp_frozen vs B free",
        "max_t max_p |A_own(B = 0) - A_own(B free)| / max|A| "
        "per P (the theory's approximation beside the judged "
        "dynamics)",
        float(np.max([r.frozen_difference for r in rungs])),
        {r.cfg.P: r.frozen_difference for r in rungs},
    )


# ------------------------------------------------------------------------------------------- driver

# what each claim reads: the ladder always; the measurements beside need their own runs
_LADDER_CLAIMS = {
    "Thm 4.1 loss gap": lambda rs, eps: loss_gap_claim(rs, eps),
    "F.3 two-phase": lambda rs, eps: two_phase_claim(rs),
    "rate ratio side": lambda rs, eps: rate_ratio_claim(rs),
    "Lemma 5.3 switch": lambda rs, eps: switch_claim(rs),
    "Lemma 5.3 (b,c) small": lambda rs, eps: small_claim(rs),
    "Sec. 5.4 PP small": lambda rs, eps: pp_claim(rs, eps),
    "App. E global one-phase": lambda rs, eps: global_claim(rs),
}


# each claim's reading class (docs/claims.md, "MIM claims"), as a claim that crashed reports it
READING_CLASS = {
    "Thm 4.1 loss gap": LITERAL,
    "F.3 two-phase": LITERAL,
    "rate ratio side": ORDER,
    "Lemma 5.3 switch": ORDER,
    "Lemma 5.3 (b,c) small": ORDER,
    "Sec. 5.4 PP small": ORDER,
    "App. E global one-phase": LITERAL,
}


def check_theorems(
    *,
    quick: bool = False,
    steps: int = 1000,
    eta: float = 1.0,
    mask_ratio: float = 0.5,
    eps: float = EPS,
    ladder_sizes: Optional[Sequence[int]] = None,
    images: int = IMAGES,
    log: Optional[LOG] = None,
    base: Optional[MIMConfig] = None,
    only: Optional[frozenset] = None,
) -> Results:
    """Every MIM claim and measurement on the ladder (`steps` at the reference problem, scaled by
    `ladder.steps_at`). `base` (a `base_config`, e.g. with other kappas) replaces the problem of
    `steps`, `eta` and `mask_ratio`. `only` (claim names of CLAIMS): judge those, and skip the
    measurements' own runs (the pp_frozen runs beside, the Delta < 0 run, the Section 6 model). A
    `dynsim.results.Results` (a list)."""
    log = log or (lambda s: None)
    if not 0.0 < eps < 1.0:
        raise ValueError(f"eps = {eps} is invalid: must lie strictly between 0 and 1")
    Ps = tuple(ladder_sizes or sizes(quick))
    base = base or base_config(steps=steps, eta=eta, mask_ratio=mask_ratio)
    steps = ladder.steps_for(base.steps, eps)  # a smaller eps needs a longer run (T* ~ 1/eps)
    every = only is None
    rungs = [
        ladder.run_rung(base, P, steps, log, advance=progress.advance, beside=every) for P in Ps
    ]
    out: list = [
        guarded(name, READING_CLASS[name], judge_, rungs, eps)
        for name, judge_ in _LADDER_CLAIMS.items()
        if wanted(only, name)
    ]
    if not every:
        return Results(out)
    neg = ladder.run_rung(
        negative_base(base),
        negative_size(base, Ps),
        steps,
        log,
        advance=progress.advance,
        beside=False,
    )
    div_cfg = run_configs(base, Ps, steps)["diversity"]
    log(f"  Section 6: trained model at P = {div_cfg.P}, {images} masks, top-{TOP_K} ...")
    div = diversity.diversities(
        div_cfg, reduced.mim.simulate(div_cfg, ladder.JUDGED), images, TOP_K
    )
    progress.advance()
    return Results(
        out
        + [
            attention_measurement(rungs, eps),
            attention_trend(rungs),
            *diversity_measurements(div, div_cfg),
            negative_delta_measurement(neg),
            frozen_measurement(rungs),
            Measurement(
                "seconds of the ladder",
                "wall seconds of the rungs' runs (per rung in details)",
                sum(r.seconds for r in rungs),
                {r.cfg.P: r.seconds for r in rungs},
            ),
        ]
    )


def runs(quick: bool, only: Optional[frozenset] = None) -> int:
    """Progress units of check_theorems: the rungs, and without `only` the Delta < 0 run and the
    Section 6 model."""
    return len(sizes(quick)) + (2 if only is None else 0)
