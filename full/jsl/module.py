"""Model (T) of JSL as a flax module holding the full matrices A (D x D) and v (d)."""

from __future__ import annotations

from typing import Callable

import flax.linen as nn
import jax.numpy as jnp

from dynsim.jsl.model import forward


class PositionalAttentionViT(nn.Module):
    """F(X) = sum_i sigma(D sum_j softmax(A/tau)_ij <v, X_j>), model (T) after Simplification 3.1.

    A is a literal D x D matrix: the optimizer leaves its diagonal at sigma_A and moves every
    off-diagonal entry on its own. v lives in R^d.
    """

    D: int
    d: int
    tau: float
    p: int
    nu: float
    A_init: Callable
    v_init: Callable

    def setup(self):
        self.A = self.param("A", self.A_init, (self.D, self.D))
        self.v = self.param("v", self.v_init, (self.d,))

    def __call__(self, X):
        """F for patches X of shape (..., D, d)."""
        return forward(self.A, X @ self.v, tau=self.tau, p=self.p, nu=self.nu)

    def on_feature_line(self, s, u):
        """F for noise-free patches X_j = s_j u: <v, X_j> = s_j <v, u>, without building X."""
        return forward(self.A, s * jnp.dot(u, self.v), tau=self.tau, p=self.p, nu=self.nu)
