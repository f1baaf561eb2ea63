"""MIM plots: both levels on a log-time axis (one colour per curve, one line style per level), the
two-phase / one-phase figure, attention maps on the patch grid; titles in the paper's symbols
(`parameters`)."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from matplotlib.colors import BoundaryNorm, ListedColormap
from matplotlib.lines import Line2D

from dynsim import plotting
from dynsim.figtext import assignment
from dynsim.plotting import log_time, plt, save, shared_limits, titled

from . import records
from .partition import area_of, query_patches


def _own(cfg, p: int, k: int = 0) -> int:
    return int(area_of(cfg.areas, cfg.P)[k, p])


PAPER = "MIM (Huang, Wen, Chi, Liang 2024)"


def parameters(
    cfg, names=("P", "K", "kappa_c", "kappa_s", "mask_ratio", "eta"), gap: bool = True
) -> str:
    """The config's `names` in the paper's symbols (P=16, $\\kappa_{c}$=0.75, mask ratio 0.75 (its
    gamma, not JSL's), $\\eta$=1) and, with `gap`, the information gap Delta."""
    values = cfg.to_dict()
    parts = [assignment(n, values[n]) for n in names]
    return ", ".join(parts + ([rf"$\Delta$={cfg.delta:.2f}"] if gap else []))


# The difference panel's colour of each compared observable: its panel's, where it has one
DIFFERENCE_COLOURS = {"fp_corr": "C0", "area_attention": "C2", "pp_corr": "C4", "loss": "C7"}


def compare_plot(trajectories: dict, cfg, path, title: str = "", report=None) -> None:
    """FP correlations, own-area attention, max |PP| and loss of every trajectory against the step
    (log axis, step 0 not drawn), and the levels' difference from `report`
    (`plotting.difference_panel`): one colour per curve, the same at every level, one line style
    per level (`plotting.LEVEL_STYLES`), both named in the legends; the loss legend says which loss
    each run recorded (population, or a sampled batch). Without a title, one from `cfg`."""
    fig, axes, differences, spare = plotting.compare_axes(4)
    q = query_patches(cfg)
    styles = plotting.level_styles(trajectories)
    kinds = {label: plotting.loss_label(t.meta) for label, t in trajectories.items()}
    # (query, FP column, colour, name): the target and global areas of a local query, the target of
    # a global query
    curves = (
        (q["local"], _own(cfg, q["local"]), "C0", "local p, own (target) area"),
        (q["local"], 0, "C3", "local p, global area"),
        (q["global"], 0, "C2", "global p, own (global) area"),
    )
    for label, t in trajectories.items():
        style = styles[label]
        for p, j, color, _ in curves:
            fp = records.patch_series(t, "fp_corr", p, 0, cfg)[:, j]
            log_time(axes[0], t.steps, fp, color=color, **style)
            if j == _own(cfg, p):
                attention = records.patch_series(t, "area_attention", p, 0, cfg)[:, j]
                log_time(axes[1], t.steps, attention, color=color, **style)
        log_time(axes[2], t.steps, t["pp_max"], color="C4", **style)
        log_time(axes[3], t.steps, t["loss"], color="C7", **style)
    loss = next(iter(kinds.values())) if len(set(kinds.values())) == 1 else "loss"
    ylabels = (
        r"FP correlation $A_{p,v_{1,j}}$",
        r"own-area attention $E[\mathrm{Attn}_{p\to U_{1,n}}]$",
        r"max $|B_{p,q}|$ (PP)",
        loss,
    )
    for ax, ylabel in zip(axes, ylabels):
        ax.set_ylabel(ylabel)
    plotting.difference_panel(differences, report, DIFFERENCE_COLOURS)
    levels = {
        label: f"{label} ({t.meta.get('approximation') or t.meta.get('mode', '')})"
        for label, t in trajectories.items()
    }
    colours = [Line2D([], [], color=c, lw=2, label=name) for _, j, c, name in curves]
    keys = colours + plotting.level_handles(styles, levels)
    plotting.key_legend(axes[0], spare, keys, [h.get_label() for h in keys])
    axes[1].legend(handles=[colours[0], colours[2]], fontsize=6)
    losses = {label: f"{label}: {kind}" for label, kind in kinds.items()}
    axes[3].legend(handles=plotting.level_handles(styles, losses), fontsize=6)
    titled(
        fig,
        title or f"{PAPER}: {' vs '.join(levels.values())}, {parameters(cfg)}",
        [t.meta for t in trajectories.values()],
    )
    save(fig, path)


def pp_pair(cfg, t, p: int, q: int) -> Optional[np.ndarray]:
    """B_{p,q} along the run: from pp_corr, or from a reduced run's per-class pp_class / pp_self or
    per-cell pp_cell / pp_self_cell when not expanded; None when the run recorded no PP entries
    (several clusters past the record budget)."""
    if "pp_corr" in t.observables:
        return t["pp_corr"][:, p, q]
    if "pp_class" in t.observables:
        index = records.class_index(cfg)
        return records.pp_rows(index, t["pp_class"], t["pp_self"], [p])[:, 0, q]
    if "pp_cell" in t.observables:
        cell = records.cell_index(cfg).cell
        if p == q:
            return t["pp_self_cell"][:, cell[p]]
        return t["pp_cell"][:, cell[p], cell[q]]
    return None


def phases_plot(runs: dict, path, switches: Optional[dict] = None, title: str = "") -> None:
    """Columns: one run each (e.g. Delta > 0, Delta < 0). Rows: FP and PP correlations of a local
    query, log time."""
    fig, axes = plt.subplots(
        2, len(runs), figsize=(6.5 * len(runs), 7.5), constrained_layout=True, squeeze=False
    )
    for col, (label, (cfg, t)) in enumerate(runs.items()):
        q = query_patches(cfg)
        p, n = q["local"], _own(cfg, q["local"])
        a = area_of(cfg.areas, cfg.P)[0]
        # None: one local area
        other = next((j for j in range(1, cfg.areas_per_cluster[0]) if j != n), None)
        ax, s = axes[0, col], t.steps
        fp, g = records.patch_series(t, "fp_corr", p, 0, cfg), q["global"]
        log_time(ax, s, fp[:, n], color="C0", lw=2, label=r"target $A_{p,v_{n}}$ (local p)")
        log_time(ax, s, fp[:, 0], color="C3", lw=2, label=r"global $A_{p,v_{1}}$ (local p)")
        if other is not None:
            log_time(ax, s, fp[:, other], color="C7", lw=1, label=r"other local $A_{p,v_{m}}$")
        log_time(
            ax,
            s,
            records.patch_series(t, "fp_corr", g, 0, cfg)[:, 0],
            color="C2",
            lw=1.2,
            ls="--",
            label=r"target $A_{p,v_1}$ (global p)",
        )
        if cfg.delta > 0:  # the switch level exists only for Delta > 0
            ax.axhline(
                -cfg.delta / 2 * math.log(cfg.P),
                color="C3",
                ls=":",
                lw=1,
                label=r"$-(\Delta/2)\log P$ (Lemma 5.3)",
            )
        if switches and switches.get(label) is not None:
            ax.axvline(
                max(switches[label], 1),
                color="k",
                ls=":",
                lw=1,
                label=f"switch at step {switches[label]}",
            )
        ax.set_title(
            label.replace("Delta", r"$\Delta$")
            + ": "
            + parameters(cfg, ("P", "kappa_c", "kappa_s")),
            fontsize=9,
        )
        ax.set_ylabel("FP correlation")
        ax.legend(fontsize=7)
        ax = axes[1, col]
        if pp_pair(cfg, t, p, p) is None:
            ax.text(0.5, 0.5, "PP correlations not recorded at this size", ha="center",
                    transform=ax.transAxes)  # fmt: skip
            ax.set_xticks([]), ax.set_yticks([])
            continue
        same = [q2 for q2 in range(cfg.P) if a[q2] == n and q2 != p]
        glob = [q2 for q2 in range(cfg.P) if a[q2] == 0]
        oth = [q2 for q2 in range(cfg.P) if other is not None and a[q2] == other]
        log_time(ax, s, pp_pair(cfg, t, p, p), color="k", lw=1, label=r"$B_{p,p}$")
        if same:
            log_time(
                ax,
                s,
                pp_pair(cfg, t, p, same[0]),
                color="C0",
                lw=1.5,
                label=r"$B_{p,q}$, q in own area",
            )
        log_time(
            ax,
            s,
            pp_pair(cfg, t, p, glob[0]),
            color="C3",
            lw=1.5,
            label=r"$B_{p,q}$, q in global area",
        )
        if oth:
            log_time(
                ax,
                s,
                pp_pair(cfg, t, p, oth[0]),
                color="C7",
                lw=1,
                label=r"$B_{p,q}$, q in another local area",
            )
        ax.set_ylabel("PP correlation (local p)")
        ax.legend(fontsize=7)
    titled(fig, title, [t.meta for _, t in runs.values()])
    save(fig, path)


def attention_maps(
    attn: np.ndarray, cfg, queries: list[int], path, title: str = "", meta: Optional[dict] = None
) -> None:
    """Attention rows of the given queries drawn on the sqrt(P) x sqrt(P) grid, query marked, area
    outlines beside; the provenance of `meta` (the run's) in a footer."""
    side = math.isqrt(cfg.P)
    shape = (side, side) if side * side == cfg.P else (1, cfg.P)
    fig, axes = plt.subplots(
        1, len(queries) + 1, figsize=(3.6 * (len(queries) + 1), 3.4), constrained_layout=True
    )
    area = area_of(cfg.areas, cfg.P)[0]
    n = int(area.max()) + 1  # areas are categories: one colour each, a tick per area on the bar
    cmap = ListedColormap([plt.get_cmap("tab20")(i % 20) for i in range(n)])
    im = axes[0].imshow(
        area.reshape(shape),
        cmap=cmap,
        norm=BoundaryNorm(np.arange(n + 1) - 0.5, n),
        interpolation="nearest",
    )
    axes[0].set_title("areas of cluster 1", fontsize=9)
    bar = fig.colorbar(im, ax=axes[0], fraction=0.046, ticks=range(n) if n <= 20 else None)
    bar.ax.set_title("area", fontsize=8)
    if n <= 20:
        bar.ax.set_yticklabels(["0 (global)", *map(str, range(1, n))], fontsize=7)
    # one scale for every query, from 0
    vmin, vmax = shared_limits([attn[p] for p in queries] + [[0.0]])
    for ax, p in zip(axes[1:], queries):
        im = ax.imshow(
            attn[p].reshape(shape), cmap="viridis", vmin=vmin, vmax=vmax, interpolation="nearest"
        )
        r, c = divmod(p, shape[1])
        ax.plot(c, r, marker="x", color="r", ms=9, mew=2)
        ax.set_title(f"attention of query {p} (x)", fontsize=9)
    fig.colorbar(im, ax=list(axes[1:]), fraction=0.046, label="attention weight (shared scale)")
    for ax in axes:
        ax.set_xticks([])
        ax.set_yticks([])
    titled(fig, title, [meta] if meta else [])
    save(fig, path)
