"""Mode "sampled" of full MIM: the literal batch loss (eq. 2.8) on the masked queries only, summed in chunks of images.

A masked query p has the mask token x~_p = 0 as its input, so its scores are
s_pq = (x~_p + e_p)^T Q (x~_q + e_q) = G_p x~_q + B_pq with G = E Q (P, d) and B = G E^T (P, P), where x~_q = x_q
for unmasked keys q and 0 for masked ones; and F_p = sum_{q unmasked} attn_pq x_q. Unmasked queries do not enter
the loss (eq. 2.8 sums over p in M). G and B are the same for every image, so they are formed once per step; per
image the loss costs 2 |M| |U| d multiply-adds (scores and F) against P d^2 + 2 P^2 d for the module applied to the
whole image, and autodiff's backward the same again. The rewrite is exact for every X and every Q (it uses only
the mask token, eq. 2.3, not the data's structure); `tests/test_mim_batch.py` checks it against `model.masked_loss`.
Per image: the scores' G X_U^T is one matrix product for a whole chunk, the loss goes through the contents' Gram
matrix (`chunk_loss`), and the softmax runs over |M| x P scores.

The batch of N images is drawn and summed in chunks of `chunk_size(N)` images (a lax.scan that accumulates the
gradient in (G, B), then pulls it back to Q once), so memory stays at one chunk's intermediates whatever N.
Chunk c draws its images from fold_in(key, c) (`dynsim.mim.data.sample`): the same law as one draw of N images,
another random stream.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dynsim.mim import data

MAX_CHUNK = 64  # images per chunk: a chunk's intermediates are about 3 P^2 + 4 P d numbers per image (~3 MB at P = 256)


def chunk_size(n: int) -> int:
    """The largest divisor of n that is <= MAX_CHUNK (the batch is a whole number of equal chunks)."""
    return max(c for c in range(1, min(n, MAX_CHUNK) + 1) if n % c == 0)


def shared(Q, E):
    """(G, B) = (E Q, E Q E^T): the masked queries' rows of Q against the keys' contents and positions."""
    G = E @ Q
    return G, G @ E.T


def split(masked, n_masked: int):
    """(masked patches (n_masked,), unmasked patches (P - n_masked,)), each in increasing order."""
    order = jnp.argsort(~masked, stable=True)
    return order[:n_masked], order[n_masked:]


def masked_attention(cfg, G, B, X, masked):
    """attn_{p->q} for masked p and unmasked q (c, |M|, |U|) of a chunk of images X (c, P, d), masks (c, P); with the
    masked patches (c, |M|), the unmasked ones (c, |U|) and their contents X_U (c, |U|, d).

    G X_U^T is formed for all P rows, one matrix product for the whole chunk, and its masked rows picked after.
    """
    iM, iU = jax.vmap(lambda m: split(m, cfg.masked))(masked)
    XU = jnp.take_along_axis(X, iU[..., None], axis=1)
    GX = jnp.einsum("pd,nud->npu", G, XU)
    scores_U = jnp.take_along_axis(GX, iM[..., None], axis=1) + B[iM[..., None], iU[:, None, :]]
    scores_M = B[iM[..., None], iM[:, None, :]]  # masked keys: B only (x~_q = 0)
    attn = jax.nn.softmax(jnp.concatenate([scores_U, scores_M], axis=-1), axis=-1)[..., :iU.shape[1]]
    return attn, iM, iU, XU


def chunk_loss(cfg, G, B, X, masked):
    """Sum over a chunk of images of 1/2 sum_{p in M} ||F_p - x_p||^2 (`model.masked_loss`, Q entering through G, B).

    With F_p = sum_{q in U} a_pq x_q and the contents' Gram matrix K = X_U X^T (|U|, P) of each image:
    ||F_p - x_p||^2 = a_p K_UU a_p^T - 2 a_p K_Up + |x_p|^2. K does not depend on Q, so the backward pass never
    returns to d-dimensional vectors (F itself is never formed). The terms are O(max |x|^2) and their sum is
    >= 0: rounding errs by a few units of max |x|^2 u per query, far below any loss the runs reach.
    """
    attn, iM, iU, XU = masked_attention(cfg, G, B, X, masked)
    K = jax.lax.stop_gradient(jnp.einsum("nud,npd->nup", XU, X))
    K_UU = jnp.take_along_axis(K, iU[:, None, :], axis=2)
    K_UM = jnp.take_along_axis(K, iM[:, None, :], axis=2)
    own = jnp.sum(jnp.where(masked[..., None], X * X, 0.0))
    return 0.5 * (jnp.einsum("nmu,nuv,nmv->", attn, K_UU, attn) - 2 * jnp.einsum("nmu,num->", attn, K_UM) + own)


def chunks(cfg, basis, key, n: int):
    """(number of chunks, images per chunk, draw(c) -> chunk c's (X, masks, clusters)) of a batch of n images."""
    c = chunk_size(n)
    return n // c, c, lambda i: data.sample(cfg, basis, jax.random.fold_in(key, i), c)


def loss(cfg, basis, Q, key, n: int):
    """The mean over a fresh batch of n images of the masked loss (eq. 2.8's summand)."""
    G, B = shared(Q, basis.E)
    count, _, draw = chunks(cfg, basis, key, n)

    def body(total, i):
        X, masked, _ = draw(i)
        return total + chunk_loss(cfg, G, B, X, masked), None

    return jax.lax.scan(body, jnp.zeros((), Q.dtype), jnp.arange(count))[0] / n


def grad(cfg, basis, Q, key, n: int):
    """d/dQ of `loss` (the same batch): gradients in (G, B) accumulated over the chunks, pulled back to Q once."""
    (G, B), pullback = jax.vjp(lambda Q: shared(Q, basis.E), Q)
    count, _, draw = chunks(cfg, basis, key, n)

    def body(acc, i):
        X, masked, _ = draw(i)
        dG, dB = jax.grad(lambda G, B: chunk_loss(cfg, G, B, X, masked), argnums=(0, 1))(G, B)
        return (acc[0] + dG, acc[1] + dB), None

    (dG, dB), _ = jax.lax.scan(body, (jnp.zeros_like(G), jnp.zeros_like(B)), jnp.arange(count))
    return pullback((dG / n, dB / n))[0]


def area_attention(cfg, basis, Q, key, n: int, area_index):
    """E[Attn_{p->P_{k,j} cap U} | p in M, cluster k] (P, K, max N_k) over a fresh batch of n images; NaN where
    no image of cluster k masked p (and 0 where area j does not exist)."""
    G, B = shared(Q, basis.E)
    count, _, draw = chunks(cfg, basis, key, n)
    P, N = cfg.P, cfg.max_areas

    def body(acc, i):
        X, masked, ks = draw(i)
        attn, iM, iU, _ = masked_attention(cfg, G, B, X, masked)
        keys = jax.nn.one_hot(jnp.take_along_axis(area_index[ks], iU, axis=1), N, dtype=X.dtype)  # (c, |U|, N)
        rows = jnp.einsum("nmu,nuj->nmj", attn, keys)  # 1{p in M} Attn_{p->P_{k,j} cap U} at the masked rows
        per_patch = jax.vmap(lambda r, im: jnp.zeros((P, N), X.dtype).at[im].set(r))(rows, iM)
        onehot = jax.nn.one_hot(ks, cfg.K, dtype=X.dtype)
        return (acc[0] + jnp.einsum("nk,npj->kpj", onehot, per_patch),
                acc[1] + jnp.einsum("nk,np->kp", onehot, masked.astype(X.dtype))), None

    zeros = (jnp.zeros((cfg.K, P, N), G.dtype), jnp.zeros((cfg.K, P), G.dtype))
    (num, den), _ = jax.lax.scan(body, zeros, jnp.arange(count))
    return jnp.transpose(num / den[..., None], (1, 0, 2))
