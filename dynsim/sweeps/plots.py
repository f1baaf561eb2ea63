"""Phase diagrams of a sweep: a heatmap of one summary over two swept axes, the seed mean in each
cell, one panel per combination of the other swept axes."""

from __future__ import annotations

import itertools
import math
import os
import re
import warnings
from typing import Optional, Sequence

import numpy as np

from dynsim.trajectory import atomic_savefig


def _numeric(v) -> float:
    if v is None or isinstance(v, str):
        return math.nan if v is None or v not in ("AGREE", "DISAGREE") else float(v == "AGREE")
    return float(v)


def pick_axes(axes: dict, heatmap_axes: Optional[Sequence[str]]) -> Optional[tuple[str, str]]:
    """The two axes of the heatmaps: `heatmap_axes` if given, else the first two axes with more than
    one value."""
    if heatmap_axes is not None:
        pair = tuple(heatmap_axes)
        if len(pair) != 2 or any(a not in axes for a in pair) or pair[0] == pair[1]:
            raise ValueError(
                f"heatmap_axes = {list(pair)!r} is invalid: must be two different swept axes of "
                f"{list(axes)}"
            )
        return pair
    multi = [a for a, v in axes.items() if len(v) > 1]
    return (multi[0], multi[1]) if len(multi) >= 2 else None


# cells that have no plain value, drawn in colours outside the colour map, with a legend
CATEGORIES = {
    "diverged": ("#d62728", "NaN", "diverged (a seed)"),
    "censored": ("#c7c7c7", "\u2265{}", "\u2265N: censored, not reached by step N (a seed)"),
    "missing": ("#ffffff", "-", "not available"),
    # the checker's verdict (--level both) is a category, not a number
    "agree": ("#98df8a", "agree", "AGREE: the levels agree (every seed)"),
    "disagree": ("#9467bd", "DISAGREE", "DISAGREE (every seed)"),
    "mixed": ("#ffbb78", "{}", "some seeds agree (the fraction shown)"),
}
UNSTABLE_HATCH = "xxx"  # drawn over the value of a cell with an unstable seed (oscillating loss)


def short(v: float) -> str:
    """A cell's number in a few characters: 3 significant digits, thousands as k (16000 -> 16k, 9800
    -> 9.8k)."""
    return f"{v / 1000:.3g}k" if abs(v) >= 1000 else f"{v:.3g}"


def _prefix(name: str, columns) -> str:
    """The level prefix of summary `name` ("reduced_", "full_" or ""): the one whose flags the row
    carries."""
    found = [
        c[: -len("unstable")]
        for c in columns
        if c.endswith("unstable") and name.startswith(c[: -len("unstable")])
    ]
    return max(found, key=len, default="")


def cell(rows: list[dict], name: str) -> tuple[str, float, Optional[int]]:
    """(category, value, censoring bound) of one heatmap cell over its seeds' rows: a verdict
    column's "agree", "disagree" or "mixed" (with the fraction of agreeing seeds in the bound's
    place); "diverged" if a seed's run is not finite, else "censored" if a seed's event is censored
    (the smallest bound), else "missing" if no seed has a value, else "unstable" (some seed's loss
    oscillates) or "value", with the seed mean."""
    columns = {c for r in rows for c in r}
    prefix = _prefix(name, columns)
    values = [_numeric(r.get(name)) for r in rows]
    if any(r.get(prefix + "nonfinite_from_step") is not None for r in rows) or any(
        isinstance(r.get(name), float) and math.isnan(r[name]) for r in rows
    ):
        return "diverged", math.nan, None
    verdicts = [r.get(name) for r in rows if r.get(name) in ("AGREE", "DISAGREE")]
    if verdicts:
        agree = sum(v == "AGREE" for v in verdicts) / len(verdicts)
        return (
            ("agree" if agree == 1 else "disagree" if agree == 0 else "mixed"),
            math.nan,
            f"{agree:.2g}",
        )
    bounds = [r[name + "_censored"] for r in rows if r.get(name + "_censored") is not None]
    if bounds:
        return "censored", math.nan, min(bounds)
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return "missing", math.nan, None
    return (
        ("unstable" if any(r.get(prefix + "unstable") for r in rows) else "value"),
        float(np.mean(values)),
        None,
    )


def heatmaps(
    out: str,
    setting: str,
    level: str,
    rows: list[dict],
    axes: dict,
    names: Sequence[str],
    heatmap_axes: Optional[Sequence[str]],
) -> dict[str, str]:
    """Write heatmap-<name>.png for each summary `name` present; {"heatmap-<name>": path}. A cell is
    the seed mean; diverged, censored and unavailable cells are drawn in their own colours
    (`CATEGORIES`) and cells with an unstable seed are hatched, all named in a legend."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch, Rectangle

    pair = pick_axes(axes, heatmap_axes)
    if pair is None or not rows:
        return {}
    xa, ya = pair
    others = [a for a in axes if a not in pair and len(axes[a]) > 1]
    combos = list(itertools.product(*(axes[a] for a in others))) or [()]
    files = {}
    for name in names:
        if not any(name in r for r in rows):
            warnings.warn(
                f"heatmap {name!r}: no such summary in this sweep; the table's columns are "
                f"{', '.join(rows[0])}",
                UserWarning,
                stacklevel=3,
            )
            continue
        ncol = min(len(combos), 3)
        nrow = math.ceil(len(combos) / ncol)
        width, height = max(4.2, 1.6 + 0.55 * len(axes[xa])), max(3.6, 1.4 + 0.4 * len(axes[ya]))
        fig, axs = plt.subplots(
            nrow, ncol, figsize=(width * ncol, height * nrow + 0.6), squeeze=False
        )
        cells = {}
        for k, combo in enumerate(combos):
            for i, yv in enumerate(axes[ya]):
                for j, xv in enumerate(axes[xa]):
                    cells[k, i, j] = cell(
                        [
                            r
                            for r in rows
                            if r[xa] == xv
                            and r[ya] == yv
                            and all(r[a] == v for a, v in zip(others, combo))
                        ],
                        name,
                    )
        finite = [v for _, v, _ in cells.values() if not math.isnan(v)]
        norm = matplotlib.colors.Normalize(min(finite, default=0.0), max(finite, default=1.0))
        cmap = matplotlib.colormaps["viridis"]
        seen = set()
        for k, (ax, combo) in enumerate(zip(axs.flat, combos)):
            grid = np.array(
                [[cells[k, i, j][1] for j in range(len(axes[xa]))] for i in range(len(axes[ya]))]
            )
            im = ax.imshow(
                np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap=cmap, norm=norm
            )
            for i in range(len(axes[ya])):
                for j in range(len(axes[xa])):
                    kind, v, bound = cells[k, i, j]
                    seen.add(kind)
                    if kind in CATEGORIES:
                        colour, text, _ = CATEGORIES[kind]
                        ax.add_patch(
                            Rectangle(
                                (j - 0.5, i - 0.5), 1, 1, facecolor=colour, edgecolor="0.5", lw=0.5
                            )
                        )
                        label = (
                            bound
                            if isinstance(bound, str)
                            else short(bound)
                            if bound is not None
                            else ""
                        )
                        ax.text(
                            j,
                            i,
                            text.format(label),
                            ha="center",
                            va="center",
                            color="k",
                            fontsize=8,
                        )
                        continue
                    dark = sum(np.array(cmap(norm(v))[:3]) * (0.299, 0.587, 0.114)) < 0.5
                    if kind == "unstable":
                        ax.add_patch(
                            Rectangle(
                                (j - 0.5, i - 0.5),
                                1,
                                1,
                                fill=False,
                                hatch=UNSTABLE_HATCH,
                                edgecolor="w" if dark else "k",
                                lw=0,
                            )
                        )
                    ax.text(
                        j,
                        i,
                        short(v),
                        ha="center",
                        va="center",
                        color="w" if dark else "k",
                        fontsize=8,
                        bbox=dict(boxstyle="round,pad=0.1", fc=cmap(norm(v)), ec="none")
                        if kind == "unstable"
                        else None,
                    )
            ax.set_xticks(range(len(axes[xa])), [str(v) for v in axes[xa]])
            ax.set_yticks(range(len(axes[ya])), [str(v) for v in axes[ya]])
            ax.set_xlabel(xa)
            ax.set_ylabel(ya)
            ax.set_title(", ".join(f"{a}={v}" for a, v in zip(others, combo)) or name, fontsize=9)
            if finite:
                fig.colorbar(im, ax=ax).set_label(
                    name + (" (recorded step)" if re.search(r"(^|_)T\d", name) else "")
                )
        for ax in list(axs.flat)[len(combos) :]:
            ax.axis("off")
        legend = [
            Patch(facecolor=CATEGORIES[k][0], edgecolor="0.5", label=CATEGORIES[k][2])
            for k in CATEGORIES
            if k in seen
        ]
        if "unstable" in seen:
            legend.append(
                Patch(
                    facecolor="w",
                    edgecolor="k",
                    hatch=UNSTABLE_HATCH,
                    label="unstable: the loss oscillates (a seed)",
                )
            )
        across = 1 if ncol == 1 else 2
        if legend:
            fig.legend(handles=legend, loc="lower center", ncol=across, fontsize=7, frameon=False)
        fig.suptitle(f"{setting} sweep ({level}): {name}, mean over seeds", fontsize=9)
        fig.tight_layout(rect=(0, 0.045 * math.ceil(len(legend) / across) / nrow, 1, 1))
        path = os.path.join(out, f"heatmap-{name}.png")
        try:
            # a unique temporary name: concurrent sweeps on one --out
            atomic_savefig(fig, path, dpi=110)
        finally:
            plt.close(fig)
        files[f"heatmap-{name}"] = path
    return files
