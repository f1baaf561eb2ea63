"""Plots: trajectories of both levels overlaid on a log-time axis, written atomically; the helpers
every setting's figures share (log-time lines without step 0, which loss a run recorded, shared
colour limits, one line style per level, the provenance footer)."""

from __future__ import annotations

import math

# No backend is chosen here: the command line draws into files with Agg (dynsim.cli sets
# MPLBACKEND), a notebook keeps its inline backend, a script without a display gets Agg from
# matplotlib itself
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.lines import Line2D
from matplotlib.ticker import NullFormatter

from .figtext import footer, provenance, without_provenance
from .trajectory import atomic_savefig  # noqa: E402

# What each mode's recorded "loss" is (a setting's plotting adds its own modes): the reduced level
# and exact full runs record the population loss; a sampled run records a Monte Carlo batch of N
# fresh samples.
LOSS_LABELS = {
    "population": "population loss",
    "exact": "population loss",
    "flow": "population loss",
    "sampled": "batch loss ({N} fresh samples)",
}


STEP_LABEL = r"step (log; $\blacktriangleright$ on the y axis: step 0)"
# Bins of log step in which the difference panel keeps each observable's largest ratio
BINS = 60
STEP0 = "_step0"  # the label of a step-0 marker (`log_time`)
# How each level's curves are drawn, in the order the trajectories come (the reduced level first):
# solid and wide under the others, then dashed, then dotted. A curve keeps its colour at every
# level, so the line style alone tells the levels apart.
LEVEL_STYLES = (dict(lw=2.6, alpha=0.45), dict(lw=1.2, ls="--"), dict(lw=1.2, ls=":"))


def loss_label(meta: dict, labels: dict = LOSS_LABELS) -> str:
    """Which loss a trajectory recorded, from meta["mode"] (and N from its config): `labels[mode]`,
    else "loss (<mode>)", never "population loss" for a mode not known to record it."""
    mode = str(meta.get("mode", ""))
    text = labels.get(mode, f"loss ({mode})" if mode else "loss")
    return text.format(N=meta.get("config", {}).get("N", "?"))


def sparse_marks(x) -> np.ndarray:
    """Indices of the records more than 1/20 decade after the previous one (and the first): where a
    line on a log axis is a long straight segment between two records, a marker shows where the
    records are."""
    x = np.asarray(x, float)
    if x.size == 0:
        return np.zeros(0, dtype=np.int64)
    gap = np.diff(np.log10(x), prepend=-np.inf)
    return np.flatnonzero(gap > 0.05)


def log_time(ax, steps, y, se=None, k: float = 3, band_label=None, **style):
    """Draw y against the step on a log axis from the first positive record (step 0 has no place on
    it: it is not drawn there, never joined by an invented segment; its value is a triangle on the
    left spine), markers where records are sparse on the axis; with `se`, a +-k SE band labelled
    `band_label` (default "+-k SE") in the legend. Returns the line."""
    steps, y = np.asarray(steps), np.asarray(y, float)
    keep = steps > 0
    x = steps[keep].astype(float)
    (line,) = ax.plot(x, y[keep], marker="o", ms=3, markevery=sparse_marks(x).tolist(), **style)
    if se is not None:
        se = np.asarray(se, float)[keep]
        ax.fill_between(
            x,
            y[keep] - k * se,
            y[keep] + k * se,
            alpha=0.25,
            color=line.get_color(),
            lw=0,
            label=band_label or f"$\\pm{k:g}$ SE",
        )
    # the value at step 0, on the y axis (x in axes coordinates), not on the time axis; it does not
    # widen the axis' range (the curves set it; `save` keeps an outlying step 0 on the edge)
    if (~keep).any():
        curves = ax.dataLim.frozen()
        ax.plot(
            [0],
            [y[~keep][0]],
            transform=ax.get_yaxis_transform(),
            marker=">",
            ms=6,
            ls="none",
            color=line.get_color(),
            alpha=line.get_alpha(),
            clip_on=False,
            label=STEP0,
        )
        ax.dataLim.set_points(curves.get_points())
    ax.set_xscale("log")
    # labels on the decades only (short ranges crowd 2x10^1, 3x10^1..)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(STEP_LABEL)
    return line


def shared_limits(arrays, symmetric: bool = False) -> tuple:
    """One (vmin, vmax) for every panel that shows the same quantity: the finite range over all
    `arrays` (symmetric about 0 when asked; a constant or empty range widened so that the scale is
    not degenerate)."""
    finite = np.concatenate([np.asarray(a, float)[np.isfinite(a)].ravel() for a in arrays])
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    if symmetric:
        lo, hi = -max(abs(lo), abs(hi)), max(abs(lo), abs(hi))
    if hi <= lo:
        lo, hi = lo - 0.5 * (abs(lo) or 1.0), hi + 0.5 * (abs(hi) or 1.0)
    return lo, hi


def heatmap_cmap(name: str, bad: str = "0.55"):
    """Colormap `name` with NaN cells ("bad") drawn grey, never the white of the figure or of a
    diverging map's 0."""
    return matplotlib.colormaps[name].with_extremes(bad=bad)


def level_styles(labels) -> dict:
    """{label: LEVEL_STYLES entry} for the trajectories' labels, in order."""
    return {label: LEVEL_STYLES[i % len(LEVEL_STYLES)] for i, label in enumerate(labels)}


def level_handles(styles: dict, texts: dict) -> list:
    """Legend entries that say which line style is which level: a grey line in each level's style,
    labelled `texts[label]`."""
    return [
        Line2D([], [], color="0.3", label=texts[label], **style) for label, style in styles.items()
    ]


def provenance_footer(fig, metas) -> None:
    """The footer of a figure drawn from runs with these metas: each distinct provenance once."""
    footer(fig, "; ".join(dict.fromkeys(provenance(m) for m in metas if m)))


def titled(fig, title: str, metas=(), fontsize: float = 10) -> None:
    """`title` above the figure, without a "(dtype, device)" group of the metas (the footer's), and
    the provenance footer."""
    title = without_provenance(title, metas)
    if title:
        fig.suptitle(title, fontsize=fontsize)
    provenance_footer(fig, metas)


def compare_plot(
    trajectories,
    path,
    title: str = "",
    panels=None,
    loss_labels: dict = LOSS_LABELS,
    annotate=None,
    report=None,
) -> None:
    """Each panel (observable, axis label) of every trajectory against the step (log axis,
    `log_time`), then the levels' difference (`difference_panel`, from `report`), in two rows
    (`compare_axes`), written atomically to `path`; the default panels: the scalar observables
    both record (at most four). One colour per panel, one line style per trajectory
    (`LEVEL_STYLES`, named in the legend). A `<name>_se` is drawn as +-3 SE. The "loss" panel says
    which loss each trajectory recorded (`loss_label`). annotate(axes), if given, draws more before
    saving. The provenance of the runs goes to a footer, not the title."""
    if panels is None:
        panels = default_panels(trajectories)
    fig, axes, differences, spare = compare_axes(len(panels))
    styles = level_styles(trajectories)
    kinds = {label: loss_label(t.meta, loss_labels) for label, t in trajectories.items()}
    for i, (ax, (name, ylabel)) in enumerate(zip(axes, panels)):
        for label, t in trajectories.items():
            if name not in t.observables:
                continue
            y = np.asarray(t[name], float)
            text = (
                f"{label}: {kinds[label]}"
                if name == "loss"
                else f"{label} ({t.meta.get('mode', '')})"
            )
            se = t.observables.get(f"{name}_se")
            log_time(ax, t.steps, y, se, label=text, color=f"C{i}", **styles[label])
            if name == "loss" and np.all(y > 0):
                ax.set_yscale("log")
        ax.set_ylabel(
            ylabel if name != "loss" or len(set(kinds.values())) > 1 else next(iter(kinds.values()))
        )
    difference_panel(differences, report, {name: f"C{i}" for i, (name, _) in enumerate(panels)})
    if annotate is not None:
        annotate(axes)
    for ax, (name, _) in zip(axes, panels):
        if name == "loss":
            ax.legend(fontsize=7)
    key_legend(axes[0], spare, *axes[0].get_legend_handles_labels())
    titled(fig, title, [t.meta for t in trajectories.values()])
    save(fig, path)


def compare_axes(panels: int) -> tuple:
    """A figure near 4:3 in two rows: `panels` observable axes, then one for the levels'
    difference, then the cells left over, hidden. Returns (fig, observable axes, difference axis,
    the first cell left over or None)."""
    cols = max(2, math.ceil((panels + 1) / 2))
    fig, grid = plt.subplots(
        2, cols, figsize=(max(3.6 * cols, 9.6), 7.6), constrained_layout=True, squeeze=False
    )
    cells = list(grid.ravel())
    for ax in cells[panels + 1 :]:
        ax.set_axis_off()
    return fig, cells[:panels], cells[panels], (cells[panels + 1 :] or [None])[0]


def bin_maxima(x, y, bins: int = BINS) -> np.ndarray:
    """Indices of the largest y (NaN left out) in each of `bins` equal bins of log x, in x order: a
    curve of thousands of records drawn as its upper envelope, every point a record."""
    edges = np.geomspace(x[0], x[-1] * (1 + 1e-12), bins + 1) if x.size else np.zeros(1)
    which = np.digitize(x, edges)
    return np.array(
        [
            i[np.nanargmax(y[i])]
            for b in np.unique(which)
            if np.isfinite(y[i := np.flatnonzero(which == b)]).any()
        ],
        dtype=np.int64,
    )


def key_legend(ax, spare, handles, labels) -> None:
    """The legend of the figure's keys (levels' line styles, curves' colours, event lines) in the
    `spare` cell, clear of the curves; on `ax` when there is none."""
    if spare is None:
        ax.legend(handles, labels, fontsize=7)
    else:
        spare.legend(handles, labels, loc="center", fontsize=9, frameon=False)


def difference_panel(ax, report, colours: dict) -> None:
    """|a - b| / tolerance of every observable `report` compared (the largest over its entries)
    against the step, on log axes, with the tolerance at 1: below the line the levels agree, however
    exactly the curves overlap. Exact zeros and non-finite values have no place on a log axis: the
    legend counts them. Without a report, the axis is hidden."""
    if report is None or not report.ratios:
        ax.set_axis_off()
        return
    keep = np.asarray(report.steps) > 0
    if not keep.any():
        # only step 0 was recorded (`--steps 0`): a log step axis has nothing to show
        ax.set_axis_off()
        ax.set_title(f"{report.verdict} ({report.kind} tolerance): step 0 only", fontsize=9)
        return
    x = np.asarray(report.steps, float)[keep]
    spare = (f"C{i}" for i in range(len(colours), 10 + len(colours)))
    for name, ratio in report.ratios.items():
        r = np.asarray(ratio, float)[keep]
        unshown = {"= 0": int(np.sum(r == 0)), "not finite": int(np.sum(~np.isfinite(r)))}
        notes = [f"{what} at {n} of {r.size} steps" for what, n in unshown.items() if n]
        at = bin_maxima(x, np.where(np.isfinite(r) & (r > 0), r, np.nan))
        ax.plot(
            x[at],
            r[at],
            color=colours.get(name) or next(spare),
            lw=1.2,
            marker="o",
            ms=3,
            markevery=sparse_marks(x[at]).tolist(),
            label=name + (f" ({'; '.join(notes)})" if notes else ""),
        )
    ax.axhline(1.0, color="k", ls="--", lw=1, label="tolerance")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("step (log)")
    ax.set_ylabel(f"|{report.levels[0]} - {report.levels[1]}| / tolerance (largest per bin)")
    ax.set_title(f"{report.verdict} ({report.kind} tolerance)", fontsize=9)
    ax.legend(fontsize=6)


def default_panels(trajectories, most: int = 4) -> tuple:
    """The scalar observables every trajectory records (no `_se`), at most `most`, labelled by
    name."""
    runs = list(trajectories.values())
    names = [
        n
        for n, v in runs[0].observables.items()
        if np.ndim(v) == 1 and not n.endswith("_se") and all(n in t.observables for t in runs[1:])
    ]
    return tuple((n, n) for n in names[:most])


def step0_in_view(ax) -> None:
    """A step-0 marker (`log_time`) beyond the range of the curves is drawn on the axis' edge, its
    value written beside it, so that the curves keep the range they need."""
    low, high = sorted(ax.get_ylim())
    for line in ax.get_lines():
        y = float(np.asarray(line.get_ydata(), float)[0]) if line.get_label() == STEP0 else low
        if math.isnan(y) or low <= y <= high:
            continue
        above = y > high
        line.set_ydata([high if above else low])
        ax.text(
            0.03,
            high if above else low,
            f"step 0: {y:.3g} " + ("\u2191" if above else "\u2193"),
            transform=ax.get_yaxis_transform(),
            fontsize=6,
            color=line.get_color(),
            va="top" if above else "bottom",
        )


def save(fig, path) -> None:
    """Write `fig` to `path` as PNG atomically (`dynsim.trajectory.atomic_savefig`) and close it;
    step-0 markers beyond the curves' range first go to the axis' edge (`step0_in_view`)."""
    for ax in fig.axes:
        step0_in_view(ax)
    try:
        atomic_savefig(fig, path, dpi=120)
    finally:
        plt.close(fig)
