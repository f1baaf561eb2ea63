"""Query classes of a MIM config and the per-patch views of per-class records (exchangeability,
docs/mim.md §4).

A query class is the signature (own area size, sorted sizes of the other areas). Within one cluster
the other areas are all areas but the own one, so the signature is fixed by the own size and the
cluster's size multiset: the classes are found in O(K N log N), N = max_k N_k. A class state lists
the areas in class order, the own area first, then the others by (size, index). With rank_k the
order of cluster k's areas by (size, index), area j sits at position 0 if j = n, else 1 + rank_k(j)
- [rank_k(n) < rank_k(j)] in the order of area n: no (K, N, N) table.

The reduced level records per class (`CLASS_KEYS`: `fp_class`, `area_attention_class`, shape (steps,
classes, N), NaN where a class has fewer areas; `pp_class` (steps, classes, N) and `pp_self` (steps,
classes)). The per-patch observables the full level records, `fp_corr` and `area_attention` (steps,
P, K, N) and `pp_corr` (steps, P, P), are views of them: `expand` and `pp_rows` build any slice of
patches; `patch_series` and `own` read one patch or the own areas from a trajectory in either form.
Pure numpy, no P x P and no P x N index.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple, Optional, Sequence

import numpy as np

from dynsim.trajectory import Trajectory

from .partition import area_of

# per-patch name -> per-class name per-patch name -> per-cell name (K > 1, B free, mean field: one
# state per joint cell)
CLASS_KEYS = {"fp_corr": "fp_class", "area_attention": "area_attention_class"}
CELL_KEYS = {"fp_corr": "fp_cell", "area_attention": "area_attention_cell"}


class ClassIndex(NamedTuple):
    """The query classes of a config and where each area's values sit in them."""

    sizes: list  # per class: the area sizes in class order (own first)
    # (K, N): class of the queries of area (k, n); -1 where the area does not exist
    of_area: np.ndarray
    # (K, N): rank of area (k, n) among cluster k's areas by (size, index); -1 where absent
    rank: np.ndarray
    area: np.ndarray  # (K, P): a_k(p), the area of patch p in cluster k


def class_index(cfg) -> ClassIndex:
    """Group the areas (k, n) of every cluster into query classes by signature (cached per areas;
    read-only)."""
    return _class_index(cfg.areas, cfg.P)


@lru_cache(maxsize=32)
def _class_index(areas: tuple, P: int) -> ClassIndex:
    K, N = len(areas), max(len(a) for a in areas)
    of_area = -np.ones((K, N), dtype=np.int64)
    rank = -np.ones((K, N), dtype=np.int64)
    found: dict = {}
    sizes: list = []
    for k, cluster in enumerate(areas):
        lengths = np.array([len(a) for a in cluster])
        order = np.lexsort((np.arange(lengths.size), lengths))  # by size, then index
        rank[k, order] = np.arange(lengths.size)
        multiset = tuple(int(s) for s in lengths[order])
        for n, own in enumerate(lengths):
            key = (int(own), multiset)  # the others are the multiset less one area of the own size
            if key not in found:
                found[key] = len(sizes)
                others = list(multiset)
                others.remove(int(own))
                sizes.append([int(own)] + others)
            of_area[k, n] = found[key]
    area = area_of(areas, P)
    for x in (of_area, rank, area):
        x.setflags(write=False)
    return ClassIndex(sizes, of_area, rank, area)


class CellIndex(NamedTuple):
    """The joint cells of a config: the patches grouped by their area in every cluster,
    (a_1(p), ..., a_K(p)). Two masked queries of one cell see the same keys by joint type (each has
    the other C_g - 1 patches of its cell), so under an expectation that depends on the counts only
    (exact or mean field) they share one trajectory: the K > 1 mean-field engine keeps one state
    per cell (`reduced.mim.cells`)."""

    labels: np.ndarray  # (G, K): the area of cluster k holding cell g (lexicographic order)
    cell: np.ndarray  # (P,): the cell of patch p
    size: np.ndarray  # (G,): patches per cell
    first: np.ndarray  # (G,): the smallest patch of each cell


def cell_index(cfg) -> CellIndex:
    """The joint cells of `cfg` (cached per areas; read-only)."""
    return _cell_index(cfg.areas, cfg.P)


@lru_cache(maxsize=32)
def _cell_index(areas: tuple, P: int) -> CellIndex:
    area = area_of(areas, P)
    labels, first, cell, size = np.unique(
        area.T, axis=0, return_index=True, return_inverse=True, return_counts=True
    )
    out = CellIndex(labels, cell.reshape(-1), size, first)
    for x in out:
        x.setflags(write=False)
    return out


def positions(index: ClassIndex, k: int, n: int) -> np.ndarray:
    """(N,): the position of area j of cluster k in the class order of area n (-1 where j >=
    N_k)."""
    r = index.rank[k]
    pos = np.where(r >= 0, 1 + r - (r[n] < r), -1)
    pos[n] = 0
    return pos


def class_of_patch(index: ClassIndex) -> np.ndarray:
    """(P, K): the class of patch p as a query of cluster k."""
    return np.stack([index.of_area[k, index.area[k]] for k in range(index.area.shape[0])], axis=1)


def expand(
    index: ClassIndex, values: np.ndarray, patches: Optional[Sequence[int]] = None
) -> np.ndarray:
    """Per-class values (steps, classes, N) as per-patch values (steps, len(patches), K, N) in area
    order, NaN where j >= N_k (all patches by default): entry (p, k, j) is the class of p's area in
    cluster k at j's position."""
    K, P = index.area.shape
    patches = np.arange(P) if patches is None else np.asarray(patches, dtype=np.int64).reshape(-1)
    out = np.full((values.shape[0], patches.size, K, index.of_area.shape[1]), np.nan, values.dtype)
    for k in range(K):
        a = index.area[k, patches]
        for n in np.unique(a):
            pos = positions(index, k, n)
            ok = np.flatnonzero(pos >= 0)
            block = np.full((values.shape[0], pos.size), np.nan, values.dtype)
            block[:, ok] = values[:, index.of_area[k, n], pos[ok]]
            out[:, np.flatnonzero(a == n), k, :] = block[:, None, :]
    return out


def pp_rows(
    index: ClassIndex,
    pp_class: np.ndarray,
    pp_self: np.ndarray,
    patches: Optional[Sequence[int]] = None,
) -> np.ndarray:
    """B_{p,q} (steps, len(patches), P) from the class states (cluster 0; K = 1, or B = 0 under
    pp_frozen): B_self at q = p, else B of the area of q in the class of p. Memory: the output and
    one (steps, P) row per area."""
    P = index.area.shape[1]
    patches = np.arange(P) if patches is None else np.asarray(patches, dtype=np.int64).reshape(-1)
    area0 = index.area[0]
    out = np.empty((pp_class.shape[0], patches.size, P), pp_class.dtype)
    a = area0[patches]
    for n in np.unique(a):
        rows = np.flatnonzero(a == n)
        c = index.of_area[0, n]
        out[:, rows, :] = pp_class[:, c, positions(index, 0, n)[area0]][:, None, :]
        out[:, rows, patches[rows]] = pp_self[:, [c]]
    return out


def per_class_only(t) -> list[str]:
    """The per-patch observables a trajectory holds only in their per-class form (above the
    expansion budget)."""
    return [
        n
        for n in (*CLASS_KEYS, "pp_corr")
        if n not in t.observables and (CLASS_KEYS.get(n, "pp_class") in t.observables)
    ]


def with_per_patch(t, cfg) -> Trajectory:
    """`t` with every per-patch view of its per-class records that it lacks (fp_corr,
    area_attention, pp_corr), for a comparison with a full-level run, which holds arrays of those
    shapes itself; `t` if it lacks none."""
    missing = per_class_only(t)
    if not missing:
        return t
    index = class_index(cfg)
    obs = dict(t.observables)
    for name in missing:
        obs[name] = (
            pp_rows(index, obs["pp_class"], obs["pp_self"])
            if name == "pp_corr"
            else expand(index, obs[CLASS_KEYS[name]])
        )
    records = f"{t.meta.get('records', '')}; expanded on demand: {', '.join(missing)}"
    return Trajectory(t.steps, obs, {**t.meta, "records": records}, t.final)


def recorded(t, name: str) -> bool:
    """Whether the trajectory holds `name` per patch or in its per-class form."""
    return (
        name in t.observables
        or CLASS_KEYS.get(name, "") in t.observables
        or CELL_KEYS.get(name, "") in t.observables
    )


def patch_series(t, name: str, p: int, k: int, cfg) -> np.ndarray:
    """(steps, N): `name` ("fp_corr" or "area_attention") of query p in cluster k, entry j for area
    j of cluster k, read per patch when recorded so (the full level, a small reduced run), else from
    the per-class form."""
    if name in t.observables:
        x = np.asarray(t[name])
        if x.ndim != 4 or x.shape[1] != cfg.P or x.shape[2] != cfg.K:
            raise ValueError(
                f"{name} has shape {x.shape}, expected (steps, P = {cfg.P}, K = {cfg.K}, max N_k)"
            )
        return x[:, p, k, :]
    if CELL_KEYS.get(name, "") in t.observables:
        return np.asarray(t[CELL_KEYS[name]])[:, cell_index(cfg).cell[p], k, :]
    if CLASS_KEYS.get(name, "") not in t.observables:
        raise ValueError(
            f"the trajectory has no {name} observable (per patch or per class as "
            f"{CLASS_KEYS.get(name)})"
        )
    return expand(class_index(cfg), np.asarray(t[CLASS_KEYS[name]]), [p])[:, 0, k, :]


def own(t, name: str, cfg, step: Optional[int] = None) -> np.ndarray:
    """`name` at the own area a_k(p) of every (p, k): shape (steps, P, K), or (P, K) at one recorded
    index `step`. In class form the own area is position 0 of the class state, so this reads (steps,
    classes) values only."""
    sel = slice(None) if step is None else step
    index = class_index(cfg)
    if name in t.observables:
        x = np.asarray(t[name])[sel]
        x = x[None] if step is not None else x
        out = np.stack([x[:, np.arange(cfg.P), k, index.area[k]] for k in range(cfg.K)], axis=2)
    elif CELL_KEYS.get(name, "") in t.observables:
        cells = cell_index(cfg)
        x = np.asarray(t[CELL_KEYS[name]])[sel]
        x = x[None] if step is not None else x
        g = np.arange(len(cells.size))
        own_cell = np.stack([x[:, g, k, cells.labels[:, k]] for k in range(cfg.K)], axis=2)
        out = own_cell[:, cells.cell]
    else:
        if CLASS_KEYS.get(name, "") not in t.observables:
            raise ValueError(f"the trajectory has no {name} observable (per patch or per class)")
        x = np.asarray(t[CLASS_KEYS[name]])[sel]
        x = x[None] if step is not None else x
        out = x[:, class_of_patch(index), 0]
    return out[0] if step is not None else out
