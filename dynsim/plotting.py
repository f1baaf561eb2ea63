"""Plots: trajectories of both levels overlaid on a log-time axis, written atomically; the helpers
every setting's figures share (log-time lines without step 0, which loss a run recorded, shared
colour limits)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

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
    # the value at step 0, on the y axis (x in axes coordinates), not on the time axis
    if (~keep).any():
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
            label="_step0",
        )
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


def compare_plot(
    trajectories, path, title: str = "", panels=None, loss_labels: dict = LOSS_LABELS
) -> None:
    """Each panel (observable, axis label) of every trajectory against the step (log axis,
    `log_time`), written atomically to `path`; the default panels: the scalar observables both
    record (at most four). A `<name>_se` is drawn as +-3 SE. The "loss" panel says which loss each
    trajectory recorded (`loss_label`)."""
    if panels is None:
        panels = default_panels(trajectories)
    fig, axes = plt.subplots(
        1, len(panels), figsize=(4 * len(panels), 3.6), constrained_layout=True, squeeze=False
    )
    axes = axes[0]
    styles = [dict(lw=2.2, alpha=0.55), dict(lw=1.0, ls="--", color="k")]
    kinds = {label: loss_label(t.meta, loss_labels) for label, t in trajectories.items()}
    for (label, t), style in zip(trajectories.items(), styles * len(trajectories)):
        for ax, (name, ylabel) in zip(axes, panels):
            if name not in t.observables:
                continue
            y = np.asarray(t[name], float)
            text = (
                f"{label}: {kinds[label]}"
                if name == "loss"
                else f"{label} ({t.meta.get('mode', '')})"
            )
            log_time(ax, t.steps, y, t.observables.get(f"{name}_se"), label=text, **style)
            if name == "loss" and np.all(y > 0):
                ax.set_yscale("log")
            ax.set_ylabel(
                ylabel
                if name != "loss" or len(set(kinds.values())) > 1
                else next(iter(kinds.values()))
            )
    for ax, (name, _) in zip(axes, panels):
        if name == "loss" or ax is axes[0]:
            ax.legend(fontsize=7)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)


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


def save(fig, path) -> None:
    """Write `fig` to `path` as PNG atomically (`dynsim.trajectory.atomic_savefig`) and close it."""
    try:
        atomic_savefig(fig, path, dpi=120)
    finally:
        plt.close(fig)
