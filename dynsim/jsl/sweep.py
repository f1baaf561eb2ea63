"""JSL points of a sweep: the groups, the checks before any work, the summaries and the sweep's options.

A group is a set of points that share every shape: (D, C, p), the recording grid, the dtype and how the
configuration sum is evaluated (`reduced.jsl.sums.choose`). Inside a group the config's traced numbers and the
seed vary, so the reduced level runs the group as one compiled program (`reduced.jsl.many.simulate_group`) and the
full level in modes exact and sampled too (`full.jsl.many.simulate_many`).
"""

from __future__ import annotations

import numpy as np

import full.jsl
from dynsim.jsl import events
from dynsim.jsl.config import JSLConfig
from dynsim.setting import SweepSpec
from dynsim.sweeps import common
from dynsim.trajectory import Trajectory
from full.jsl import many
from reduced.jsl import many as reduced_many

REDUCED_OPTIONS = reduced_many.SUM_OPTIONS
FULL_OPTIONS = ("mode", "replicates", "confidence")
DEFAULT_OPTIONS = {"mode": "exact", "replicates": None, "confidence": 0.999}


def full_group(cfgs: list[JSLConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """The full trajectories of points of one group: one program (`full.jsl.many`) in modes exact and sampled,
    point by point in mode realistic."""
    mode = options.get("mode", "exact")
    if mode == "realistic":
        return [full.jsl.simulate(c, mode=mode) for c in cfgs]
    return many.simulate_many(cfgs, mode, options.get("replicates"), batch_size)


def check(cfg: JSLConfig, options: dict, level: str) -> None:
    """Refuse, before any work, a point its levels cannot run (e.g. an exact full sum too large to enumerate)."""
    if level != "full":
        reduced_many.group_key(cfg, options)  # validates the sum options
    if level != "reduced":
        full.jsl.check(cfg, options.get("mode", "exact"), options.get("replicates"))


def level_group(cfg: JSLConfig, options: dict, level: str) -> tuple:
    """Points with equal keys share their compiled programs at `level` (reduced, full or both)."""
    mode = options.get("mode", "exact")
    full_key = (cfg if mode == "realistic" else many.group_key(cfg, mode, options.get("replicates"))) \
        if level != "reduced" else None
    return (reduced_many.group_key(cfg, options) if level != "full" else None, full_key)


def level_summary(t: Trajectory) -> dict:
    """Event times (Section 4.1, `events.detect`), the final loss, 0-1 error (the population error of the reduced
    and exact levels, the test error of the realistic one), patch association (Definition 2.2) and (alpha, gamma, rho)."""
    try:
        times = events.detect(t).times()
    except ValueError:  # a trajectory without the observables the events need (e.g. non-finite)
        times = dict.fromkeys(events.EVENTS)
    last = {k: float(np.asarray(v)[-1]) for k, v in t.observables.items() if np.ndim(v) == 1}
    loss = last.get("test_loss", last.get("loss"))
    error = last.get("test_error", last.get("error"))
    return {**times, "final_loss": loss, "final_error": error, "patch_association": last.get("patch_association"),
            "final_alpha": last.get("alpha"), "final_gamma": last.get("gamma"), "final_rho": last.get("rho"),
            "nonfinite_from_step": t.meta.get("nonfinite_from_step")}


def point_summary(cfg: JSLConfig, red, ful, report) -> dict:
    row: dict = {}
    for prefix, t in (("reduced_", red), ("full_", ful)):
        if t is not None:
            row.update({prefix + k: v for k, v in level_summary(t).items()})
    if red is not None:
        tr = red.meta["truncation"]
        bounds = tr.get("bounds") or {}
        row.update({"sum_method": tr.get("method", "full" if tr.get("max_nonzero") is None else "truncated"),
                    "configurations": tr["configurations"], "dropped_probability": tr["dropped_probability"],
                    "loss_bound": bounds.get("loss"),
                    "loss_se_mc": float(np.asarray(red["loss_se_mc"])[-1]) if "loss_se_mc" in red.observables else None})
    row.update(common.verdict(report))
    return row


def add_arguments(group) -> None:
    """The reduced level's sum options of `dynsim sweep jsl`."""
    group.add_argument("--max-configurations", type=int, default=None,
                       help="reduced level: most moment classes summed; above it the sum is truncated or sampled "
                            "(default: 20,000,000; D = 64, C = 4, p = 3 has 15.1 million)")
    group.add_argument("--tail-target", type=float, default=None,
                       help="reduced level: largest probability a truncation may drop (default: 1e-12)")
    group.add_argument("--mc-samples", type=int, default=None,
                       help="reduced level: sampled configurations when neither fits (default: 1000000)")


SWEEP = SweepSpec(reduced=reduced_many.simulate_group, full=full_group, group=level_group, check=check, summary=point_summary,
                  reduced_options=REDUCED_OPTIONS, full_options=FULL_OPTIONS, defaults=DEFAULT_OPTIONS,
                  heatmaps=("T1_attention", "final_error", "patch_association"),
                  columns=("final_loss", "final_error", "T1_attention"), extra_columns=("sum_method",),
                  modes=("exact", "sampled", "realistic"), add_arguments=add_arguments,
                  example="JSL grid, e.g. --D 16,36 --C 4 --p 3,5 --q 0.2,0.3,0.4 --seeds 4",
                  traced=tuple(JSLConfig.TRACED) + ("seed",))
