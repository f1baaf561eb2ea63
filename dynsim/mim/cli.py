"""The MIM commands: `compare mim`, `check-theorems mim`, `derive mim` (the options of `compare` and
`derive`, and the syntax MIM's fields need, are in `dynsim.mim.arguments`)."""

from __future__ import annotations

import os

import full.mim
import reduced.mim
from dynsim.checker import compare
from dynsim.claims import parse_only
from dynsim.cli import flow, options, output
from reduced.mim.symbolic import render

from . import plotting, records, theorems

# check-theorems mim judges the Delta > 0 theorems on a ladder of P at the parameters of
# docs/derivations/mim-model.md §10d (docs/mim.md §6)
CHECK_DEFAULTS = dict(kappa_c=0.9, kappa_s=0.4, mask_ratio=0.5, steps=1000)
CHECK_WHY = (
    "the theorems are judged at Delta = +0.4 (kappa = 0.9, 0.4; "
    "docs/derivations/mim-model.md §10d), gamma = 0.5, and steps counts the GD steps of "
    "the reference problem (P = 1024, gamma = 0.5, eta = 1, K = 1): every run takes "
    "ceil(steps (P/1024)^(1 - kappa_s) (0.5/gamma) (1/eta) K), the phases' time scale "
    "K P^(1 - kappa_s) / (gamma eta z^3) with z = 1 (docs/mim.md §6); every rung has K "
    "clusters, areas from --partition (the random areas of cluster k drawn from --seed "
    "and k)"
)
CHECK_SETS = {
    "P": "the ladder: --quick or not",
    "z": "z = 1: the claims' per-query loss is z^2/2 [...]",
    "record_every": "about 100 records per run",
    "d": "the reduced level has no embedding",
    "partitions": "the areas come from --partition",
    "N": "the reduced level's loss is the population loss",
    "dtype": "float64",
}


def check_arguments(parser, setting) -> None:
    """Options of `check-theorems mim`: the MIMConfig fields the claims take, the ladder, eps and
    the output."""
    options.config_options(parser, setting, CHECK_DEFAULTS, CHECK_WHY, exclude=CHECK_SETS)
    g = parser.add_argument_group("the P ladder (reduced level, mean_field: B free)")
    g.add_argument(
        "--quick",
        action="store_true",
        help=f"CI-sized ladder P = {', '.join(map(str, theorems.ladder.QUICK_LADDER))} "
        f"instead of P = {', '.join(map(str, theorems.ladder.LADDER))}: three rungs "
        "leave a trend 1 degree of freedom, too few to resolve Sec. 5.4 PP small's "
        "slope (at the defaults it fails there and holds on the default ladder; "
        "the claim says so)",
    )
    options.only_option(g, theorems.CLAIMS)
    g.add_argument(
        "--eps",
        type=float,
        default=theorems.EPS,
        help=f"Theorem 4.1's eps: loss gap <= eps, attention >= 1 - sqrt(2 eps); below "
        f"{theorems.EPS} every run is lengthened by {theorems.EPS}/eps (T* grows like "
        f"1/eps) (default: {theorems.EPS})",
    )
    g = parser.add_argument_group("output")
    g.add_argument(
        "--json",
        action="store_true",
        help='print {"config": {...}, "claims": [...], "measurements": [...]} as JSON instead '
        "of the table",
    )
    options.out_options(g)


def claims(cfg, log=lambda s: None) -> list:
    """The MIM claims (`theorems.check_theorems`, quick ladder) at cfg's steps, eta, mask ratio,
    clusters and partition."""
    base = theorems.base_config(
        steps=cfg.steps,
        eta=cfg.eta,
        mask_ratio=cfg.mask_ratio,
        K=cfg.K,
        partition=cfg.partition,
        seed=cfg.seed,
    )
    return theorems.check_theorems(quick=True, base=base, log=log)


def derive(cfg, latex: bool = False) -> str:
    """The sympy per-query loss (own-area and other-area views) and its partial derivatives (any
    P)."""
    return render(latex=latex)


def run_derive(args) -> int:
    """`dynsim derive mim`: the sympy per-query loss in its two views and its partial
    derivatives."""
    print(render(latex=args.latex))
    return options.EXIT_AGREE


def approx_option(value):
    """--approximation none is the exact reduction (None)."""
    return None if value in (None, "none") else value


def run_compare(args) -> int:
    """`dynsim compare mim`: reduced (exact or a named approximation) vs full (exact or sampled)."""
    cfg = options.config(args)
    if args.mode == "exact":
        output.warn_unread(
            args,
            {
                "N": "--mode exact takes every cluster, latent vector and mask (N is --mode "
                "sampled's batch)"
            },
        )
    approx = approx_option(args.approximation)
    mc = {} if args.samples is None else {"samples": args.samples, "replicates": args.replicates}
    reduced.mim.check(cfg, approx, method=args.method, **mc)  # fail before any work
    # --replicates also counts the reduced Monte Carlo draws: with --samples it is not an error in
    #   --mode exact
    full_reps = None if args.mode == "exact" and args.samples is not None else args.replicates
    full.mim.check(cfg, args.mode, full_reps)
    output.check_confidence(args.confidence)
    if not args.approximation_tolerance > 0:
        raise ValueError(
            f"--approximation-tolerance = {args.approximation_tolerance} is invalid: must be > 0"
        )
    reduced_run = flow.reduced_flow_or_gd(
        args, cfg, reduced.mim.simulate, approximation=approx, **mc
    )
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    label = reduced.mim.label(reduced.mim.approximations(approx))
    if args.samples is not None:
        label = f"Monte Carlo, {args.samples} count vectors per query, {red_draws(args)} draws"
    sizes = [[len(a) for a in cl] for cl in cfg.areas]
    output.log(
        f"MIM: P={cfg.P}, K={cfg.K}, areas {sizes}, |M|={cfg.masked}, Delta={cfg.delta:.3f}, "
        f"d={cfg.d}, {cfg.dtype}"
    )
    red = output.run_logged("reduced", cfg.steps, reduced_run, timings, "reduced_seconds")
    # per patch, as the full run holds them, whatever the expansion budget
    red = records.with_per_patch(red, cfg)
    output.log(f"full: {args.mode} gradient descent on the {cfg.d}x{cfg.d} matrix Q ...")
    ful = output.run_logged(
        "full",
        cfg.steps,
        lambda: full.mim.simulate(cfg, mode=args.mode, replicates=full_reps),
        timings,
        "full_seconds",
    )
    report = compare(
        red, ful, confidence=args.confidence, approximation_tolerance=args.approximation_tolerance
    )
    out = {
        **report.to_dict(),
        "delta": cfg.delta,
        "area_sizes": sizes,
        "reduced_approximation": label,
        "timings": timings,
        "reduced_meta": red.meta,
        "full_meta": ful.meta,
    }
    kappas = cfg.effective_kappas
    return output.emit_compare(
        args,
        report,
        out,
        {"reduced": red, "full": ful},
        lambda path: plotting.compare_plot(
            {"reduced": red, "full": ful},
            cfg,
            path,
            title=f"MIM P={cfg.P} K={cfg.K} areas {sizes[0]} gamma={cfg.mask_ratio} "
            f"eta={cfg.eta} Delta={cfg.delta:.2f} ({cfg.dtype}, "
            f"{red.meta['device']})",
        ),
        [
            f"information gap Delta = {cfg.delta:.3f} (effective kappas {kappas[0]:.3f}, "
            f"{kappas[1]:.3f}); reduced level: {label}"
            + ("" if args.method == "gd" else ", gradient flow (O(eta) from GD)")
        ],
    )


def red_draws(args) -> int:
    """The reduced level's independent Monte Carlo draws: --replicates, default 4
    (`reduced.mim.simulate`)."""
    return 4 if args.replicates is None else args.replicates


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
        out.append(base.replace(kappa_c=kc, kappa_s=ks))
    return tuple(out)


def check_clusters(values: dict) -> None:
    """--K: an integer >= 1 (the config would name its field, not the option)."""
    K = values["K"]
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise ValueError(
            f"--K = {K!r} is invalid: must be an integer >= 1 (the number of clusters)"
        )


def run_check(args) -> int:
    """`dynsim check-theorems mim`: the claims on the P ladder (docs/mim.md §6)."""
    if not 0.0 < args.eps < 1.0:
        raise ValueError(f"--eps = {args.eps} is invalid: must lie strictly between 0 and 1")
    check_clusters(options.values(args))
    cfg = options.config(args)
    if cfg.steps < 1:
        raise ValueError(f"--steps = {cfg.steps} is invalid: must be >= 1")
    if cfg.partition == "grid":
        output.warn_unread(
            args, {"seed": "grid areas draw nothing (--seed sets the areas of --partition random)"}
        )
    base = theorems.base_config(
        steps=cfg.steps,
        eta=cfg.eta,
        mask_ratio=cfg.mask_ratio,
        kappa_c=cfg.kappa_c,
        kappa_s=cfg.kappa_s,
        K=cfg.K,
        partition=cfg.partition,
        seed=cfg.seed,
    )  # validates eta, gamma, the kappas and K
    only = parse_only(args.only, theorems.CLAIMS)
    sizes = theorems.sizes(args.quick)
    runs = theorems.run_configs(base, sizes, theorems.ladder.steps_for(cfg.steps, args.eps))
    # a Delta <= 0 base is judged too: the Delta > 0 statements are then "not applicable" (their
    # premise)
    config = {
        "quick": args.quick,
        "eps": args.eps,
        "ladder": list(sizes),
        "dynamics": theorems.ladder.JUDGED,
        "K": base.K,
        "partition": base.partition,
        "seed": base.seed if base.partition == "random" else None,
        "runs": {str(P): c.to_dict() for P, c in runs["runs"].items()},
        "only": sorted(only) if only else None,
    }
    if only is None:
        config.update(
            negative_delta=runs["negative_delta"].to_dict(), diversity=runs["diversity"].to_dict()
        )

    def evaluate(log):
        return theorems.check_theorems(
            base=base, quick=args.quick, eps=args.eps, log=log, only=only
        )

    return output.run_claims(args, theorems.runs(args.quick, only), evaluate, config, unit="runs")
