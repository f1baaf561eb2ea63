"""Plots: trajectories of both levels overlaid on a log-time axis, written atomically."""

from __future__ import annotations

import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .trajectory import public_mode  # noqa: E402

def compare_plot(trajectories, path, title: str = "", panels=None) -> None:
    """Each panel (observable, axis label) of every trajectory against steps + 1 (log axis), written atomically to
    `path`; the default panels: the scalar observables both record (at most four). A `<name>_se` is drawn as +-3 SE."""
    if panels is None:
        panels = default_panels(trajectories)
    fig, axes = plt.subplots(1, len(panels), figsize=(4 * len(panels), 3.6), constrained_layout=True, squeeze=False)
    axes = axes[0]
    styles = [dict(lw=2.2, alpha=0.55), dict(lw=1.0, ls="--", color="k")]
    for (label, t), style in zip(trajectories.items(), styles * len(trajectories)):
        x = t.steps + 1
        for ax, (name, ylabel) in zip(axes, panels):
            if name not in t.observables:
                continue
            y = np.asarray(t[name], float)
            ax.plot(x, y, label=f"{label} ({t.meta.get('mode', '')})", **style)
            se = t.observables.get(f"{name}_se")
            if se is not None:
                ax.fill_between(x, y - 3 * se, y + 3 * se, alpha=0.25, color="k", lw=0)
            ax.set_xscale("log")
            if name == "loss" and np.all(y > 0):
                ax.set_yscale("log")
            ax.set_xlabel("step + 1")
            ax.set_ylabel(ylabel)
    axes[0].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)


def default_panels(trajectories, most: int = 4) -> tuple:
    """The scalar observables every trajectory records (no `_se`), at most `most`, labelled by name."""
    runs = list(trajectories.values())
    names = [n for n, v in runs[0].observables.items() if np.ndim(v) == 1 and not n.endswith("_se")
             and all(n in t.observables for t in runs[1:])]
    return tuple((n, n) for n in names[:most])


def save(fig, path) -> None:
    """Write `fig` to `path` as PNG atomically (temporary file, then rename) and close it."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120, format="png")
        public_mode(tmp)
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
