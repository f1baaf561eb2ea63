"""MIM plots: both levels on a log-time axis, the two-phase / one-phase figure, attention maps on
the patch grid."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from matplotlib.colors import BoundaryNorm, ListedColormap

from dynsim import plotting
from dynsim.plotting import log_time, plt, save, shared_limits

from . import records
from .partition import area_of, query_patches


def _own(cfg, p: int, k: int = 0) -> int:
    return int(area_of(cfg.areas, cfg.P)[k, p])


def compare_plot(trajectories: dict, cfg, path, title: str = "") -> None:
    """FP correlations, own-area attention, max |PP| and loss of every trajectory against the step
    (log axis, step 0 not drawn); the loss panel says which loss each run recorded (population, or a
    sampled batch)."""
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8), constrained_layout=True)
    q = query_patches(cfg)
    styles = [
        dict(lw=2.2, alpha=0.55),
        dict(lw=1.0, ls="--", color="k"),
        dict(lw=1.0, ls=":", color="C3"),
    ]
    kinds = {label: plotting.loss_label(t.meta) for label, t in trajectories.items()}
    for (label, t), style in zip(trajectories.items(), styles * len(trajectories)):
        lab = f"{label} ({t.meta.get('approximation', t.meta.get('mode', ''))})"
        for name, p, j, tag in (
            ("local", q["local"], _own(cfg, q["local"]), "target"),
            ("local", q["local"], 0, "global"),
            ("global", q["global"], 0, "target"),
        ):
            log_time(
                axes[0],
                t.steps,
                records.patch_series(t, "fp_corr", p, 0, cfg)[:, j],
                label=f"{lab}: {name} p, {tag} area",
                **style,
            )
            if tag == "target":
                log_time(
                    axes[1],
                    t.steps,
                    records.patch_series(t, "area_attention", p, 0, cfg)[:, j],
                    label=f"{lab}: {name} p",
                    **style,
                )
        log_time(axes[2], t.steps, t["pp_max"], label=lab, **style)
        log_time(axes[3], t.steps, t["loss"], label=f"{label}: {kinds[label]}", **style)
    loss = next(iter(kinds.values())) if len(set(kinds.values())) == 1 else "loss"
    ylabels = (
        r"FP correlation $A_{p,v_{1,j}}$",
        r"own-area attention $E[\mathrm{Attn}_{p\to U_{1,n}}]$",
        r"max $|B_{p,q}|$ (PP)",
        loss,
    )
    for ax, ylabel in zip(axes, ylabels):
        ax.set_ylabel(ylabel)
    for ax in (axes[0], axes[1], axes[3]):
        ax.legend(fontsize=6)
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)


def pp_pair(cfg, t, p: int, q: int) -> np.ndarray:
    """B_{p,q} along the run: from pp_corr, or from a reduced run's per-class pp_class / pp_self
    when not expanded."""
    if "pp_corr" in t.observables:
        return t["pp_corr"][:, p, q]
    return records.pp_rows(records.class_index(cfg), t["pp_class"], t["pp_self"], [p])[:, 0, q]


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
            f"{label}: P={cfg.P}, kappa=({cfg.kappa_c}, {cfg.kappa_s}), Delta={cfg.delta:.2f}, "
            f"gamma={cfg.mask_ratio}",
            fontsize=9,
        )
        ax.set_ylabel("FP correlation")
        ax.legend(fontsize=7)
        ax = axes[1, col]
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
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)


def attention_maps(attn: np.ndarray, cfg, queries: list[int], path, title: str = "") -> None:
    """Attention rows of the given queries drawn on the sqrt(P) x sqrt(P) grid, query marked, area
    outlines beside."""
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
    if title:
        fig.suptitle(title, fontsize=10)
    save(fig, path)
