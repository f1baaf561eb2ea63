"""What MIM's levels, claims and derivation do beyond the core's verbs (`dynsim.mim.setting`
declares them): the reduced level's approximation and Monte Carlo keywords (checked before any work
by the levels' specs), the per-patch records, the information-gap line, the plot, the
plan of `check-theorems mim` on its P ladder and the sympy derivation."""

from __future__ import annotations

import reduced.mim
from dynsim.claims import parse_only
from dynsim.cli import output
from dynsim.verbs import Plan
from full.mim.spec import full_replicates
from reduced.mim.spec import approx_option, monte_carlo
from reduced.mim.symbolic import render

from . import plotting, records, theorems


def reduced_keywords(cfg, opts: dict) -> dict:
    """`reduced.mim.simulate`'s keywords: the approximation and the Monte Carlo draws."""
    return {"approximation": approx_option(opts["approximation"]), **monte_carlo(opts)}


def full_keywords(cfg, opts: dict) -> dict:
    """`full.mim.simulate`'s keywords: the mode and the replicates."""
    return {"mode": opts["mode"], "replicates": full_replicates(opts)}


def area_sizes(cfg) -> list:
    """The size of every area of every cluster."""
    return [[len(a) for a in cl] for cl in cfg.areas]


def describe_reduced(cfg, opts: dict) -> str:
    """The line logged before the reduced run: the problem."""
    return (
        f"MIM: P={cfg.P}, K={cfg.K}, areas {area_sizes(cfg)}, |M|={cfg.masked}, "
        f"Delta={cfg.delta:.3f}, d={cfg.d}, {cfg.dtype}"
    )


def describe_full(cfg, opts: dict) -> str:
    """The line logged before the full run."""
    return f"full: {opts['mode']} gradient descent on the {cfg.d}x{cfg.d} matrix Q ..."


def per_patch(red, cfg, opts: dict):
    """The reduced records per patch, as the full run holds them, whatever the expansion
    budget."""
    return records.with_per_patch(red, cfg)


def red_draws(replicates) -> int:
    """The reduced level's independent Monte Carlo draws: --replicates, default 4
    (`reduced.mim.simulate`)."""
    return 4 if replicates is None else replicates


def label(opts: dict) -> str:
    """What the reduced level computed: exact, a named approximation, or Monte Carlo."""
    if opts["samples"] is not None:
        return (
            f"Monte Carlo, {opts['samples']} count vectors per query, "
            f"{red_draws(opts['replicates'])} draws"
        )
    return reduced.mim.label(reduced.mim.approximations(approx_option(opts["approximation"])))


def report(cfg, opts: dict, red, ful) -> tuple[dict, list]:
    """The information gap, the area sizes and what the reduced level computed."""
    kappas, what = cfg.effective_kappas, label(opts)
    line = (
        f"information gap Delta = {cfg.delta:.3f} (effective kappas {kappas[0]:.3f}, "
        f"{kappas[1]:.3f}); reduced level: {what}"
        + ("" if opts["method"] == "gd" else ", gradient flow (O(eta) from GD)")
    )
    entries = {"delta": cfg.delta, "area_sizes": area_sizes(cfg), "reduced_approximation": what}
    return entries, [line] + ([EXPLAIN] if opts.get("explain") else [])


# What `compare mim --explain` adds
EXPLAIN = (
    "Delta = 2 kappa_c - kappa_s - 1 (eq. 4.1), kappa_c = log|global area| / log P, kappa_s = "
    "log(mean local area size) / log P, of the realised areas (cluster means): Delta > 0 gives "
    "local queries two phases (their global FP correlation falls first), Delta < 0 one "
    "(docs/mim.md)"
)


def plot(cfg, opts: dict, red, ful, path: str, report) -> None:
    """compare.png: FP and PP correlations of both levels, per query class, and their difference
    against the tolerance."""
    plotting.compare_plot(
        {"reduced": red, "full": ful},
        cfg,
        path,
        title=f"{plotting.PAPER}: reduced vs full, {plotting.parameters(cfg)}, areas "
        f"{area_sizes(cfg)[0]}",
        report=report,
    )


def check_plan(cfg, opts: dict) -> Plan:
    """`check-theorems mim`: the claims on the P ladder (docs/mim.md §6), every rung's config
    validated before any run."""
    eps, quick = opts["eps"], opts["quick"]
    if not 0.0 < eps < 1.0:
        raise ValueError(f"--eps = {eps} is invalid: must lie strictly between 0 and 1")
    if cfg.steps < 1:
        raise ValueError(f"--steps = {cfg.steps} is invalid: must be >= 1")
    if cfg.partition == "grid" and "seed" in opts["given"]:
        output.log(
            f"warning: --seed = {cfg.seed} is not read here: grid areas draw nothing (--seed "
            "sets the areas of --partition random)"
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
    only = parse_only(opts["only"], theorems.CLAIMS)
    sizes = theorems.sizes(quick)
    runs = theorems.run_configs(base, sizes, theorems.ladder.steps_for(cfg.steps, eps))
    # a Delta <= 0 base is judged too: the Delta > 0 statements are then "not applicable" (their
    # premise)
    config = {
        "quick": quick,
        "eps": eps,
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
        return theorems.check_theorems(base=base, quick=quick, eps=eps, log=log, only=only)

    return Plan(theorems.runs(quick, only), "runs", config, evaluate)


def derive(cfg, opts: dict) -> str:
    """`derive mim`: the sympy per-query loss (own-area and other-area views) and its partial
    derivatives in A_n, B_n, B_self, A_i, B_i (any P)."""
    return render(latex=opts["latex"])
