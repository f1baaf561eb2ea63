"""The data distribution of Assumption 1 (JSL), sampled with jax.random."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dynsim.draws import flat

from . import partition
from .config import JSLConfig


def feature(cfg: JSLConfig, dtype=jnp.float64):
    """The unit feature w* in R^d (Assumption 2: ||w*|| = 1), a seeded random direction, not an
    axis."""
    w = jax.random.normal(jax.random.fold_in(jax.random.key(cfg.seed), 0x5EED), (cfg.d,), dtype)
    return w / jnp.linalg.norm(w)


def sample_signs(key, cfg: JSLConfig, n: int, dtype=jnp.float64):
    """Latent part of Assumption 1: labels y (n,) and s_j = <w*, X_j> (n, D).

    The signal set l(X) is uniform on [L] and carries y; every other patch carries delta_j = +-1
    with probability q/2 each and 0 otherwise. The label prior is uniform (the paper leaves it open;
    the population loss does not depend on it because F is odd and delta is symmetric).
    """
    k_y, k_l, k_d = jax.random.split(key, 3)
    y = jax.random.rademacher(k_y, (n,), dtype)
    signal_set = jax.random.randint(k_l, (n,), 0, cfg.L)
    u = flat(jax.random.uniform, k_d, (n, cfg.D), dtype)
    delta = jnp.where(u < cfg.q / 2, 1.0, jnp.where(u < cfg.q, -1.0, 0.0)).astype(dtype)
    in_signal = jnp.asarray(partition.set_of(cfg))[None, :] == signal_set[:, None]
    s = jnp.where(in_signal, y[:, None], delta)
    return y, s


def sample(key, cfg: JSLConfig, n: int, w_star, dtype=jnp.float64):
    """n points (X, y) of Assumption 1: X_j = s_j w* + xi_j, xi_j ~ N(0, sigma^2 (I - w* w*^T)). X
    has shape (n, D, d)."""
    k_s, k_xi = jax.random.split(key)
    y, s = sample_signs(k_s, cfg, n, dtype)
    z = cfg.sigma * flat(jax.random.normal, k_xi, (n, cfg.D, cfg.d), dtype)
    xi = z - jnp.einsum("nDd,d->nD", z, w_star)[..., None] * w_star
    return s[..., None] * w_star + xi, y


def signs(X, w_star):
    """s_j = <w*, X_j> of patches X (..., D, d), rounded to {-1, 0, 1} (Assumption 1).

    The noise is orthogonal to w*, so the product differs from s_j by rounding only; unrounded, an
    f* = 0 or a count of 0 becomes a tiny number of either sign (half of those errors successes).
    """
    return jnp.round(X @ w_star)
