"""The MIM figures, `figure mim-phases` (two phases against one) and `figure mim-attention` (maps,
diversity): their options, descriptions and recipes, the checks on parsed values (run by the
command line before the estimate and the work) and the runs, which load the levels, the plots and
the outputs when they start."""

from __future__ import annotations

import math
import os

import numpy as np

import full.mim
import reduced.mim
from dynsim.cli import options
from dynsim.mim.latents import FIGURE
from dynsim.trajectory import atomic_savez, many_to_arrays, save_many
from full.mim import spec as full_spec
from reduced.mim import spec as reduced_spec

from . import phases
from .partition import query_patches

# mim-phases: the suggested settings of docs/derivations/mim-model.md §10d: Delta = +0.4 and Delta =
# -0.2.
PHASES_DEFAULTS = dict(P=1024, mask_ratio=0.5, eta=1.0, steps=3000, record_every=5)
ATTENTION_DEFAULTS = dict(steps=1000, record_every=50)
# Not read, so not listed: mim-phases takes its two runs' kappas from --kappa-pos/--kappa-neg (not
# --kappa-c/-s) and runs the reduced level only (no embedding dimension d, no samples N);
# mim-attention trains on the exact population loss (no samples N).
PHASES_UNREAD = {
    "kappa_c": "the two runs take --kappa-pos and --kappa-neg",
    "kappa_s": "the same",
    "d": "the reduced level has no embedding",
    "N": "the reduced level's loss is the population loss",
}
ATTENTION_UNREAD = {"N": "the model trains on the exact population loss"}
PHASES_DESCRIPTION = (
    "Reduced MIM dynamics (default approximation: mean_field, which keeps the PP correlations) at "
    "kappa = (0.9, 0.4) (Delta = +0.4) and (0.6, 0.4) (Delta = -0.2), side by side on a log-time "
    "axis: FP correlations of a local query (target, global, another local area) and of a global "
    "query, the predicted switch level -(Delta/2) log P, and the PP correlations. Writes "
    "mim-phases.png, mim-phases.npz (the plotted, log-spaced records), mim-phases.json."
)
ATTENTION_DESCRIPTION = (
    "Train the full MIM model (exact population GD), draw the attention of a local and a global "
    "query on the patch grid, and rank the trained attention by the attention diversity of "
    "Section 6 (top-k) and the average attention distance against the reference maps of "
    "check-theorems mim's diversity measurement (Theorem 4.1's ideal, a collapse, random logits) "
    "and against uniform and collapsed attention. Writes mim-attention.png and "
    "mim-attention.json."
)


def phases_arguments(parser, setting) -> None:
    """Options of `figure mim-phases`: every MIMConfig field it reads, the two runs' kappas, the
    approximation, --out."""
    options.config_options(
        parser,
        setting,
        PHASES_DEFAULTS,
        "the two phases need a large P (1024) and a long log-time horizon",
        PHASES_UNREAD,
        check=check_phases,
    )
    g = parser.add_argument_group("run")
    g.add_argument(
        "--kappa-pos",
        default="0.9,0.4",
        metavar="KC,KS",
        help="kappas of the Delta > 0 run (default: 0.9,0.4)",
    )
    g.add_argument(
        "--kappa-neg",
        default="0.6,0.4",
        metavar="KC,KS",
        help="kappas of the Delta < 0 run (default: 0.6,0.4)",
    )
    g.add_argument(
        "--approximation",
        choices=reduced_spec.APPROX_CHOICES,
        default="mean_field",
        help="reduced approximation (default: mean_field; none is exact but only feasible for "
        "small P)",
    )
    options.out_options(g)


def attention_arguments(parser, setting) -> None:
    """Options of `figure mim-attention`: every MIMConfig field it reads, top-k, --out."""
    options.config_options(
        parser,
        setting,
        ATTENTION_DEFAULTS,
        "the attention maps are drawn after training to convergence",
        ATTENTION_UNREAD,
        check=check_attention,
    )
    g = parser.add_argument_group("run")
    g.add_argument(
        "--top-k",
        type=int,
        default=None,
        help="k of the diversity metric (default: min(10, P // 4))",
    )
    options.out_options(g)


def signed_configs(base, args) -> tuple:
    """`base` with the kappas of --kappa-pos and of --kappa-neg (each "KC,KS"): the Delta > 0 and
    Delta < 0 configs."""
    out = []
    for option, text in (("--kappa-pos", args.kappa_pos), ("--kappa-neg", args.kappa_neg)):
        try:
            kc, ks = (float(x) for x in text.split(","))
        except ValueError:
            raise ValueError(
                f"{option} = {text!r} is invalid: expected two numbers KC,KS, e.g. 0.9,0.4"
            ) from None
        try:
            out.append(base.replace(kappa_c=kc, kappa_s=ks))
        except ValueError as exc:  # the config names its field; the user gave this option
            raise ValueError(f"{option} = {text!r} is invalid: {exc}") from None
    return tuple(out)


def check_phases(cfg, args) -> None:
    """`figure mim-phases` runs the kappas of --kappa-pos and --kappa-neg: no explicit areas, both
    kappa pairs valid for the config, and the reduced level's options (`reduced_spec.check_reduced`;
    the exact joint-type size, K > 1 with --approximation none, is checked by the run:
    `check_phases_size`)."""
    if cfg.partitions is not None:
        raise ValueError(
            "--partitions is invalid for figure mim-phases: explicit areas override the "
            "kappas, so both runs would be the same; give the kappas with --kappa-pos and "
            "--kappa-neg"
        )
    for signed in signed_configs(cfg, args):
        reduced_spec.check_reduced(
            signed, reduced_spec.approx_option(args.approximation), caller=FIGURE
        )


def check_phases_size(cfgs, approximation) -> None:
    """`figure mim-phases`'s exact joint-type size (K > 1 with --approximation none), in the
    figure's flags (no --samples), checked by the run: the joint types of a large P take long to
    build."""
    approx = reduced_spec.approximations(reduced_spec.approx_option(approximation), FIGURE)
    for cfg in cfgs:
        reduced_spec.joint_size(cfg, approx, caller=FIGURE)


def top_k(cfg, args) -> int:
    """k of the diversity metric: --top-k, else min(10, P // 4) (at least 1)."""
    return args.top_k if args.top_k is not None else max(1, min(10, cfg.P // 4))


def check_attention(cfg, args) -> None:
    """`figure mim-attention`: --top-k in [1, P], and the full level's mode exact fits
    (`full_spec.check_full`)."""
    k = top_k(cfg, args)
    if not 1 <= k <= cfg.P:
        raise ValueError(f"--top-k = {k} is invalid: must lie in [1, P] = [1, {cfg.P}]")
    full_spec.check_full(cfg, "exact", caller=FIGURE)


# mim-phases.npz keeps the records a log-time axis needs (trajectory.log_spaced): at most PER_DECADE
# per decade of steps, which draws the same curves (3000 steps: about 80 of 601 records) at a size
# set by the decades.
PER_DECADE = 40
# Random-logit maps averaged in mim-attention's table (each draw's diversity varies: the mean of
# this many draws is what the table and the title show)
RANDOM_DRAWS = 100


def run_phases(args) -> int:
    """`dynsim figure mim-phases`: FP and PP trajectories at Delta > 0 and Delta < 0 on a log-time
    axis."""
    from dynsim.cli import output

    from . import plotting

    # checks --partitions, the kappas and the reduced level's options (`check_phases`)
    base = options.config(args)
    approx = reduced_spec.approx_option(args.approximation)
    cfgs = dict(zip(("Delta > 0", "Delta < 0"), signed_configs(base, args)))
    check_phases_size(cfgs.values(), args.approximation)  # K > 1, --approximation none
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    runs, summary, switches = {}, {}, {}
    for label, cfg in cfgs.items():
        output.log(
            f"{label}: P={cfg.P}, kappa=({cfg.kappa_c}, {cfg.kappa_s}), Delta={cfg.delta:.3f}, "
            f"{cfg.steps} steps ..."
        )
        t = output.run_logged(
            label,
            cfg.steps,
            lambda cfg=cfg: reduced.mim.simulate(cfg, approximation=approx),
            timings,
            label,
        )
        # the figure draws, and the npz keeps, the log-spaced records
        runs[label] = (cfg, t.thinned(PER_DECADE))
        q = query_patches(cfg)
        local, glob = (
            phases.classify(t, q["local"], 0, cfg=cfg),
            phases.classify(t, q["global"], 0, cfg=cfg),
        )
        ratio = phases.initial_rate_ratio(t, q["local"], 0, cfg=cfg)
        summary[label] = {
            "delta": cfg.delta,
            "local_query": local.to_dict(),
            "global_query": glob.to_dict(),
            "initial_rate_ratio": {
                "measured": ratio.measured,
                "predicted": ratio.predicted,
                "interval": [0, int(t.steps[1]) if t.steps.size > 1 else 0],
            },
        }
        switches[label] = local.switch.step if local.switch is not None else None
    # one set: mim-phases.json, moved last, records the others' digests
    with output.Staged(args.out) as stage:
        plotting.phases_plot(
            runs,
            stage.path("mim-phases.png"),
            switches,
            title=f"{plotting.PAPER}, reduced dynamics "
            f"({reduced.mim.label(reduced.mim.approximations(approx))}): "
            f"{plotting.parameters(base, ('mask_ratio', 'eta'), gap=False)}",
        )
        save_many(
            stage.path("mim-phases.npz"),
            {("pos" if ">" in k else "neg"): t for k, (_, t) in runs.items()},
            compressed=True,
        )
        stage.commit(
            "mim-phases.json",
            {
                "summary": summary,
                "timings": timings,
                "configs": {k: c.to_dict() for k, c in cfgs.items()},
                "invocation": output.invocation(args),
            },
        )
    for label, info in summary.items():
        loc, glo, r = info["local_query"], info["global_query"], info["initial_rate_ratio"]
        print(
            f"{label} (Delta = {info['delta']:.3f}): local query {loc['p']}: {loc['label']} "
            f"({loc['reason']}); |dA_global|/dA_target over steps "
            f"{r['interval'][0]}-{r['interval'][1]} = {r['measured']:.3g} (leading order (1 - "
            f"gamma) P^Delta = {r['predicted']:.3g})"
        )
        if loc["switch"] is not None:
            sw = loc["switch"]
            print(
                f"  switch at step {sw['step']}: A_global = {sw['A_global']:.3f} against "
                f"-(Delta/2) log P = {sw['predicted']:.3f}"
            )
        print(f"  global query {glo['p']}: {glo['label']} ({glo['reason']})")
    print(output.wrote(args.out, ["mim-phases.png", "mim-phases.npz", "mim-phases.json"]))
    return options.EXIT_AGREE


def run_attention(args) -> int:
    """`dynsim figure mim-attention`: attention maps of the trained full model and its attention
    diversity."""
    from dynsim.cli import output

    from . import plotting

    cfg = options.config(args)  # checks --top-k and that mode exact fits (`check_attention`)
    side = math.isqrt(cfg.P)
    grid = (side, side) if side * side == cfg.P else (1, cfg.P)
    k = top_k(cfg, args)  # in [1, P]: checked by options.config (`check_attention`)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    t = output.run_logged(
        "full", cfg.steps, lambda: full.mim.simulate(cfg, mode="exact"), timings, "seconds"
    )
    attn, table = attention_table(cfg, t, grid, k)
    q = query_patches(cfg)
    # one set: mim-attention.json, moved last, records the others' digests
    with output.Staged(args.out) as stage:
        plotting.attention_maps(
            attn[0],
            cfg,
            [q["local"], q["global"]],
            stage.path("mim-attention.png"),
            title=attention_title(cfg, table, k),
            meta=t.meta,
        )
        atomic_savez(
            stage.path("mim-attention.npz"),
            {
                "attention": attn,
                "queries": np.array([q["local"], q["global"]]),
                "final_Q": t.final["Q"],
                **many_to_arrays({"full": t}),
            },
            compressed=True,
        )
        stage.commit(
            "mim-attention.json",
            {
                "top_k": k,
                "grid": grid,
                "metrics": table,
                "timings": timings,
                "meta": t.meta,
                "invocation": output.invocation(args),
            },
        )
    print(f"{'attention':<24} {'diversity (top-' + str(k) + ')':>18} {'avg distance':>14}")
    for name, v in table.items():
        print(
            f"{name:<24} {np.mean(v['diversity']):>18.4f} {np.mean(v['average_distance']):>14.4f}"
        )
    print(output.wrote(args.out, ["mim-attention.png", "mim-attention.npz", "mim-attention.json"]))
    return options.EXIT_AGREE


def attention_title(cfg, table: dict, k: int) -> str:
    """The figure's title: what is drawn, and the top-k diversity (ties to the lowest index) of the
    trained attention beside the reference maps that check-theorems mim's measurement of Section 6
    uses (`dynsim.mim.diversity.MAPS`)."""
    from . import diversity, plotting

    values = {name: np.mean(table[name]["diversity"]) for name in diversity.MAPS[1:]}
    return (
        f"{plotting.PAPER}: trained attention (full level, {cfg.steps} steps) on an unmasked image "
        f"of cluster 1, {plotting.parameters(cfg, ('P', 'mask_ratio', 'eta'))}\n"
        f"Section 6 diversity (top-{k}): trained "
        f"{table['trained (per cluster)']['diversity'][0]:.3g}; the references of check-theorems "
        f"mim: {values['Thm 4.1 ideal']:.3g} (Thm 4.1 ideal), {values['collapse']:.3g} "
        f"(collapse), {values['random logits']:.3g} (random logits, mean of {RANDOM_DRAWS})"
    )


def attention_table(cfg, t, grid: tuple[int, int], k: int) -> tuple[np.ndarray, dict]:
    """The attention maps (K, P, P) of a full run's trained Q (`t` fresh or loaded from its file)
    and the diversity (top-k) and average distance on `grid` of them, of the reference maps of
    `dynsim.mim.diversity` on the same unmasked images (Theorem 4.1's ideal per cluster, a collapse,
    RANDOM_DRAWS random-logit maps; seeded by cfg.seed), of uniform and of collapsed attention."""
    from dynsim import metrics

    from . import diversity

    Q, basis = full.mim.trained(t)
    attn = np.asarray(full.mim.attention_maps(cfg, Q[0], basis))
    rng = np.random.default_rng(cfg.seed)
    unmasked = np.ones(cfg.P)
    logits = rng.standard_normal((RANDOM_DRAWS, cfg.P, cfg.P))
    uniform = np.full((1, cfg.P, cfg.P), 1.0 / cfg.P)
    collapsed = np.zeros((1, cfg.P, cfg.P))
    collapsed[0, :, :k] = 1.0 / k  # every query on the same k patches
    rows = {
        "trained (per cluster)": attn,
        "Thm 4.1 ideal": np.stack([diversity.ideal(cfg, unmasked, c) for c in range(cfg.K)]),
        "collapse": diversity.collapse(cfg.P, rng)[None],
        "random logits": np.exp(logits) / np.exp(logits).sum(axis=-1, keepdims=True),
        "uniform": uniform,
        "collapsed": collapsed,
    }
    return attn, {
        name: {
            "diversity": metrics.attention_diversity(a, grid, k=k).tolist(),
            "average_distance": metrics.average_attention_distance(a, grid).tolist(),
        }
        for name, a in rows.items()
    }
