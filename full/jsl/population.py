"""Losses of the full JSL model: the exact population loss (P) and its Monte Carlo estimate."""

from __future__ import annotations

import itertools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.jsl import JSLConfig, data, error, partition
from dynsim.jsl.model import logistic_loss
from .spec import check_exact


class Configurations(NamedTuple):
    """Every (signal set, delta) configuration of Assumption 1 with y = +1: s (M, D) and probability
    w (M,)."""

    s: jax.Array
    w: jax.Array


def enumerate_configurations(cfg: JSLConfig) -> Configurations:
    """All configurations of s_j = <w*, X_j> under Assumption 1 with y = +1, zero-probability ones
    dropped.

    y = +1 loses nothing: F is odd in X for every A and v, and the law of delta is symmetric, so
    (X, y = -1) has the loss of (-X, +1), which is itself a configuration of equal probability.
    """
    check_exact(cfg)
    sets = partition.sets(cfg)
    n_rand = cfg.D - cfg.C
    prob = {1: cfg.q / 2, -1: cfg.q / 2, 0: 1 - cfg.q}
    values = [v for v in (1, -1, 0) if prob[v] > 0]
    deltas = np.array(list(itertools.product(values, repeat=n_rand)), dtype=float).reshape(
        -1, n_rand
    )
    w_delta = np.prod(np.vectorize(prob.get)(deltas), axis=1) if n_rand else np.ones(1)
    rows, weights = [], []
    for ell in range(cfg.L):
        others = np.setdiff1d(np.arange(cfg.D), sets[ell])
        s = np.empty((deltas.shape[0], cfg.D))
        s[:, sets[ell]] = 1.0
        s[:, others] = deltas
        rows.append(s)
        weights.append(w_delta / cfg.L)
    dtype = jnp.dtype(cfg.dtype)
    return Configurations(
        jnp.asarray(np.concatenate(rows), dtype), jnp.asarray(np.concatenate(weights), dtype)
    )


def exact_loss(model, params, configs: Configurations, w_star):
    """Population loss (P) = sum over configurations of P(config) log(1 + exp(-F)), with X_j = s_j
    w*.

    The noise is integrated out exactly while v is in span(w*) (Lemma 4.2), which GD on (P) keeps.
    """
    F = model.apply(params, configs.s, w_star, method=model.on_feature_line)
    return jnp.sum(configs.w * logistic_loss(F))


def sampled_loss(model, params, key, cfg: JSLConfig, w_star, n: int):
    """Monte Carlo estimate of (P) from n fresh samples of Assumption 1 (noise included)."""
    X, y = data.sample(key, cfg, n, w_star, jnp.dtype(cfg.dtype))
    return jnp.mean(logistic_loss(y * model.apply(params, X)))


def tie_tolerance(model, params, w_star, spread=0.0):
    """Bound on |computed F| of a configuration whose exact F is 0: |F| at or below it counts as F =
    0.

    F is exactly 0 in exact arithmetic for configurations that a set permutation maps to their
    negation (docs/derivations/jsl.md §2.4), when A is constant on the orbits of Lemma 4.1 (GD on
    (P) from such a start keeps it). Two deviations: (1) rounding. With u the unit roundoff, l =
    max|A|/tau, x = D |<v, w*>| >= |u_i|: a logit errs by <= 2 l u after the max shift, so exp by
    relative (2 l + 2) u, the softmax (sum of D terms, a division) by relative (4 l + D + 4) u; m_i
    = sum_j S_ij s_j (|m_i| <= 1, D terms) by (4 l + 3 D + 6) u absolutely and u_i = D <v, w*> m_i
    by x (4 l + 3 D + 6) u; sigma(u_i) then errs by sigma'(x) x (4 l + 3 D + 6) u + (p + 2) u
    sigma(x) (sigma' increasing in |u|), and the sum over D terms adds D u D sigma(x). A factor 4
    covers evaluation order. (2) `spread` = max over orbits of (max - min) of A, the drift of the
    computed A off the orbit symmetry: each logit moves by <= spread/tau, each S_ij by relative <=
    expm1(2 spread/tau), so m_i by <= expm1(2 spread/tau) and F by <= D sigma'(x) x expm1(2
    spread/tau) (rigorous, not first order). Genuine |F| are far above both.
    """
    A, v = params["params"]["A"], params["params"]["v"]
    D, p, nu, tau = model.D, model.p, model.nu, model.tau
    u = float(jnp.finfo(A.dtype).eps) / 2
    x = D * jnp.abs(jnp.dot(v, w_star))
    ell = jnp.max(jnp.abs(A)) / tau
    sig = x**p + nu * x
    xdsig = p * x**p + nu * x  # x sigma'(x)
    rounding = 4 * u * D * (xdsig * (4 * ell + 3 * D + 6) + (p + 2 + D) * sig)
    return rounding + D * xdsig * jnp.expm1(2 * jnp.asarray(spread, A.dtype) / tau)


def exact_error(model, params, configs: Configurations, w_star, spread=0.0):
    """Exact population 0-1 error P(F < 0) + 1/2 P(F = 0) = sum_c w_c (1[F_c < 0] + 1/2 1[F_c = 0]),
    y = +1 WLOG.

    X_j = s_j w* as in `exact_loss` (exact while v is in span(w*), Lemma 4.2); |F| <=
    `tie_tolerance` is a tie.
    """
    F = model.apply(params, configs.s, w_star, method=model.on_feature_line)
    # a non-finite F (a diverged run) makes the error NaN, never a silent 0
    wrong = error.wrong(F, tie_tolerance(model, params, w_star, spread)).astype(configs.w.dtype)
    return jnp.sum(configs.w * wrong)
