"""Plots: both levels overlaid on a log-time axis."""

from __future__ import annotations

import os
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

PANELS = (("alpha", r"$\alpha = \langle v, w^*\rangle$"), ("gamma", r"$\gamma$ (within-set $A_{ij}$)"),
          ("rho", r"$\rho$ (between-set $A_{ij}$)"), ("loss", "population loss"))


def compare_plot(trajectories, path, title: str = "") -> None:
    """alpha, gamma, rho and loss of every trajectory against steps + 1 (log axis), written atomically to `path`."""
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.6), constrained_layout=True)
    styles = [dict(lw=2.2, alpha=0.55), dict(lw=1.0, ls="--", color="k")]
    for (label, t), style in zip(trajectories.items(), styles * len(trajectories)):
        x = t.steps + 1
        for ax, (name, ylabel) in zip(axes, PANELS):
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
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=120, format="png")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
