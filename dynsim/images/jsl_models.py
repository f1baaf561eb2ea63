"""The learners of JSL Section 6 in miniature (Jelassi, Sander, Li 2022), for 10 classes on patched
digits X (n, D, d): one pre-LN ViT block with learned positional encodings P added to the tokens
(X W_E + P, the paper's Figure 5 learner), the same block with positional attention (Definition
3.2: the attention logits from P alone, W_Q and W_K trained), the same block without its attention
sublayer (the control that tells whether attention is needed), and a small CNN on the 8 x 8 image.

A block: h = X W_E + P; h += MHA(LN(h)) (the attention sublayer); h += MLP(LN(h)); the class
logits are a linear map of the mean over positions of LN(h). P holds one row p_i per position
(D x width), so p_i^T P is the paper's Figure 5c similarity. The three block learners are one
module whose attention is chosen by a traced code (`ATTENTION`), so they train in one compiled
program: the queries and keys read the tokens (vanilla) or P (positional), and the sublayer's
output is added (gate 1) or not (gate 0: exactly the block without it, its parameters unused)."""

from __future__ import annotations

import flax.linen as nn
import jax.numpy as jnp
import numpy as np

from .jsl_options import LEARNERS, MLP_RATIO

__all__ = ["Block", "SmallCNN", "MODELS", "ATTENTION", "make", "P_SCALE"]

P_SCALE = 0.02  # p_i ~ N(0, P_SCALE^2 I): the ViT's usual small start
# each block learner's attention code: (queries and keys from P, the sublayer's gate)
ATTENTION = {"vit": (0.0, 1.0), "positional": (1.0, 1.0), "no-attention": (0.0, 0.0)}
MODELS = LEARNERS  # the block learners (ATTENTION) and "cnn"


class Block(nn.Module):
    """One pre-LN transformer block on X W_E + P, its attention chosen by `code` (ATTENTION's
    values, traced), an MLP, and a linear readout of the mean over positions (module
    docstring)."""

    D: int
    width: int = 32
    heads: int = 4
    classes: int = 10
    dtype: str = "float32"

    @nn.compact
    def __call__(self, X, code=ATTENTION["vit"]):
        from_p, gate = code
        kw = dict(dtype=self.dtype, param_dtype=self.dtype)
        heads = dict(features=(self.heads, self.width // self.heads), **kw)
        P = self.param("P", nn.initializers.normal(P_SCALE), (self.D, self.width), self.dtype)
        h = nn.Dense(self.width, name="embed", **kw)(X) + P
        z = nn.LayerNorm(**kw)(h)
        source = jnp.where(from_p, jnp.broadcast_to(P, z.shape), z)  # Definition 3.2 or vanilla
        q = nn.DenseGeneral(name="query", **heads)(source)
        k = nn.DenseGeneral(name="key", **heads)(source)
        v = nn.DenseGeneral(name="value", **heads)(z)
        weights = nn.dot_product_attention_weights(q, k)  # (..., heads, D, D)
        self.sow("intermediates", "attention", weights)
        mixed = jnp.einsum("...hqk,...khd->...qhd", weights, v)
        h = h + gate * nn.DenseGeneral(self.width, axis=(-2, -1), name="out", **kw)(mixed)
        z = nn.LayerNorm(**kw)(h)
        h = h + nn.Dense(self.width, **kw)(nn.gelu(nn.Dense(MLP_RATIO * self.width, **kw)(z)))
        return nn.Dense(self.classes, name="readout", **kw)(jnp.mean(nn.LayerNorm(**kw)(h), -2))


def neighbours(rows: int, cols: int) -> np.ndarray:
    """(rows*cols, 9) indices of each pixel's 3 x 3 neighbourhood, row-major; rows*cols (a zero
    pixel appended) where the neighbour falls outside the image (SAME zero padding)."""
    r, c = np.divmod(np.arange(rows * cols), cols)
    out = []
    for dr in (-1, 0, 1):
        for dc in (-1, 0, 1):
            rr, cc = r + dr, c + dc
            inside = (rr >= 0) & (rr < rows) & (cc >= 0) & (cc < cols)
            out.append(np.where(inside, rr * cols + cc, rows * cols))
    return np.stack(out, axis=1)


class SmallCNN(nn.Module):
    """Two 3 x 3 convolutions (SAME padding, ReLU) on the 8 x 8 image, global average pooling, a
    linear readout: its only spatial prior is locality (the pooling drops where a feature was).
    A convolution is written as a gather of each pixel's 3 x 3 neighbourhood and one dense map,
    which batches over seeds as plain matrix products."""

    grid: tuple
    patch: int
    width: int = 16
    classes: int = 10
    dtype: str = "float32"

    @nn.compact
    def __call__(self, X, code=None):
        """The logits of X (..., D, d); `code` is unused (no attention: `make`'s uniform call)."""
        rows, cols = self.grid
        s = self.patch
        lead = X.shape[:-2]
        img = X.reshape(*lead, rows, cols, s, s)
        img = jnp.swapaxes(img, -3, -2).reshape(*lead, rows * s * cols * s, 1)
        index = neighbours(rows * s, cols * s)
        dense = dict(dtype=self.dtype, param_dtype=self.dtype)
        h = img
        for layer in range(2):
            padded = jnp.concatenate([h, jnp.zeros_like(h[..., :1, :])], axis=-2)
            patches = padded[..., index, :].reshape(*h.shape[:-1], -1)
            h = nn.relu(nn.Dense(self.width, name=f"conv{layer}", **dense)(patches))
        h = jnp.mean(h, axis=-2)
        return nn.Dense(self.classes, name="out", **dense)(h)


def make(name: str, grid: tuple, patch: int, width: int, heads: int, dtype: str) -> nn.Module:
    """The module of learner `name` (MODELS) for a (rows, cols) grid of patch x patch patches: the
    one Block for the three block learners (their attention is `ATTENTION[name]`)."""
    if name in ATTENTION:
        return Block(D=grid[0] * grid[1], width=width, heads=heads, dtype=dtype)
    if name == "cnn":
        return SmallCNN(grid=tuple(grid), patch=patch, width=width, dtype=dtype)
    raise ValueError(f"model must be one of {MODELS}, got {name!r}")
