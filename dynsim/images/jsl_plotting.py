"""The figure of `dynsim experiment jsl-images`: JSL Figure 5 in miniature on the digits. (a) test
accuracy of every training (Figure 5a), (b) one test digit, original and permuted (Figure 5b), (c)
p_i^T P of the ViT block trained on permuted digits for a few positions, before and after the
inverse permutation (Figure 5c), (d) the rank correlation rho per seed of every block trained on
permuted digits, after and before the inverse permutation, against the claim's threshold."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from dynsim import plotting

from . import jsl_claims, jsl_localization, seeds

CELLS = 4  # positions drawn in panel (c)


def _cells(grid: tuple) -> list[int]:
    """CELLS original cells along the grid's diagonal and anti-diagonal, inside first."""
    rows, cols = grid
    picks = [(rows // 2 - 1, cols // 2 - 1), (rows // 2, cols // 2), (0, cols - 1), (rows - 1, 0)]
    return [r * cols + c for r, c in picks[:CELLS]]


def _errorbars(ax, rows: list, values: list, color: str = "k") -> None:
    """Seed mean and 95 % interval of each row's values, one row per line from the top."""
    for i, v in enumerate(values):
        stat = seeds.mean(v)
        ax.errorbar(stat.value, -i, xerr=[[stat.value - stat.low], [stat.high - stat.value]],
                    fmt="o", color=color, capsize=3)  # fmt: skip
    ax.set_yticks(-np.arange(len(rows)), rows, fontsize=7)


def figure(result: dict, path: str, meta: dict) -> None:
    """Draw the four panels to `path` (PNG)."""
    cfg, grid = result["config"], tuple(result["grid"])
    cells = _cells(grid)
    fig = plt.figure(figsize=(12, 8.2))
    outer = fig.add_gridspec(2, 2, width_ratios=(1, 1.25), hspace=0.35, wspace=0.5, left=0.15)
    ax = fig.add_subplot(outer[0, 0])
    acc = result["accuracy"]
    _errorbars(ax, [r.label for r in acc], list(acc.values()))
    ax.axvline(jsl_claims.CHANCE, color="0.6", ls=":", lw=1, label="chance")
    ax.set_xlabel("test accuracy (seed mean, 95 % interval)")
    ax.set_title("(a) accuracy of every training (Figure 5a)", fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    inner = outer[0, 1].subgridspec(1, 2)
    for j, (c, img) in enumerate(result["example"].items()):
        a = fig.add_subplot(inner[0, j])
        a.imshow(img, cmap="gray_r")
        a.set_xticks([])
        a.set_yticks([])
        a.set_title(c if c == "original" else f"{c} (s = {cfg['patch']} px)", fontsize=8)
    fig.text(0.72, 0.9, "(b) one test digit (Figure 5b)", ha="center", fontsize=9)
    P, perm = result["P"][0], result["perms"]["permuted"][0]
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
        r"(c) $p_i^\top P$ of the ViT trained on permuted digits, seed 0 (Figure 5c; "
        "+: position i, its own entry left out)",
        ha="center",
        fontsize=9,
    )
    ax = fig.add_subplot(outer[1, 1])
    local = result["localization"]
    for i, v in enumerate(local.values()):
        for key, marker, label in (("rho_after", "o", r"after $\pi^{-1}$"),
                                   ("rho_before", "x", r"before $\pi^{-1}$")):  # fmt: skip
            y = np.full(len(v[key]), -i) + np.linspace(-0.15, 0.15, len(v[key]))
            ax.plot(v[key], y, marker, color="C0" if key == "rho_after" else "C3",
                    ls="none", label=label if i == 0 else None)  # fmt: skip
    ax.set_yticks(-np.arange(len(local)), [r.label for r in local], fontsize=7)
    ax.axvline(0.0, color="0.4", ls="--", label="random encodings' mean")
    ax.axvline(jsl_claims.MARGIN * result["random_sd"], color="0.4", ls=":",
               label=r"the claim's threshold: $3\sigma_{rand}$")  # fmt: skip
    ax.set_xlabel("rank correlation of p_i^T p_j with minus the grid distance (per seed)")
    ax.set_title("(d) localization per seed (higher: more local)", fontsize=9)
    ax.legend(fontsize=6, loc="best")
    moved = "translated by up to 1 px" if cfg["translations"] else "no translations"
    plotting.titled(
        fig,
        f"Jelassi, Sander, Li (2022), Section 6 in miniature: sklearn digits, patch "
        f"{cfg['patch']}, width {cfg['width']}, {cfg['steps']} Adam steps, {moved}, "
        f"{cfg['seeds']} seeds",
        [meta],
    )
    plotting.save(fig, path)
