"""The ICL points of a sweep: each level's run per point (one compiled program per shape: d, N,
steps, record_every, batch, dtype) and the table's row, with Theorem 4.1's in-distribution error
beside the trained layer's."""

from __future__ import annotations

from dynsim.sweeps.common import flow_keywords, stability, verdict
from full.icl import spec as full_spec
from full.icl import training
from reduced.icl import simulation as reduced_simulation

from . import moments
from .config import ICLConfig


def sweep_reduced(cfgs, options: dict, batch_size: int) -> list:
    """The reduced level of each point: GD, or with options["method"] "flow" the gradient flow,
    saved at eta times GD's recorded steps up to t_max (`flow_keywords`, as `dynsim compare icl
    --method flow`)."""
    if options.get("method") != "flow":
        return [reduced_simulation.simulate(c) for c in cfgs]
    return [reduced_simulation.simulate(c, **flow_keywords(c, options)) for c in cfgs]


def sweep_full(cfgs, options: dict, batch_size: int) -> list:
    """The full level of each point (one compiled program per shape)."""
    R = options["replicates"] if options["mode"] == "sampled" else None
    return [training.simulate(c, mode=options["mode"], replicates=R) for c in cfgs]


def sweep_group(cfg: ICLConfig, options: dict, level: str):
    """The fields the compiled runs' shapes depend on."""
    return (cfg.d, cfg.N, cfg.steps, cfg.record_every, cfg.batch, cfg.dtype)


def sweep_check(cfg: ICLConfig, options: dict, level: str) -> None:
    """--replicates only in mode sampled (`full.icl.spec.check_full`); the flow's t_max at the
    point's eta (`flow_keywords`)."""
    if level != "full" and options.get("method") == "flow":
        flow_keywords(cfg, options)
    if level != "reduced":
        full_spec.check_full(cfg, options["mode"], options.get("replicates"))


def seeded(cfg: ICLConfig, options: dict, level: str) -> bool:
    """Only the sampled full level draws anything."""
    return level != "reduced" and options["mode"] == "sampled"


def summary(cfg: ICLConfig, red, ful, report) -> dict:
    """One sweep row: each level's final loss and distance to Gamma^-1, the theorem's
    in-distribution error 2 L* (test prompts of N examples, w ~ N(0, I_d)) and the trained full
    layer's, 2 L(T), and their ratio; the checker's verdict."""
    row: dict = {}
    for prefix, traj in (("reduced_", red), ("full_", ful)):
        if traj is not None:
            row[prefix + "final_loss"] = float(traj["loss"][-1])
            row[prefix + "final_gap"] = float(traj["gap"][-1])
            row.update({prefix + k: v for k, v in stability(traj).items()})
    theorem = 2 * moments.min_loss(cfg.spectrum, cfg.N)
    row["theorem_error"] = theorem
    learned = row.get("full_final_loss", row.get("reduced_final_loss"))
    row["learned_error"] = 2 * learned
    row["learned_over_theorem"] = 2 * learned / theorem
    return {**row, **verdict(report)}
