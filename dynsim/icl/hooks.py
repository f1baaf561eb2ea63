"""What the ICL setting's declarations (`dynsim.icl.setting`) name beyond the levels, loaded when a
command runs: the log lines and report of `compare icl`, the plan of `check-theorems icl` and the
sympy derivation (the sweep's work: `dynsim.icl.sweep`)."""

from __future__ import annotations

import numpy as np

from dynsim.claims import parse_only
from dynsim.verbs import Plan
from full.icl import spec as full_spec
from reduced.icl.symbolic import render

from . import moments, theorems
from .config import ICLConfig
from .setting import CLAIM_NAMES


def describe_reduced(cfg: ICLConfig, opts: dict) -> str:
    """The line logged before the reduced run: the problem and its limit."""
    lam = ", ".join(f"{x:.4g}" for x in cfg.spectrum)
    limit = ", ".join(f"{x:.4g}" for x in np.diag(moments.limit(cfg.spectrum, cfg.N)))
    return (
        f"ICL: d = {cfg.d}, N = {cfg.N}, Lambda = diag({lam}), sigma = {cfg.sigma:g}; "
        f"Gamma^-1 = diag({limit})"
    )


def describe_full(cfg: ICLConfig, opts: dict) -> str:
    """The line logged before the full run."""
    how = "the exact population loss" if opts["mode"] == "exact" else f"{cfg.batch} fresh prompts"
    return f"full: GD on W^PV and W^KQ ({cfg.d + 1} x {cfg.d + 1}) over {how} ..."


def report(cfg: ICLConfig, opts: dict, red, ful) -> tuple[dict, list]:
    """Theorem 4.1's limit and minimum loss beside each level's final distance to it."""
    limit = np.diag(moments.limit(cfg.spectrum, cfg.N))
    best = moments.min_loss(cfg.spectrum, cfg.N)
    gaps = {"reduced": float(red["gap"][-1]), "full": float(ful["gap"][-1])}
    entries = {"gamma_inverse": limit.tolist(), "min_loss": best, "final_gap": gaps}
    line = (
        f"Theorem 4.1: u W11^KQ -> Gamma^-1 = diag({', '.join(f'{x:.6g}' for x in limit)}), "
        f"L* = {best:.6g}; final ||P - Gamma^-1|| / ||Gamma^-1||: reduced {gaps['reduced']:.3g}, "
        f"full {gaps['full']:.3g}"
    )
    return entries, [line]


def check_plan(cfg: ICLConfig, opts: dict) -> Plan:
    """`check-theorems icl`: one full exact run, its reading and the claims (docs/icl.md §7)."""
    only = parse_only(opts["only"], CLAIM_NAMES)
    M = cfg.N if opts["test_length"] is None else opts["test_length"]
    full_spec.check_full(cfg, "exact")
    config = {
        **cfg.to_dict(),
        "shift": opts["shift"],
        "test_length": M,
        "tests": opts["tests"],
        "only": sorted(only) if only else None,
    }

    def evaluate(log):
        return theorems.check_theorems(cfg, opts["shift"], M, opts["tests"], only, log)

    return Plan(1, "runs", config, evaluate)


def derive(cfg: ICLConfig, opts: dict) -> str:
    """`derive icl`: the sympy reduced loss, its gradients and the minimizer, and Gamma^-1 at
    cfg."""
    return render(latex=opts["latex"], at={"spectrum": cfg.spectrum, "N": cfg.N})
