"""Patch association (Definition 2.2): does each row of A rank its own set S_l(i) on top?"""

from __future__ import annotations

import math

import jax.numpy as jnp

from . import partition
from .config import JSLConfig


def associated_rows(A, cfg: JSLConfig):
    """Per row i, whether Top_C{A_ij}_j (diagonal included) is exactly S_l(i) (Definition 2.2).

    Strict: row i counts only when every entry of its own set beats every entry outside it,
    min_{j in S_l(i)} A_ij > max_{j not in S_l(i)} A_ij. A tie at the C-th place makes Top_C
    ambiguous, and the row does not count. Works on (..., D, D) and is traceable.
    """
    same = jnp.asarray(partition.same_set_mask(cfg))
    inside = jnp.min(jnp.where(same, A, jnp.inf), axis=-1)
    outside = jnp.max(jnp.where(same, -jnp.inf, A), axis=-1)
    return inside > outside


def patch_association(A, cfg: JSLConfig):
    """Fraction of rows i of A whose Top_C entries are exactly S_l(i) (Definition 2.2; 1 = full
    association); NaN for an A with a NaN entry (a diverged run ranks nothing)."""
    value = jnp.mean(associated_rows(A, cfg).astype(jnp.result_type(A)), axis=-1)
    return jnp.where(jnp.any(jnp.isnan(A), axis=(-2, -1)), jnp.nan, value)


def chance(cfg: JSLConfig) -> float:
    """Expected `patch_association` of an A whose off-diagonal entries are iid continuous and whose
    diagonal is on top.

    The C-1 other top entries of a row are then a uniform draw of C-1 of the D-1 others:
    1/binom(D-1, C-1).
    """
    return 1.0 / math.comb(cfg.D - 1, cfg.C - 1)
