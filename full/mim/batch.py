"""Mode "sampled" of full MIM: the literal batch loss (eq. 2.8) through the masked queries' scores,
in chunks of images.

A masked query p has the mask token x~_p = 0 as its input, so its scores are s_pq = (x~_p + e_p)^T Q
(x~_q + e_q) = G_p (x_q + e_q) for unmasked keys q and B_pq = G_p e_q for masked keys (x~_q = 0),
with G = E Q (P, d) and B = G E^T (P, P) the same for every image: formed once a step. F_p = sum_{q
unmasked} a_pq x_q, and unmasked queries do not enter the loss (eq. 2.8 sums over p in M). Per image
this leaves the |U| unmasked keys' scores, one matrix product G (X_U + E_U)^T for a whole chunk, and
the masked keys' share of the softmax denominator, sum_{q in M} exp(B_pq) = (exp(B) 1_M)_p, one
product of exp(B) with the chunk's masks. The loss goes through the contents' Gram matrix
(`chunk_loss`), so F is never formed. Every query row is computed as if it were masked (no gather of
rows) and the unmasked ones are weighted 0. The module applied to a whole image costs P d^2 + 2 P^2
d multiply-adds and autodiff's backward as much again; here it is 2 P |U| d a step and image (the
scores and the Gram matrix) and P |U| d for the backward. The rewrite is exact for every X and every
Q (it uses the mask token, eq. 2.3, and nothing of the data's structure); tests/test_full_large.py
checks it against `model.masked_loss`.

The batch of N images is drawn and summed in chunks of `chunk_size(N)` images (a lax.scan that
accumulates the gradient in (G, B, exp(B)) and pulls it back to Q once), so memory stays at one
chunk's intermediates whatever N. Chunk c draws its images from fold_in(key, c)
(`dynsim.mim.data.sample`): the same law as one draw of N images, another random stream.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dynsim.mim import data

# images per chunk: fastest of 4 to 128 measured at P = 256 (the chunk's contents stay in cache, ~12
# MB)
MAX_CHUNK = 16


def chunk_size(n: int) -> int:
    """The largest divisor of n that is <= MAX_CHUNK (the batch is a whole number of equal
    chunks)."""
    return max(c for c in range(1, min(n, MAX_CHUNK) + 1) if n % c == 0)


def shared(Q, E):
    """(G, B, exp(B - rowmax B)) with G = E Q and B = G E^T: what every image's scores take from Q
    (B itself only through its row maxima, the shift of exp(B))."""
    G = E @ Q
    B = G @ E.T
    return G, B, jnp.exp(B - jax.lax.stop_gradient(jnp.max(B, axis=1, keepdims=True)))


def attention(cfg, E, shared, X, masked):
    """attn_{p->q} (c, P, |U|) of every query p read as a masked one (input e_p) for the unmasked
    keys q of a chunk of images X (c, P, d), masks (c, P); with the unmasked patches (c, |U|) in
    increasing order and their contents X_U (c, |U|, d). For a masked p this is its attention (eq.
    2.6); the rows of unmasked p are weighted 0 by callers.

    Softmax of the scores s_pq (q unmasked) and B_pq (q masked) shifted by c_p = max(max_q s_pq,
    b_p), b_p = max_q B_pq over all keys (the shift of exp(B), once a step): no term exceeds 1, and
    the denominator is >= 1 unless b_p sits on an unmasked key q* whose score s_pq* = b_p + G_p x_q*
    is far below it; it is still >= exp(G_p x_q*), which underflows (NaN, flagged as divergence)
    only if that feature-position product is below -700 (float64; -87 float32).
    """
    G, B, EB = shared
    U = cfg.P - cfg.masked
    b = jax.lax.stop_gradient(jnp.max(B, axis=1))
    iU = jax.vmap(lambda m: jnp.nonzero(~m, size=U)[0])(masked)
    XU = jax.vmap(lambda x, i: x[i])(X, iU)
    # G_p (x_q + e_q): B_pq = G_p e_q comes with the same product
    s = jnp.einsum("pd,nud->npu", G, XU + E[iU])
    S = masked.astype(EB.dtype) @ EB.T  # (c, P): sum_{q in M} exp(B_pq - b_p)
    c = jax.lax.stop_gradient(jnp.maximum(jnp.max(s, axis=-1), b))
    e = jnp.exp(s - c[..., None])
    return e / (jnp.sum(e, axis=-1) + jnp.exp(b - c) * S)[..., None], iU, XU


def chunk_loss(cfg, E, shared, X, masked):
    """Sum over a chunk of images of 1/2 sum_{p in M} ||F_p - x_p||^2 (`model.masked_loss`, Q
    entering through shared).

    With F_p = sum_{q in U} a_pq x_q and the contents' Gram matrix K = X X_U^T (P, |U|) of each
    image: ||F_p - x_p||^2 = a_p K_UU a_p^T - 2 a_p K_p + |x_p|^2. K does not depend on Q, so the
    backward pass never returns to d-dimensional vectors. The terms are O(max |x|^2) and their sum
    is >= 0: rounding errs by a few units of max |x|^2 u per query, far below any loss the runs
    reach.
    """
    attn, iU, XU = attention(cfg, E, shared, X, masked)
    K = jax.lax.stop_gradient(jnp.einsum("npd,nud->npu", X, XU))
    K_UU = jax.vmap(lambda k, i: k[i])(K, iU)
    w = masked.astype(X.dtype)
    quad = jnp.einsum("npu,nuv,npv,np->", attn, K_UU, attn, w)
    return 0.5 * (quad - 2 * jnp.einsum("npu,npu,np->", attn, K, w) + jnp.sum(w[..., None] * X * X))


def chunks(cfg, basis, key, n: int):
    """(number of chunks, images per chunk, draw(c) -> chunk c's (X, masks, clusters)) of a batch of
    n images."""
    c = chunk_size(n)
    return n // c, c, lambda i: data.sample(cfg, basis, jax.random.fold_in(key, i), c)


def loss(cfg, basis, Q, key, n: int):
    """The mean over a fresh batch of n images of the masked loss (eq. 2.8's summand)."""
    sh = shared(Q, basis.E)
    count, _, draw = chunks(cfg, basis, key, n)

    def body(total, i):
        X, masked, _ = draw(i)
        return total + chunk_loss(cfg, basis.E, sh, X, masked), None

    return jax.lax.scan(body, jnp.zeros((), Q.dtype), jnp.arange(count))[0] / n


def grad(cfg, basis, Q, key, n: int):
    """d/dQ of `loss` (the same batch): gradients in `shared` accumulated over the chunks, pulled
    back to Q once."""
    sh, pullback = jax.vjp(lambda Q: shared(Q, basis.E), Q)
    count, _, draw = chunks(cfg, basis, key, n)

    def body(acc, i):
        X, masked, _ = draw(i)
        g = jax.grad(lambda sh: chunk_loss(cfg, basis.E, sh, X, masked))(sh)
        return jax.tree.map(jnp.add, acc, g), None

    total, _ = jax.lax.scan(body, jax.tree.map(jnp.zeros_like, sh), jnp.arange(count))
    return pullback(jax.tree.map(lambda g: g / n, total))[0]


def area_attention(cfg, basis, Q, key, n: int, area_index):
    """E[Attn_{p->P_{k,j} cap U} | p in M, cluster k] (P, K, max N_k) over a fresh batch of n
    images; NaN where no image of cluster k masked p (and 0 where area j does not exist)."""
    sh = shared(Q, basis.E)
    count, _, draw = chunks(cfg, basis, key, n)
    P, N = cfg.P, cfg.max_areas

    def body(acc, i):
        X, masked, ks = draw(i)
        attn, iU, _ = attention(cfg, basis.E, sh, X, masked)
        w = masked.astype(X.dtype)
        # (c, |U|, N)
        keys = jax.nn.one_hot(jnp.take_along_axis(area_index[ks], iU, axis=1), N, dtype=X.dtype)
        rows = jnp.einsum("npu,nuj,np->npj", attn, keys, w)  # 1{p in M} Attn_{p->P_{k,j} cap U}
        onehot = jax.nn.one_hot(ks, cfg.K, dtype=X.dtype)
        return (
            acc[0] + jnp.einsum("nk,npj->kpj", onehot, rows),
            acc[1] + jnp.einsum("nk,np->kp", onehot, w),
        ), None

    zeros = (jnp.zeros((cfg.K, P, N), sh[0].dtype), jnp.zeros((cfg.K, P), sh[0].dtype))
    (num, den), _ = jax.lax.scan(body, zeros, jnp.arange(count))
    return jnp.transpose(num / den[..., None], (1, 0, 2))
