"""The areas P_{k,j} of each cluster: a partition of the P patches, the global area first
(Assumption 2.2).

Sizes from the kappas: the global area has about P^kappa_c patches; the rest is cut into local areas
of about P^kappa_s patches each (Theta(P^kappa_s), docs/derivations/mim-model.md §1). "grid" cuts
rectangles of the row-major sqrt(P) x sqrt(P) grid: the global area is a band of whole rows (whole
columns in odd clusters), the number of rows nearest round(P^kappa_c) / sqrt(P), placed at a
different height in each cluster, and the rows on either side of it are tiled by rectangles.
"random" uses exactly round(P^kappa_c). `MIMConfig.delta` uses the realised sizes. "random" deals a
seeded random permutation of the patches into areas of the same sizes.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


def build(cfg) -> tuple:
    """Areas per cluster: a tuple (K) of tuples (N_k) of sorted patch-index tuples, area 0 the
    global one."""
    return _build(cfg.P, cfg.K, cfg.kappa_c, cfg.kappa_s, cfg.partition, cfg.partitions, cfg.seed)


@lru_cache(maxsize=256)
def _build(P, K, kappa_c, kappa_s, partition, partitions, seed) -> tuple:
    if partitions is not None:
        return partitions
    global_size = int(round(P**kappa_c))
    local_size = max(1, int(round(P**kappa_s)))
    if global_size >= P:
        raise ValueError(
            f"MIMConfig.kappa_c = {kappa_c!r} is invalid: the global area round(P^kappa_c) = "
            f"{global_size} leaves no patch for a local area (P = {P})"
        )
    if partition == "random":
        return tuple(
            _random(P, global_size, local_size, np.random.default_rng([seed, k])) for k in range(K)
        )
    return tuple(_grid(P, global_size, local_size, k, K) for k in range(K))


def _sizes(total: int, target: int) -> list[int]:
    """`total` cut into round(total / target) (at least one) near-equal parts."""
    n = max(1, int(round(total / target)))
    return [len(part) for part in np.array_split(np.arange(total), n)]


def _random(P: int, global_size: int, local_size: int, rng) -> tuple:
    perm = rng.permutation(P)
    cuts = np.cumsum([global_size, *_sizes(P - global_size, local_size)])[:-1]
    return tuple(tuple(sorted(int(q) for q in area)) for area in np.split(perm, cuts))


def _tile(rows: np.ndarray, side: int, target: int) -> list[np.ndarray]:
    """Rectangles of about `target` cells tiling the rows `rows` (all columns) of the grid; cell ids
    row-major."""
    if rows.size == 0:
        return []
    height = min(rows.size, max(1, int(round(math.sqrt(target)))))
    row_parts = np.array_split(rows, max(1, int(round(rows.size / height))))
    out = []
    for rp in row_parts:
        width = max(1, int(round(target / rp.size)))
        for cp in np.array_split(np.arange(side), max(1, min(side, int(round(side / width))))):
            out.append((rp[:, None] * side + cp[None, :]).ravel())
    return out


def _grid(P: int, global_size: int, local_size: int, k: int, K: int) -> tuple:
    side = math.isqrt(P)
    band = min(side - 1, max(1, int(round(global_size / side))))  # rows of the global band
    start = (k // 2) * (side - band) // max(1, (K - 1) // 2) if K > 2 else 0
    start = min(start, side - band)
    rows = np.arange(side)
    glob = (rows[start : start + band, None] * side + np.arange(side)[None, :]).ravel()
    locals_ = _tile(rows[:start], side, local_size) + _tile(rows[start + band :], side, local_size)
    areas = [glob, *locals_]
    if k % 2 == 1:  # odd clusters: the transposed layout (columns instead of rows)
        r, c = np.divmod(np.arange(P), side)
        transpose = c * side + r
        areas = [transpose[a] for a in areas]
    return tuple(tuple(sorted(int(q) for q in a)) for a in areas)


def area_of(areas: tuple, P: int) -> np.ndarray:
    """a_k(p): for every cluster k and patch p the index of the area of cluster k holding p, shape
    (K, P)."""
    out = np.empty((len(areas), P), dtype=np.int64)
    for k, cluster in enumerate(areas):
        for j, area in enumerate(cluster):
            out[k, list(area)] = j
    return out


def query_patches(cfg, k: int = 0) -> dict[str, int]:
    """Representative queries of cluster k: the first patch of its first local area and of its
    global area."""
    areas = cfg.areas[k]
    return {"local": int(areas[1][0]), "global": int(areas[0][0])}
