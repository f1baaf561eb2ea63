"""The three learners of JSL Section 6 in miniature (Jelassi, Sander, Li 2022), for 10 classes on
patched digits X (n, D, d): (a) the paper's one-layer positional-attention ViT (Definition 3.2 with
Simplification 3.1's A = P^T P: the attention depends on the positional encodings only), (b) the
same layer with standard (content) attention on X W_E + P, (c) a small CNN on the 8 x 8 image.

The value and readout follow model (T) (`dynsim.jsl.model`): F(X) = sum_i sigma(D sum_j S_ij <v,
X_j>), sigma(x) = x^3 + nu x, with v widened to `width` value directions and a linear readout to
the 10 classes: F(X) = W_out^T (1/D) sum_i sigma(sum_j S_ij X_j W_V) (the factor D inside sigma
is absorbed by the learned W_V, the 1/D outside keeps the logits' scale independent of D). P holds
one row p_i per position (D x width), so A = P P^T is the paper's P^T P with the encodings as
columns."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np

from dynsim.jsl.model import activation

__all__ = ["PositionalViT", "ContentViT", "SmallCNN", "MODELS", "make", "P_SCALE", "NU"]

NU = 1e-3  # nu of sigma(x) = x^3 + nu x, the JSL realistic recipe's (dynsim.jsl.config)
P_SCALE = 1.0  # p_i ~ N(0, P_SCALE^2 I): A_ii ~ width, A_ij ~ sqrt(width), over sqrt(width)


def _normal(scale: float):
    return nn.initializers.normal(stddev=scale)


def _readout(h, width: int, classes: int, dtype):
    """(1/D) sum_i sigma(h_i) -> linear map to the class logits (model (T)'s sum over positions)."""
    pooled = jnp.mean(activation(h, 3, NU), axis=-2)
    return nn.Dense(classes, use_bias=True, dtype=dtype, param_dtype=dtype, name="out")(pooled)


class PositionalViT(nn.Module):
    """(a) S = softmax(P P^T / sqrt(width)) over positions only (Definition 3.2, Simplification
    3.1); F(X) = W_out^T (1/D) sum_i sigma(sum_j S_ij X_j W_V). `frozen`: P stays at its
    initialization (the optimizer's mask, `dynsim.images.jsl_train`)."""

    D: int
    width: int = 16
    classes: int = 10
    dtype: str = "float32"

    def attention(self, P):
        """S_ij = exp(<p_i, p_j>/sqrt(width)) / sum_r exp(<p_i, p_r>/sqrt(width))."""
        return jax.nn.softmax(P @ P.T / jnp.sqrt(self.width), axis=-1)

    @nn.compact
    def __call__(self, X):
        P = self.param("P", _normal(P_SCALE), (self.D, self.width), self.dtype)
        V = nn.Dense(self.width, use_bias=False, dtype=self.dtype, param_dtype=self.dtype)(X)
        S = self.attention(P)
        h = jnp.einsum("ij,...jk->...ik", S, V)
        return _readout(h, self.width, self.classes, self.dtype)


class ContentViT(nn.Module):
    """(b) standard attention: E = X W_E + P (the encodings added to the input), S = softmax(E W_Q
    (E W_K)^T / sqrt(width)), then the same value X W_V and readout as (a): the two learners
    differ in their attention only."""

    D: int
    width: int = 16
    classes: int = 10
    dtype: str = "float32"

    @nn.compact
    def __call__(self, X):
        P = self.param("P", _normal(P_SCALE), (self.D, self.width), self.dtype)
        dense = dict(use_bias=False, dtype=self.dtype, param_dtype=self.dtype)
        E = nn.Dense(self.width, name="embed", **dense)(X) + P
        Q = nn.Dense(self.width, name="query", **dense)(E)
        K = nn.Dense(self.width, name="key", **dense)(E)
        V = nn.Dense(self.width, name="value", **dense)(X)
        S = jax.nn.softmax(jnp.einsum("...ik,...jk->...ij", Q, K) / jnp.sqrt(self.width), -1)
        h = jnp.einsum("...ij,...jk->...ik", S, V)
        return _readout(h, self.width, self.classes, self.dtype)


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
    """(c) two 3 x 3 convolutions (SAME padding, ReLU) on the 8 x 8 image, global average pooling,
    a linear readout: its only spatial prior is locality (the pooling drops where a feature was).
    A convolution is written as a gather of each pixel's 3 x 3 neighbourhood and one dense map,
    which batches over seeds as plain matrix products."""

    grid: tuple
    patch: int
    width: int = 16
    classes: int = 10
    dtype: str = "float32"

    @nn.compact
    def __call__(self, X):
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


MODELS = ("positional", "standard", "cnn", "frozen")  # "frozen": (a) with P fixed at its start


def make(name: str, grid: tuple, patch: int, width: int, dtype: str) -> nn.Module:
    """The module of learner `name` (MODELS) for a (rows, cols) grid of patch x patch patches."""
    D = grid[0] * grid[1]
    if name in ("positional", "frozen"):
        return PositionalViT(D=D, width=width, dtype=dtype)
    if name == "standard":
        return ContentViT(D=D, width=width, dtype=dtype)
    if name == "cnn":
        return SmallCNN(grid=tuple(grid), patch=patch, width=width, dtype=dtype)
    raise ValueError(f"model must be one of {MODELS}, got {name!r}")
