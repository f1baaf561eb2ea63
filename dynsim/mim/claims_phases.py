"""The phase claims on the P ladder (docs/mim.md §6): F.3's two phases, the initial rate ratio's
side, Lemma 5.3 (a) and (b, c), and Appendix E's global patches."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from dynsim import trends
from dynsim.claims import Claim, Premise, judge

from . import ladder
from .premises import (
    CONFIDENCE,
    MEAN_FIELD_Q_RATES,
    PHASE_MARGIN,
    SWITCH_BAND,
    competitor_band,
    delta_premise,
    drop_band,
    drop_resolution_premise,
    horizon_premise,
    margin_premise,
    mean_field_premise,
    rate_resolution_premise,
    select,
    step_premise,
    where,
)

# Phase I must at least halve the global attention: drop of A_global >= log 2 / z
PHASE_DROP = math.log(2.0)
STATEMENT_53 = (
    "Lemma 5.3: under the conditions of Theorem 4.1, for Delta > 0 and local p there "
    "is an iteration T1 at which (a) the dominant effect switches, Attn_1^2 ~ Attn_n, "
    "i.e. A_{p,v_{k,1}} ~ -(Delta / 2z) log P; (b) all other FP correlations "
    "A_{p,v_{k,m}}, m not in {1, n}, are small; (c) all projected PP correlations are "
    "small"
)


def cluster_at(rung: ladder.Rung, reading: str) -> str:
    """', cluster k' of the cluster that gave `reading` at this rung (nothing with one cluster)."""
    return "".join(f", cluster {k}" for k in _cluster_of(rung, reading).values())


def two_phase_premises(rungs: Sequence[ladder.Rung]) -> list[Premise]:
    """F.3's premises over `rungs` (each read per rung by `select`)."""
    return [
        horizon_premise(rungs),
        delta_premise(rungs),
        class_margin_premise(rungs),
        drop_resolution_premise(rungs),
        step_premise(rungs),
        mean_field_premise(rungs, MEAN_FIELD_Q_RATES),
    ]


def class_margin_premise(rungs: Sequence[ladder.Rung]) -> Premise:
    """Some local class at every rung has margin (1 - gamma) C_1^2 / (P C_n) >= PHASE_MARGIN (its
    predicted drop reaches log 2): the rung whose best class has the smallest margin named."""
    tops = [max((r["margin"] for r in class_drops(g)), default=math.nan) for g in rungs]
    worst = ladder.first_nan_or(np.array(tops, dtype=float), np.argmin)
    return Premise(
        f"(1 - gamma) C_1^2 / (P C_n) >= {PHASE_MARGIN:g} for some local class (a Phase I the "
        "ladder can resolve)",
        tops[worst],
        ">=",
        PHASE_MARGIN,
        f"the largest over the local classes at P = {rungs[worst].cfg.P}",
    )


def two_phase_claim(rungs: Sequence[ladder.Rung]) -> Claim:
    """Theorem 4.1 / F.3 (Delta > 0), at every rung that meets its premises: every local class
    whose derived band (premises.drop_band) puts its Phase-I drop beyond log 2 is two-phase, and its
    drop lies within that band about the leading order (1/2) log((1 - gamma) C_1^2 / (P C_n))."""
    sel = select(rungs, two_phase_premises)
    rows = [row for r in sel.rungs for row in class_drops(r)]
    judged = [r for r in rows if r["predicted"] + r["lo"] > PHASE_DROP]
    near = [r for r in rows if not r["predicted"] + r["lo"] > PHASE_DROP]
    if any(r.diverged for r in sel.rungs) or not judged:
        measured, at = math.nan, ""  # no class judged: the premises say why
    else:
        worst = judged[ladder.first_nan_or(np.array([r["excess"] for r in judged]), np.argmax)]
        measured = worst["excess"]
        at = (
            f"P = {worst['P']}"
            + (f", cluster {worst['k']}" if sel.rungs[0].cfg.K > 1 else "")
            + f", area {worst['n']} (C = {worst['C_n']})"
        )
    return judge(
        "F.3 two-phase",
        reading_class="literal",
        relation="<=",
        threshold=0.0,
        measured=measured,
        at=at,
        statement="Theorem 4.1 (F.3): for Delta > 0 and local p the dynamics have two phases: "
        "A_{p,v_{k,1}} first decreases (Phase I), then A_{p,v_{k,n}} grows and Attn_n -> "
        "1 (Phase II)",
        reading="at every rung that meets the premises, every local class (K > 1: every "
        "cluster's joint cells) whose derived band puts its Phase-I drop beyond log 2 / z "
        "(predicted + lo > log 2): its drop -A_{p,v_{k,1}} at its switch (phases.switch) "
        "against the leading order (1/2) log((1 - gamma) C_1^2 / (P C_n)) / z, from both "
        "sides: measured = the largest excess of a drop outside its band [predicted + lo, "
        "predicted + hi] (<= 0 inside; inf where a class has no switch); conditions: those "
        "classes classify two-phase (phases.classify) and their drop halves the global "
        "attention (>= log 2 / z, a stated definition of a phase); the classes the band "
        "leaves near log 2, and the rungs left out, are reported (details), not judged",
        regime=where(rungs),
        premises=sel.premises,
        derivation="0: the band is the statistic's own, derived per class from Lemma 5.1 and "
        "the config, never from a run (premises.drop_band): the switch r = 1 of Lemma 5.1's "
        "rate ratio fixes the drop exactly as (1/2) log R0 + c - (1/2) log g - y1 / 2 - (1/2) "
        "log zeta1 (c: the query's own patch masked; g = Attn_1^2 / Attn_n at the switch; "
        "y1: the target's own Phase-I growth, <= Y from integrating dA_target / dx = 1 / r; "
        "zeta1: the normaliser, >= 1 - alpha (1 - e^-x)), each bounded from the Q = 0 shares, "
        "plus one GD step s on either side; at the defaults [-0.30, +0.21] at P = 256 to "
        "[-0.29, +0.11] at P = 16384; log 2: the stated definition of a phase",
        negative_control="steps = 2 does not reach the horizon and a class inside the band "
        "(kappa_c = 0.83) is at the leading order's resolution: not applicable; Delta < 0 is "
        "not applicable; the fails row is a constructed control (a correct simulator follows "
        "Lemma 5.1, whose switch lies in the band by its derivation): tests/"
        "test_verdict_matrix_mim.py; the detection matrix's defects in the softmax and the "
        "gradients move the drop out of its band (dynsim.mim.mutations)",
        conditions={
            "every judged local class two-phase": all(r["label"] == "two-phase" for r in judged),
            "every judged class's drop >= log 2 / z": all(r["drop"] >= PHASE_DROP for r in judged),
        },
        details={
            "per_size": _grouped(judged, "excess"),
            "classes_judged": len(judged),
            "fraction_two_phase": {
                r.cfg.P: float(np.mean([lab == "two-phase" for lab in r.labels]))
                if r.labels
                else math.nan
                for r in sel.rungs
            },
            "inside_the_band": _grouped(near, "margin"),
            "excluded_rungs": sel.excluded,
        },
    )


def class_drops(rung: ladder.Rung) -> list[dict]:
    """Every local class's (K > 1: joint cell's) rung P, cluster k, own area n, size C_n, margin
    (1 - gamma) C_1^2 / (P C_n) (gamma realised), Phase-I drop -A_global at its switch (NaN: no
    switch), phases.classify label, leading order (1/2) log(margin), derived band [lo, hi] about it
    (premises.drop_band) and the drop's excess outside the band (inf: no switch)."""
    c = rung.cfg
    labels = rung.class_labels or ("",) * len(rung.switches)
    out = []
    for (k, n, C, level, _), label in zip(rung.switches, labels):
        band = drop_band(c, k, n)
        off = -level - band.predicted
        excess = max(band.lo - off, off - band.hi) if not math.isnan(level) else math.inf
        out.append(
            {
                "P": c.P,
                "k": k,
                "n": n,
                "C_n": C,
                "margin": math.exp(2 * band.predicted),
                "drop": -level,
                "label": label,
                "predicted": band.predicted,
                "lo": band.lo,
                "hi": band.hi,
                "excess": excess,
            }
        )
    return out


def _grouped(rows: list, key: str) -> list[dict]:
    """`rows` grouped by (P, cluster, C_n) (a size's classes share their band): the number of
    classes and the row with the largest `key` (NaN first)."""
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["P"], r["k"], r["C_n"]), []).append(r)
    out = []
    for g in groups.values():
        top = g[ladder.first_nan_or(np.array([r[key] for r in g], dtype=float), np.argmax)]
        out.append({**{k: v for k, v in top.items() if k != "label"}, "classes": len(g)})
    return out


def labels_on_side(rung: ladder.Rung) -> bool:
    """The trained run's phase labels on the prediction's side, where a label can show it: every
    local patch one-phase where (1 - gamma) P^Delta <= 1; where it exceeds 1, every local class
    whose Phase I the ladder can resolve (margin (1 - gamma) C_1^2 / (P C_n) >= PHASE_MARGIN, F.3's
    premise: a predicted drop of at least log 2) two-phase. A class below that margin has a drop
    no label resolves, so it says nothing either way."""
    if rung.predicted_ratio <= 1:
        return set(rung.labels) == {"one-phase"}
    return all(r["label"] == "two-phase" for r in class_drops(rung) if r["margin"] >= PHASE_MARGIN)


def rate_ratio_claim(rungs: Sequence[ladder.Rung]) -> Claim:
    """docs/derivations/mim-model.md §5: |dA_global| / dA_target at Q = 0 lies on the side of 1 of
    (1 - gamma) P^Delta, at every rung that meets its premises."""
    sel = select(rungs, rate_premises)
    everything, rungs = rungs, sel.rungs
    # a ratio of 0 or NaN (Q never moved) gives -inf or NaN
    with np.errstate(divide="ignore", invalid="ignore"):
        agree = np.log([r.initial_ratio for r in rungs]) * np.sign(
            np.log([r.predicted_ratio for r in rungs])
        )
    phases_agree = all(labels_on_side(r) for r in rungs)
    # the "one-phase" label reads the same first interval as the ratio: on that side the target must
    # take off
    took_off = all(r.min_attention >= 0.5 for r in rungs if r.predicted_ratio <= 1)
    worst = int(np.nanargmin(agree)) if not np.all(np.isnan(agree)) else 0
    return judge(
        "rate ratio side",
        reading_class="order",
        relation=">",
        threshold=0.0,
        measured=math.nan if any(r.diverged for r in rungs) else float(np.min(agree)),
        at=f"P = {rungs[worst].cfg.P}" + cluster_at(rungs[worst], "initial_ratio"),
        statement="(4.1) derivation: the ratio of the global FP correlation's fall to the target's "
        "growth at Q = 0 is ~ (1 - gamma) P^Delta; decoupling dominates exactly when it "
        "exceeds 1",
        reading="one GD step from Q = 0, the representative local patch of every cluster at "
        "every rung: measured = min over P and the clusters of log(measured ratio) * "
        "sign(log((1 - gamma) P^Delta)), > 0 when both "
        "sit on the same side of 1 (the side of the prediction, not sign(Delta)); and "
        "'decoupling dominates' read on the trained run: where the prediction exceeds 1, "
        "every local class whose Phase I the ladder resolves (F.3's margin) two-phase; where it "
        "is below, every local patch one-phase",
        regime=where(everything),
        premises=sel.premises,
        derivation="0: the side of 1 is the statement; the leading order's own correction (the "
        "terms of Lemma 5.1 at Q = 0 it drops: (1 - Attn_1), Attn_n / Attn_1, (1 - Attn_n)^2, "
        "the other areas' Attn_j^2; premises.rate_band, from the config, not the run) makes "
        "the prediction a band, and a band that holds 1 is at the leading order's resolution "
        "(not applicable); the factor measured / predicted is reported",
        negative_control="a prediction just below 1 (P = 1024, gamma = 0.6, kappa = (0.75, 0.4): "
        "predicted 0.936, band up to 1.03, measured 1.005) is not applicable, and so is "
        "steps = 2 (no horizon); outside the band the first step's ratio lies inside it by "
        "algebra, so the fails row is a constructed control: tests/test_verdict_matrix_mim.py",
        conditions={
            "phase labels on the prediction's side (where a label resolves it)": phases_agree,
            "one-phase side: every patch's own-area attention >= 1/2 at T (the target took "
            "off)": took_off,
        },
        details={
            "per_P": {
                r.cfg.P: {
                    "measured": r.initial_ratio,
                    "predicted": r.predicted_ratio,
                    "factor": r.initial_ratio / r.predicted_ratio,
                    **_cluster_of(r, "initial_ratio"),
                }
                for r in rungs
            },
            "excluded_rungs": sel.excluded,
        },
    )


def rate_premises(rungs: Sequence[ladder.Rung]) -> list[Premise]:
    return [
        horizon_premise(rungs),
        rate_resolution_premise(rungs),
        mean_field_premise(rungs, MEAN_FIELD_Q_RATES),
    ]


def _cluster_of(rung: ladder.Rung, reading: str) -> dict:
    """{"cluster": k} of the cluster that gave `reading` (nothing with one cluster)."""
    return {"cluster": dict(rung.worst).get(reading, 0)} if rung.cfg.K > 1 else {}


def _switch_premises(rungs: Sequence[ladder.Rung]) -> list[Premise]:
    return [
        horizon_premise(rungs),
        delta_premise(rungs),
        min(
            (margin_premise(r) for r in rungs),
            key=lambda m: (not math.isnan(m.measured), m.measured),
        ),
        step_premise(rungs),
        mean_field_premise(rungs, MEAN_FIELD_Q_RATES),
    ]


def switch_claim(rungs: Sequence[ladder.Rung]) -> Claim:
    """Lemma 5.3 (a) as an order: at every local class's switch, the level A_global sits within
    log(4) / 2z of the switch condition Attn_1^2 = Attn_n evaluated with that class's own area
    sizes, at every rung that meets its premises."""
    sel = select(rungs, _switch_premises)
    everything, rungs = rungs, sel.rungs
    rows = [(r.cfg.P, k, n, C, level, pred) for r in rungs for (k, n, C, level, pred) in r.switches]
    offsets = [level - pred for (*_, level, pred) in rows]
    several = rungs[0].cfg.K > 1
    if any(r.diverged for r in rungs) or not rows:
        measured, at = math.nan, ""
    elif not all(math.isfinite(o) for o in offsets):
        P, k, n = next(row for row, o in zip(rows, offsets) if not math.isfinite(o))[:3]
        measured, at = math.inf, f"no switch: {_area(k, n, several)} at P = {P}"
    else:
        i = int(np.argmax(np.abs(offsets)))
        P, k, n, C = rows[i][:4]
        measured, at = float(abs(offsets[i])), f"{_area(k, n, several)} (C = {C}) at P = {P}"
    levels = [-r.drop_at_switch for r in rungs]
    fitted = len(rungs) > 2 and all(math.isfinite(x) for x in levels)
    slope = (
        trends.fit([r.cfg.P for r in rungs], levels, logx=True, confidence=CONFIDENCE).describe()
        if fitted
        else "not fitted"
    )
    return judge(
        "Lemma 5.3 switch",
        reading_class="order",
        relation="<=",
        threshold=math.log(SWITCH_BAND) / 2,
        measured=measured,
        at=at,
        statement=STATEMENT_53 + " [item (a) judged here]",
        reading="for every local area class of every rung (K > 1: every cluster's local queries, "
        "one class per joint cell): A_global of that class's query where "
        "log(|dA_global| / dA_target) crosses 0 (interpolated, phases.switch), against the "
        "switch condition Attn_1^2 = Attn_n at Q = 0 attentions with that class's sizes, "
        "-log((1 - gamma) C_1^2 / (P C_n)) / 2z; measured: the largest |offset|; inf when "
        "a class has no switch",
        regime=where(everything),
        premises=sel.premises,
        derivation="'~' is an order (unspecified constants): read as Attn_1^2 / Attn_n within "
        f"[1/{SWITCH_BAND:g}, {SWITCH_BAND:g}] at the switch; at a fixed denominator "
        f"Attn_1 ~ e^{{z A_1}}, so an offset d in the level multiplies Attn_1^2 by "
        f"e^{{2 z d}}: |d| <= log({SWITCH_BAND:g}) / 2z (z = 1). The leading-order "
        "slope -Delta/2 in log P is a derivation, reported in details, not judged",
        negative_control="steps = 2 (no horizon) and Delta < 0 are not applicable; the fails row "
        "is a constructed control (a class without a switch past its takeoff): "
        "tests/test_verdict_matrix_mim.py",
        details={
            "per_size": _by_size(rows, several),
            "representative_levels": dict(zip([r.cfg.P for r in rungs], levels)),
            "slope_in_log_P": slope,
            "predicted_slope_-Delta/2": -float(np.mean([r.delta for r in rungs])) / 2,
            "excluded_rungs": sel.excluded,
        },
    )


def _area(k: int, n: int, several: bool) -> str:
    return f"cluster {k}, area {n}" if several else f"area {n}"


def _by_size(rows: list, several: bool = False) -> list[dict]:
    """The switch rows grouped by (P, C_n) (the classes of one size share their numbers up to the
    grid's boundary; K > 1: by (P, cluster, C_n)): the number of classes and the row of the largest
    |offset|."""
    groups: dict = {}
    for P, k, n, C, level, pred in rows:
        key = (P, k, C) if several else (P, C)
        groups.setdefault(key, []).append((abs(level - pred), level, pred))
    out = []
    for key, g in groups.items():
        _, level, pred = max(g)
        out.append(
            {
                "P": key[0],
                **({"cluster": key[1]} if several else {}),
                "C_n": key[-1],
                "classes": len(g),
                "level": level,
                "size_corrected": pred,
                "offset": level - pred,
            }
        )
    return out


def small_claim(rungs: Sequence[ladder.Rung]) -> Claim:
    """Lemma 5.3 (b), (c) and Phase I's condition (C.1): up to the switch T1 the other FP
    correlations and every PP correlation stay within the key comparison's scale |A_1(T1)| / ((1 -
    gamma) C_min), at every rung that meets its premises."""
    sel = select(rungs, _switch_premises)
    everything, rungs = rungs, sel.rungs
    vals, worst = [], []
    for r in rungs:
        per = np.array([_small(r, c) for c in r.clusters])
        j = ladder.first_nan_or(per, np.argmax)
        vals.append(per[j])
        worst.append(r.clusters[j])
    bad = [
        i
        for i, r in enumerate(rungs)
        if not all(math.isfinite(c.drop_at_switch) for c in r.clusters)
    ]
    if any(r.diverged for r in rungs):
        measured = math.nan
    else:
        measured = math.inf if bad else float(np.max(vals))
    i = bad[0] if bad else int(np.nanargmax(vals)) if not np.all(np.isnan(vals)) else 0
    return judge(
        "Lemma 5.3 (b,c) small",
        reading_class="order",
        relation="<=",
        threshold=1.0,
        measured=measured,
        at=f"P = {rungs[i].cfg.P}"
        + (f", cluster {worst[i].k}" if rungs[i].cfg.K > 1 else "")
        + (" (no switch)" if bad else ""),
        statement=STATEMENT_53 + " [items (b), (c) judged here; Phase I (C.1): all other FP "
        "correlations and all projected PP correlations stay close to 0]",
        reading="over Phase I (t <= T1, the representative local query's switch, every "
        "cluster's): max(max_{m not in {1,n}} |A_{p,v_{k,m}}|, max_{k',p,q} "
        "|B_{k',p,q}|) * (1 - gamma) C_min / |A_{p,v_{k,1}}(T1)| at every rung, the "
        "largest over the clusters k; B_{k'} is the projected PP correlation (the part of "
        "B that cluster k''s gradient moved; K = 1: B), read at every GD step up to T1; "
        "the FP terms at the records and at T1 (interpolated, as A_1(T1) is); inf when a "
        "cluster has no switch",
        regime=where(everything),
        premises=sel.premises,
        derivation="'small' read against the key comparison of Lemmas 5.1-5.2 "
        "(docs/derivations/mim-model.md §6): a PP correlation moves at most 1/(z u_m) "
        "times its FP correlation, u_m = (1 - gamma) C_m unmasked patches; Phase I's FP "
        "move is |A_1(T1)|, so small means <= 1 on this scale; every projected term "
        "B_{k'} (spec §6, eq. 5.1: B sums one per cluster) is read on it",
        negative_control="steps = 2 (no horizon) and Delta < 0 are not applicable; the fails row "
        "is a constructed control (a Phase-I reading above the scale): "
        "tests/test_verdict_matrix_mim.py",
        details={
            "per_P": {
                r.cfg.P: {
                    "ratio": v,
                    "other_fp": c.phase1_other_fp,
                    "max_B": c.phase1_max_B,
                    "A_global_T1": -c.drop_at_switch,
                    **({"cluster": c.k} if r.cfg.K > 1 else {}),
                }
                for r, v, c in zip(rungs, vals, worst)
            },
            "excluded_rungs": sel.excluded,
        },
    )


def _small(rung: ladder.Rung, c: ladder.Cluster) -> float:
    """Cluster c's Phase-I ratio: max(other FP, max_k' |B_k'|) over |A_1(T1)| / ((1 - gamma)
    C_min)."""
    scale = abs(c.drop_at_switch) / ((1 - rung.cfg.mask_ratio) * c.c_min)
    terms = (c.phase1_other_fp, c.phase1_max_B)
    if any(math.isnan(x) for x in terms):  # a reading missing: not a small one
        return math.nan
    return max(terms) / scale if scale > 0 else math.inf


def global_claim(rungs: Sequence[ladder.Rung]) -> Claim:
    """Appendix E, at every rung that meets its premises: the global patches' first GD step matches
    Lemma 5.1 at Q = 0 (the fastest-falling other area's competitor ratio within its derived band
    about the prediction from the shares (1 - gamma) C_j / P, premises.competitor_band), the
    target's gradient the larger (ratio <= 1), and the target then takes off (own-area attention
    >= 1/2 at T)."""
    sel = select(rungs, global_premises)
    everything, rungs = rungs, sel.rungs
    rows = [_global_row(r, k) for r in rungs for k in range(r.cfg.K)]
    comp = [row["measured"] for row in rows]
    took_off = all(r.global_min_attention >= 0.5 for r in rungs)
    i = ladder.first_nan_or(np.array([row["excess"] for row in rows]), np.argmax)
    return judge(
        "App. E global one-phase",
        reading_class="literal",
        relation="<=",
        threshold=0.0,
        measured=math.nan if any(r.diverged for r in rungs) else rows[i]["excess"],
        at=f"P = {rows[i]['P']}" + (f", cluster {rows[i]['k']}" if rungs[0].cfg.K > 1 else ""),
        statement="Section 5.4 / Appendix E: for p in the global area the target attention is "
        "initially higher, its FP correlation has the larger gradient, independently of "
        "Delta; the training skips Phase I and moves directly into Phase II",
        reading="the global patches' classes (every cluster's), at every rung that meets the "
        "premises: the competitor ratio max over other areas m of (-dA_{p,v_m}) / dA_{p,v_1} "
        "on the first GD step (phases.classify) against Lemma 5.1 at Q = 0 with the shares "
        "(1 - gamma) C_j / P: measured = the largest excess of log(measured / predicted) "
        "outside its band [lo, hi] (<= 0 inside); conditions: the ratio <= 1 (the target's "
        "gradient the larger, the statement) and the own-area attention >= 1/2 at T (Phase "
        "II's rapid growth happened)",
        regime=where(everything),
        premises=sel.premises,
        derivation="0: the band is derived from the config (premises.competitor_band): the "
        "first step is Lemma 5.1 at Q = 0 at the mean field's shares (1 - gamma) C'_j / (P - "
        "1) (C'_1 = C_1 - 1: the query itself is masked), within the relative eps = max_j "
        "|C'_j P / (C_j (P - 1)) - 1| of the leading shares, and each monomial of degree d of "
        "the ratio's numerator and denominator moves by at most (1 + eps)^d - 1 of its value "
        "(|log| <= 0.03 at P = 256, 0.002 at 16384); 1: 'larger gradient' (no constant); 1/2 "
        "is phases.TAKEOFF_LEVEL; the horizon is the local classes' takeoff (the global "
        "patches skip Phase I, so they must have taken off by then)",
        negative_control="steps = 2 (no horizon) is not applicable; a correct simulator's first "
        "step is Lemma 5.1 at Q = 0, inside the band by its derivation, so the fails row is a "
        "constructed control (global patches that did not take off): tests/"
        "test_verdict_matrix_mim.py; the detection matrix's defects in the softmax and the "
        "loss move the ratio out of its band (dynsim.mim.mutations)",
        conditions={
            "competitor ratio <= 1 (the target's gradient the larger)": bool(
                np.max(comp, initial=-math.inf) <= 1
            ),
            "global patches' own-area attention >= 1/2 at T": took_off,
        },
        details={
            "per_P": rows,
            "min_attention_at_T": {r.cfg.P: r.global_min_attention for r in rungs},
            "excluded_rungs": sel.excluded,
        },
    )


def global_premises(rungs: Sequence[ladder.Rung]) -> list[Premise]:
    return [horizon_premise(rungs), mean_field_premise(rungs, MEAN_FIELD_Q_RATES)]


def _global_row(rung: ladder.Rung, k: int) -> dict:
    """Cluster k's global query at this rung: its measured competitor ratio, Lemma 5.1's prediction
    and band, and the excess of log(measured / predicted) outside the band (NaN: not measured)."""
    measured = dict(rung.global_competitors).get(k, math.nan)
    pred, lo, hi = competitor_band(rung.cfg, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        off = float(np.log(measured / pred))
    return {
        "P": rung.cfg.P,
        "k": k,
        "measured": measured,
        "predicted": pred,
        "lo": lo,
        "hi": hi,
        "excess": max(lo - off, off - hi) if not math.isnan(off) else math.nan,
    }
