"""Theorem 3.1's generalized linear model g(X) = phi(sum_j <w_j, X_j>), trained by full-batch GD on
Assumption 1.

phi is the identity logit with the logistic loss (logistic regression on the D*d patch coordinates):
one weight vector w_j in R^d per patch, no knowledge of the partition. Theorem 3.1 says every such g
errs with probability >= 1/8 (in the paper's asymptotic regime); `dynsim.jsl.reference.glm_error` is
the exact error of the best sign-of-count GLM g = sum_j <w*, X_j> at the config's sizes.
"""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import environment, recording
from dynsim.draws import flat
from dynsim.jsl import JSLConfig, data, error, partition
from dynsim.jsl.error import margin_error as zero_one_error
from dynsim.jsl.model import logistic_loss
from .spec import validate_glm_args
from dynsim.trajectory import Trajectory, seed_statistics
from dynsim.jsl import traced  # noqa: F401 (JSLConfig as a pytree: its numbers traced)

from .. import engine

DEFAULT_SEEDS = 8


def logits(W, X):
    """g(X) = sum_j <w_j, X_j> for W (D, d) and X (..., D, d) (Theorem 3.1 with phi the identity
    logit)."""
    return jnp.einsum("...Dd,Dd->...", X, W)


def weighted_loss(margins, weights=None):
    """Empirical logistic loss (E) sum_n m_n log(1 + exp(-y_n g(X_n))) / sum_n m_n (m = 1: the plain
    mean)."""
    losses = logistic_loss(margins)
    if weights is None:
        return jnp.mean(losses)
    return jnp.sum(weights * losses) / jnp.sum(weights)


def gd(loss, params0, steps: int, eta, observe, record_every: int):
    """Full-batch GD (optax.sgd) on `loss(params)` for `steps` steps, `observe(params)` recorded by
    lax.scan."""
    return engine.train(
        jax.grad(loss),
        optax.sgd(eta),
        params0,
        lambda params, t: observe(params),
        steps,
        record_every,
    )


def initial_weights(cfg: JSLConfig, key):
    """W^(0) with entries iid N(0, omega^2), as v^(0) in Parametrization 3.1 (realistic case)."""
    return cfg.omega * flat(jax.random.normal, key, (cfg.D, cfg.d), jnp.dtype(cfg.dtype))


def train_glm(
    cfg: JSLConfig,
    train,
    test,
    *,
    steps: int,
    eta,
    key,
    weights=None,
    record_every: Optional[int] = None,
    w_star=None,
):
    """Full-batch GD on the logistic loss of g(X) = sum_j <w_j, X_j> from W ~ N(0, omega^2);
    traceable.

    train = (X (n, D, d), y (n,)), test = (X_test, y_test). `weights` (n,) weighs the training
    samples (a 0/1 mask trains on a subset with static shapes). Records per recorded step: loss
    (training), test_error, test_loss, w_norm, and with `w_star` the mean and spread over j of <w_j,
    w*> and f_star_error (the test error against f*). Returns (final W (D, d), records).
    """
    X, y = train
    X_test, y_test = test
    record_every = steps if record_every is None else record_every

    def loss(W):
        return weighted_loss(y * logits(W, X), weights)

    def observe(W):
        F = logits(W, X_test)
        test_margins = y_test * F
        out = {
            "loss": loss(W),
            "test_error": zero_one_error(test_margins),
            "test_loss": jnp.mean(logistic_loss(test_margins)),
            "w_norm": jnp.linalg.norm(W),
        }
        if w_star is not None:
            on_feature = W @ w_star
            out["feature_weight"] = jnp.mean(on_feature)
            out["feature_weight_spread"] = jnp.max(on_feature) - jnp.min(on_feature)
            out["f_star_error"] = error.f_star_error(cfg, F, data.signs(X_test, w_star))
        return out

    return gd(loss, initial_weights(cfg, key), steps, eta, observe, max(1, record_every))


def _run_seeds(cfg: JSLConfig, keys, w_star, steps: int, eta, record_every: int):
    def one(key):
        k_train, k_test, k_init = jax.random.split(key, 3)
        dtype = jnp.dtype(cfg.dtype)
        train = data.sample(k_train, cfg, cfg.N, w_star, dtype)
        test = data.sample(k_test, cfg, cfg.n_test, w_star, dtype)
        return train_glm(
            cfg,
            train,
            test,
            steps=steps,
            eta=eta,
            key=k_init,
            record_every=record_every,
            w_star=w_star,
        )

    return jax.vmap(one)(keys)


_run_seeds_jit = jax.jit(_run_seeds, static_argnums=(3, 5))  # cfg a pytree: its numbers traced


@environment.guarded
def run_glm(
    cfg: JSLConfig,
    seeds: int = DEFAULT_SEEDS,
    *,
    steps: Optional[int] = None,
    eta: Optional[float] = None,
):
    """Train the GLM of Theorem 3.1 on N = cfg.N samples per seed, test on cfg.n_test fresh ones;
    vmapped over seeds.

    steps and eta default to cfg.steps and cfg.eta; cfg.omega is the init std and cfg.record_every
    the recording period. Returns (Trajectory (level "full", mode "glm"), final) where each
    observable is the seed mean, with `<name>_se` (std/sqrt(R)) and `<name>_seeds` (steps, R); final
    = {"W": (R, D, d), "w_star": (d,)}.
    """
    steps = cfg.steps if steps is None else steps
    eta = cfg.eta if eta is None else eta
    validate_glm_args(cfg, seeds, steps, eta)
    dtype = jnp.dtype(cfg.dtype)
    w_star = data.feature(cfg, dtype)
    keys = jax.random.split(jax.random.fold_in(jax.random.key(cfg.seed), 0x61F), seeds)
    W, rec = _run_seeds_jit(cfg, keys, w_star, steps, float(eta), cfg.record_every)
    observables = seed_statistics(rec)
    marks = recording.recorded_steps(steps, cfg.record_every)
    meta = environment.meta(
        "full",
        "glm",
        cfg,
        replicates=seeds,
        steps=steps,
        eta=float(eta),
        partition_sets=partition.sets(cfg).tolist(),
        model="g(X) = sum_j <w_j, X_j>, logistic loss, full-batch GD (Theorem 3.1)",
    )
    return Trajectory(marks, observables, meta), {"W": np.asarray(W), "w_star": np.asarray(w_star)}
