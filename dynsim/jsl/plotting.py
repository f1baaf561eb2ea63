"""JSL plots: reduced vs full (alpha, gamma, rho, loss, the event times), Figure 4, Figure 2 and the
transfer curves; titles in the paper's symbols (`parameters`)."""

from __future__ import annotations

from typing import Optional

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.ticker import MaxNLocator

from dynsim import plotting
from dynsim.figtext import assignment
from dynsim.plotting import heatmap_cmap, log_time, plt, save, shared_limits, titled

from . import events

PAPER = "JSL (Jelassi, Sander, Li 2022)"

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


def parameters(config, names=("D", "C", "q", "p", "nu", "eta")) -> str:
    """The config's `names` in the paper's symbols (D=9, C=3, $\\eta$=0.05, ...) and its softmax
    temperature (model (T): sqrt(d); "unit": 1), from a JSLConfig or its dict."""
    values = config if isinstance(config, dict) else config.to_dict()
    parts = [assignment(n, values[n]) for n in names if values.get(n) is not None]
    temperature = {"sqrt_d": r"$\sqrt{d}$", "unit": "1"}.get(values.get("temperature"))
    return ", ".join(parts + ([f"temperature {temperature}"] if temperature else []))


def compare_plot(trajectories, path, title: str = "", report=None) -> None:
    """alpha, gamma, rho and loss of every trajectory against the step (log axis), the event times
    of the first (`events.detect`) marked on every panel, and the levels' difference from `report`
    (`plotting.difference_panel`), written atomically to `path`; without a title, one from the
    first run's config."""
    first = next(iter(trajectories.values()))
    if not title and "config" in first.meta:
        shown = [f"{PAPER}: {' vs '.join(trajectories)}", parameters(first.meta["config"])]
        title = ", ".join(part for part in shown if part)
    plotting.compare_plot(
        trajectories,
        path,
        title,
        panels=PANELS,
        loss_labels=LOSS_LABELS,
        annotate=lambda axes: _event_lines(axes, first, next(iter(trajectories))),
        report=report,
    )


def _event_lines(axes, traj, label: str) -> None:
    """The event times of `traj` (Events I-III, docs/jsl.md §10) as dotted vertical lines named at
    the top of every panel, and a legend entry on the first panel that names those not reached."""
    needs = [*events.REQUIRED, "config"]
    if any(n not in traj.observables and n not in traj.meta for n in needs) or not traj.steps.size:
        return
    found = events.detect(traj).to_dict()
    reached = {name: found[name] for name in events.EVENTS if found[name]}
    for ax in axes:
        for name, step in reached.items():
            ax.axvline(step, color="0.5", ls=":", lw=1, zorder=0)
            ax.text(
                step,
                0.98,
                f"{name} ",
                transform=ax.get_xaxis_transform(),
                rotation=90,
                fontsize=6,
                color="0.35",
                ha="right",
                va="top",
            )
    missed = [name for name in events.EVENTS if name not in reached]
    text = f"event times ({label})" + (f"\nnot reached: {', '.join(missed)}" if missed else "")
    axes[0].plot([], [], color="0.5", ls=":", lw=1, label=text)


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
    fig, axes = plt.subplots(1, 4, figsize=(17, 4), layout="constrained")
    fig.get_layout_engine().set(wspace=0.06)  # room between A's colour bar and the next panel
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
    meta: Optional[dict] = None,
) -> None:
    """JSL Figure 4: (1) same-set mask, (2) learned A, (3) test error against steps, (4) cos(w*, v)
    against steps; the provenance of `meta` (the run's) in a footer."""
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
    # the error falls from chance to near the Bayes line: a log axis shows both ends
    if np.all(np.asarray(test_error, float) > 0) and all(v > 0 for v in references.values()):
        axes[2].set_yscale("log")
    axes[2].legend(fontsize=8)
    axes[3].legend(fontsize=8, loc="lower right")
    axes[3].set_ylabel(r"$\cos(w^*, \hat v)$")
    axes[3].set_ylim(min(-0.1, float(np.nanmin(cos_v)) - 0.05), 1.02)
    titled(fig, title, [meta] if meta else [])
    save(fig, path)


def transfer_plot(
    n_tilde, curves: dict, path, *, references: dict, title: str = "", meta: Optional[dict] = None
) -> None:
    """Downstream test error against the number of fine-tuning samples, one curve per learner, +- 2
    standard errors; the provenance of `meta` in a footer."""
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
    titled(fig, title, [meta] if meta else [], fontsize=9)
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
    linear_error: Optional[float] = None,
    left_plateau: Optional[bool] = None,
    meta: Optional[dict] = None,
) -> None:
    """JSL Figure 2: same-set mask, learned A, test error and patch association against steps (seed
    means, +-2 SE); the linear rule's test error as a line, and when `left_plateau` is False a note
    on both curves that the learner never left that plateau (so the association tests nothing)."""
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
    if linear_error is not None:
        axes[2].axhline(
            linear_error,
            color="C3",
            ls="--",
            lw=1.2,
            label=rf"linear rule sign$(\sum_j\langle w, X_j\rangle)$ {linear_error:.4f}",
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
    if left_plateau is False:
        for ax, text in (
            (axes[2], "never left the linear plateau:\nnot below the linear rule by 3 SE"),
            (axes[3], "not tested: the learner never\nleft the linear plateau"),
        ):
            ax.text(
                0.5,
                0.5,
                text,
                transform=ax.transAxes,
                ha="center",
                va="center",
                fontsize=9,
                color="C3",
                bbox=dict(boxstyle="round", fc="w", ec="C3", alpha=0.9),
            )
    titled(fig, title, [meta] if meta else [])
    save(fig, path)
