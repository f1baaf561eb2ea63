"""The toy setting's two levels: the reduced recurrence in (m, s) and the full vector w trained by
optax GD on dynsim's full-level engine (a plugin reuses it; it need not write its own training
loop)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import environment, pytree, recording
from dynsim.trajectory import Trajectory, seed_statistics
from full import engine

from .config import ToyConfig


def teacher(cfg: ToyConfig) -> jnp.ndarray:
    """w*: a seeded unit vector in R^d."""
    w = jax.random.normal(jax.random.PRNGKey(cfg.seed), (cfg.d,), cfg.dtype)
    return w / jnp.linalg.norm(w)


def start(cfg: ToyConfig) -> jnp.ndarray:
    """w0 = w0_scale * e_1."""
    return jnp.zeros(cfg.d, cfg.dtype).at[0].set(cfg.w0_scale)


# ToyConfig as a pytree: its NUMBERS traced, so each program below compiles once per shape
pytree.register(ToyConfig)


@jax.jit
def _reduced_records(cfg: ToyConfig, bias) -> dict:
    """The reduced recurrence's records (`reduced`)."""
    w_star, w0 = teacher(cfg), start(cfg)
    state0 = jnp.stack([w0 @ w_star, w0 @ w0])
    eta = jnp.asarray(cfg.eta, cfg.dtype)

    def step(state, t):
        m, s = state
        return jnp.stack(
            [m - eta * (m - 1.0) + bias, (1 - eta) ** 2 * s + 2 * eta * (1 - eta) * m + eta**2]
        )

    def observe(state, t):
        m, s = state
        return {"overlap": m, "norm2": s, "loss": (s - 2 * m + 1.0) / 2}

    return recording.run(step, observe, state0, cfg.steps, cfg.record_every)[1]


def reduced(cfg: ToyConfig, bias: float = 0.0) -> Trajectory:
    """GD in the order parameters (m, s); `bias` adds a wrong term to m's update (a negative
    control's bug)."""
    rec = _reduced_records(cfg, jnp.asarray(bias, cfg.dtype))
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    return Trajectory(
        steps,
        {k: np.asarray(v) for k, v in rec.items()},
        environment.meta("reduced", "population", cfg),
    )


def _train(cfg: ToyConfig, loss, key=None):
    """optax GD from w0 on the full level's engine (`full.engine.train`): loss(w) or, with a key,
    loss(w, key_t) on step t's batch; recorded: overlap with w*, |w|^2 and the exact population
    loss."""
    w_star = teacher(cfg)
    grad = jax.grad(loss)

    def observe(w, t):
        return {"overlap": w @ w_star, "norm2": w @ w, "loss": 0.5 * jnp.sum((w - w_star) ** 2)}

    return engine.train(
        grad, optax.sgd(cfg.eta), start(cfg), observe, cfg.steps, cfg.record_every, key
    )[1]


@jax.jit
def _exact_records(cfg: ToyConfig) -> dict:
    """The exact population GD's records (`full`, mode exact)."""
    w_star = teacher(cfg)
    return _train(cfg, lambda w: 0.5 * jnp.sum((w - w_star) ** 2))


@jax.jit
def _sampled_records(cfg: ToyConfig, keys) -> dict:
    """One run per key on fresh batches of N samples (`full`, mode sampled)."""
    w_star = teacher(cfg)

    def batch_loss(w, key):
        x = jax.random.normal(key, (cfg.N, cfg.d), cfg.dtype)
        return 0.5 * jnp.mean((x @ (w - w_star)) ** 2)

    return jax.vmap(lambda k: _train(cfg, batch_loss, k))(keys)


def full(cfg: ToyConfig, mode: str = "exact", replicates: int = 8) -> Trajectory:
    """The full level: exact population GD, or `replicates` runs on fresh batches of N samples (mean
    and `_se`)."""
    if mode not in ("exact", "sampled"):
        raise ValueError(f"mode = {mode!r} is invalid: must be exact or sampled")
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    if mode == "exact":
        rec = _exact_records(cfg)
        return Trajectory(
            steps, {k: np.asarray(v) for k, v in rec.items()}, environment.meta("full", mode, cfg)
        )
    keys = jax.random.split(jax.random.PRNGKey(cfg.seed + 1), replicates)
    rec = _sampled_records(cfg, keys)
    obs = seed_statistics({k: np.asarray(v) for k, v in rec.items()}, keep_seeds=False)
    return Trajectory(steps, obs, environment.meta("full", mode, cfg, replicates=replicates))
