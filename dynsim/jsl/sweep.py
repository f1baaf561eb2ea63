"""JSL points of a sweep: the reduced level as one compiled program per group, the full level per point, summaries.

A group is a set of points that share every shape: (D, C, p), the recording grid, the dtype and how the
configuration sum is evaluated (`reduced.jsl.sums.choose`). Inside a group q, nu, eta, sigma_A, tau and the
seed are traced numbers, so the group runs as `lax.map(batch_size=...)` over them: vmapped batches, bounded
memory, one compilation.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

import full.jsl
from dynsim.jsl import events
from dynsim.jsl.config import JSLConfig
from dynsim.setting import SweepSpec
from dynsim.sweeps import common
from dynsim.trajectory import Trajectory
from full.jsl import many
from reduced.jsl import configurations, dynamics, sums

REDUCED_OPTIONS = ("max_configurations", "tail_target", "mc_samples")
FULL_OPTIONS = ("mode", "replicates", "confidence")
DEFAULT_OPTIONS = {"mode": "exact", "replicates": None, "confidence": 0.999}


def sum_options(options: dict) -> dict:
    """The options of `sums.choose` present in `options`."""
    return {k: options[k] for k in REDUCED_OPTIONS if options.get(k) is not None}


def group_key(cfg: JSLConfig, options: dict) -> tuple:
    """Points with the same group key run in one compiled program (their shapes and sum method agree)."""
    choice = sums.choose(cfg, **sum_options(options))
    # the numbers a group's static config carries (the same for both levels)
    return (cfg.replace(**many.CANONICAL), choice.method, choice.max_nonzero, choice.size)


def _group(static: JSLConfig, method: str, size: int, batch_size: int, devices: int, n, numbers, keys, states0, w):
    """lax.map(batch_size) of one point's run over the points; with several devices, the points are split across
    them (shard_map over a 1-D mesh "points"), each device mapping over its share."""
    def local(n, xs):
        def one(args):
            num, key, state0, w = args
            if method == "monte_carlo":
                table = sums.monte_carlo_table(static, key, num.q, size)
            else:
                table = dynamics.Weights(n, w)
            rec, seen = dynamics._run(static, table, state0, num)
            if method == "monte_carlo":
                states = jnp.stack([rec["alpha"], rec["gamma"], rec["rho"]], axis=1)
                rec = {**rec, **sums.standard_errors(static, states, table, num)}
            return rec, seen

        return jax.lax.map(one, xs, batch_size=batch_size)

    if devices == 1:
        return local(n, (numbers, keys, states0, w))
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:devices]), ("points",))
    points = jax.sharding.PartitionSpec("points")
    # n (the table's counts) is replicated on every device; the points are split
    return jax.shard_map(local, mesh=mesh, in_specs=(jax.sharding.PartitionSpec(), points), out_specs=points,
                         check_vma=False)(n, (numbers, keys, states0, w))


_group_jit = jax.jit(_group, static_argnums=(0, 1, 2, 3, 4))


def _pad(n_points: int, multiple: int) -> int:
    """Points padded to a multiple of (devices x batch), so every batch runs the same compiled vmap (no remainder
    path) and every device gets the same share."""
    return multiple * math.ceil(n_points / multiple)


def reduced_group(cfgs: list[JSLConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """The reduced trajectories of points that share a group key, as one compiled program."""
    static, method, max_nonzero, size = group_key(cfgs[0], options)
    if any(group_key(c, options) != (static, method, max_nonzero, size) for c in cfgs):
        raise ValueError("reduced_group needs points of one group (same shapes and sum method)")
    dtype = jnp.dtype(static.dtype)
    devices = jax.local_device_count()
    total = _pad(len(cfgs), batch_size * devices)
    padded = cfgs + [cfgs[-1]] * (total - len(cfgs))
    if method == "monte_carlo":
        n = jnp.zeros((1, 1), dtype)  # unused: each point samples its own table
        w = jnp.zeros((total, 1), dtype)
    else:
        # every configuration kept at q strictly inside (0, 1), so the rows do not depend on q; the weights are
        # per point, by the single run's own NumPy function (so both sum the same numbers; 0 where impossible)
        rows, _ = configurations.enumerate_configurations(static.D, static.C, 0.5, max_nonzero)
        n = jnp.asarray(rows.T, dtype)
        w = jnp.asarray(np.stack([configurations.weights(rows, c.C, c.q) for c in padded]), dtype)
    numbers = dynamics.Numbers(*(jnp.asarray([getattr(c, f) for c in padded], dtype) for f in dynamics.Numbers._fields))
    keys = jnp.stack([sums.mc_key(c) for c in padded])
    states0 = jnp.asarray(np.stack([dynamics.initial_state(c) for c in padded]), dtype)  # alpha0 = nu^(1/(p-1))
    out = []
    rec, seen = _group_jit(static, method, size, batch_size, devices, n, numbers, keys, states0, w)
    rec = jax.tree.map(np.asarray, rec)
    seen = np.asarray(seen)
    for i, cfg in enumerate(cfgs):
        r = {k: v[i] for k, v in rec.items()}
        if method == "monte_carlo":
            dropped, bounds = float("nan"), {}
        else:
            dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, max_nonzero)
            bounds = configurations.truncation_bounds(cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, dropped, *seen[i])
        trunc = dynamics.truncation_meta(cfg, size, max_nonzero, dropped, bounds)
        trunc["method"] = method
        # a sampled sum is an approximation of (P): the checker then holds the levels to its stated tolerance
        extra = {"approximation": "monte_carlo_sum", "monte_carlo_samples": size} if method == "monte_carlo" else {}
        out.append(dynamics.trajectory(cfg, r, seen[i], trunc, sum_method=method, **extra))
    return out



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
        group_key(cfg, options)  # validates the sum options
    if level != "reduced":
        full.jsl.check(cfg, options.get("mode", "exact"), options.get("replicates"))


def level_group(cfg: JSLConfig, options: dict, level: str) -> tuple:
    """Points with equal keys share their compiled programs at `level` (reduced, full or both)."""
    mode = options.get("mode", "exact")
    full_key = (cfg if mode == "realistic" else many.group_key(cfg, mode, options.get("replicates"))) \
        if level != "reduced" else None
    return (group_key(cfg, options) if level != "full" else None, full_key)


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
                       help="reduced level: largest configuration sum enumerated; above it the sum is truncated "
                            "or sampled (default: 3,000,000)")
    group.add_argument("--tail-target", type=float, default=None,
                       help="reduced level: largest probability a truncation may drop (default: 1e-12)")
    group.add_argument("--mc-samples", type=int, default=None,
                       help="reduced level: sampled configurations when neither fits (default: 100000)")


SWEEP = SweepSpec(reduced=reduced_group, full=full_group, group=level_group, check=check, summary=point_summary,
                  reduced_options=REDUCED_OPTIONS, full_options=FULL_OPTIONS, defaults=DEFAULT_OPTIONS,
                  heatmaps=("T1_attention", "final_error", "patch_association"),
                  columns=("final_loss", "final_error", "T1_attention"), extra_columns=("sum_method",),
                  modes=("exact", "sampled", "realistic"), add_arguments=add_arguments,
                  example="JSL grid, e.g. --D 16,36 --C 4 --p 3,5 --q 0.2,0.3,0.4 --seeds 4")
