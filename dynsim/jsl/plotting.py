"""JSL plots: reduced vs full (alpha, gamma, rho, loss), Figure 4, Figure 2 and the transfer curves."""

from __future__ import annotations

import numpy as np

from dynsim import plotting
from dynsim.plotting import plt, save

PANELS = (("alpha", r"$\alpha = \langle v, w^*\rangle$"), ("gamma", r"$\gamma$ (within-set $A_{ij}$)"),
          ("rho", r"$\rho$ (between-set $A_{ij}$)"), ("loss", "population loss"))


def compare_plot(trajectories, path, title: str = "") -> None:
    """alpha, gamma, rho and loss of every trajectory against steps + 1 (log axis), written atomically to `path`."""
    plotting.compare_plot(trajectories, path, title, panels=PANELS)


def _reference_lines(ax, lines: dict) -> None:
    styles = {"glm_error": ("GLM (Event I) error", "C3", "--"), "bayes_error": ("Bayes error", "C2", ":")}
    for key, (label, color, ls) in styles.items():
        if key in lines:
            ax.axhline(lines[key], color=color, ls=ls, lw=1.2, label=f"{label} {lines[key]:.4f}")


def _mask_and_A(mask, A):
    """A 1 x 4 figure whose first two panels show the same-set mask and A with its fixed diagonal blanked."""
    fig, axes = plt.subplots(1, 4, figsize=(17, 4), constrained_layout=True)
    axes[0].imshow(mask, cmap="Greys", interpolation="nearest")
    axes[0].set_title(r"pairs $(i, j)$ in the same $S_\ell$")
    off = np.where(np.eye(A.shape[0], dtype=bool), np.nan, A)
    vmax = float(np.nanmax(np.abs(off))) or 1.0
    im = axes[1].imshow(off, cmap="RdBu_r", vmin=-vmax, vmax=vmax, interpolation="nearest")
    axes[1].set_title(r"learned $\hat A$ (diagonal $\sigma_A$ blanked)")
    fig.colorbar(im, ax=axes[1], fraction=0.046)
    return fig, axes


def figure4(mask, A, steps, test_error, cos_v, path, *, references: dict, title: str = "",
            test_error_se=None, cos_v_se=None) -> None:
    """JSL Figure 4: (1) same-set mask, (2) learned A, (3) test error against steps, (4) cos(w*, v) against steps."""
    fig, axes = _mask_and_A(mask, A)
    x = np.asarray(steps) + 1
    for ax, y, se, label in ((axes[2], test_error, test_error_se, "test error"), (axes[3], cos_v, cos_v_se, None)):
        ax.plot(x, y, color="C0", lw=1.8, label=label)
        if se is not None:
            ax.fill_between(x, y - 2 * se, y + 2 * se, color="C0", alpha=0.25, lw=0)
        ax.set_xscale("log")
        ax.set_xlabel("step + 1")
    _reference_lines(axes[2], references)
    axes[2].set_ylabel("test 0-1 error")
    axes[2].legend(fontsize=8)
    axes[3].set_ylabel(r"$\cos(w^*, \hat v)$")
    axes[3].set_ylim(min(-0.1, float(np.nanmin(cos_v)) - 0.05), 1.02)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)


def transfer_plot(n_tilde, curves: dict, path, *, references: dict, title: str = "") -> None:
    """Downstream test error against the number of fine-tuning samples, one curve per learner, +- 2 standard errors."""
    fig, ax = plt.subplots(figsize=(6.5, 4.2), constrained_layout=True)
    for i, (label, (mean, se)) in enumerate(curves.items()):
        mean, se = np.asarray(mean, float), np.asarray(se, float)
        ax.errorbar(n_tilde, mean, yerr=2 * se, marker="o", ms=4, capsize=3, color=f"C{i}", label=label)
    _reference_lines(ax, references)
    ax.set_xscale("log", base=2)
    ax.set_xlabel(r"downstream samples $\tilde N$")
    ax.set_ylabel("downstream test 0-1 error")
    ax.legend(fontsize=8)
    if title:
        ax.set_title(title, fontsize=9)
    save(fig, path)


def figure2(mask, A, steps, test_error, association, path, *, chance: float, title: str = "") -> None:
    """JSL Figure 2: same-set mask, learned A, test error and patch association against steps."""
    fig, axes = _mask_and_A(mask, A)
    x = np.asarray(steps) + 1
    axes[2].plot(x, test_error, color="C0")
    axes[2].set_ylabel("test 0-1 error")
    axes[3].plot(x, association, color="C1", label="patch association (Def. 2.2)")
    axes[3].axhline(chance, color="k", ls=":", label=f"chance {chance:.3g}")
    axes[3].set_ylim(-0.05, 1.05)
    axes[3].legend(fontsize=8)
    for ax in axes[2:]:
        ax.set_xscale("log")
        ax.set_xlabel("step + 1")
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)
