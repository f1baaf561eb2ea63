"""The toy setting's two levels: the reduced recurrence in (m, s) and the full vector w trained by optax GD."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import environment, recording
from dynsim.trajectory import Trajectory, seed_statistics

from .config import ToyConfig


def teacher(cfg: ToyConfig) -> jnp.ndarray:
    """w*: a seeded unit vector in R^d."""
    w = jax.random.normal(jax.random.PRNGKey(cfg.seed), (cfg.d,), cfg.dtype)
    return w / jnp.linalg.norm(w)


def start(cfg: ToyConfig) -> jnp.ndarray:
    """w0 = w0_scale * e_1."""
    return jnp.zeros(cfg.d, cfg.dtype).at[0].set(cfg.w0_scale)


def reduced(cfg: ToyConfig, bias: float = 0.0) -> Trajectory:
    """GD in the order parameters (m, s); `bias` adds a wrong term to m's update (a negative control's bug)."""
    w_star, w0 = teacher(cfg), start(cfg)
    state0 = jnp.stack([w0 @ w_star, w0 @ w0])
    eta = jnp.asarray(cfg.eta, cfg.dtype)

    def step(state, t):
        m, s = state
        return jnp.stack([m - eta * (m - 1.0) + bias, (1 - eta) ** 2 * s + 2 * eta * (1 - eta) * m + eta**2])

    def observe(state, t):
        m, s = state
        return {"overlap": m, "norm2": s, "loss": (s - 2 * m + 1.0) / 2}

    _, rec = jax.jit(lambda s0: recording.run(step, observe, s0, cfg.steps, cfg.record_every))(state0)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    return Trajectory(steps, {k: np.asarray(v) for k, v in rec.items()},
                      environment.meta("reduced", "population", cfg))


def _train(cfg: ToyConfig, loss, key):
    """optax GD from w0 on loss(w, key), recorded: overlap with w*, |w|^2 and the exact population loss."""
    w_star, opt = teacher(cfg), optax.sgd(cfg.eta)

    def step(carry, t):
        w, state, k = carry
        k, sub = jax.random.split(k)
        updates, state = opt.update(jax.grad(loss)(w, sub), state)
        return optax.apply_updates(w, updates), state, k

    def observe(carry, t):
        w = carry[0]
        return {"overlap": w @ w_star, "norm2": w @ w, "loss": 0.5 * jnp.sum((w - w_star) ** 2)}

    w0 = start(cfg)
    return recording.run(step, observe, (w0, opt.init(w0), key), cfg.steps, cfg.record_every)[1]


def full(cfg: ToyConfig, mode: str = "exact", replicates: int = 8) -> Trajectory:
    """The full level: exact population GD, or `replicates` runs on fresh batches of N samples (mean and `_se`)."""
    if mode not in ("exact", "sampled"):
        raise ValueError(f"mode = {mode!r} is invalid: must be exact or sampled")
    w_star = teacher(cfg)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    if mode == "exact":
        rec = jax.jit(lambda k: _train(cfg, lambda w, _: 0.5 * jnp.sum((w - w_star) ** 2), k))(jax.random.PRNGKey(1))
        return Trajectory(steps, {k: np.asarray(v) for k, v in rec.items()}, environment.meta("full", mode, cfg))

    def batch_loss(w, key):
        x = jax.random.normal(key, (cfg.N, cfg.d), cfg.dtype)
        return 0.5 * jnp.mean((x @ (w - w_star)) ** 2)

    keys = jax.random.split(jax.random.PRNGKey(cfg.seed + 1), replicates)
    rec = jax.jit(jax.vmap(lambda k: _train(cfg, batch_loss, k)))(keys)
    obs = seed_statistics({k: np.asarray(v) for k, v in rec.items()}, keep_seeds=False)
    return Trajectory(steps, obs, environment.meta("full", mode, cfg, replicates=replicates))
