"""The 0-1 error of sign F with its tie rule (docs/derivations/jsl.md §2.3), shared by every
level."""

from __future__ import annotations

import jax.numpy as jnp


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
