"""The figure of `experiment mim-images`: each objective's attention maps for a few query patches
(mean over the evaluation images, first seed) and the attention diversity per seed with its 95 %
interval, the untrained model's beside (MIM Section 6, Figure 3 in miniature)."""

from __future__ import annotations

import numpy as np

from dynsim.plotting import heatmap_cmap, plt, save, titled

from . import seeds
from .mim_experiment import queries

__all__ = ["figure", "LABELS"]

LABELS = {
    "masked": "masked reconstruction",
    "supervised": "supervised",
    "contrastive": "contrastive",
}


def _diversity_panel(ax, result: dict) -> None:
    names = list(result["objectives"])
    for i, name in enumerate(names):
        values = np.asarray(result["objectives"][name]["diversity"])
        stat = seeds.mean(values)
        ax.plot(np.full(values.size, i), values, "o", color=f"C{i}", alpha=0.45, ms=4)
        if np.isfinite(stat.low):
            lower, upper = stat.value - stat.low, stat.high - stat.value
            ax.errorbar(i, stat.value, [[lower], [upper]], fmt="_", color="k", capsize=5)
        ax.plot(i, stat.value, "_", color="k", ms=14)
    ax.axhline(result["untrained"]["diversity"], color="0.5", ls=":", label="untrained (Q = 0)")
    ax.axhline(result["random"]["diversity"], color="0.5", ls="--", label="random attention")
    ax.set_xticks(range(len(names)), [LABELS[n].replace(" ", "\n", 1) for n in names], fontsize=7)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel(f"attention diversity (top-{result['k']})")
    ax.set_title("per seed, mean and 95 % interval", fontsize=8)
    ax.legend(fontsize=7, loc="center right")


def figure(result: dict, path: str, title: str, meta: dict) -> None:
    """Write the figure to `path` (PNG, atomically)."""
    grid = tuple(result["grid"])
    names = list(result["objectives"])
    picks = queries(grid)
    fig = plt.figure(figsize=(2.0 * len(picks) + 3.6, 2.0 * len(names) + 0.9), layout="constrained")
    outer = fig.add_gridspec(1, 2, width_ratios=[len(picks), 1.6])
    maps = outer[0].subgridspec(len(names), len(picks))
    cmap = heatmap_cmap("viridis")
    for r, name in enumerate(names):
        attn = np.asarray(result["objectives"][name]["maps"])
        for c, p in enumerate(picks):
            ax = fig.add_subplot(maps[r, c])
            image = ax.imshow(attn[p].reshape(grid), cmap=cmap, vmin=0.0)
            ax.plot(p % grid[1], p // grid[1], "x", color="r", ms=7, mew=2)
            ax.set_xticks([])
            ax.set_yticks([])
            if r == 0:
                ax.set_title(f"query {p} {divmod(p, grid[1])}", fontsize=8)
            if c == 0:
                ax.set_ylabel(LABELS[name], fontsize=8)
            if c == len(picks) - 1:
                fig.colorbar(image, ax=ax, shrink=0.8).ax.tick_params(labelsize=6)
    _diversity_panel(fig.add_subplot(outer[1]), result)
    titled(fig, title, [meta], fontsize=9)
    save(fig, path)
