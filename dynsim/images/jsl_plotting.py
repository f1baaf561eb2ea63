"""The figure of `dynsim experiment jsl-images`: JSL Figure 5 in miniature on the digits. (a)
accuracy of the three learners against the shuffle-grid size (Figure 5a), (b) one test digit under
each condition (Figure 5b), (c) p_i^T P of the positional ViT trained on permuted digits for a few
positions, before and after the inverse permutation (Figure 5c), (d) the localization score per seed
against its shuffled baseline, with P learned and P frozen."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from dynsim import plotting

from . import jsl_claims, jsl_localization, seeds

LABELS = {
    "positional": "(a) positional attention",
    "standard": "(b) standard attention",
    "cnn": "(c) CNN",
}
CELLS = 4  # positions drawn in panel (c)


def _pixels(name: str, patch: int, grid: tuple) -> int:
    """The shuffle-grid size of a condition in pixels (original: the whole image)."""
    if name == "original":
        return grid[0] * patch
    if name == "permuted":
        return patch
    return int(name.split("-")[1][:-2])


def _cells(grid: tuple) -> list[int]:
    """CELLS original cells along the grid's diagonal and anti-diagonal, inside first."""
    rows, cols = grid
    picks = [(rows // 2 - 1, cols // 2 - 1), (rows // 2, cols // 2), (0, cols - 1), (rows - 1, 0)]
    return [r * cols + c for r, c in picks[:CELLS]]


def figure(result: dict, path: str, meta: dict) -> None:
    """Draw the four panels to `path` (PNG)."""
    cfg, grid = result["config"], tuple(result["grid"])
    conditions = result["conditions"]
    cells = _cells(grid)
    fig = plt.figure(figsize=(12, 7.8))
    outer = fig.add_gridspec(2, 2, width_ratios=(1, 1.25), hspace=0.35, wspace=0.2)
    ax = fig.add_subplot(outer[0, 0])
    order = sorted(conditions, key=lambda c: _pixels(c, cfg["patch"], grid))
    x = [_pixels(c, cfg["patch"], grid) for c in order]
    for i, m in enumerate(LABELS):
        stats = [seeds.mean(result["accuracy"][(m, c)]) for c in order]
        mean = np.array([s.value for s in stats])
        err = np.array([[s.value - s.low, s.high - s.value] for s in stats]).T
        ax.errorbar(
            np.array(x) * (1 + 0.04 * (i - 1)),
            mean,
            yerr=err,
            marker="o",
            capsize=3,
            label=LABELS[m],
        )
    ax.set_xscale("log", base=2)
    ax.set_xticks(x, [f"{v}" + (" (original)" if v == grid[0] * cfg["patch"] else "") for v in x])
    ax.axhline(jsl_claims.CHANCE, color="0.6", ls=":", lw=1, label="chance")
    ax.set_xlabel("shuffle grid size s (pixels)")
    ax.set_ylabel("test accuracy (seed mean, 95 % interval)")
    ax.set_title("(a) accuracy on shuffled digits (Figure 5a)", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    inner = outer[0, 1].subgridspec(1, len(order))
    for j, c in enumerate(order):
        a = fig.add_subplot(inner[0, j])
        a.imshow(result["example"][c], cmap="gray_r")
        a.set_xticks([])
        a.set_yticks([])
        a.set_title(
            f"s = {_pixels(c, cfg['patch'], grid)}" if c != "original" else "original", fontsize=8
        )
    fig.text(0.72, 0.9, "(b) one test digit, shuffle grids (Figure 5b)", ha="center", fontsize=9)
    P, perm = result["P"]["positional"][0], result["perms"]["permuted"][0]
    before, after = jsl_localization.maps(P, grid, perm, cells)
    maps = outer[1, 0].subgridspec(2, CELLS, hspace=0.3)
    where = np.argsort(perm)
    for j, cell in enumerate(cells):
        for row, (img, mark) in enumerate(((before[j], where[cell]), (after[j], cell))):
            a = fig.add_subplot(maps[row, j])
            img = np.array(img, dtype=float)
            img[mark // grid[1], mark % grid[1]] = np.nan  # p_i^T p_i would set the colour scale
            a.imshow(img, cmap=plotting.heatmap_cmap("viridis"))
            a.plot(mark % grid[1], mark // grid[1], "r+", ms=8)
            a.set_xticks([])
            a.set_yticks([])
            if j == 0:
                a.set_ylabel("as trained" if row == 0 else r"after $\pi^{-1}$", fontsize=8)
    fig.text(
        0.3,
        0.47,
        r"(c) $p_i^\top P$ of (a) trained on permuted digits, seed 0 (Figure 5c; "
        "+: position i, its own entry left out)",
        ha="center",
        fontsize=9,
    )
    ax = fig.add_subplot(outer[1, 1])
    local = result["localization"]
    for i, (m, label) in enumerate((("positional", "P learned"), ("frozen", "P frozen at init"))):
        for j, (key, marker) in enumerate((("after", "o"), ("before", "x"))):
            y = local[m][key]
            ax.plot(
                np.full(len(y), 2 * i + j) + np.linspace(-0.1, 0.1, len(y)),
                y,
                marker,
                ls="none",
                label=f"{label}, {'after' if key == 'after' else 'before'}"
                r" $\pi^{-1}$",
            )
    ax.axhline(local["positional"]["baseline"], color="0.4", ls="--", label="shuffled baseline")
    ax.axhline(
        local["positional"]["baseline"] - jsl_claims.MARGIN * result["random_sd"],
        color="0.4",
        ls=":",
        label=r"the claim's threshold: baseline $- 3\sigma_{rand}$",
    )
    ax.set_xticks(
        [0, 1, 2, 3],
        ["learned\nafter", "learned\nbefore", "frozen\nafter", "frozen\nbefore"],
        fontsize=8,
    )
    ax.set_ylabel(f"mean grid distance of the top-{cfg['k']} similar positions")
    ax.set_title("(d) localization score per seed (lower: more local)", fontsize=9)
    ax.legend(fontsize=7)
    plotting.titled(
        fig,
        f"Jelassi, Sander, Li (2022), Section 6 in miniature: sklearn digits, patch "
        f"{cfg['patch']}, width {cfg['width']}, {cfg['steps']} Adam steps, {cfg['seeds']} seeds",
        [meta],
    )
    plotting.save(fig, path)
