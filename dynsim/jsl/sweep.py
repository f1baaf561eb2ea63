"""JSL points of a sweep: the groups, the checks before any work, the summaries and the sweep's
options.

A group is a set of points that share every shape: (D, C, p), the recording grid, the dtype and how
the configuration sum is evaluated (`reduced.jsl.sums.choose`). Inside a group the config's traced
numbers and the seed vary, so the reduced level runs the group as one compiled program
(`reduced.jsl.many.simulate_group`) and the full level in modes exact and sampled too
(`full.jsl.many.simulate_many`). With method "flow" the reduced level is the gradient flow, point by
point (`reduced.jsl.flow`, LSODA stepped on the host), saved as `dynsim compare --method flow` saves
it; every event time is also given in time t = eta * steps.
"""

from __future__ import annotations

import numpy as np

import full.jsl
import reduced.jsl
from dynsim.jsl import events
from dynsim.jsl.config import JSLConfig
from dynsim.jsl.setting import TIMES  # the event times' columns: eta * steps
from dynsim.sweeps import common
from dynsim.trajectory import Trajectory
from full.jsl import many
from reduced.jsl import many as reduced_many
from reduced.jsl import sums


def reduced_group(cfgs: list[JSLConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """The reduced trajectories of points of one group: one compiled program of GD
    (`reduced.jsl.many.simulate_group`), or with options["method"] "flow" the gradient flow of each
    point on the sum the sweep chose (LSODA on the host: one point at a time), saved at eta times
    GD's recorded steps up to t_max (`common.flow_keywords`, as `dynsim compare --method flow`)."""
    if options.get("method") != "flow":
        return reduced_many.simulate_group(cfgs, options, batch_size)
    return [
        reduced.jsl.simulate(
            c,
            max_nonzero=sums.choose(c, **reduced_many.sum_options(options)).max_nonzero,
            **common.flow_keywords(c, options),
        )
        for c in cfgs
    ]


def full_group(cfgs: list[JSLConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """The full trajectories of points of one group: one program (`full.jsl.many`) in modes exact
    and sampled, point by point in mode realistic."""
    mode = options.get("mode", "exact")
    if mode == "realistic":
        return [full.jsl.simulate(c, mode=mode) for c in cfgs]
    return many.simulate_many(cfgs, mode, options.get("replicates"), batch_size)


def check_flow_point(cfg: JSLConfig, options: dict) -> None:
    """The flow's own refusals at a point (`setting.validate_point` loads this for --method
    flow): a sum the flow can hold (not Monte Carlo) and t_max."""
    choice = sums.choose(cfg, **reduced_many.sum_options(options))
    if choice.method == "monte_carlo":
        raise ValueError(
            f"method = 'flow' is invalid at D = {cfg.D}, C = {cfg.C}: {choice.reason}; the "
            "flow needs the full or truncated sum (raise --max-configurations or --tail-target)"
        )
    common.flow_keywords(cfg, options)  # checks t_max


def seeded(cfg: JSLConfig, options: dict, level: str) -> bool:
    """Whether the seed changes a point's numbers at `level` beyond rounding. Reduced: only a Monte
    Carlo sum (its sample); the full and truncated sums are deterministic. Full: modes sampled and
    realistic draw data; mode exact takes only w*'s direction and, for a random partition, the
    permutation from the seed, and the population dynamics are invariant under both (rotation about
    w*, relabelling the patches): seeds 0 and 1 differ by <= 3.4e-16 in every observable (D = 9, C =
    3, 300 steps, contiguous and random partitions)."""
    reduced_seeded = (
        level != "full"
        and sums.choose(cfg, **reduced_many.sum_options(options)).method == "monte_carlo"
    )
    return reduced_seeded or (level != "reduced" and options.get("mode", "exact") != "exact")


def level_group(cfg: JSLConfig, options: dict, level: str) -> tuple:
    """Points with equal keys share their compiled programs at `level` (reduced, full or both)."""
    mode = options.get("mode", "exact")
    full_key = (
        (cfg if mode == "realistic" else many.group_key(cfg, mode, options.get("replicates")))
        if level != "reduced"
        else None
    )
    return (reduced_many.group_key(cfg, options) if level != "full" else None, full_key)


def settled_events(t: Trajectory) -> dict:
    """Event times (`events.detect`, Section 4.1, whose T1_gamma_rho and T0 do not move with the
    horizon) and their censoring: {event: recorded step or None, event + "_censored": the last
    recorded step when the event is not reached within the run (every longer run finds it later,
    docs/sweeps.md), else None}, and the same in time t = eta * steps (`common.in_time`: t0,
    t1_attention, ...; censored at the last record's time, a flow's t_max). None for all when the
    run is not finite or lacks the observables the events need."""
    if t.meta.get("nonfinite_from_step") is not None or any(
        k not in t.observables for k in events.REQUIRED
    ):
        return {k: None for e in events.EVENTS + TIMES for k in (e, e + "_censored")}
    steps = events.detect(t).times()
    return {**common.censored(steps, int(t.steps[-1])), **common.in_time(t, steps)}


def level_summary(t: Trajectory) -> dict:
    """Event times that do not move with the horizon, in steps and in time, with censoring
    (`settled_events`), the final loss, 0-1 error (the population error of the reduced and exact
    levels, the test error of the realistic one), patch association (Definition 2.2), the final
    within/between attention ratio (C-1) Gamma / ((D-C) Xi) (> 1 once Event II is over), (alpha,
    gamma, rho) and the loss's stability flags (`common.stability`)."""
    last = {k: float(np.asarray(v)[-1]) for k, v in t.observables.items() if np.ndim(v) == 1}
    loss_name = "test_loss" if "test_loss" in t.observables else "loss"
    return {
        **settled_events(t),
        "final_loss": last.get(loss_name),
        "final_error": last.get("test_error", last.get("error")),
        "patch_association": last.get("patch_association"),
        # numpy's division: a between-attention that underflowed to 0 gives inf, not an error
        "final_attention_ratio": float(
            np.divide(last["within_attention"], last["between_attention"])
        )
        if "between_attention" in last
        else None,
        "final_alpha": last.get("alpha"),
        "final_gamma": last.get("gamma"),
        "final_rho": last.get("rho"),
        "nonfinite_from_step": t.meta.get("nonfinite_from_step"),
        **common.stability(t, loss_name),
    }


def point_summary(cfg: JSLConfig, red, ful, report) -> dict:
    row: dict = {}
    for prefix, t in (("reduced_", red), ("full_", ful)):
        if t is not None:
            row.update({prefix + k: v for k, v in level_summary(t).items()})
    if red is not None:
        tr = red.meta["truncation"]
        bounds = tr.get("bounds") or {}
        row.update(
            {
                "sum_method": tr.get(
                    "method", "full" if tr.get("max_nonzero") is None else "truncated"
                ),
                "configurations": tr["configurations"],
                "dropped_probability": tr["dropped_probability"],
                "loss_bound": bounds.get("loss"),
                "loss_se_mc": float(np.asarray(red["loss_se_mc"])[-1])
                if "loss_se_mc" in red.observables
                else None,
            }
        )
    row.update(common.verdict(report))
    return row
