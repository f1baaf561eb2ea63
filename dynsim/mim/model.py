"""The one-layer softmax attention of MIM and its masked reconstruction loss, written once (eqs.
2.3, 2.6-2.8).

Positions enter the scores only; the value is the masked content itself
(docs/derivations/mim-model.md §2).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def masked_input(X, masked):
    """x~_p = x_p for unmasked p, the mask token 0 for masked p (eq. 2.3)."""
    return jnp.where(masked[..., None], 0.0, X)


def attention(Q, Xt, E):
    """attn_{p->q} = softmax_q((x~_p + e_p)^T Q (x~_q + e_q)) over all P patches (eq. 2.6), shape
    (P, P)."""
    H = Xt + E
    return jax.nn.softmax(H @ Q @ H.T, axis=-1)


def reconstruct(attn, Xt):
    """F_p = sum_q attn_{p->q} x~_q (eq. 2.7), shape (P, d)."""
    return attn @ Xt


def masked_loss(Q, X, masked, E):
    """1/2 sum_{p in M} ||F_p - x_p||^2 for one image X (P, d) and mask (P,) (the summand of eq.
    2.8)."""
    Xt = masked_input(X, masked)
    F = reconstruct(attention(Q, Xt, E), Xt)
    return 0.5 * jnp.sum(jnp.where(masked, jnp.sum((F - X) ** 2, axis=-1), 0.0))


def area_attention(attn, masked, area_index_k, n_areas: int):
    """Attn_{p->P_{k,j} cap U} for every query p and area j (eq. 3.1), shape (P, n_areas)."""
    unmasked_onehot = jax.nn.one_hot(area_index_k, n_areas, dtype=attn.dtype) * (~masked)[:, None]
    return attn @ unmasked_onehot
