"""The linear self-attention layer of Zhang, Frei and Bartlett as a flax module holding the literal
(d + 1) x (d + 1) matrices W^PV and W^KQ, the paper's initialization and the prompts it reads
(docs/icl.md §2-§3)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp

from dynsim.icl.config import ICLConfig


def theta_gram(d: int, dtype) -> jnp.ndarray:
    """Theta Theta^T = I_d / sqrt(d): the initialization's Gram matrix, ||Theta Theta^T||_F = 1
    (docs/icl.md §3: the reading this code takes of the paper's free Theta)."""
    return jnp.eye(d, dtype=dtype) / jnp.sqrt(jnp.asarray(d, dtype))


def initial(sigma, d: int, dtype) -> dict:
    """The paper's initialization: W^PV(0) = sigma [[0, 0], [0, 1]], W^KQ(0) = sigma [[Theta
    Theta^T, 0], [0, 0]]."""
    pv = jnp.zeros((d + 1, d + 1), dtype).at[d, d].set(sigma)
    kq = jnp.zeros((d + 1, d + 1), dtype).at[:d, :d].set(sigma * theta_gram(d, dtype))
    return {"W_PV": pv, "W_KQ": kq}


class LinearSelfAttention(nn.Module):
    """f(E) = E + W^PV E (E^T W^KQ E) / N on an embedding E of N examples and a query (docs/icl.md
    eq. (F)); its parameters start at the paper's initialization."""

    d: int
    sigma: float
    dtype: str = "float64"

    @nn.compact
    def __call__(self, E: jnp.ndarray) -> jnp.ndarray:
        start = initial(self.sigma, self.d, self.dtype)
        pv = self.param("W_PV", lambda key: start["W_PV"])
        kq = self.param("W_KQ", lambda key: start["W_KQ"])
        n = E.shape[-1] - 1  # the examples; the last column is the query
        return E + pv @ E @ (jnp.swapaxes(E, -1, -2) @ kq @ E) / n


def params0(cfg: ICLConfig) -> dict:
    """The parameters at t = 0 as the module initializes them (flax's params collection)."""
    module = LinearSelfAttention(cfg.d, cfg.sigma, cfg.dtype)
    E = jnp.zeros((cfg.d + 1, 2), cfg.dtype)
    return dict(module.init(jax.random.key(0), E)["params"])


def predict(params: dict, E: jnp.ndarray) -> jnp.ndarray:
    """y_hat: the bottom-right entry of f(E) (a batch of prompts along the leading axes)."""
    d = E.shape[-2] - 1
    out = LinearSelfAttention(d, 0.0, E.dtype.name).apply({"params": params}, E)
    return out[..., d, -1]


def prompts(key, spectrum, n: int, batch: int, dtype, task=None, scale=1.0):
    """`batch` prompts E (batch, d + 1, n + 1) and their query labels: x ~ N(0, scale Lambda) for
    the examples and the query, y_i = <w, x_i>; w ~ N(0, I_d) per prompt, or the fixed `task`."""
    d = spectrum.shape[0]
    kx, kw = jax.random.split(key)
    root = jnp.sqrt(jnp.asarray(scale, dtype) * spectrum)
    x = jax.random.normal(kx, (batch, n + 1, d), dtype) * root
    w = (
        jax.random.normal(kw, (batch, d), dtype)
        if task is None
        else jnp.broadcast_to(task, (batch, d))
    )
    y = jnp.einsum("bjd,bd->bj", x, w)
    E = jnp.concatenate([jnp.swapaxes(x, 1, 2), y[:, None, :].at[:, :, n].set(0.0)], axis=1)
    return E, y[:, n]
