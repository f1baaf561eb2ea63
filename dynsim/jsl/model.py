"""Model (T) of JSL and the logistic loss, written once for every level.

`activation` and `logistic_loss` are plain arithmetic and work on JAX arrays and on
sympy expressions alike: the reduced level builds its symbolic loss from them.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def activation(x, p, nu):
    """sigma(x) = x^p + nu x, the polynomial activation of model (T) (Section 3)."""
    return x**p + nu * x


def logistic_loss(margin, softplus=jax.nn.softplus):
    """log(1 + exp(-y F)) written as softplus(-y F), the loss of (E) and (P)."""
    return softplus(-margin)


def attention(A, tau):
    """Score matrix S_ij = exp(A_ij/tau) / sum_r exp(A_ir/tau) (Definition 3.2, with tau = sqrt(d)
    in (T))."""
    return jax.nn.softmax(A / tau, axis=-1)


def forward(A, projections, *, tau, p, nu):
    """Model (T): F(X) = sum_i sigma(D sum_j S_ij <v, X_j>), from projections[..., j] = <v, X_j>."""
    D = A.shape[-1]
    pre = D * jnp.einsum("ij,...j->...i", attention(A, tau), projections)
    return jnp.sum(activation(pre, p, nu), axis=-1)
