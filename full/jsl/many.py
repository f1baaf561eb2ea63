"""Several full-matrix runs that share their shapes, as one compiled program (the full level of a
sweep).

The points differ in the config's numbers (`JSLConfig.NUMBERS`: q, nu, eta, sigma_A, ..., traced as
the leaves of the stacked configs) and in the seed (the feature w*, the start and the batches are
inputs): `lax.map(batch_size)` over them, each point exactly the program of `simulation.simulate`
(same keys, same configuration weights), so a point equals its single run.
"""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment, pytree, validation
from dynsim.jsl import JSLConfig, data
from dynsim.trajectory import Trajectory, seed_statistics

from .. import engine
from . import population, simulation, training

MODES = ("exact", "sampled")


def canonical(cfg: JSLConfig) -> JSLConfig:
    """cfg as its group's program sees it: the seed at 0 unless it draws a random partition (w*, the
    start and the batches are inputs)."""
    return cfg if cfg.partition == "random" else cfg.replace(seed=0)


def group_key(cfg: JSLConfig, mode: str, replicates: Optional[int]) -> tuple:
    """Points with equal keys run as one program: their shapes agree (`canonical`), and in mode
    'exact' q at 0 or 1 (which drops configurations) is a shape too."""
    edge = cfg.q if mode == "exact" and cfg.q in (0.0, 1.0) else None
    return (
        pytree.shape(canonical(cfg)),
        edge,
        mode,
        validation.replicates(replicates, engine.DEFAULT_REPLICATES) if mode == "sampled" else 1,
    )


def run_points(mode: str, R: int, batch_size: int, cfgs: JSLConfig, params0, w_stars, s, w, keys):
    """lax.map(batch_size) of one point's `training.train` (R vmapped replicates in mode sampled)
    over the points (cfgs: their configs stacked, `dynsim.pytree.stack`)."""

    def one(args):
        cfg, p0, w_star, w_c, key = args
        if mode == "exact":
            return training.train(cfg, mode, p0, w_star, population.Configurations(s, w_c), key)
        return jax.vmap(lambda k: training.train(cfg, mode, p0, w_star, None, k))(
            jax.random.split(key, R)
        )

    return jax.lax.map(one, (cfgs, params0, w_stars, w, keys), batch_size=batch_size)


run_points_jit = jax.jit(run_points, static_argnums=(0, 1, 2))


@environment.guarded
def simulate_many(
    cfgs: list[JSLConfig],
    mode: str = "exact",
    replicates: Optional[int] = None,
    batch_size: int = 8,
) -> list[Trajectory]:
    """`full.jsl.simulate(cfg, mode, replicates=replicates)` for every cfg of one group
    (`group_key`), one program."""
    if mode not in MODES:
        raise ValueError(
            f"mode = {mode!r} is invalid for batched full runs: must be one of {', '.join(MODES)} "
            "(mode 'realistic' runs point by point)"
        )
    for cfg in cfgs:
        simulation.validate_run_options(cfg, mode, replicates)
    key = group_key(cfgs[0], mode, replicates)
    if any(group_key(c, mode, replicates) != key for c in cfgs):
        raise ValueError("simulate_many needs configs of one group (same shapes; see group_key)")
    R = key[-1]
    dtype = jnp.dtype(cfgs[0].dtype)
    # padded: every batch runs the same compiled vmap
    total = batch_size * -(-len(cfgs) // batch_size)
    padded = cfgs + [cfgs[-1]] * (total - len(cfgs))
    w_stars = [data.feature(c, dtype) for c in padded]
    params0 = jax.tree.map(
        lambda *xs: jnp.stack(xs), *[training.initial_params(c, w) for c, w in zip(padded, w_stars)]
    )
    stacked = pytree.stack([canonical(c) for c in padded], dtype)
    if mode == "exact":
        tables = [population.enumerate_configurations(c) for c in padded]
        s, w = tables[0].s, jnp.stack([t.w for t in tables])
        size = int(w.shape[1])
    else:
        s, w, size = jnp.zeros((1, 1), dtype), jnp.zeros((total, 1), dtype), None
    keys = jnp.stack([engine.base_key(c) for c in padded])
    rec = run_points_jit(mode, R, batch_size, stacked, params0, jnp.stack(w_stars), s, w, keys)
    rec = jax.tree.map(np.asarray, rec)
    out = []
    for i, cfg in enumerate(cfgs):
        r = {k: v[i] for k, v in rec.items()}
        observables = r if mode == "exact" else seed_statistics(r, keep_seeds=False)
        out.append(training.trajectory(cfg, mode, observables, R, size))
    return out
