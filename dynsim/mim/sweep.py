"""MIM points of a sweep: each point is its own compiled program (P, the kappas and the mask ratio
all change the areas, the query classes or the hypergeometric tables, i.e. shapes), so a MIM group
holds one point."""

from __future__ import annotations

import numpy as np

import full.mim
import reduced.mim
from reduced import flow
from dynsim.mim import ladder, phases, records
from dynsim.mim.config import MIMConfig
from dynsim.sweeps import common
from dynsim.trajectory import Trajectory

from .setting import approximation


def seeded(cfg: MIMConfig, options: dict, level: str) -> bool:
    """Whether the seed changes a point's numbers at `level` beyond rounding: a random partition
    (the areas) at either level, the sampled full level's data; the exact full level takes otherwise
    only the embedding's rotation, which the dynamics are invariant under (seeds 0 and 1 differ by
    <= 2.5e-15, P = 16, 40 steps)."""
    return cfg.partition == "random" or (
        level != "reduced" and options.get("mode", "exact") != "exact"
    )


def reduced_point(cfg: MIMConfig, options: dict) -> Trajectory:
    """The reduced run (GD, or with options["method"] "flow" the gradient flow); with
    options["versus_frozen"] also its pp_frozen twin (B = 0, the same counts), whose FP deviation
    from B free goes into meta["fp_deviation_from_pp_frozen"] (issue 15's K study)."""
    approx = approximation(cfg, options)
    # with method "flow": the gradient flow, saved as `dynsim compare mim --method flow` saves it
    keywords = common.flow_keywords(cfg, options) if options.get("method") == "flow" else {}
    t = reduced.mim.simulate(cfg, approximation=approx, **keywords)
    names = reduced.mim.approximations(approx)
    if options.get("versus_frozen") and "pp_frozen" not in names:
        frozen = reduced.mim.simulate(cfg, approximation=("pp_frozen", *names), **keywords)
        t.meta["fp_deviation_from_pp_frozen"] = fp_deviation(t, frozen, cfg)
    return t


def fp_max(t: Trajectory) -> float:
    """max over the run of |A| (fp_corr per patch, else its per-class form)."""
    return float(
        np.nanmax(np.abs(np.asarray(t["fp_corr"] if "fp_corr" in t.observables else t["fp_class"])))
    )


def fp_deviation(free: Trajectory, frozen: Trajectory, cfg: MIMConfig) -> float:
    """max_t max_{p,k,j} |A(B free) - A(B = 0)| / max |A(B free)|: what dropping B costs the FP
    dynamics."""
    a, b = (np.asarray(records.with_per_patch(t, cfg)["fp_corr"]) for t in (free, frozen))
    return float(np.nanmax(np.abs(a - b)) / fp_max(free))


def reduced_group(cfgs: list[MIMConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """Point by point: each MIM point has its own shapes."""
    return [reduced_point(c, options) for c in cfgs]


def full_group(cfgs: list[MIMConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """Point by point: each MIM point has its own shapes."""
    return [
        full.mim.simulate(
            c, mode=options.get("mode", "exact"), replicates=options.get("replicates")
        )
        for c in cfgs
    ]


def level_summary(t: Trajectory, cfg: MIMConfig) -> dict:
    """Final loss, the smallest own-area attention at the end (Theorem 4.1), the largest |PP|
    (pp_max), and how many local patches of cluster 0 are two-phase / one-phase (Theorem 4.1 / F.3,
    `phases.classify`), and the loss's stability flags (`common.stability`)."""
    own = phases.own_area_attention(t, cfg=cfg)
    # the reduced level's labels read its first GD step (a one-step run), so they do not depend on
    # --record-every; the full level's read its first recorded interval
    # the reduced dynamics the run follows, without the flow's label (its first step is GD's)
    label = "+".join(n for n in t.meta.get("approximation", "exact").split("+") if n != flow.LABEL)
    initial = (
        None
        if t.level != "reduced"
        else ladder.first_step(cfg, None if label in ("exact", "") else label)
    )
    labels = [ph.label for ph in phases.classify_all(t, cfg=cfg, initial=initial)]
    local = [lab for lab, a in zip(labels, phases.area_index(cfg)[0]) if a > 0]
    return {
        "final_loss": float(np.asarray(t["loss"])[-1]),
        "own_area_attention_min": float(np.nanmin(own)),
        "pp_max": float(np.asarray(t["pp_max"])[-1]) if "pp_max" in t.observables else None,
        # max over the run of |B| / |A|: where the PP route stops being small
        "pp_over_fp": float(np.max(np.asarray(t["pp_max"])) / fp_max(t))
        if "pp_max" in t.observables
        else None,
        "fp_deviation_from_pp_frozen": t.meta.get("fp_deviation_from_pp_frozen"),
        "two_phase_local": sum(lab == "two-phase" for lab in local),
        "one_phase_local": sum(lab == "one-phase" for lab in local),
        "local_patches": len(local),
        **common.stability(t),
    }


def point_summary(cfg: MIMConfig, red, ful, report) -> dict:
    row = {"delta": cfg.delta}
    for prefix, t in (("reduced_", red), ("full_", ful)):
        if t is not None:
            row.update({prefix + k: v for k, v in level_summary(t, cfg).items()})
            row[prefix + "nonfinite_from_step"] = t.meta.get("nonfinite_from_step")
    if red is not None:
        row["reduced_approximation"] = red.meta.get("approximation")
    row.update(common.verdict(report))
    return row
