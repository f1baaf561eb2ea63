"""The exact population loss of the full linear self-attention layer, in closed form from Gaussian
moments (docs/icl.md §5): every entry of W^PV and W^KQ, not only the reduced blocks.

The prediction reads the last row of W^PV, p = (b, v) (b in R^d, v the corner), and the first d
columns of W^KQ, (K; k^T) (K the d x d block, k in R^d): with z_j = (x_j, y_j) for the N examples
and z_q = (x_q, 0) for the query,

    y_hat = (1/N) sum_{j = 1..N, q} (p^T z_j) (z_j^T (K; k^T) x_q),

the query token's own term s = (1/N) (b^T x_q) (x_q^T K x_q) included (docs/icl.md eq. (F)). The
expectation is taken over the examples, then over w ~ N(0, I_d), then over x_q ~ N(0, Lambda), each
by Isserlis' theorem (docs/icl.md eqs. (P1)-(P4))."""

from __future__ import annotations

import jax.numpy as jnp


def blocks(params: dict, d: int):
    """(b, v, K, k): the entries of W^PV and W^KQ the prediction reads (docs/icl.md eq. (F))."""
    pv, kq = params["W_PV"], params["W_KQ"]
    return pv[d, :d], pv[d, d], kq[:d, :d], kq[d, :d]


def population_loss(params: dict, lam, N: int):
    """L = (1/2) E[(y_hat - <w, x_q>)^2] for the full parameters (docs/icl.md eq. (P)); lam: the
    diagonal of Lambda."""
    d = lam.shape[0]
    b, v, K, k = blocks(params, d)
    L = jnp.diag(lam)
    t1, t2 = jnp.sum(lam), jnp.sum(lam**2)  # tr Lambda, tr Lambda^2
    quad = t1**2 + 2 * t2  # E[(w^T Lambda w)^2]
    # E_w, E_x of (p^T Lambda c)^2, p = b + v w, c = K x_q + (k^T x_q) w   (P1)
    e0 = K.T @ (lam * b)
    F = jnp.outer(lam * b, k) + v * (L @ K)
    EA2 = e0 @ (lam * e0) + jnp.trace(F @ L @ F.T) + 2 * v * t1 * (e0 @ (lam * k))
    EA2 = EA2 + v**2 * quad * (k @ (lam * k))
    # E of (p^T Lambda p) (c^T Lambda c)   (P2)
    P0, c0, c2 = b @ (lam * b), jnp.trace(K.T @ L @ K @ L), k @ (lam * k)
    EPC = P0 * c0 + (P0 * c2 + v**2 * c0) * t1 + 4 * v * (lam**2 * b) @ K @ (lam * k)
    EPC = EPC + v**2 * c2 * quad
    # E of (s - <w, x_q>) (p^T Lambda c)   (P3), s the query token's own term
    M = (K + K.T) / 2
    e = e0 + v * t1 * k
    m1, m2 = jnp.trace(M @ L), jnp.trace(M @ L @ M @ L)
    EDA = ((b @ (lam * e)) * m1 + 2 * (lam * b) @ M @ (lam * e)) / N - jnp.trace(F @ L)
    # E of (s - <w, x_q>)^2   (P4)
    beta, g1 = b @ (lam * b), (lam * b) @ M @ (lam * b)
    g2 = (lam * b) @ M @ L @ M @ (lam * b)
    ED2 = (beta * m1**2 + 2 * beta * m2 + 4 * m1 * g1 + 8 * g2) / N**2 + t1
    return 0.5 * ((1 + 1 / N) * EA2 + EPC / N + 2 * EDA + ED2)
