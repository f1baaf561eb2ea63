"""The JSL commands: `compare jsl` (exact, sampled or realistic, with event times and reference
lines; its options are in `dynsim.jsl.arguments`), `check-theorems jsl` and `derive jsl`."""

from __future__ import annotations

import os

import full.jsl
import reduced.jsl
from dynsim.checker import compare
from dynsim.claims import parse_only
from dynsim.store import Store
from dynsim.sweeps import executors
from dynsim.cli import flow, options, output
from reduced.jsl.symbolic import render

from . import (
    approach,
    claims_idealized,
    events,
    ladder,
    plotting,
    realistic_plan,
    reference,
    theorems,
)
from .config import MAX_P
from .resources import MAX_DERIVE_C

# in the theorems' regime: sign-of-count error 0.161 against y, 0.204 against f*, q(D -
# C) = C^2; eta 0.005 (at D = 36 and unit temperature GD diverges at 0.02 and oscillates at 0.01); T
# = 2e8 steps, i.e. t = eta T = 1e6: the idealized claims run the gradient flow to that time
# (seconds), the GD runs cap their steps (docs/jsl.md 12); nu = 1e-4 puts alpha0 = nu^(1/(p-1)) =
# 0.01 below the Event-I plateau (0.073 at D = 36), the premise of Lemma 4.3: at the config's nu =
# 0.01, alpha0 = 0.1 lies above it and alpha only falls (no Event I)
CHECK_DEFAULTS = dict(
    D=36,
    C=4,
    q=0.5,
    nu=1e-4,
    eta=0.005,
    temperature="unit",
    steps=200_000_000,
    record_every=100,
    N=4000,
    n_test=8192,
)

CHECK_WHY = (
    "the theorems are judged in their regime, q(D - C) = C^2 at D = 36, nu small enough for "
    "Event I (alpha0 below its plateau), to t = eta T = 1e6 (docs/jsl.md 12), not at the small "
    "problem `compare jsl` runs in seconds"
)


# config fields a mode of the full level does not read (the reduced level reads none of them)
UNREAD = {
    "exact": {
        "N": "--mode exact enumerates the population (N is --mode sampled's batch and --mode "
        "realistic's training set)",
        "omega": "--mode realistic's random start only",
        "n_test": "--mode realistic's test set only",
    },
    "sampled": {
        "omega": "--mode realistic's random start only",
        "n_test": "--mode realistic's test set only",
    },
    "realistic": {},
}


def check_arguments(parser, setting) -> None:
    """Options of `check-theorems jsl`: every JSLConfig field (the claims' defaults), seeds, --json,
    --out."""
    options.config_options(parser, setting, CHECK_DEFAULTS, CHECK_WHY)
    g = parser.add_argument_group("run")
    options.seeds_option(
        g, 4, "the realistic runs and the GLM of each judged point, averaged or counted per claim"
    )
    g.add_argument(
        "--quick",
        action="store_true",
        help=f"CI-sized: Theorem 4.1's ladder D = {', '.join(map(str, ladder.QUICK_LADDER))} "
        f"instead of {', '.join(map(str, ladder.LADDER))}, a smaller GLM training set",
    )
    g.add_argument(
        "--sizes",
        type=options.int_list,
        default=None,
        metavar="D1,D2,D3,...",
        help="Theorem 4.1's ladder of D, at least 3 sizes, each with q(D - C) = the judged "
        "point's (default: "
        f"{','.join(map(str, ladder.LADDER))}; at most D = {ladder.MAX_FLOW_D}, the exact "
        f"class sum)",
    )
    g.add_argument(
        "--realistic-sizes",
        default=None,
        metavar="KEY=VALUE,...",
        help="the realistic runs' problem and ladder (Lemma 4.2, Theorems 4.2, 5.1), "
        "any of D, C, q, eta, T (GD steps, capped by --steps) and N (the ladder, "
        "joined by ':'); e.g. "
        "D=10,C=2,q=0.5,eta=0.015,T=60000,N=1000:4000:16000 (default: "
        + realistic_plan.describe_sizes(realistic_plan.FULL)
        + ")",
    )
    options.only_option(g, theorems.CLAIMS)
    g.add_argument(
        "--json",
        action="store_true",
        help='print {"config": {...}, "claims": [...], "measurements": [...]} instead of the table',
    )
    options.out_options(
        g,
        "output directory; each seed of the realistic runs is stored in "
        "DIR/points as it finishes, so the same command run again reads back "
        "every seed an interruption left finished",
    )
    options.cluster_options(
        parser.add_argument_group("where the realistic seeds run"),
        "the realistic seeds",
        "in this process, one by one",
    )


def derive_arguments(parser, setting) -> None:
    """Options of `derive jsl`: C, p and --latex (D, beta, tau, nu stay symbols)."""
    parser.add_argument(
        "--C",
        type=int,
        default=3,
        help=f"patches per set, 2 <= C <= {MAX_DERIVE_C}: sympy's time grows with the "
        f"(C+1)(C+2)/2 set "
        "types (default: 3)",
    )
    parser.add_argument(
        "--p", type=int, default=3, help=f"activation degree, odd, 3 <= p <= {MAX_P} (default: 3)"
    )
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")


def derive(cfg, latex: bool = False) -> str:
    """The sympy per-configuration reduced loss at cfg's (C, p) and its derivatives in alpha, gamma,
    rho."""
    return render(cfg.C, cfg.p, latex=latex)


def run_compare(args) -> int:
    """`dynsim compare jsl`: reduced vs full (exact or sampled), or vs realistic over an N
    ladder."""
    cfg = options.config(args)
    output.warn_unread(args, UNREAD[args.mode])
    if args.mode == "realistic":
        if args.method != "gd" or args.t_max is not None:
            raise ValueError(
                f"--method {args.method} / --t-max are for --mode exact or sampled, not --mode "
                f"realistic"
            )
        return compare_realistic(cfg, args)
    if args.seeds is not None or args.ladder is not None:
        raise ValueError(f"--seeds and --ladder are for --mode realistic, not --mode {args.mode}")
    full.jsl.check(cfg, args.mode, args.replicates)  # fail before any work
    output.check_confidence(args.confidence)
    reduced_run = flow.reduced_flow_or_gd(args, cfg, reduced.jsl.simulate)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    what = (
        "population dynamics"
        if args.method == "gd"
        else "gradient flow (the eta -> 0 limit; O(eta) from GD)"
    )
    output.log(f"reduced: {what}, {cfg.steps} steps (D={cfg.D}, C={cfg.C}, {cfg.dtype}) ...")
    red = output.run_logged("reduced", cfg.steps, reduced_run, timings, "reduced_seconds")
    output.log(
        f"full: {args.mode} gradient descent on the {cfg.D}x{cfg.D} matrix A and v in R^{cfg.d} ..."
    )
    ful = output.run_logged(
        "full",
        cfg.steps,
        lambda: full.jsl.simulate(cfg, mode=args.mode, replicates=args.replicates),
        timings,
        "full_seconds",
    )
    report = compare(red, ful, confidence=args.confidence)
    ev, ev_table = events_section(red, ful)
    lines = reference.lines(cfg)
    out = {
        **report.to_dict(),
        "events": ev,
        "reference_lines": lines,
        "timings": timings,
        "reduced_meta": red.meta,
        "full_meta": ful.meta,
    }
    return output.emit_compare(
        args,
        report,
        out,
        {"reduced": red, "full": ful},
        lambda path: plotting.compare_plot(
            {"reduced": red, "full": ful},
            path,
            title=f"JSL D={cfg.D} C={cfg.C} q={cfg.q} p={cfg.p} "
            f"temperature={cfg.temperature} eta={cfg.eta} ({cfg.dtype}, "
            f"{red.meta['device']})",
        ),
        [
            ev_table,
            "reference lines (exact): " + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items()),
        ],
    )


def compare_realistic(cfg, args) -> int:
    """`compare jsl --mode realistic`: realistic (E) over a ladder of N against reduced runs from
    each seed's start."""
    if args.replicates is not None:
        raise ValueError("--replicates is for --mode sampled; --mode realistic takes --seeds")
    seeds = 8 if args.seeds is None else args.seeds
    full.jsl.check(cfg, "realistic", seeds=seeds)
    if seeds < 2:
        raise ValueError(
            f"--seeds = {seeds} is invalid in compare: the standard error needs at least 2 seeds"
        )
    output.check_confidence(args.confidence)
    ladder = sorted(set(args.ladder)) if args.ladder else approach.ladder(cfg.N)
    for n in ladder:
        cfg.replace(N=n)  # validates every size before any work
    if cfg.N not in ladder:
        ladder = sorted(set(ladder) | {cfg.N})
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    runs: dict = {}
    output.log(
        f"realistic (E) at N = {', '.join(map(str, ladder))}, {seeds} seeds each, and reduced "
        f"(P) from each seed's projected start ..."
    )
    # one bar per N of the ladder: each run reports its own step count
    result = output.run_logged(
        "realistic",
        cfg.steps,
        lambda: approach.approach(cfg, ladder, seeds, args.confidence, runs),
        timings,
        "seconds",
    )
    red, ful = runs[cfg.N]
    report = result.reports[ladder.index(cfg.N)]
    ev, ev_table = events_section(red, ful)
    lines = reference.lines(cfg)
    out = {
        **report.to_dict(),
        "approach": result.to_dict(),
        "events": ev,
        "reference_lines": lines,
        "timings": timings,
        "reduced_meta": red.meta,
        "full_meta": ful.meta,
    }
    trajectories = {
        **{f"reduced_N{n}": r for n, (r, _) in runs.items()},
        **{f"full_N{n}": f for n, (_, f) in runs.items()},
    }
    return output.emit_compare(
        args,
        report,
        out,
        trajectories,
        lambda path: plotting.compare_plot(
            {"reduced": red, "realistic": ful},
            path,
            title=f"JSL realistic N={cfg.N} ({seeds} seeds) vs reduced, D={cfg.D} "
            f"C={cfg.C} q={cfg.q} temperature={cfg.temperature} eta={cfg.eta}",
        ),
        [
            result.table(),
            ev_table,
            "reference lines (exact): " + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items()),
            f"realistic at T: test error {ful['test_error'][-1]:.4f}, cos(w*, v) "
            f"{ful['cos_v'][-1]:.4f}, patch association {ful['patch_association'][-1]:.3f}",
        ],
    )


def events_section(red, ful) -> tuple[dict, str]:
    """The event times of both levels and their difference, as data and as a table."""
    ev = events.compare_events(red, ful)
    return ev, events.table(ev)


def run_check(args) -> int:
    """`dynsim check-theorems jsl`: the claims of `theorems.check_theorems` as a table or JSON."""
    cfg = options.config(args)
    full.jsl.check(cfg, "realistic", seeds=args.seeds)
    sizes = claims_idealized.ladder_sizes(args.quick, args.sizes)
    if cfg.steps < 1:
        raise ValueError(
            f"--steps = {cfg.steps} is invalid for check-theorems: must be >= 1 (the idealized "
            f"runs are "
            "the gradient flow to t = eta * steps)"
        )
    # the judged D and each size valid, before any run
    claims_idealized.ladder_configs(cfg, args.quick, args.sizes)
    plan = realistic_plan.plan_for(args.quick, args.realistic_sizes)
    realistic_plan.realistic_config(cfg, plan)  # valid with the judged point's q, before any run
    only = parse_only(args.only, theorems.CLAIMS)
    executors.check(args.scheduler, args.workers, args.security)
    executor = {"scheduler": args.scheduler, "workers": args.workers, "security": args.security}
    config = {
        **cfg.to_dict(),
        "quick": args.quick,
        "seeds": args.seeds,
        "ladder": list(sizes),
        "only": sorted(only) if only else None,
        "realistic": realistic_plan.realistic_config(cfg, plan).to_dict()
        | {"n_ladder": list(plan.n_ladder)},
    }
    total = theorems.runs(
        cfg, quick=args.quick, seeds=args.seeds, sizes=sizes, only=only, plan=plan
    )
    return output.run_claims(
        args,
        total,
        lambda log: theorems.check_theorems(
            cfg,
            quick=args.quick,
            seeds=args.seeds,
            log=log,
            sizes=sizes,
            only=only,
            store=Store(args.out),
            executor=executor,
            plan=plan,
        ),
        config,
        unit="runs",
    )


def run_derive(args) -> int:
    """`dynsim derive jsl`: the sympy per-configuration loss and its derivatives."""
    if not 2 <= args.C <= MAX_DERIVE_C:
        raise ValueError(
            f"--C = {args.C} is invalid: must lie in [2, {MAX_DERIVE_C}] (sympy's time grows "
            f"with the "
            "(C+1)(C+2)/2 set types)"
        )
    if not 3 <= args.p <= MAX_P or args.p % 2 == 0:
        raise ValueError(
            f"--p = {args.p} is invalid: must be an odd integer in [3, {MAX_P}] (beyond it x^p "
            f"overflows "
            "float64 from |x| = 2 on)"
        )
    print(render(args.C, args.p, latex=args.latex))
    return options.EXIT_AGREE
