"""JSL Figure 5c as numbers: are the positional-encoding similarities p_i^T P spatially localized
once the inverse patch permutation is applied?

Position i of a permuted image shows the patch of original grid cell perm[i]
(`dynsim.images.digits.permute`). The localization score of encodings P (D x width, row p_i) is,
for each position i, the mean image-grid distance, in original-image coordinates, between cell
perm[i] and the cells perm[j] of its k most similar other positions j != i (largest <p_i, p_j>),
averaged over i. Ties in the top-k ranking go to the lower position index (a stable sort of the
similarities rounded to `dynsim.metrics.TIE_DECIMALS` decimals, as the attention diversity).

Its shuffled baseline is the same score's expectation when the positions' cells are relabelled by a
uniformly random permutation: the top-k are then k uniformly random other cells, so the baseline is
mean_i mean_{j != i} ||c_i - c_j|| exactly (no sampling). Localized encodings score below it."""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist

from dynsim.metrics import TIE_DECIMALS, grid_coordinates

__all__ = ["similarity", "top_k", "score", "baseline", "spread", "maps", "K_DEFAULT", "DRAWS"]

# k: a cell's 4-neighbourhood on the grid, the most a local pattern can hold at distance 1
K_DEFAULT = 4
DRAWS = 400  # random encodings in `spread`: its SD estimate is within ~7 % (1/sqrt(2 * 400 - 2))


def similarity(P: np.ndarray) -> np.ndarray:
    """The D x D matrix of p_i^T p_j (JSL Figure 5c's p_i^T P, row i)."""
    P = np.asarray(P, dtype=np.float64)
    return P @ P.T


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
    similar other positions (module docstring). perm = identity: the score in the permuted
    frame, before the inverse permutation."""
    coords = grid_coordinates(grid).astype(np.float64)[np.asarray(perm)]
    top = top_k(similarity(P), k)
    dist = np.linalg.norm(coords[:, None, :] - coords[top], axis=-1)
    return float(dist.mean())


def baseline(grid: tuple) -> float:
    """The shuffled baseline: mean_i mean_{j != i} ||c_i - c_j|| on the grid (module docstring)."""
    coords = grid_coordinates(grid).astype(np.float64)
    D = coords.shape[0]
    return float(cdist(coords, coords).sum() / (D * (D - 1)))


def spread(grid: tuple, width: int, k: int = K_DEFAULT, draws: int = DRAWS, seed: int = 0) -> float:
    """The standard deviation of the score of random encodings (P's initialization, N(0, I) rows
    of `width`) under a uniformly random permutation, over `draws` draws (seeded numpy)."""
    rng = np.random.default_rng(seed)
    D = grid[0] * grid[1]
    values = [score(rng.normal(size=(D, width)), grid, rng.permutation(D), k) for _ in range(draws)]
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
