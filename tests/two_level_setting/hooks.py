"""The work the two-block setting's declarations (setting.py) name, loaded when a command runs:
the levels' keywords, validation, log lines, post-processing and report; the claims' plan; the
derivation; the sweep's runs and summaries."""

from __future__ import annotations

import numpy as np

from dynsim import claims, progress
from dynsim.claims import LITERAL, Premise, judge
from dynsim.sweeps.common import verdict
from dynsim.trajectory import Trajectory
from dynsim.verbs import Plan

from . import levels
from .config import TwoBlockConfig

CLAIMS = ("monotone loss", "exact reduction")
COMPARED = ("err_a", "err_b", "loss", "dist2")


# --- compare: the levels' hooks ---------------------------------------------------------------


def reduced_keywords(cfg: TwoBlockConfig, opts: dict) -> dict:
    """`levels.reduced`'s keywords: the form, and the noise term when the full level is noisy (the
    reduced level then gives the expected block errors)."""
    return {"form": opts["form"], "noisy": opts["mode"] == "noisy"}


def validate_reduced(cfg: TwoBlockConfig, opts: dict) -> None:
    """--approximation-tolerance > 0 (the checker's own check would come after the runs)."""
    if not opts["approximation_tolerance"] > 0:
        raise ValueError(
            f"--approximation-tolerance = {opts['approximation_tolerance']} is invalid: must be > 0"
        )


def validate_full(cfg: TwoBlockConfig, opts: dict) -> None:
    """--replicates >= 2 in mode noisy (a standard error needs two runs)."""
    R = opts["replicates"]
    if opts["mode"] == "noisy" and R is not None and R < 2:
        raise ValueError(
            f"--replicates = {R} is invalid: --mode noisy needs at least 2 runs (a standard error)"
        )


def describe_reduced(cfg: TwoBlockConfig, opts: dict) -> str:
    """The line logged before the reduced run: the problem and the contraction factors."""
    n_a, n_b = cfg.blocks
    c_a, c_b = levels.contraction(cfg, opts["form"])
    return (
        f"twoblock: d = {cfg.d} (block a: {n_a} coordinates, curvature 1; block b: {n_b}, "
        f"curvature {cfg.lam:g}), eta = {cfg.eta:g}; reduced level: {opts['form']}, "
        f"contraction factors {c_a:.6g} and {c_b:.6g}"
    )


def describe_full(cfg: TwoBlockConfig, opts: dict) -> str:
    """The line logged before the full run."""
    noisy = opts["mode"] == "noisy"
    R = levels.DEFAULT_REPLICATES if opts["replicates"] is None else opts["replicates"]
    more = f", {R} replicates, gradient noise sigma = {cfg.sigma:g}" if noisy else ""
    return f"full: {opts['mode']} GD on w in R^{cfg.d}{more}"


def with_distance(traj: Trajectory, cfg: TwoBlockConfig, opts: dict) -> Trajectory:
    """Post-processing of either level: adds dist2 = |w - w*|^2 = err_a + err_b; for replicate runs
    (err_a_seeds present) per run, then their mean, standard error and runs."""
    obs = dict(traj.observables)
    if "err_a_seeds" in obs:
        runs = obs["err_a_seeds"] + obs["err_b_seeds"]  # (steps, R)
        obs["dist2"] = runs.mean(axis=-1)
        obs["dist2_se"] = runs.std(axis=-1, ddof=1) / np.sqrt(runs.shape[-1])
        obs["dist2_seeds"] = runs
    else:
        obs["dist2"] = obs["err_a"] + obs["err_b"]
    return Trajectory(traj.steps, obs, traj.meta, traj.final)


def report(cfg: TwoBlockConfig, opts: dict, red: Trajectory, ful: Trajectory) -> tuple:
    """report.json's "contraction" (per block) and "final_dist2" (per level), and one line."""
    c_a, c_b = (float(c) for c in levels.contraction(cfg, opts["form"]))
    final = {"reduced": float(red["dist2"][-1]), "full": float(ful["dist2"][-1])}
    line = (
        f"contraction per step: block a {c_a:.6g}, block b {c_b:.6g}; final |w - w*|^2: "
        f"reduced {final['reduced']:.6g}, full {final['full']:.6g}"
    )
    return {"contraction": {"a": c_a, "b": c_b}, "final_dist2": final}, [line]


# --- check-theorems -----------------------------------------------------------------------------


def monotone_loss(cfg: TwoBlockConfig, red: Trajectory, form: str):
    """GD on a quadratic with eta max(1, lam) <= 2 never increases the loss."""
    rise = float(np.max(np.diff(red["loss"])))
    return judge(
        "monotone loss",
        statement="GD with eta k <= 2 for every curvature k never increases the quadratic loss",
        reading=f"max_t L(t+1) - L(t) on the reduced level ({form})",
        reading_class=LITERAL,
        regime=f"noiseless GD, {cfg.steps} steps, eta = {cfg.eta:g}, lam = {cfg.lam:g}",
        measured=rise,
        relation="<=",
        threshold=0.0,
        premises=[Premise("a descent step: eta > 0", cfg.eta, ">", 0.0, "the config's eta")],
        derivation="each block error is multiplied by (1 - eta k)^2 <= 1 when eta k <= 2",
        negative_control="eta = 0.8 with lam = 3: (1 - 2.4)^2 = 1.96 > 1, the loss grows",
    )


def exact_reduction(cfg: TwoBlockConfig, red: Trajectory, ful: Trajectory, form: str):
    """The reduced level equals the full level's block errors up to rounding."""
    u = float(np.finfo(cfg.dtype).eps) / 2
    worst = 0.0
    for name in COMPARED:
        full_values = np.asarray(ful[name], float)
        scale = max(1.0, float(np.max(np.abs(full_values))))
        worst = max(worst, float(np.max(np.abs(red[name] - full_values))) / scale)
    return judge(
        "exact reduction",
        statement="GD on the two-block quadratic is the recurrence e' = (1 - eta k)^2 e of the "
        "two block errors",
        reading=f"max over steps and {', '.join(COMPARED)} of |reduced ({form}) - full| / "
        "max(1, max |full|)",
        reading_class=LITERAL,
        regime=f"noiseless GD from w0 = 0, d = {cfg.d}, {cfg.steps} steps, {cfg.dtype}",
        measured=worst,
        relation="<=",
        threshold=10 * (cfg.steps + 1) * cfg.d * u,
        derivation="rounding: a few roundings of relative u per coordinate and step, carried "
        "forward while GD is stable: 10 (T + 1) d u",
        negative_control="--form first_order (drops eta^2 k^2): off by O(eta^2) per step",
    )


def check_plan(cfg: TwoBlockConfig, opts: dict) -> Plan:
    """`check-theorems twoblock`: the reduced run (and, for "exact reduction", the exact full
    run), --only validated before any run."""
    only = claims.parse_only(opts["only"], CLAIMS)
    form = opts["form"]
    need_full = claims.wanted(only, "exact reduction")
    config = {**cfg.to_dict(), "form": form, "only": sorted(only) if only else None}

    def evaluate(log):
        log(f"reduced: the block errors' recurrence ({form}) ...")
        red = with_distance(levels.reduced(cfg, form=form), cfg, {})
        progress.advance()
        out = [monotone_loss(cfg, red, form)] if claims.wanted(only, "monotone loss") else []
        if need_full:
            log("full: exact GD on w ...")
            ful = with_distance(levels.full(cfg, mode="exact"), cfg, {})
            progress.advance()
            out.append(exact_reduction(cfg, red, ful, form))
        return out

    return Plan(1 + need_full, "runs", config, evaluate)


# --- derive -------------------------------------------------------------------------------------


def derive(cfg: TwoBlockConfig, opts: dict) -> str:
    """The reduced loss, symbolically: one coordinate's GD step, the blocks' contraction factors,
    L(e_a, e_b), its closed form in t and its gradient; the numbers at `cfg`."""
    import sympy as sp  # only derive needs it

    eta, lam, t = sp.symbols("eta lambda t", positive=True)
    e_a, e_b, n_a, n_b, delta, k = sp.symbols("e_a e_b n_a n_b delta k")
    step = delta - sp.diff(k * delta**2 / 2, delta) * eta  # GD on one coordinate's loss
    factor = sp.factor(sp.diff(step, delta) ** 2)  # e = delta^2 is multiplied by this
    c_a, c_b = factor.subs(k, 1), factor.subs(k, lam)
    if opts["expand"]:
        c_a, c_b = sp.expand(c_a), sp.expand(c_b)
    loss = (e_a + lam * e_b) / 2
    loss_t = loss.subs({e_a: c_a**t * n_a, e_b: c_b**t * n_b})
    show = sp.latex if opts["latex"] else sp.sstr
    lines = [
        "twoblock: GD on L(w) = 1/2 sum_i k_i (w_i - 1)^2 from w = 0, k = 1 on block a (n_a "
        "coordinates), lambda on block b (n_b); e = sum over a block of (w_i - 1)^2",
        f"delta' = {show(sp.collect(sp.expand(step), delta))}",
        f"c_a = {show(c_a)}",
        f"c_b = {show(c_b)}",
        f"L = {show(loss)}",
        f"L(t) = {show(loss_t)}",
        f"dL/de_a = {show(sp.diff(loss, e_a))}",
        f"dL/de_b = {show(sp.diff(loss, e_b))}",
    ]
    if cfg is not None:
        blocks = cfg.blocks
        at = {eta: cfg.eta, lam: cfg.lam, n_a: blocks[0], n_b: blocks[1]}
        lines.append(
            f"at eta = {cfg.eta:g}, lambda = {cfg.lam:g}, n_a = {blocks[0]}, n_b = {blocks[1]}: "
            f"c_a = {float(c_a.subs(at)):.6g}, c_b = {float(c_b.subs(at)):.6g}, "
            f"L(0) = {float(loss_t.subs(at).subs(t, 0)):.6g}"
        )
    return "\n".join(lines)


# --- sweep --------------------------------------------------------------------------------------


def sweep_reduced(cfgs, options: dict, batch_size: int) -> list:
    """The reduced level of each point, post-processed as compare does."""
    noisy = options["mode"] == "noisy"
    return [
        with_distance(levels.reduced(c, form=options["form"], noisy=noisy), c, options)
        for c in cfgs
    ]


def sweep_full(cfgs, options: dict, batch_size: int) -> list:
    """The full level of each point (one compiled program per shape), post-processed."""
    R = options["replicates"] if options["mode"] == "noisy" else None
    return [
        with_distance(levels.full(c, mode=options["mode"], replicates=R), c, options) for c in cfgs
    ]


def sweep_group(cfg: TwoBlockConfig, options: dict, level: str):
    """The fields the compiled full run's shape depends on."""
    return (cfg.d, cfg.steps, cfg.record_every, cfg.dtype)


def sweep_check(cfg: TwoBlockConfig, options: dict, level: str) -> None:
    """--replicates only in mode noisy, and >= 2."""
    R = options.get("replicates")
    if R is not None and options["mode"] != "noisy":
        raise ValueError(f"--replicates is for --mode noisy, not --mode {options['mode']}")
    if R is not None and R < 2:
        raise ValueError(f"--replicates = {R} is invalid: --mode noisy needs at least 2 runs")


def seeded(cfg: TwoBlockConfig, options: dict, level: str) -> bool:
    """Only the noisy full level draws anything."""
    return level != "reduced" and options["mode"] == "noisy"


def summary(cfg: TwoBlockConfig, red, ful, report) -> dict:
    """One sweep row: each level's final loss and |w - w*|^2, and the checker's verdict."""
    row = {}
    for prefix, traj in (("reduced_", red), ("full_", ful)):
        if traj is not None:
            row[prefix + "final_loss"] = float(traj["loss"][-1])
            row[prefix + "final_dist2"] = float(traj["dist2"][-1])
    return {**row, **verdict(report)}
