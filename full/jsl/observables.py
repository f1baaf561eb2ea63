"""Observables of the full JSL model: its projection onto (alpha, gamma, rho) and the reduction residuals."""

from __future__ import annotations

import jax.numpy as jnp

from dynsim.jsl import JSLConfig, partition
from dynsim.jsl.model import attention


def reduction(cfg: JSLConfig, A, v, w_star) -> dict:
    """alpha = <v, w*>; gamma, rho = orbit means of A (Lemma 4.1); spreads (max - min) of each orbit; v_perp (Lemma 4.2)."""
    within, between = (jnp.asarray(m) for m in partition.orbit_masks(cfg))
    alpha = jnp.dot(v, w_star)

    def orbit(mask):
        vals = jnp.where(mask, A, jnp.nan)
        return jnp.nanmean(vals), jnp.nanmax(vals) - jnp.nanmin(vals)

    gamma, gamma_spread = orbit(within)
    rho, rho_spread = orbit(between)
    S = attention(A, cfg.tau)
    same = jnp.asarray(partition.same_set_mask(cfg))
    return {
        "alpha": alpha,
        "gamma": gamma,
        "rho": rho,
        "gamma_spread": gamma_spread,
        "rho_spread": rho_spread,
        "v_perp": jnp.linalg.norm(v - alpha * w_star),
        "own_set_attention": jnp.mean(jnp.sum(jnp.where(same, S, 0.0), axis=1)),
    }
