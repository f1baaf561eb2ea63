"""What JSL's levels, claims and derivation do beyond the core's verbs (`dynsim.jsl.setting`
declares them): the log lines, the event times and reference lines of every compare, the realistic
mode's joint runs over a ladder of N, the plan of `check-theorems jsl`, the sympy derivation."""

from __future__ import annotations

import full.jsl
from dynsim.claims import parse_only
from dynsim.cli import output
from dynsim.store import Store
from dynsim.sweeps import executors
from dynsim.verbs import Joint, Plan
from full.jsl import spec as full_spec
from reduced.jsl.symbolic import render

from . import (
    approach,
    claims_idealized,
    events,
    plotting,
    realistic_plan,
    reference,
    theorems,
)
from .config import MAX_DERIVE_C, MAX_P


def describe_reduced(cfg, opts: dict) -> str:
    """The line logged before the reduced run."""
    what = (
        "population dynamics"
        if opts["method"] == "gd"
        else "gradient flow (the eta -> 0 limit; O(eta) from GD)"
    )
    return f"reduced: {what}, {cfg.steps} steps (D={cfg.D}, C={cfg.C}, {cfg.dtype}) ..."


def describe_full(cfg, opts: dict) -> str:
    """The line logged before the full run."""
    return (
        f"full: {opts['mode']} gradient descent on the {cfg.D}x{cfg.D} matrix A and v in "
        f"R^{cfg.d} ..."
    )


def report(cfg, opts: dict, red, ful) -> tuple[dict, list]:
    """The event times of both levels and their differences, the exact reference lines and, in
    mode realistic, the realistic run's final test error, alignment and association."""
    ev = events.compare_events(red, ful)
    lines = reference.lines(cfg)
    printed = [
        events.table(ev, definitions=opts.get("explain", False)),
        "reference lines (exact): " + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items()),
    ]
    if opts["mode"] == "realistic":
        printed.append(
            f"realistic at T: test error {ful['test_error'][-1]:.4f}, cos(w*, v) "
            f"{ful['cos_v'][-1]:.4f}, patch association {ful['patch_association'][-1]:.3f}"
        )
    return {"events": ev, "reference_lines": lines}, printed


def plot(cfg, opts: dict, red, ful, path: str, report) -> None:
    """compare.png: every observable of both levels against steps, and their difference against the
    tolerance, titled with the problem."""
    if opts["mode"] == "realistic":
        plotting.compare_plot(
            {"reduced": red, "realistic": ful},
            path,
            title=f"{plotting.PAPER}: realistic (E), N={cfg.N}, {realistic_seeds(opts)} seeds, "
            f"vs reduced, {plotting.parameters(cfg)}",
            report=report,
        )
    else:  # the title from the runs' config, in the paper's symbols
        plotting.compare_plot({"reduced": red, "full": ful}, path, report=report)


def realistic_seeds(opts: dict) -> int:
    """--seeds of compare's mode realistic: `full_spec.DEFAULT_SEEDS` when left out."""
    return full_spec.DEFAULT_SEEDS if opts["seeds"] is None else opts["seeds"]


def compare_realistic(cfg, opts: dict, timings: dict) -> Joint:
    """Mode realistic: realistic (E) over a ladder of N, each seed's reduced run from its projected
    start (`approach.approach`); the pair compared is the one at cfg.N."""
    seeds = full_spec.validate_realistic(cfg, opts)
    output.check_confidence(opts["confidence"])
    sizes = sorted(set(opts["ladder"])) if opts["ladder"] else approach.ladder(cfg.N)
    for n in sizes:
        cfg.replace(N=n)  # validates every size before any work
    if cfg.N not in sizes:
        sizes = sorted(set(sizes) | {cfg.N})
    runs: dict = {}
    output.log(
        f"realistic (E) at N = {', '.join(map(str, sizes))}, {seeds} seeds each, and reduced "
        f"(P) from each seed's projected start ..."
    )
    # one bar per N of the ladder: each run reports its own step count
    result = output.run_logged(
        "realistic",
        cfg.steps,
        lambda: approach.approach(cfg, sizes, seeds, opts["confidence"], runs),
        timings,
        "seconds",
    )
    red, ful = runs[cfg.N]
    trajectories = {
        **{f"reduced_N{n}": r for n, (r, _) in runs.items()},
        **{f"full_N{n}": f for n, (_, f) in runs.items()},
    }
    return Joint(
        red,
        ful,
        result.reports[sizes.index(cfg.N)],
        trajectories,
        {"approach": result.to_dict()},
        [result.table()],
    )


def check_plan(cfg, opts: dict) -> Plan:
    """`check-theorems jsl`: every size, ladder and option validated before any run; the claims of
    `theorems.check_theorems` on the judged point."""
    quick = opts["quick"]
    plan = realistic_plan.plan_for(quick, opts["realistic_sizes"], opts.get("plan"))
    seeds = realistic_plan.seeds_for(plan, opts["seeds"])
    full.jsl.validate_run_options(cfg, "realistic", seeds=seeds)
    sizes = claims_idealized.ladder_sizes(quick, opts["sizes"])
    if cfg.steps < 1:
        raise ValueError(
            f"--steps = {cfg.steps} is invalid for check-theorems: must be >= 1 (the idealized "
            "runs are the gradient flow to t = eta * steps)"
        )
    only = parse_only(opts["only"], theorems.CLAIMS)
    # the judged D and each size the asked claims read valid, before any run
    claims_idealized.ladder_configs(cfg, quick, opts["sizes"], only)
    realistic = realistic_plan.realistic_config(cfg, plan)  # valid with the judged point's q
    executors.validate_executor(
        opts["scheduler"],
        opts["workers"],
        opts["security"],
        insecure=opts.get("insecure_scheduler", False),
    )
    executor = {k: opts[k] for k in ("scheduler", "workers", "security")}
    config = {
        **cfg.to_dict(),
        "quick": quick,
        "plan": opts.get("plan") or ("quick" if quick else "default"),
        "seeds": seeds,
        "ladder": list(sizes),
        "only": sorted(only) if only else None,
        "realistic": realistic.to_dict() | {"n_ladder": list(plan.n_ladder)},
    }
    total = theorems.runs(cfg, quick=quick, seeds=seeds, sizes=sizes, only=only, plan=plan)

    def evaluate(log):
        return theorems.check_theorems(
            cfg,
            quick=quick,
            seeds=seeds,
            log=log,
            sizes=sizes,
            only=only,
            store=Store(opts["out"]),
            executor=executor,
            plan=plan,
        )

    return Plan(total, "runs", config, evaluate)


def derive(cfg, opts: dict) -> str:
    """`derive jsl`: the sympy per-configuration reduced loss at (--C, --p) and its derivatives in
    alpha, gamma, rho (D, beta, tau, nu stay symbols)."""
    C, p = opts["C"], opts["p"]
    if not 2 <= C <= MAX_DERIVE_C:
        raise ValueError(
            f"--C = {C} is invalid: must lie in [2, {MAX_DERIVE_C}] (sympy's time grows with the "
            "(C+1)(C+2)/2 set types)"
        )
    if not 3 <= p <= MAX_P or p % 2 == 0:
        raise ValueError(
            f"--p = {p} is invalid: must be an odd integer in [3, {MAX_P}] (beyond it x^p "
            "overflows float64 from |x| = 2 on)"
        )
    return render(C, p, latex=opts["latex"])
