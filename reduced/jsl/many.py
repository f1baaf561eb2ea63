"""Several reduced runs as one compiled program: one config from several starts, or a group of
configs (a sweep's).

A group is a set of points that share every shape: (D, C, p), the recording grid, the dtype and how
the configuration sum is evaluated (`sums.choose`). Inside a group the config's numbers
(`JSLConfig.NUMBERS`: q, nu, eta, sigma_A, ...) and the Monte Carlo keys are traced, so the group
runs as `lax.map(batch_size=...)` over them: vmapped batches, bounded memory, one compilation.
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import divergence, environment, pytree, recording
from dynsim.jsl import JSLConfig
from dynsim.trajectory import Trajectory, seed_statistics
from dynsim.validation import count_value

from . import configurations, dynamics, sums, tables
from .class_sums import ClassWeights, class_table, class_weights
from .simulation import run_monte_carlo
from .spec import SUM_OPTIONS


def run_many(cfg: JSLConfig, table, states0):
    """`dynamics.run` from every start in states0 (R, 3), vmapped."""
    return jax.vmap(lambda s: dynamics.run(cfg, table, s))(states0)


run_many_jit = jax.jit(run_many)


@environment.guarded
def simulate_many(cfg: JSLConfig, inits) -> Trajectory:
    """Reduced GD on (P) from each start in `inits` (R x 3: alpha, gamma, rho), vmapped.

    The observables are the mean over starts; `<name>_seeds` (steps, R) holds each run. The full
    configuration sum is used; a config whose sum exceeds `dynamics.MAX_CONFIGURATIONS` is refused.
    """
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    states = np.asarray(inits, dtype=float)
    if states.ndim != 2 or states.shape[1] != 3 or states.shape[0] < 1:
        raise ValueError(
            f"inits has shape {states.shape}: expected (R, 3) rows of (alpha, gamma, rho), R >= 1"
        )
    if not np.all(np.isfinite(states)):
        raise ValueError("inits must be finite")
    tables.check_size(cfg, None)
    table = tables.table(cfg, None)
    rec, seen = run_many_jit(cfg, table.weights, jnp.asarray(states, cfg.dtype))
    observables = seed_statistics(rec, standard_error=False)
    exact = divergence.take(observables)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "reduced",
        "population",
        cfg,
        starts=states.tolist(),
        truncation={
            "configurations": table.size,
            "configurations_total": count_value(configurations.count(cfg.D, cfg.C)),
            "max_nonzero": None,
            "dropped_probability": 0.0,
        },
        max_abs_alpha=float(np.max(np.asarray(seen)[:, 0])),
    )
    divergence.flag(
        divergence.nonfinite(observables, steps),
        steps,
        meta,
        meta["level"],
        meta["config"]["eta"],
        2,
        exact,
    )
    return Trajectory(steps, observables, meta)


def sum_options(options: dict) -> dict:
    """The options of `sums.choose` present in `options`."""
    return {k: options[k] for k in SUM_OPTIONS if options.get(k) is not None}


def canonical(cfg: JSLConfig) -> JSLConfig:
    """cfg as its group's program sees it: the seed at 0 (the reduced level reads it only through
    the Monte Carlo keys, which are inputs)."""
    return cfg.replace(seed=0)


def group_key(cfg: JSLConfig, options: dict) -> tuple:
    """Points with the same group key run in one compiled program (their shapes and sum method
    agree)."""
    choice = sums.choose(cfg, **sum_options(options))
    return (pytree.shape(canonical(cfg)), choice.method, choice.max_nonzero, choice.size)


def run_group(
    method: str, size: int, batch_size: int, devices: int, classes, cfgs: JSLConfig, keys, states0
):
    """lax.map(batch_size) of one point's run over the points; with several devices, the points are
    split across them (shard_map over a 1-D mesh "points"), each device mapping over its share.

    cfgs: the points' configs stacked (`dynsim.pytree.stack`); classes: (mono, log N, Z_0) of the
    shared class table; each point weighs the classes at its own (traced) q."""

    def local(classes, xs):
        def one(args):
            cfg, key, state0 = args
            if method == "monte_carlo":
                return run_monte_carlo(cfg, key, cfg.q, state0, size)
            mono, log_count, z0 = classes
            table = ClassWeights(mono, class_weights(log_count, z0, cfg.D - cfg.C, cfg.q))
            return dynamics.run(cfg, table, state0)

        return jax.lax.map(one, xs, batch_size=batch_size)

    if devices == 1:
        return local(classes, (cfgs, keys, states0))
    mesh = jax.sharding.Mesh(np.array(jax.devices()[:devices]), ("points",))
    points = jax.sharding.PartitionSpec("points")
    # the class table is replicated on every device; the points are split
    return jax.shard_map(
        local,
        mesh=mesh,
        in_specs=(jax.sharding.PartitionSpec(), points),
        out_specs=points,
        check_vma=False,
    )(classes, (cfgs, keys, states0))


run_group_jit = jax.jit(run_group, static_argnums=(0, 1, 2, 3))


def padded_size(n_points: int, multiple: int) -> int:
    """Points padded to a multiple of (devices x batch), so every batch runs the same compiled vmap
    (no remainder path) and every device gets the same share."""
    return multiple * math.ceil(n_points / multiple)


@environment.guarded
def simulate_group(cfgs: list[JSLConfig], options: dict, batch_size: int) -> list[Trajectory]:
    """The reduced trajectories of points that share a group key, as one compiled program."""
    key = group_key(cfgs[0], options)
    if any(group_key(c, options) != key for c in cfgs):
        raise ValueError("reduced_group needs points of one group (same shapes and sum method)")
    _, method, max_nonzero, size = key
    static = cfgs[0]
    dtype = jnp.dtype(static.dtype)
    devices = jax.local_device_count()
    total = padded_size(len(cfgs), batch_size * devices)
    padded = cfgs + [cfgs[-1]] * (total - len(cfgs))
    if method == "monte_carlo":
        # unused: each point samples its own
        shared = (jnp.zeros((1, 1), dtype),) + (jnp.zeros((1,), dtype),) * 2
    else:
        # every class, whatever q; each point's weights by `class_weights` at its q (0 for classes
        # impossible there)
        ct = class_table(static.D, static.C, static.p, max_nonzero)
        shared = tuple(jnp.asarray(a, dtype) for a in (ct.mono, ct.log_count, ct.z0))
    stacked = pytree.stack([canonical(c) for c in padded], dtype)
    keys = jnp.stack([sums.mc_key(c) for c in padded])
    # alpha0 = nu^(1/(p-1))
    states0 = jnp.asarray(np.stack([dynamics.initial_state(c) for c in padded]), dtype)
    out = []
    rec, seen = run_group_jit(method, size, batch_size, devices, shared, stacked, keys, states0)
    rec = jax.tree.map(np.asarray, rec)
    seen = np.asarray(seen)
    for i, cfg in enumerate(cfgs):
        r = {k: v[i] for k, v in rec.items()}
        if method == "monte_carlo":
            dropped, bounds = float("nan"), {}
        else:
            dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, max_nonzero)
            bounds = configurations.truncation_bounds(
                cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, dropped, *seen[i]
            )
        trunc = tables.truncation_meta(cfg, size, max_nonzero, dropped, bounds)
        trunc["method"] = method
        # a sampled sum is an approximation of (P): the checker then holds the levels to its stated
        # tolerance
        extra = (
            {"approximation": "monte_carlo_sum", "monte_carlo_samples": size}
            if method == "monte_carlo"
            else {}
        )
        out.append(dynamics.trajectory(cfg, r, seen[i], trunc, sum_method=method, **extra))
    return out
