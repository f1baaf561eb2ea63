"""Phase diagrams of a sweep: a heatmap of one summary over two swept axes, the seed mean in each cell, one
panel per combination of the other swept axes."""

from __future__ import annotations

import itertools
import math
import os
import warnings
from typing import Optional, Sequence

import numpy as np


def _numeric(v) -> float:
    if v is None or isinstance(v, str):
        return math.nan if v is None or v not in ("AGREE", "DISAGREE") else float(v == "AGREE")
    return float(v)


def pick_axes(axes: dict, heatmap_axes: Optional[Sequence[str]]) -> Optional[tuple[str, str]]:
    """The two axes of the heatmaps: `heatmap_axes` if given, else the first two axes with more than one value."""
    if heatmap_axes is not None:
        pair = tuple(heatmap_axes)
        if len(pair) != 2 or any(a not in axes for a in pair) or pair[0] == pair[1]:
            raise ValueError(f"heatmap_axes = {list(pair)!r} is invalid: must be two different swept axes of "
                             f"{list(axes)}")
        return pair
    multi = [a for a, v in axes.items() if len(v) > 1]
    return (multi[0], multi[1]) if len(multi) >= 2 else None


def heatmaps(out: str, setting: str, level: str, rows: list[dict], axes: dict, names: Sequence[str],
             heatmap_axes: Optional[Sequence[str]]) -> dict[str, str]:
    """Write heatmap-<name>.png for each summary `name` present; {"heatmap-<name>": path}."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pair = pick_axes(axes, heatmap_axes)
    if pair is None or not rows:
        return {}
    xa, ya = pair
    others = [a for a in axes if a not in pair and len(axes[a]) > 1]
    combos = list(itertools.product(*(axes[a] for a in others))) or [()]
    files = {}
    for name in names:
        if not any(name in r for r in rows):
            warnings.warn(f"heatmap {name!r}: no such summary in this sweep; the table's columns are "
                          f"{', '.join(rows[0])}", UserWarning, stacklevel=3)
            continue
        if all(r[name] is None for r in rows):
            continue  # e.g. an event that no point reached: nothing to draw
        ncol = min(len(combos), 3)
        nrow = math.ceil(len(combos) / ncol)
        fig, axs = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.6 * nrow), squeeze=False)
        for ax, combo in zip(axs.flat, combos):
            grid = np.full((len(axes[ya]), len(axes[xa])), np.nan)
            for i, yv in enumerate(axes[ya]):
                for j, xv in enumerate(axes[xa]):
                    vals = [_numeric(r.get(name)) for r in rows if r[xa] == xv and r[ya] == yv
                            and all(r[a] == v for a, v in zip(others, combo))]
                    vals = [v for v in vals if not math.isnan(v)]
                    if vals:
                        grid[i, j] = float(np.mean(vals))
            im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(axes[xa])), [str(v) for v in axes[xa]])
            ax.set_yticks(range(len(axes[ya])), [str(v) for v in axes[ya]])
            ax.set_xlabel(xa)
            ax.set_ylabel(ya)
            for (i, j), v in np.ndenumerate(grid):
                ax.text(j, i, "-" if math.isnan(v) else f"{v:.3g}", ha="center", va="center", color="w", fontsize=8)
            ax.set_title(", ".join(f"{a}={v}" for a, v in zip(others, combo)) or name, fontsize=9)
            fig.colorbar(im, ax=ax)
        for ax in list(axs.flat)[len(combos):]:
            ax.axis("off")
        fig.suptitle(f"{setting} sweep ({level}): {name}\nmean over seeds; '-' = not reached / not available",
                     fontsize=9)
        fig.tight_layout()
        path = os.path.join(out, f"heatmap-{name}.png")
        fig.savefig(path + ".tmp.png", dpi=110)
        os.replace(path + ".tmp.png", path)
        plt.close(fig)
        files[f"heatmap-{name}"] = path
    return files
