"""Observables of the full JSL model: its projection onto (alpha, gamma, rho) and the reduction
residuals."""

from __future__ import annotations

import jax.numpy as jnp

from dynsim.jsl import JSLConfig, partition
from dynsim.jsl.association import patch_association
from dynsim.jsl.model import attention


def cosine(v, w_star):
    """cos(v, w*) = <v, w*> / ||v|| for the unit feature w* (Assumption 2, Figure 4); 0 at v = 0 (no
    direction yet)."""
    norm = jnp.linalg.norm(v)
    return jnp.where(norm > 0, jnp.dot(v, w_star) / jnp.where(norm > 0, norm, 1.0), 0.0)


def reduction(cfg: JSLConfig, A, v, w_star) -> dict:
    """alpha = <v, w*>; gamma, rho = orbit means of A (Lemma 4.1); spreads (max - min) and stds of
    each orbit; v_perp (Lemma 4.2); cos_v; within/between/own-set attention per row (Section 4.1);
    patch association (Definition 2.2)."""
    within, between = (jnp.asarray(m) for m in partition.orbit_masks(cfg))
    alpha = jnp.dot(v, w_star)

    def orbit(mask):
        vals = jnp.where(mask, A, jnp.nan)
        return jnp.nanmean(vals), jnp.nanmax(vals) - jnp.nanmin(vals)

    gamma, gamma_spread = orbit(within)
    rho, rho_spread = orbit(between)
    S = attention(A, cfg.tau)
    same = jnp.asarray(partition.same_set_mask(cfg))
    within_np, between_np = partition.orbit_masks(cfg)
    return {
        "alpha": alpha,
        "gamma": gamma,
        "rho": rho,
        "gamma_spread": gamma_spread,
        "rho_spread": rho_spread,
        "v_perp": jnp.linalg.norm(v - alpha * w_star),
        "own_set_attention": jnp.mean(jnp.sum(jnp.where(same, S, 0.0), axis=1)),
        # attention of a row on the other C - 1 members of its own set ((C-1) Gamma) and outside it
        # ((D-C) Xi)
        "within_attention": jnp.mean(jnp.sum(jnp.where(within, S, 0.0), axis=1)),
        "between_attention": jnp.mean(jnp.sum(jnp.where(between, S, 0.0), axis=1)),
        "patch_association": patch_association(A, cfg),
        # population stds (ddof = 0) of the orbit entries: 0 while A has the symmetry of Lemma 4.1
        "gamma_std": jnp.std(A[within_np]),
        "rho_std": jnp.std(A[between_np]),
        "cos_v": cosine(v, w_star),
    }
