"""The figure of `experiment mim-images`: each objective's attention maps for a few query patches
(mean over the evaluation images, first seed), the attention diversity and the top-k mass (the
premise "attention learned") per seed with their 95 % intervals, the untrained (uniform) and
random attention beside (MIM Section 6, Figure 3 in miniature)."""

from __future__ import annotations

import numpy as np

from dynsim.plotting import heatmap_cmap, plt, save, titled

from . import mim_claims, seeds
from .mim_experiment import queries

__all__ = ["figure", "LABELS"]

LABELS = {
    "masked": "masked reconstruction",
    "supervised": "supervised",
    "contrastive": "contrastive",
}


def _seed_panel(ax, result: dict, key: str, ylabel: str) -> None:
    """Each objective's per-seed values of `key`, mean and 95 % interval, and the references."""
    names = list(result["objectives"])
    for i, name in enumerate(names):
        values = np.asarray(result["objectives"][name][key])
        stat = seeds.mean(values)
        ax.plot(np.full(values.size, i), values, "o", color=f"C{i}", alpha=0.45, ms=4)
        if np.isfinite(stat.low):
            lower, upper = stat.value - stat.low, stat.high - stat.value
            ax.errorbar(i, stat.value, [[lower], [upper]], fmt="_", color="k", capsize=5)
        ax.plot(i, stat.value, "_", color="k", ms=14)
    random = result["random"][key]
    ax.axhline(result["untrained"][key], color="0.5", ls=":", label="untrained (Q = 0)")
    ax.axhline(random if key == "diversity" else random["mean"], color="0.5", ls="--",
               label="random attention")  # fmt: skip
    if key == "top_mass":
        ax.axhline(mim_claims.structure_threshold(random), color="C3", ls="-.", lw=1,
                   label="attention learned above")  # fmt: skip
    ax.set_xticks(range(len(names)), [LABELS[n].replace(" ", "\n", 1) for n in names], fontsize=7)
    ax.set_xlim(-0.6, len(names) - 0.4)
    ax.set_ylabel(ylabel)
    ax.set_title("per seed, mean and 95 % interval", fontsize=8)
    ax.legend(fontsize=6, loc="center right")


def figure(result: dict, path: str, title: str, meta: dict) -> None:
    """Write the figure to `path` (PNG, atomically)."""
    grid = tuple(result["grid"])
    names = list(result["objectives"])
    picks = queries(grid)
    fig = plt.figure(figsize=(2.0 * len(picks) + 7, 2.0 * len(names) + 0.9), layout="constrained")
    outer = fig.add_gridspec(1, 3, width_ratios=[len(picks), 1.6, 1.6])
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
    k = result["k"]
    _seed_panel(fig.add_subplot(outer[1]), result, "diversity", f"attention diversity (top-{k})")
    _seed_panel(fig.add_subplot(outer[2]), result, "top_mass", f"top-{k} mass (structure)")
    titled(fig, title, [meta], fontsize=9)
    save(fig, path)
