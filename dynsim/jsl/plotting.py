"""JSL plots: reduced vs full (alpha, gamma, rho, loss), Figure 4, Figure 2 and the transfer
curves."""

from __future__ import annotations

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.ticker import MaxNLocator

from dynsim import plotting
from dynsim.plotting import heatmap_cmap, log_time, plt, save, shared_limits

PANELS = (
    ("alpha", r"$\alpha = \langle v, w^*\rangle$"),
    ("gamma", r"$\gamma$ (within-set $A_{ij}$)"),
    ("rho", r"$\rho$ (between-set $A_{ij}$)"),
    ("loss", "loss"),
)
# A realistic run records the logistic loss on its N training samples (full/jsl/realistic.py),
# Figure 2's the same.
LOSS_LABELS = {
    **plotting.LOSS_LABELS,
    "realistic": "training loss ({N} samples)",
    "fig2": "training loss ({N} samples)",
}


def compare_plot(trajectories, path, title: str = "") -> None:
    """alpha, gamma, rho and loss of every trajectory against the step (log axis), written
    atomically to `path`."""
    plotting.compare_plot(trajectories, path, title, panels=PANELS, loss_labels=LOSS_LABELS)


def _reference_lines(ax, lines: dict) -> None:
    styles = {
        "glm_error": ("GLM (Event I) error", "C3", "--"),
        "bayes_error": ("Bayes error", "C2", ":"),
    }
    for key, (label, color, ls) in styles.items():
        if key in lines:
            ax.axhline(lines[key], color=color, ls=ls, lw=1.2, label=f"{label} {lines[key]:.4f}")


def _mask_and_A(mask, A):
    """A 1 x 4 figure whose first two panels show the same-set mask (two labelled colours) and A off
    its diagonal (a labelled diverging scale symmetric about 0; the fixed diagonal sigma_A drawn
    grey, not white)."""
    fig, axes = plt.subplots(1, 4, figsize=(17, 4), constrained_layout=True)
    im = axes[0].imshow(
        mask, cmap=ListedColormap(["0.92", "0.2"]), vmin=-0.5, vmax=1.5, interpolation="nearest"
    )
    axes[0].set_title(r"pairs $(i, j)$ in the same $S_\ell$")
    bar = fig.colorbar(im, ax=axes[0], fraction=0.046, ticks=[0, 1])
    bar.ax.set_yticklabels(["other sets", "same set"])
    off = np.where(np.eye(A.shape[0], dtype=bool), np.nan, A)
    vmin, vmax = shared_limits([off], symmetric=True)
    im = axes[1].imshow(
        off, cmap=heatmap_cmap("RdBu_r"), vmin=vmin, vmax=vmax, interpolation="nearest"
    )
    axes[1].set_title(r"learned $\hat A$ (grey: diagonal, fixed at $\sigma_A$)")
    fig.colorbar(im, ax=axes[1], fraction=0.046, label=r"$\hat A_{ij}$")
    for ax in axes[:2]:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("patch j")
        ax.set_ylabel("patch i")
    return fig, axes


def figure4(
    mask,
    A,
    steps,
    test_error,
    cos_v,
    path,
    *,
    references: dict,
    title: str = "",
    test_error_se=None,
    cos_v_se=None,
    n_test=None,
) -> None:
    """JSL Figure 4: (1) same-set mask, (2) learned A, (3) test error against steps, (4) cos(w*, v)
    against steps."""
    fig, axes = _mask_and_A(mask, A)
    for ax, y, se, label in (
        (axes[2], test_error, test_error_se, "test error (seed mean)"),
        (axes[3], cos_v, cos_v_se, r"$\cos(w^*, \hat v)$ (seed mean)"),
    ):
        log_time(
            ax,
            steps,
            y,
            se,
            k=2,
            band_label=r"$\pm 2$ SE over seeds",
            color="C0",
            lw=1.8,
            label=label,
        )
    _reference_lines(axes[2], references)
    axes[2].set_ylabel(
        f"test 0-1 error ({n_test} held-out samples)" if n_test else "test 0-1 error"
    )
    axes[2].legend(fontsize=8)
    axes[3].legend(fontsize=8, loc="lower right")
    axes[3].set_ylabel(r"$\cos(w^*, \hat v)$")
    axes[3].set_ylim(min(-0.1, float(np.nanmin(cos_v)) - 0.05), 1.02)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)


def transfer_plot(n_tilde, curves: dict, path, *, references: dict, title: str = "") -> None:
    """Downstream test error against the number of fine-tuning samples, one curve per learner, +- 2
    standard errors."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2), constrained_layout=True)
    for i, (label, (mean, se)) in enumerate(curves.items()):
        mean, se = np.asarray(mean, float), np.asarray(se, float)
        ax.errorbar(
            n_tilde, mean, yerr=2 * se, marker="o", ms=4, capsize=3, color=f"C{i}", label=label
        )
    _reference_lines(ax, references)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(r"downstream samples $\tilde N$")
    ax.set_ylabel("downstream test 0-1 error")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    save(fig, path)


def figure2(
    mask,
    A,
    steps,
    test_error,
    association,
    path,
    *,
    chance: float,
    title: str = "",
    test_error_se=None,
    association_se=None,
    n_test=None,
) -> None:
    """JSL Figure 2: same-set mask, learned A, test error and patch association against steps (seed
    means, +-2 SE)."""
    fig, axes = _mask_and_A(mask, A)
    band = r"$\pm 2$ SE over seeds"
    log_time(
        axes[2],
        steps,
        test_error,
        test_error_se,
        k=2,
        band_label=band,
        color="C0",
        label="test error (seed mean)",
    )
    axes[2].set_ylabel(
        f"test 0-1 error ({n_test} held-out samples)" if n_test else "test 0-1 error"
    )
    axes[2].legend(fontsize=8)
    log_time(
        axes[3],
        steps,
        association,
        association_se,
        k=2,
        band_label=band,
        color="C1",
        label="patch association (Def. 2.2, seed mean)",
    )
    axes[3].axhline(chance, color="k", ls=":", label=f"chance {chance:.3g}")
    axes[3].set_ylim(-0.05, 1.05)
    axes[3].legend(fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)
