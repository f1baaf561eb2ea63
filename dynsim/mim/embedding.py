"""Positional encodings e_p and features v_{k,j}: an orthonormal set in R^d (Assumption 2.3),
randomly rotated.

The P + sum_k N_k vectors are the first columns of a seeded Haar-random orthogonal d x d matrix, so
no code can rely on axis alignment: every observable is read by projecting Q on these vectors.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class Basis(NamedTuple):
    """E (P, d): row p is e_p. V (K, max N_k, d): V[k, j] = v_{k,j}, zero rows where j >= N_k."""

    E: jax.Array
    V: jax.Array


def basis(cfg) -> Basis:
    """The orthonormal positions and features of `cfg`, in cfg.dtype (seeded by cfg.seed)."""
    areas = cfg.areas
    n = cfg.P + sum(len(a) for a in areas)
    rotation = jax.random.orthogonal(
        jax.random.fold_in(jax.random.key(cfg.seed), 7), cfg.d, dtype=jnp.float64
    )
    cols = np.asarray(rotation)[:, :n].T  # (n, d), orthonormal rows
    E = cols[: cfg.P]
    V = np.zeros((cfg.K, cfg.max_areas, cfg.d))
    i = cfg.P
    for k, cluster in enumerate(areas):
        V[k, : len(cluster)] = cols[i : i + len(cluster)]
        i += len(cluster)
    return Basis(jnp.asarray(E, cfg.dtype), jnp.asarray(V, cfg.dtype))
