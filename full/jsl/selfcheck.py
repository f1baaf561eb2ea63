"""The realistic level (E) held to its own definition, seed by seed, beside what it computes:

- **the data law** (Assumption 1): sufficient statistics of each seed's training set, from which
  `dynsim.jsl.checks` tests, with exact sampling laws, the noise variance sigma^2, the rate q of
  the random patches' features and the rate of each set being wholly y (the signal set is uniform
  on [L]);
- **the gradient identity**: the gradient GD follows (`realistic.empirical_value_and_grad`, with X
  and with X `realistic.transposed`, the two contractions the runs use) against jax.grad of the
  loss (E) through the module, at the seed's start, in float64.

Neither is a claim of the paper: they are what the reduced level takes for granted about the full
level's data and step, so `compare jsl --mode realistic` reports a disagreement where they fail."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dynsim.jsl import JSLConfig, data, partition
from dynsim.jsl.model import logistic_loss

from . import realistic, sampling
from .training import model_for

# rows of the training set the gradient identity reads (the identity is a property of the code, so
# a few hundred rows show a slip; per-sample gradients of all N would cost N (D^2 + d) numbers)
IDENTITY_ROWS = 256
# the identity's tolerance in units of the rounding bound gamma_m = m u / (1 - m u) (module
# docstring of `gradient_identity`)
IDENTITY_ALLOWANCE = 64.0


def data_law(cfg: JSLConfig, X, y, w_star) -> dict:
    """Sufficient statistics of a training set under Assumption 1: the noise's sum of squares and
    its degrees of freedom, the nonzero count of the patches outside the signal set and the number
    of such patches, and per set the number of samples whose patches all carry y."""
    s = data.signs(X, w_star)
    xi = X - s[..., None] * w_star
    n = X.shape[0]
    members = jnp.asarray(partition.set_of(cfg))[None, :] == jnp.arange(cfg.L)[:, None]  # (L, D)
    carries = s == y[:, None]  # (n, D)
    whole = jnp.all(jnp.where(members[None], carries[:, None, :], True), axis=-1)  # (n, L)
    return {
        "noise_sum_squares": jnp.sum(xi * xi),
        "noise_dof": jnp.asarray(n * cfg.D * (cfg.d - 1), jnp.float64),
        "random_nonzero": jnp.sum(jnp.abs(s)) - n * cfg.C,
        "random_patches": jnp.asarray(n * (cfg.D - cfg.C), jnp.float64),
        "set_whole_y": jnp.sum(whole, axis=0).astype(jnp.float64),
        "samples": jnp.asarray(n, jnp.float64),
    }


def gradient_identity(cfg: JSLConfig, params, X, y):
    """max over the gradient's entries k and both contractions of |g_k - g_ref_k| / (gamma_m S_k).

    g_ref = jax.grad of (E) through the module; S_k bounds the sum of the absolute elementary terms
    of entry k: (1/n) sum_nj |G_nj X_njk| for v (G = dL/d<v, X_nj>) and (1/n) sum_n |d l_n / dA_k|
    for A (per-sample gradients). Two evaluations of one sum of m terms in any order differ by at
    most 2 gamma_m sum |terms| (Higham, Accuracy and Stability of Numerical Algorithms, eq. 3.5),
    m = n D d the longest sum either makes; IDENTITY_ALLOWANCE x gamma_m leaves room for the
    per-sample nonlinear factors' own few-ulp errors and cancellation within a sample. At or
    below 1 the step GD takes is the gradient of (E) to rounding; a slip (a factor, a transpose)
    moves it to order 1 / gamma_m."""
    model = model_for(cfg)
    f64 = lambda t: jax.tree_util.tree_map(lambda a: jnp.asarray(a, jnp.float64), t)  # noqa: E731
    params, X, y = f64(params), f64(X), f64(y)
    n = X.shape[0]
    ref = jax.grad(lambda p: realistic.empirical_loss(model, p, X, y))(params)
    per_sample = jax.vmap(
        jax.grad(lambda p, x, t: logistic_loss(t * model.apply(p, x))), in_axes=(None, 0, 0)
    )(params, X, y)
    A, v = params["params"]["A"], params["params"]["v"]
    G = jax.grad(lambda proj: sampling.projections_loss(model, A, y, proj))(X @ v)
    scale = {
        "A": jnp.mean(jnp.abs(per_sample["params"]["A"]), axis=0),
        "v": jnp.einsum("nj,njd->d", jnp.abs(G), jnp.abs(X)),
    }
    m = n * cfg.D * cfg.d
    u = float(jnp.finfo(jnp.float64).eps) / 2
    bound = IDENTITY_ALLOWANCE * m * u / (1 - m * u)
    tiny = jnp.finfo(jnp.float64).tiny
    worst = jnp.asarray(0.0, jnp.float64)
    for Xt in (None, realistic.transposed(X)):
        g = realistic.empirical_value_and_grad(model, params, X, y, Xt)[1]
        for name in ("A", "v"):
            gap = jnp.abs(g["params"][name] - ref["params"][name])
            worst = jnp.maximum(worst, jnp.max(gap / (bound * scale[name] + tiny)))
    return worst


def seed_checks(cfg: JSLConfig, key, w_star) -> dict:
    """`data_law` of seed key's training set and `gradient_identity` at its start (the same draws
    as `realistic.one_seed`)."""
    (X, y), _ = realistic.datasets(cfg, key, w_star)
    params0 = realistic.initial_params(cfg, jax.random.fold_in(key, 2), w_star)
    rows = min(IDENTITY_ROWS, cfg.N)
    out = data_law(cfg, X, y, w_star)
    out["gradient_identity"] = gradient_identity(cfg, params0, X[:rows], y[:rows])
    return out


def run(cfg: JSLConfig, seeds: int) -> dict:
    """`seed_checks` of the first `seeds` seeds of `realistic.run` (the same keys, so the same
    training sets and starts), one seed at a time (lax.map: one training set in memory); each value
    a list over seeds."""
    w_star = data.feature(cfg, jnp.dtype(cfg.dtype))
    keys = jax.vmap(lambda r: realistic.seed_key(cfg, r))(jnp.arange(seeds))
    found = _checks_jit(cfg, keys, w_star)
    return {k: jnp.asarray(v).tolist() for k, v in found.items()}


def _checks(cfg: JSLConfig, keys, w_star) -> dict:
    return jax.lax.map(lambda k: seed_checks(cfg, k, w_star), keys)


_checks_jit = jax.jit(_checks)  # cfg a pytree: its numbers traced, one program per shape
