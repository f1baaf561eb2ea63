"""The partition of the D patches into L sets S_l of size C (Definition 2.1)."""

from __future__ import annotations

import math

import numpy as np

from .config import JSLConfig


def require_grid_partition(cfg: JSLConfig, name: str = "cfg.partition") -> None:
    """Figure 2 uses the spatially localized sets: cfg.partition must be "grid". name: what the
    message calls the partition (a command line's `--partition`)."""
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    if cfg.partition != "grid":
        raise ValueError(
            f"{name} = {cfg.partition!r} is invalid for Figure 2: the teacher is a CNN over the "
            "spatially localized sets, so it must be 'grid' (D and C perfect squares, sqrt(C) "
            "| sqrt(D))"
        )


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
