"""The MIM data: cluster, latents z_j, content x_p = z_{a_k(p)} v_{k,a_k(p)} and the random mask
(Section 2).

The latents of the areas of one image are i.i.d. draws of cfg.z (the paper allows any law on [L, U];
the choice is stated in docs/mim.md). Exact expectations enumerate clusters, latent vectors and
masks; sampled ones draw them.
"""

from __future__ import annotations

import itertools
import math

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.draws import flat

from .embedding import Basis
from .partition import area_of
from .latents import z_law


def z_vectors(cfg, n_areas: int) -> tuple[np.ndarray, np.ndarray]:
    """Every latent vector (z_1..z_n) of n i.i.d. areas, shape (V^n, n), and its probability, shape
    (V^n,)."""
    values, probs = z_law(cfg)
    idx = np.array(
        list(itertools.product(range(values.size), repeat=n_areas)), dtype=np.int64
    ).reshape(-1, n_areas)
    return values[idx], np.prod(probs[idx], axis=1)


def all_masks(P: int, m: int) -> np.ndarray:
    """Every mask with m masked patches, shape (C(P, m), P), True = masked (Definition 2.5)."""
    out = np.zeros((math.comb(P, m), P), dtype=bool)
    for i, chosen in enumerate(itertools.combinations(range(P), m)):
        out[i, list(chosen)] = True
    return out


def content(basis: Basis, area_index, k, zvec):
    """X (..., P, d): x_p = z_{a_k(p)} v_{k, a_k(p)} for cluster k and latents zvec (..., max N_k)
    (one latent vector, or several at once)."""
    a = area_index[k]
    return zvec[..., a, None] * basis.V[k, a]


def exact_images(cfg, basis: Basis):
    """Every (cluster, latent vector) image: contents X (n, P, d), probabilities (n,) with sum 1,
    cluster ids (n,)."""
    area_index = jnp.asarray(area_of(cfg.areas, cfg.P))
    X, w, ks = [], [], []
    for k, n_k in enumerate(cfg.areas_per_cluster):
        zs, ps = z_vectors(cfg, n_k)
        zs = np.pad(zs, ((0, 0), (0, cfg.max_areas - n_k)), constant_values=0.0)
        X.append(content(basis, area_index, k, jnp.asarray(zs, basis.E.dtype)))  # all at once
        w += [p / cfg.K for p in ps]
        ks += [k] * len(ps)
    return jnp.concatenate(X), jnp.asarray(w, basis.E.dtype), jnp.asarray(ks)


def sample(cfg, basis: Basis, key, n: int):
    """n fresh samples: contents X (n, P, d), masks (n, P) (True = masked), clusters (n,)."""
    kk, kz, km = jax.random.split(key, 3)
    area_index = jnp.asarray(area_of(cfg.areas, cfg.P))
    ks = jax.random.randint(kk, (n,), 0, cfg.K)
    shape = (n, cfg.max_areas)
    if cfg.z == "const":
        zs = jnp.ones(shape, basis.E.dtype)
    elif cfg.z[0] == "uniform":
        zs = flat(jax.random.uniform, kz, shape, basis.E.dtype, cfg.z[1], cfg.z[2])
    else:
        values, probs = z_law(cfg)
        zs = jnp.asarray(values, basis.E.dtype)[
            flat(lambda k, s: jax.random.choice(k, values.size, s, p=jnp.asarray(probs)), kz, shape)
        ]
    X = jax.vmap(lambda k, z: content(basis, area_index, k, z))(ks, zs)
    # a uniform random permutation per sample
    ranks = jnp.argsort(flat(jax.random.uniform, km, (n, cfg.P)), axis=1)
    masked = jnp.argsort(ranks, axis=1) < cfg.masked
    return X, masked, ks
