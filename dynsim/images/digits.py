"""The 8 x 8 handwritten digits that scikit-learn ships (`sklearn.datasets.load_digits`: 1,797
images of 0-9, pixel values 0-16, no download), cut into patches for the image experiments
(docs/images.md).

An image is a (8, 8) grid; a patch size s in {1, 2, 4} cuts it into a (8/s, 8/s) grid of P = 64/s^2
patches of dimension d = s^2, patch i at (i // cols, i % cols) (row-major, as
`dynsim.metrics.grid_coordinates`). Pixels are scaled to [0, 1] and each image is centred (mean
pixel 0), so no patch carries a constant offset.

A patch permutation is a fixed random permutation of the P patch positions applied to every image
(JSL Section 6, Figure 5: the "patch-permuted" images); `shuffle_grid(g)` permutes whole g x g
blocks of patches and keeps the order inside each block (Figure 5b's shuffle grids: larger blocks
keep more local structure)."""

from __future__ import annotations

import dataclasses

import numpy as np

__all__ = [
    "Digits",
    "load",
    "images",
    "prepare",
    "split_index",
    "patches",
    "unpatch",
    "split",
    "permutation",
    "shuffle_grid",
    "inverse",
    "permute",
    "SIDE",
    "PATCH_SIZES",
]

SIDE = 8  # the images are 8 x 8
PATCH_SIZES = (1, 2, 4)  # the sizes that tile 8 x 8


class MissingExtra(ImportError):
    """scikit-learn (the `images` extra) is not installed."""


@dataclasses.dataclass(frozen=True)
class Digits:
    """Patched digits: x (n, P, d) float64, y (n,) int64 in 0..9, grid (rows, cols) of patches."""

    x: np.ndarray
    y: np.ndarray
    grid: tuple[int, int]

    @property
    def P(self) -> int:
        """The number of patches per image."""
        return self.x.shape[1]

    @property
    def d(self) -> int:
        """The dimension of a patch (pixels per patch)."""
        return self.x.shape[2]


def _check_patch(patch: int) -> int:
    if (
        isinstance(patch, bool)
        or not isinstance(patch, (int, np.integer))
        or patch not in (PATCH_SIZES)
    ):
        raise ValueError(f"patch must be one of {PATCH_SIZES} (it tiles 8 x 8), got {patch!r}")
    return int(patch)


def images() -> tuple[np.ndarray, np.ndarray]:
    """All 1,797 digits as (n, 8, 8) images with pixels scaled to [0, 1], and their labels."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise MissingExtra(
            "the image experiments need scikit-learn (its digits): pip install 'dynsim[images]'"
        ) from None
    data = load_digits()
    pixels = np.asarray(data.images, dtype=np.float64) / 16.0
    return pixels, np.asarray(data.target, dtype=np.int64)


def prepare(images, patch: int):
    """(n, 8, 8) images (numpy or JAX) -> (n, P, patch^2) patches of each image centred (mean
    pixel 0)."""
    return patches(images - images.mean(axis=(-2, -1), keepdims=True), patch)


def patches(images: np.ndarray, patch: int) -> np.ndarray:
    """(n, 8, 8) images -> (n, P, patch^2) patches, row-major over the (8/patch, 8/patch) grid."""
    s = _check_patch(patch)
    n = images.shape[0]
    g = SIDE // s
    x = images.reshape(n, g, s, g, s).transpose(0, 1, 3, 2, 4)
    return x.reshape(n, g * g, s * s)


def unpatch(x: np.ndarray, patch: int) -> np.ndarray:
    """The inverse of `patches`: (n, P, patch^2) -> (n, 8, 8)."""
    s = _check_patch(patch)
    n = x.shape[0]
    g = SIDE // s
    return x.reshape(n, g, g, s, s).transpose(0, 1, 3, 2, 4).reshape(n, SIDE, SIDE)


def load(patch: int = 2) -> Digits:
    """All 1,797 digits as patches of side `patch`, pixels scaled to [0, 1], each image centred."""
    pixels, y = images()
    g = SIDE // _check_patch(patch)
    return Digits(x=prepare(pixels, patch), y=y, grid=(g, g))


def split_index(n: int, n_test: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(train, test) indices of a random split of n images with `n_test` test images (seeded numpy
    permutation)."""
    if (
        isinstance(n_test, bool)
        or not isinstance(n_test, (int, np.integer))
        or not (0 < n_test < n)
    ):
        raise ValueError(f"n_test must be an integer in 1..{n - 1}, got {n_test!r}")
    order = np.random.default_rng(seed).permutation(n)
    return order[n_test:], order[:n_test]


def split(data: Digits, n_test: int, seed: int) -> tuple[Digits, Digits]:
    """A random train/test split with `n_test` test images (`split_index`)."""
    train, test = split_index(data.x.shape[0], n_test, seed)
    return (
        Digits(data.x[train], data.y[train], data.grid),
        Digits(data.x[test], data.y[test], data.grid),
    )


def permutation(P: int, seed: int) -> np.ndarray:
    """A fixed random permutation of the P patch positions: permuted[:, i] = x[:, perm[i]]."""
    return np.random.default_rng(seed).permutation(P)


def shuffle_grid(grid: tuple[int, int], block: int, seed: int) -> np.ndarray:
    """A permutation of the patches of `grid` that moves whole block x block squares of patches and
    keeps the order inside each square (Figure 5b's shuffle grids)."""
    rows, cols = grid
    if rows % block or cols % block:
        raise ValueError(f"block must divide the grid {grid}, got {block!r}")
    br, bc = rows // block, cols // block
    order = np.random.default_rng(seed).permutation(br * bc)
    index = np.arange(rows * cols).reshape(br, block, bc, block).transpose(0, 2, 1, 3)
    index = index.reshape(br * bc, block, block)[order]
    return index.reshape(br, bc, block, block).transpose(0, 2, 1, 3).reshape(-1)


def inverse(perm: np.ndarray) -> np.ndarray:
    """The inverse permutation: inverse(perm)[perm[i]] = i."""
    return np.argsort(perm)


def permute(data: Digits, perm: np.ndarray) -> Digits:
    """The images with their patches permuted: position i shows patch perm[i]."""
    return Digits(data.x[:, perm], data.y, data.grid)
