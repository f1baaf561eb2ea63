"""The MIM attention layer as a flax module holding the literal d x d matrix Q (eq. 2.5, W^V =
I)."""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp

from dynsim.mim import model


class MaskedAttention(nn.Module):
    """One softmax attention layer with merged query-key matrix Q, positions in the scores only
    (eqs. 2.6-2.7).

    Q starts at 0 (the paper's initialization); gradient descent moves every one of its d^2 entries.
    """

    d: int
    dtype: str = "float64"

    def setup(self):
        self.Q = self.param("Q", lambda key, shape: jnp.zeros(shape, self.dtype), (self.d, self.d))

    def __call__(self, X, masked, E):
        """1/2 sum_{p in M} ||F_p - x_p||^2 for one image X (P, d) and mask (P,) (summand of eq.
        2.8)."""
        return model.masked_loss(self.Q, X, masked, E)

    def attention(self, X, masked, E):
        """attn_{p->q} (P, P) of the masked image (eq. 2.6)."""
        return model.attention(self.Q, model.masked_input(X, masked), E)
