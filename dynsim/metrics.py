"""Attention metrics on a grid of patches: the attention diversity of Huang, Wen, Chi, Liang (2024),
Section 6 (per query, concatenate the (row, col) grid coordinates of its top-k attended patches,
highest weight first, into a 2k-vector; the metric is the mean Euclidean distance over all P(P-1)/2
pairs of queries: 0 means every query looks at the same patches in the same order, i.e. collapse),
the average attention distance of Dosovitskiy et al. (2021) (sum_q attn[p, q] * ||coord_p -
coord_q||_2 in grid units, averaged over queries p), and the top-k mass (the fraction of a query's
weight, of its row's sum, on its k largest keys, averaged over queries). Ties in the top-k ranking
go to the lower patch index (a stable sort), so uniform attention is, for the diversity, collapsed
(every query picks patches 0..k-1). Weights that agree to TIE_DECIMALS decimals count as tied: a
softmax of equal scores computed in float64 differs in the last bits (~1e-16 relative), and that
rounding noise must not decide the ranking. `attn` is (heads, P, P) or (P, P) with rows = queries;
patch i sits at (i // cols, i % cols). Rows are otherwise used as given, not renormalised; results
are float64 numpy arrays of shape (heads,).
"""

from __future__ import annotations

import operator

import numpy as np
from scipy.spatial.distance import cdist, pdist

__all__ = [
    "attention_diversity", "average_attention_distance", "top_k_mass", "grid_coordinates",
    "TIE_DECIMALS",
]  # fmt: skip

# weights (in [0, 1]) equal to 12 decimals tie: float64 rounding of a softmax row is ~P x 1e-16
TIE_DECIMALS = 12


def _grid(grid_shape) -> tuple[int, int]:
    try:
        dims = tuple(grid_shape)
    except TypeError:
        raise ValueError(
            f"grid_shape must be a pair (rows, cols) of positive ints, got {grid_shape!r}"
        ) from None
    ok = len(dims) == 2 and all(not isinstance(d, (bool, np.bool_)) for d in dims)
    if ok:
        try:
            dims = tuple(operator.index(d) for d in dims)
        except TypeError:
            ok = False
    if not ok or min(dims) < 1:
        raise ValueError(
            f"grid_shape must be a pair (rows, cols) of positive ints, got {grid_shape!r}"
        )
    return dims


def grid_coordinates(grid_shape) -> np.ndarray:
    """(P, 2) int64 array of the (row, col) of patch i = row * cols + col on a (rows, cols) grid
    (row-major)."""
    rows, cols = _grid(grid_shape)
    i = np.arange(rows * cols, dtype=np.int64)
    return np.stack([i // cols, i % cols], axis=1)


def _attention(attn, grid_shape) -> tuple[np.ndarray, np.ndarray]:
    """Validate `attn` and `grid_shape`; return attn as float64 (heads, P, P) and the float64 (P, 2)
    coordinates."""
    if np.iscomplexobj(attn):
        raise ValueError("attn must be real, got a complex array")
    try:
        a = np.asarray(attn, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"attn must be a numeric array, got {type(attn).__name__}: {err}"
        ) from None
    if a.ndim not in (2, 3) or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"attn must have shape (heads, P, P) or (P, P), got shape {a.shape}")
    if a.ndim == 2:
        a = a[None]
    P = a.shape[-1]
    rows, cols = _grid(grid_shape)
    if rows * cols != P:
        raise ValueError(
            f"grid_shape {grid_shape!r} has {rows * cols} patches, but attn has P = {P} (need "
            f"rows*cols == P)"
        )
    if not np.all(np.isfinite(a)):
        raise ValueError(
            f"attn must be finite, got {np.count_nonzero(~np.isfinite(a))} NaN/inf entries"
        )
    if np.any(a < 0):
        raise ValueError(f"attn must be non-negative, got minimum {float(a.min())!r}")
    return a, grid_coordinates((rows, cols)).astype(np.float64)


def attention_diversity(attn, grid_shape, k: int = 10) -> np.ndarray:
    """Huang et al. 2024, Section 6: per-head attention diversity of top-k patches; ties go to the
    lower index, so uniform attention scores 0."""
    a, coords = _attention(attn, grid_shape)
    P = a.shape[-1]
    if P < 2:
        raise ValueError(
            f"attn must have P >= 2 patches for the diversity (it averages over pairs of "
            f"queries), got P = {P}"
        )
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 1 <= k <= P:
        raise ValueError(f"k must be an int with 1 <= k <= P = {P}, got {k!r}")
    k = int(k)
    # Stable sort of -attn rounded to TIE_DECIMALS: equal weights keep index order, so ties go to
    # the lower patch index (deterministic), also when rounding made them differ in the last bits.
    # (heads, P, k), rank order, highest first
    top = np.argsort(-np.round(a, TIE_DECIMALS), axis=-1, kind="stable")[..., :k]
    vectors = coords[top].reshape(a.shape[0], P, 2 * k)  # (row, col) of rank 1, then rank 2, ...
    return np.array([pdist(v, "euclidean").mean() for v in vectors], dtype=np.float64).reshape(
        a.shape[0]
    )


def average_attention_distance(attn, grid_shape) -> np.ndarray:
    """Dosovitskiy et al. 2021: per-head mean over queries p of sum_q attn[p, q] * ||coord_p -
    coord_q||_2 (grid units)."""
    a, coords = _attention(attn, grid_shape)
    dist = cdist(coords, coords, "euclidean")  # (P, P)
    return np.einsum("hpq,pq->h", a, dist) / a.shape[-1]


def top_k_mass(attn, grid_shape, k: int) -> np.ndarray:
    """Per head, the mean over queries of the fraction of a query's weight on its k largest keys
    (the keys the diversity reads): k/P for uniform attention, 1 when each query looks at k keys
    or fewer; the structure of attention that the diversity's ranks do not see."""
    a, _ = _attention(attn, grid_shape)
    P = a.shape[-1]
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or not 1 <= k <= P:
        raise ValueError(f"k must be an int with 1 <= k <= P = {P}, got {k!r}")
    top = -np.sort(-a, axis=-1)[..., : int(k)].sum(axis=-1)
    return (top / a.sum(axis=-1)).mean(axis=-1)
