"""The partition of the D patches into L sets S_l of size C (Definition 2.1)."""

from __future__ import annotations

import math

import numpy as np

from .config import JSLConfig


def sets(cfg: JSLConfig) -> np.ndarray:
    """The sets S_l as an (L, C) integer array of 0-based patch indices (Definition 2.1)."""
    D, C, L = cfg.D, cfg.C, cfg.L
    if cfg.partition == "contiguous":
        return np.arange(D).reshape(L, C)
    if cfg.partition == "random":
        perm = np.random.default_rng(cfg.seed).permutation(D)
        return np.sort(perm.reshape(L, C), axis=1)
    # "grid": sqrt(C) x sqrt(C) blocks of a row-major sqrt(D) x sqrt(D) grid, as in Figure 1b(1).
    side, block = math.isqrt(D), math.isqrt(C)
    rows, cols = np.divmod(np.arange(D), side)
    block_id = (rows // block) * (side // block) + cols // block
    return np.stack([np.flatnonzero(block_id == ell) for ell in range(L)])


def set_of(cfg: JSLConfig) -> np.ndarray:
    """For every patch i, the index l of the set S_l that contains it, shape (D,)."""
    out = np.empty(cfg.D, dtype=int)
    for ell, members in enumerate(sets(cfg)):
        out[members] = ell
    return out


def same_set_mask(cfg: JSLConfig) -> np.ndarray:
    """Boolean (D, D) mask of the pairs (i, j) in the same set, diagonal included (Figure 4, panel
    1)."""
    s = set_of(cfg)
    return s[:, None] == s[None, :]


def orbit_masks(cfg: JSLConfig) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the within-set off-diagonal entries (gamma's orbit) and between-set entries (rho's
    orbit), Lemma 4.1."""
    same = same_set_mask(cfg)
    within = same & ~np.eye(cfg.D, dtype=bool)
    return within, ~same
