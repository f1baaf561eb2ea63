"""The full level: W^PV and W^KQ trained by optax GD on dynsim's full-level engine, on the exact
population loss (mode "exact", `population.population_loss`) or on a fresh batch of prompts each
step (mode "sampled", the flax module's forward pass), compiled once per shape (the config's
numbers are traced)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import environment, recording
from dynsim.icl import traced
from dynsim.icl.config import ICLConfig
from dynsim.trajectory import Trajectory, seed_statistics
from full import engine

from . import model, spec
from .population import population_loss


def observe_params(cfg: ICLConfig):
    """The recorded quantities of the parameters: u = w22^PV, the product u diag(W11^KQ), the exact
    population loss, the relative distance of u W11^KQ to Gamma^{-1}, the balance u^2 -
    ||W11^KQ||_F^2, and the largest entry the reduction says is zero (`offblock`)."""
    d = cfg.d

    def observe(params, t):
        lam = traced.spectrum(cfg)
        target = 1 / traced.gamma(cfg)
        pv, kq = params["W_PV"], params["W_KQ"]
        u, U = pv[d, d], kq[:d, :d]
        P = u * U
        zero = jnp.concatenate(
            [
                pv[:d].ravel(),
                pv[d, :d],
                kq[d].ravel(),
                kq[:d, d],
                (U - jnp.diag(jnp.diag(U))).ravel(),
            ]
        )
        return {
            "u": u,
            "product": jnp.diag(P),
            "loss": population_loss(params, lam, cfg.N),
            "gap": jnp.linalg.norm(P - jnp.diag(target)) / jnp.linalg.norm(target),
            "balance": u**2 - jnp.sum(U**2),
            "offblock": jnp.max(jnp.abs(zero)),
        }

    return observe


def sampled_loss(cfg: ICLConfig):
    """(1/2) mean over `cfg.batch` fresh prompts of (y_hat - y_q)^2: params, key -> loss."""

    def loss(params, key):
        E, target = model.prompts(key, traced.spectrum(cfg), cfg.N, cfg.batch, cfg.dtype)
        return 0.5 * jnp.mean((model.predict(params, E) - target) ** 2)

    return loss


def _train(cfg: ICLConfig, grad, key=None):
    """optax GD from the initialization's parameters on dynsim's engine: (final params, records)."""
    return engine.train(
        grad,
        optax.sgd(cfg.eta),
        model.params0(cfg),
        observe_params(cfg),
        cfg.steps,
        cfg.record_every,
        key,
    )


@jax.jit
def _exact(cfg: ICLConfig):
    """GD on the exact population loss."""
    return _train(cfg, jax.grad(lambda p: population_loss(p, traced.spectrum(cfg), cfg.N)))


@jax.jit
def _sampled(cfg: ICLConfig, keys):
    """R replicate runs of GD on fresh prompts (keys: (R,) keys), vmapped."""
    grad = jax.grad(sampled_loss(cfg))
    return jax.vmap(lambda key: _train(cfg, grad, key))(keys)


def simulate(cfg: ICLConfig, mode: str = "exact", replicates=None) -> Trajectory:
    """The full level: mode "exact" (deterministic) or "sampled" (R replicate runs: their mean,
    `<name>_se` and each run as `<name>_seeds`); final params in `final`."""
    R = spec.check_full(cfg, mode, replicates)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    with environment.precision(cfg.dtype):
        if mode == "exact":
            params, rec = _exact(cfg)
            observables = {k: np.asarray(v) for k, v in rec.items()}
            final = {k: np.asarray(v) for k, v in params.items()}
        else:
            params, rec = _sampled(cfg, engine.replicate_keys(cfg, R))
            # records (R, steps, ...) as seed_statistics reads them
            observables = seed_statistics(
                {k: np.asarray(v) for k, v in rec.items()}, keep_seeds=True
            )
            final = {k: np.asarray(v) for k, v in params.items()}
    extra = {"replicates": R, "batch_size": cfg.batch} if mode == "sampled" else {}
    meta = environment.meta("full", mode, cfg, **extra)
    return Trajectory(steps, observables, meta, final)
