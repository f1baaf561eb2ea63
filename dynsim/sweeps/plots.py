"""Phase diagrams of a sweep: a heatmap of one summary over two swept axes, the seed mean in each
cell, one panel per combination of the other swept axes; a log colour scale over more than a decade,
cell labels fitted to their cells, the provenance in a footer."""

from __future__ import annotations

import contextlib
import itertools
import math
import os
import re
import warnings
from typing import Mapping, Optional, Sequence

import numpy as np

from dynsim import environment, inputs, schemas
from dynsim.figtext import assignment, footer, provenance, summary_name, symbol, wrapped
from dynsim.trajectory import atomic_savefig

# a manifest lists every point's key: 64 MB holds ~500,000 points, past dynsim.sweep's limit
MANIFEST_BYTES = 64 << 20
PREFIXES = ("", "reduced_", "full_")  # the level prefixes of a summary's column
# what each method of the reduced level is called (the full level runs GD)
METHOD_NAMES = {"gd": "GD", "flow": "gradient flow"}
# what a sweep reads back from the manifest it replaces (dynsim.schemas): which sweep wrote it
# (`dynsim.sweeps.sweep` replaces only the same sweep's outputs, or a smaller grid's) and the
# heatmaps it drew
MANIFEST = {
    "setting": schemas.kind("text"),
    "level": schemas.kind("text"),
    "points": schemas.kind("list"),
    "points[]": schemas.kind("text"),
    "heatmap_files": schemas.kind("list", "null"),
    "heatmap_files[]": schemas.kind("text"),
    "heatmaps": schemas.kind("list", "null"),
    "heatmaps[]": schemas.kind("text"),
}


def _numeric(v) -> float:
    if v is None or isinstance(v, str):
        return math.nan if v is None or v not in ("AGREE", "DISAGREE") else float(v == "AGREE")
    return float(v)


def levels_text(level: str, method: str = "gd") -> str:
    """What ran at `level` ("reduced", "full" or "both") with the reduced level's `method`: "reduced
    level (gradient flow)", "full level (GD)", "both levels (reduced: GD, full: GD)"."""
    by = {"reduced": METHOD_NAMES.get(method, method), "full": METHOD_NAMES["gd"]}
    if level in by:
        return f"{level} level ({by[level]})"
    return f"both levels (reduced: {by['reduced']}, full: {by['full']})"


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
    "censored": (
        "#c7c7c7",
        "\u2265{}",
        "\u2265N: censored, not reached by the horizon N (steps or time; a seed)",
    ),
    "missing": ("#ffffff", "-", "not available"),
    # the checker's verdict (--level both) is a category, not a number
    "agree": ("#98df8a", "agree", "AGREE: the levels agree (every seed)"),
    "disagree": ("#9467bd", "DISAGREE", "DISAGREE (every seed)"),
    "mixed": ("#ffbb78", "{}", "some seeds agree (the fraction shown)"),
}
UNSTABLE_HATCH = "xx"  # drawn over the value of a cell with an unstable seed (oscillating loss)
# A colour scale is logarithmic when the finite values are positive and span more than this factor
LOG_SPAN = 10.0
# Cell labels: drawn at LABEL_POINTS, shrunk to fit their cell (90% of its width, 80% of its
# height), with 2 significant digits instead of 3 when 3 would need a font below MIN_LABEL_POINTS,
# and left out when even 2 would; none on a grid of more than MAX_LABELLED cells a panel.
LABEL_POINTS = 8.0
MIN_LABEL_POINTS = 5.0
MAX_LABELLED = 400


def short(v: float, digits: int = 3) -> str:
    """A cell's number in a few characters: `digits` significant digits, thousands as k (16000 ->
    16k, 9800 -> 9.8k)."""
    return f"{v / 1000:.{digits}g}k" if abs(v) >= 1000 else f"{v:.{digits}g}"


def dark(rgb) -> bool:
    """Whether a colour is dark (luma below one half): a label on it is drawn white, else black."""
    return float(np.dot(np.asarray(rgb)[:3], (0.299, 0.587, 0.114))) < 0.5


def colour_norm(values: Sequence[float]):
    """The colour scale of a heatmap's finite values: logarithmic (LogNorm) when all are positive
    and span more than LOG_SPAN, else linear."""
    from matplotlib.colors import LogNorm, Normalize

    lo, hi = min(values, default=0.0), max(values, default=1.0)
    if values and lo > 0 and hi / lo > LOG_SPAN:
        return LogNorm(lo, hi)
    return Normalize(lo, hi)


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
    *,
    labels: Optional[Mapping[str, str]] = None,
    footer_text: Optional[str] = None,
    method: str = "gd",
) -> dict[str, str]:
    """Write heatmap-<name>.png for each summary `name` present; {"heatmap-<name>": path}. A cell is
    the seed mean; diverged, censored and unavailable cells are drawn in their own colours
    (`CATEGORIES`) and cells with an unstable seed are hatched, all named in a legend; the colour
    scale is logarithmic over more than a decade (`colour_norm`); cell labels fit their cells
    (`LABEL_POINTS`). labels: a description of each summary (keyed with or without its level
    prefix) for the title; footer_text: the provenance line (default: the rows' dtypes, this
    process's device, the versions of dynsim and JAX); method: the reduced level's ("gd" or
    "flow"), named in the title (`levels_text`)."""
    import matplotlib.pyplot as plt  # the caller's backend: Agg on the command line (dynsim.cli)

    pair = pick_axes(axes, heatmap_axes)
    if pair is None or not rows:
        return {}
    xa, ya = pair
    xs, ys = axes[xa], axes[ya]
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
        cells = {
            (k, i, j): cell(
                [
                    r
                    for r in rows
                    if r[xa] == xv and r[ya] == yv and all(r[a] == v for a, v in zip(others, combo))
                ],
                name,
            )
            for k, combo in enumerate(combos)
            for i, yv in enumerate(ys)
            for j, xv in enumerate(xs)
        }
        finite = [v for _, v, _ in cells.values() if not math.isnan(v)]
        norm = colour_norm(finite)
        ncol = min(len(combos), 3)
        nrow = math.ceil(len(combos) / ncol)
        width, height = max(4.6, 2.0 + 0.55 * len(xs)), max(3.4, 1.4 + 0.4 * len(ys))
        fig, axs = plt.subplots(
            nrow,
            ncol,
            figsize=(width * ncol, height * nrow + 1.0),
            squeeze=False,
            layout="constrained",
        )
        seen, texts = set(), []
        for k, (ax, combo) in enumerate(zip(axs.flat, combos)):
            im = _panel(ax, cells, k, (len(xs), len(ys)), norm, seen, texts)
            ax.set_xticks(range(len(xs)), [str(v) for v in xs])
            ax.set_yticks(range(len(ys)), [str(v) for v in ys])
            ax.set_xlabel(symbol(xa))
            ax.set_ylabel(symbol(ya))
            ax.set_title(", ".join(assignment(a, v) for a, v in zip(others, combo)), fontsize=9)
            if finite:
                fig.colorbar(im, ax=ax).set_label(_bar_label(name, norm))
        for ax in list(axs.flat)[len(combos) :]:
            ax.axis("off")
        title = title_of(setting, level, name, rows, labels or {}, bool(finite), method)
        fig.suptitle(wrapped(title, fig.get_figwidth(), 9), fontsize=9)
        note = footer(fig, footer_text or _provenance(rows))
        _bottom_legend(fig, _legend(seen), 1 if ncol == 1 else 2)
        if note is not None and not (texts and _fit_labels(fig, texts, len(xs), len(ys))):
            note.set_text(note.get_text() + "; cells too small to label: table.csv has the values")
        path = os.path.join(out, f"heatmap-{name}.png")
        try:
            # a unique temporary name: concurrent sweeps on one --out
            atomic_savefig(fig, path, dpi=110)
        finally:
            plt.close(fig)
        files[f"heatmap-{name}"] = path
    return files


def _panel(ax, cells: dict, k: int, shape: tuple[int, int], norm, seen: set, texts: list):
    """Panel k: the values (colour map), the category cells (their colours), the hatch of unstable
    cells, and a label per cell (in `texts`: (axes, text, its 2-digit form); none on a grid of more
    than MAX_LABELLED cells) in the colour that stands out on the cell's own (a hatched cell's label
    sits on a box of the cell's colour)."""
    import matplotlib
    from matplotlib.patches import Rectangle

    cmap = matplotlib.colormaps["viridis"]
    grid = np.array([[cells[k, i, j][1] for j in range(shape[0])] for i in range(shape[1])])
    im = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto", cmap=cmap, norm=norm)
    for i, j in itertools.product(range(shape[1]), range(shape[0])):
        kind, v, bound = cells[k, i, j]
        seen.add(kind)
        if kind in CATEGORIES:
            back, text, _ = CATEGORIES[kind]
            ax.add_patch(
                Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=back, edgecolor="0.5", lw=0.5)
            )
            shown = [
                bound if isinstance(bound, str) else "" if bound is None else short(bound, d)
                for d in (3, 2)
            ]
            forms = [text.format(x) for x in shown]
        else:
            back, forms = cmap(norm(v)), [short(v), short(v, 2)]
        ink = "w" if dark(matplotlib.colors.to_rgb(back)) else "k"
        box = None
        if kind == "unstable":
            ax.add_patch(
                Rectangle(
                    (j - 0.5, i - 0.5),
                    1,
                    1,
                    fill=False,
                    hatch=UNSTABLE_HATCH,
                    edgecolor=matplotlib.colors.to_rgba(ink, 0.6),
                    lw=0,
                )
            )
            box = dict(boxstyle="round,pad=0.25", fc=back, ec="none")
        if shape[0] * shape[1] <= MAX_LABELLED:
            label = ax.text(j, i, forms[0], ha="center", va="center", color=ink, bbox=box)
            texts.append((ax, label, forms[1]))
    return im


def _fit_labels(fig, texts: list, columns: int, rows: int) -> bool:
    """Shrink each cell label to fit its cell (LABEL_POINTS at most), fall back to its 2-digit form,
    and remove the labels if one still needs less than MIN_LABEL_POINTS; False when removed."""
    fig.draw_without_rendering()  # the layout: the cells' sizes
    renderer = fig.canvas.get_renderer()
    sizes = []
    for ax, label, brief in texts:
        room = (0.9 * ax.bbox.width / columns, 0.8 * ax.bbox.height / rows)
        for form in (label.get_text(), brief):
            label.set_text(form)
            label.set_fontsize(LABEL_POINTS)
            extent = label.get_window_extent(renderer)
            size = LABEL_POINTS * min(1.0, room[0] / extent.width, room[1] / extent.height)
            if size >= MIN_LABEL_POINTS:
                break
        label.set_fontsize(size)
        sizes.append(size)
    if min(sizes, default=LABEL_POINTS) >= MIN_LABEL_POINTS:
        return True
    for _, label, _ in texts:
        label.remove()
    return False


def _bottom_legend(fig, handles: list, columns: int) -> None:
    """The legend of the categories below the panels and above the footer's strip: the layout's
    bottom edge is raised by the legend's height."""
    if not handles:
        return
    engine = fig.get_layout_engine()
    left, bottom, width, height = engine.get()["rect"]
    legend = fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, bottom),
        ncol=columns,
        fontsize=7,
        frameon=False,
    )
    tall = legend.get_window_extent(fig.canvas.get_renderer()).height / fig.bbox.height
    engine.set(rect=(left, bottom + tall, width, height - tall))


def _legend(seen: set) -> list:
    """Legend entries of the categories drawn (and of the hatch, if any cell is unstable)."""
    from matplotlib.patches import Patch

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
    return legend


def title_of(
    setting: str,
    level: str,
    name: str,
    rows: list[dict],
    labels: Mapping,
    numbers: bool,
    method: str = "gd",
) -> str:
    """The level drawn and its method, the summary without its level prefix, its description when
    `labels` has one, the seeds (a mean where the cells hold `numbers`): "JSL sweep, reduced level
    (GD): T1_attention, mean over 2 seeds"."""
    bare, prefix = summary_name(name)
    what = labels.get(name) or labels.get(bare)
    seeds = len({r.get("seed") for r in rows})
    where = levels_text(prefix or level, method)
    return (
        f"{setting.upper()} sweep, {where}: {bare}"
        + (f" ({what})" if what else "")
        + ((", mean over" if numbers else ",") + f" {seeds} seeds" if seeds > 1 else "")
    )


def _bar_label(name: str, norm) -> str:
    """The colour bar's label: the summary, "(recorded step)" for an event time, the scale when
    logarithmic."""
    bare, _ = summary_name(name)
    event = " (recorded step)" if re.search(r"(^|_)T\d", bare) else ""
    return bare + event + (", log scale" if type(norm).__name__ == "LogNorm" else "")


def _provenance(rows: list[dict]) -> str:
    """The footer of a sweep's heatmaps: the rows' dtypes, this process's device, the versions."""
    dtypes = sorted({str(r["dtype"]) for r in rows if r.get("dtype")})
    return provenance(
        {
            "dtype": ", ".join(dtypes),
            "device": environment.device(),
            "versions": environment.versions(),
        }
    )


def read_manifest(out: str) -> Optional[dict]:
    """The manifest (sweep.json) of the sweep whose outputs are in `out`, or None where there is
    none or it cannot be read (a corrupt one, one failing MANIFEST: it is then replaced)."""
    path = os.path.join(out, "sweep.json")
    if not os.path.lexists(path):
        return None
    try:
        old = schemas.check(
            inputs.read_json(path, MANIFEST_BYTES, "sweep.json", out), MANIFEST, "sweep.json", path
        )
    except ValueError:
        return None
    return old if isinstance(old, dict) else None


def with_kept(names: Sequence[str], old: Optional[dict], columns, prefix: str) -> list[str]:
    """The heatmaps to draw: `names`, then those the sweep whose outputs this one replaces drew
    (`old`: its manifest, or None) where the table has their column (as named, or with the level's
    `prefix`): drawn again over this table, so a sweep into its own folder loses none."""
    earlier = (old or {}).get("heatmaps") or ()
    kept = [n for n in earlier if n in columns or prefix + n in columns]
    return list(dict.fromkeys([*names, *kept]))


def remove_stale(out: str, drawn: Sequence[str]) -> list[str]:
    """Remove (and return) the heatmap files that the sweep whose manifest (sweep.json) is in `out`
    drew and this one did not (`drawn`: file names): they describe the table being replaced. A
    manifest that cannot be read (`read_manifest`) names none; no file but a plain heatmap-*.png
    name in `out` is touched."""
    old = read_manifest(out)
    if old is None:
        return []
    listed = old.get("heatmap_files")
    if listed is None:  # a manifest of an older dynsim: its requested names
        listed = [f"heatmap-{p}{n}.png" for n in old.get("heatmaps") or [] for p in PREFIXES]
    stale = sorted(
        n
        for n in set(listed) - set(drawn)
        if n.startswith("heatmap-")
        and n.endswith(".png")
        and os.path.basename(n) == n
        and os.path.isfile(os.path.join(out, n))
    )
    for name in stale:
        with contextlib.suppress(FileNotFoundError):  # a concurrent sweep removed it
            os.unlink(os.path.join(out, name))
    return stale
