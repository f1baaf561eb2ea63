"""The 0-1 error of sign F with its tie rule (docs/derivations/jsl.md §2.3), and the error against
f* of Theorems 3.1, 4.1, 4.2 and 5.1, shared by every level."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from . import partition


def tie_rule(F, tol):
    """1 if F < -tol, 1/2 if |F| <= tol (a tie: a coin flip), 0 if F > tol (y = +1 WLOG)."""
    return jnp.where(F < -tol, 1.0, jnp.where(F <= tol, 0.5, 0.0))


def wrong(F, tol):
    """`tie_rule` per configuration, NaN where F is not finite: a diverged run never reads as a
    silent 0."""
    return jnp.where(jnp.isfinite(F), tie_rule(F, tol), jnp.nan)


def margin_error(margins):
    """P(yF < 0) + 1/2 P(yF = 0) from the margins yF (`tie_rule` at tol 0); NaN if a margin is
    NaN."""
    return jnp.mean(jnp.where(jnp.isnan(margins), jnp.nan, tie_rule(margins, 0.0)))


def f_star(cfg, s):
    """f*(X) = sum_l Threshold_{0.9C}(sum_{i in S_l} s_i) from s_i = <w*, X_i> (..., D)
    (docs/derivations/jsl.md §1)."""
    z = s @ jax.nn.one_hot(jnp.asarray(partition.set_of(cfg)), cfg.L, dtype=s.dtype)
    return jnp.sum(jnp.where(jnp.abs(z) > 0.9 * cfg.C, z, 0.0), axis=-1)


def f_star_error(cfg, F, s):
    """P[f* F <= 0]: the error against f* of Theorems 3.1, 4.1, 4.2 and 5.1 (f* = 0 or F = 0 counts
    as an error); NaN when an F is not finite (a diverged run never reads as an error rate)."""
    e = jnp.mean(jnp.where(f_star(cfg, s) * F > 0, 0.0, 1.0))
    return jnp.where(jnp.all(jnp.isfinite(F)), e, jnp.nan)
