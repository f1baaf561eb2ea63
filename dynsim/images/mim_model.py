"""The one-layer softmax attention of MIM (Huang, Wen, Chi, Liang 2024, eqs. 2.3, 2.6-2.7) on image
patches, as a flax module, with the heads of the three objectives of `experiment mim-images`.

Tokens are h_q = (x~_q, e_q): the (masked) patch beside a one-hot positional encoding e_q, so the
encodings are orthonormal and orthogonal to every patch (Assumption 2.3). Scores are h_p^T Q h_q
with Q the merged query-key matrix, starting at 0 (Section 3's initialization: uniform attention);
the attention output is F_p = sum_q attn_{p->q} W^V h_q (eq. 2.7 with a learned value W^V; the
paper fixes W^V to the patch itself). A linear read-out maps F to each objective's target:
masked reconstruction (eq. 2.8: the masked patches' pixels, read from (F_p, e_p)), supervised (the
10 digit classes from the mean of F over positions) and contrastive (InfoNCE between two masked
views' mean-pooled outputs)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from dynsim.draws import flat

__all__ = ["Attention", "masks", "masked_input", "tokens", "OBJECTIVES", "N_CLASSES"]

OBJECTIVES = ("masked", "supervised", "contrastive")
N_CLASSES = 10  # the digits 0-9


def masks(key, n: int, P: int, ratio: float):
    """Mask(X, gamma) of Definition 2.5 for n images: round(gamma P) patches each, drawn uniformly
    without replacement; (n, P) bool, True = masked."""
    ranks = jnp.argsort(flat(jax.random.uniform, key, (n, P)), axis=-1).argsort(axis=-1)
    return ranks < round(ratio * P)


def masked_input(X, masked):
    """x~_p = x_p for unmasked p, the mask token 0 for masked p (eq. 2.3)."""
    return jnp.where(masked[..., None], 0.0, X)


def tokens(Xt):
    """h_q = (x~_q, e_q): the patches beside one-hot positional encodings, (..., P, d + P)."""
    P = Xt.shape[-2]
    E = jnp.broadcast_to(jnp.eye(P, dtype=Xt.dtype), Xt.shape[:-2] + (P, P))
    return jnp.concatenate([Xt, E], axis=-1)


class Attention(nn.Module):
    """One softmax attention layer over patch tokens with merged query-key Q (eq. 2.6), value W^V
    and a linear read-out per objective (module docstring)."""

    P: int
    d: int
    width: int = 32
    objective: str = "masked"
    dtype: str = "float64"

    def setup(self):
        n = self.d + self.P
        self.Q = self.param("Q", nn.initializers.zeros, (n, n), self.dtype)
        self.value = nn.Dense(self.width, use_bias=False, param_dtype=self.dtype, dtype=self.dtype)
        out = {"masked": self.d, "supervised": N_CLASSES, "contrastive": self.width}
        self.readout = nn.Dense(out[self.objective], param_dtype=self.dtype, dtype=self.dtype)

    def attention(self, Xt):
        """attn_{p->q} = softmax_q(h_p^T Q h_q) (eq. 2.6), (..., P, P)."""
        H = tokens(Xt)
        return jax.nn.softmax(H @ self.Q @ jnp.swapaxes(H, -1, -2), axis=-1)

    def __call__(self, Xt):
        """The read-out of the attention output F_p = sum_q attn_{p->q} W^V h_q: per patch (masked:
        (..., P, d)) or pooled over positions (supervised: logits, contrastive: embedding)."""
        F = self.attention(Xt) @ self.value(tokens(Xt))
        if self.objective == "masked":
            E = jnp.broadcast_to(jnp.eye(self.P, dtype=F.dtype), F.shape[:-1] + (self.P,))
            return self.readout(jnp.concatenate([F, E], axis=-1))
        return self.readout(F.mean(axis=-2))
