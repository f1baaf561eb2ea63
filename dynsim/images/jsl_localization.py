"""JSL Figure 5c as numbers: are the positional-encoding similarities p_i^T p_j spatially
localized once the inverse patch permutation is applied?

Position i of a permuted image shows the patch of original grid cell perm[i]
(`dynsim.images.digits.permute`). Two measures of encodings P (D x width, row p_i):

- `rank_correlation`: Spearman's rho, over the D(D - 1)/2 pairs i < j, between the similarity
  <p_i, p_j> (equal to `dynsim.metrics.TIE_DECIMALS` decimals: tied) and minus the grid distance
  between cells perm[i] and perm[j] (original-image coordinates: after the inverse permutation).
  Localized encodings (nearer cells more similar) give rho > 0. Under a uniformly random
  relabelling of the cells, independent of P, every pair gets every distance rank with the same
  probability, so rho's expectation is exactly 0 for any encodings; its spread is measured on
  random encodings (`spread`).
- `score` (top-k): for each position, the mean grid distance between its cell and the cells of
  its k most similar other positions (ties, equal to `dynsim.metrics.TIE_DECIMALS` decimals, to
  the lower index), averaged over positions; its shuffled baseline (`baseline`) is its exact
  expectation under a random relabelling, mean_i mean_{j != i} ||c_i - c_j||. Localized encodings
  score below it.

perm = identity gives either in the permuted frame, before the inverse permutation."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from scipy.stats import spearmanr

from dynsim.metrics import TIE_DECIMALS, grid_coordinates

__all__ = [
    "similarity", "top_k", "score", "baseline", "rank_correlation", "spread", "maps",
    "K_DEFAULT", "DRAWS",
]  # fmt: skip

# k: a cell's 4-neighbourhood on the grid, the most a local pattern can hold at distance 1
K_DEFAULT = 4
DRAWS = 400  # random encodings in `spread`: its SD estimate is within ~7 % (1/sqrt(2 * 400 - 2))


def similarity(P: np.ndarray) -> np.ndarray:
    """The D x D matrix of p_i^T p_j (JSL Figure 5c's p_i^T P, row i)."""
    P = np.asarray(P, dtype=np.float64)
    return P @ P.T


def _cells(grid: tuple, perm) -> np.ndarray:
    """The grid cell each position shows, (D, 2)."""
    return grid_coordinates(grid).astype(np.float64)[np.asarray(perm)]


def top_k(sim: np.ndarray, k: int) -> np.ndarray:
    """(D, k) indices of each row's k largest off-diagonal entries, ties to the lower index."""
    D = sim.shape[0]
    if not 1 <= k <= D - 1:
        raise ValueError(f"k must be an integer in 1..{D - 1} (the other positions), got {k!r}")
    s = np.round(np.asarray(sim, dtype=np.float64), TIE_DECIMALS)
    s[np.arange(D), np.arange(D)] = -np.inf  # never a position's own
    return np.argsort(-s, axis=1, kind="stable")[:, :k]


def score(P: np.ndarray, grid: tuple, perm: np.ndarray, k: int = K_DEFAULT) -> float:
    """Mean grid distance, in original-image cells perm[.], of each position's top-k most
    similar other positions (module docstring)."""
    coords = _cells(grid, perm)
    top = top_k(similarity(P), k)
    return float(np.linalg.norm(coords[:, None, :] - coords[top], axis=-1).mean())


def baseline(grid: tuple) -> float:
    """The shuffled baseline of `score`: mean_i mean_{j != i} ||c_i - c_j|| on the grid."""
    coords = grid_coordinates(grid).astype(np.float64)
    D = coords.shape[0]
    return float(cdist(coords, coords).sum() / (D * (D - 1)))


def rank_correlation(P: np.ndarray, grid: tuple, perm: np.ndarray) -> float:
    """Spearman's rho between <p_i, p_j> and -||c_perm[i] - c_perm[j]|| over the pairs i < j
    (module docstring); similarities equal to TIE_DECIMALS decimals tie (average ranks)."""
    coords = _cells(grid, perm)
    upper = np.triu_indices(coords.shape[0], 1)
    sim = np.round(similarity(P), TIE_DECIMALS)[upper]
    return float(spearmanr(sim, -cdist(coords, coords)[upper]).statistic)


def spread(grid: tuple, width: int, draws: int = DRAWS, seed: int = 0) -> float:
    """The standard deviation of `rank_correlation` of random encodings (independent N(0, I) rows
    of `width`: rho does not depend on their scale) under a uniformly random permutation, over
    `draws` draws (seeded numpy)."""
    rng = np.random.default_rng(seed)
    D = grid[0] * grid[1]
    values = [
        rank_correlation(rng.normal(size=(D, width)), grid, rng.permutation(D))
        for _ in range(draws)
    ]
    return float(np.std(values, ddof=1))


def maps(P: np.ndarray, grid: tuple, perm: np.ndarray, cells) -> tuple[np.ndarray, np.ndarray]:
    """(before, after): for the position i showing each original cell in `cells`, p_i^T P drawn on
    the grid as the model sees it (entry j at cell j), and after the inverse permutation (entry j
    at cell perm[j]); each (len(cells), rows, cols)."""
    perm = np.asarray(perm)
    where = np.argsort(perm)  # the position showing original cell c is where[c]
    sim = similarity(P)
    before = np.stack([sim[where[c]] for c in cells])
    after = before[:, where]  # after[., c] = sim[i, j] with perm[j] = c
    return before.reshape(len(cells), *grid), after.reshape(len(cells), *grid)
