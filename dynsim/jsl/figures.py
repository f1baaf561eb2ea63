"""The JSL figures, `figure jsl-fig4` and `figure jsl-fig2`: their options and recipes, the checks
on parsed values (`config_options(check=...)`, run by the command line before the estimate and the
work) and the run, which loads the full level, the plots and the outputs when it starts."""

from __future__ import annotations

import math
import os

import numpy as np

import full.jsl
from dynsim.cli import options
from dynsim.trajectory import atomic_savez, save_many
from full.jsl import spec

from . import partition, reference

# Recipes (docs/jsl.md): Figure 4 and transfer follow docs/derivations/jsl.md §6 (D=16, C=4, q=0.5,
# unit temperature).
FIG4_DEFAULTS = dict(
    D=16,
    C=4,
    q=0.5,
    nu=1e-3,
    temperature="unit",
    eta=0.02,
    N=20000,
    n_test=20000,
    omega=0.01,
    steps=10000,
    record_every=100,
)
# Figure 2: the measured setting (d=8; eta=0.05 diverged, 0.005 is stable), docs/jsl.md §10.
FIG2_DEFAULTS = dict(
    D=16,
    C=4,
    d=8,
    nu=1e-3,
    temperature="unit",
    eta=0.005,
    N=2048,
    n_test=2048,
    omega=0.01,
    steps=20000,
    record_every=100,
)
# Transfer: the Figure 4 recipe pretrained longer on fewer samples. At N=20000 and 10,000 steps the
# pretrained A has patch association but small entries (gap 0.056 vs 0.063 at N~=8); at N=4000 and
# 50,000 steps the orbit means approach the idealized gamma ~ 1, rho ~ -0.35
# (docs/derivations/jsl.md §6), which is what the transfer needs.
TRANSFER_DEFAULTS = dict(FIG4_DEFAULTS, N=4000, steps=50000, record_every=500)
# Figure 2's data are N(0, I_d) patches labelled by a CNN teacher (full/jsl/fig2.py): q (the feature
# probability) and sigma (the noise of Assumption 1) are not read, so the command does not list
# them.
FIG2_UNREAD = {
    "q": "the patches carry no feature w*: a CNN teacher labels N(0, I_d) patches",
    "sigma": "the patches are N(0, I_d), with no noise of Assumption 1",
}


def fig4_arguments(parser, setting) -> None:
    """Options of `figure jsl-fig4`: every JSLConfig field (the Figure 4 recipe), seeds, --out."""
    options.config_options(
        parser,
        setting,
        FIG4_DEFAULTS,
        "Figure 4's recipe (D = 16, C = 4, q = 0.5, unit temperature)",
    )
    g = parser.add_argument_group("run")
    options.seeds_option(g, 1, "curves are their means, the panels show the first run's A")
    options.out_options(g)


def fig2_arguments(parser, setting) -> None:
    """Options of `figure jsl-fig2`: every JSLConfig field it reads (the measured Figure 2 setting),
    seeds, --out."""
    options.config_options(
        parser,
        setting,
        FIG2_DEFAULTS,
        "the measured Figure 2 setting (d = 8; eta = 0.05 diverged, 0.005 is stable)",
        FIG2_UNREAD,
        check=check_fig2,
    )
    g = parser.add_argument_group("run")
    options.seeds_option(g, 4, "at least 2; curves are their means with a standard error")
    options.out_options(g)


def check_fig2(cfg, args) -> None:
    """`figure jsl-fig2` draws a standard error over its runs (--seeds >= 2), and its CNN teacher
    needs the spatially localized sets (--partition grid)."""
    if args.seeds < 2:
        raise ValueError(
            f"--seeds = {args.seeds} is invalid for jsl-fig2: must be >= 2 (the standard "
            f"error needs two runs)"
        )
    partition.require_grid_partition(cfg, name="--partition")


def run_figure(args, name: str) -> int:
    """`dynsim figure jsl-fig4|jsl-fig2`: the figure's PNG, its trajectory npz, the final A and v, a
    JSON summary."""
    from dynsim.cli import output
    from . import association, plotting

    cfg = options.config(args)  # checked by the command's check (jsl-fig2: --seeds, --partition)
    spec.validate_run_options(cfg, "realistic", seeds=args.seeds)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    mask = partition.same_set_mask(cfg).astype(float)
    if name == "jsl-fig4":
        output.log(
            f"realistic (E): D={cfg.D}, C={cfg.C}, N={cfg.N}, {cfg.steps} steps, {args.seeds} "
            f"seed(s) ..."
        )
        traj, final = output.run_logged(
            "realistic",
            cfg.steps,
            lambda: full.jsl.realistic.run(cfg, seeds=args.seeds),
            timings,
            "seconds",
        )
        lines = reference.lines(cfg)
        A = np.asarray(final["A"][0])

        def draw(path):
            plotting.figure4(
                mask,
                A,
                traj.steps,
                traj["test_error"],
                traj["cos_v"],
                path,
                references=lines,
                test_error_se=traj.observables.get("test_error_se"),
                cos_v_se=traj.observables.get("cos_v_se"),
                n_test=cfg.n_test,
                title=f"{plotting.PAPER}, Figure 4, realistic problem (E): "
                f"{plotting.parameters(cfg, ('D', 'C', 'q', 'N', 'eta'))}, {args.seeds} seed"
                + ("s" if args.seeds > 1 else ""),
                meta=traj.meta,
            )

        summary = {
            "test_error_at_T": float(traj["test_error"][-1]),
            "cos_v_at_T": float(traj["cos_v"][-1]),
            "patch_association_at_T": float(traj["patch_association"][-1]),
            **lines,
        }
    else:
        output.log(
            f"Figure 2 data (CNN teacher on Gaussian patches): D={cfg.D}, C={cfg.C}, "
            f"N={cfg.N}, {cfg.steps} steps ..."
        )
        traj, final = output.run_logged(
            "realistic",
            cfg.steps,
            lambda: full.jsl.fig2.run_fig2(cfg, seeds=args.seeds),
            timings,
            "seconds",
        )
        lines = {}
        A = np.asarray(final["A"][0])
        chance = association.chance(cfg)
        linear, left = plateau(cfg, float(traj["test_error"][-1]), final, args.seeds)

        def draw(path):
            plotting.figure2(
                mask,
                A,
                traj.steps,
                traj["test_error"],
                traj["patch_association"],
                path,
                chance=chance,
                n_test=cfg.n_test,
                test_error_se=traj.observables.get("test_error_se"),
                association_se=traj.observables.get("patch_association_se"),
                linear_error=linear,
                left_plateau=left,
                title=f"{plotting.PAPER}, Figure 2, CNN-labelled Gaussian patches: "
                f"{plotting.parameters(cfg, ('D', 'C', 'd', 'N', 'eta'))}, {args.seeds} seeds",
                meta=traj.meta,
            )

        summary = {
            "test_error_at_T": float(traj["test_error"][-1]),
            "patch_association_at_T": float(traj["patch_association"][-1]),
            "patch_association_chance": chance,
            "linear_rule_error": linear,
            "left_linear_plateau": left,
        }
    # one set: the .json, moved last, records the others' digests
    with output.Staged(args.out) as stage:
        draw(stage.path(f"{name}.png"))
        save_many(stage.path(f"{name}.npz"), {"realistic": traj}, compressed=True)
        atomic_savez(
            stage.path(f"{name}-final.npz"),
            {"mask": mask, **{k: np.asarray(v) for k, v in final.items()}},
            compressed=True,
        )
        stage.commit(
            f"{name}.json",
            {
                "summary": summary,
                "timings": timings,
                "meta": traj.meta,
                "invocation": output.invocation(args),
            },
        )
    for k, v in summary.items():
        print(f"{k:<28} {v:.4g}")
    print(
        output.wrote(args.out, [f"{name}.png", f"{name}.npz", f"{name}-final.npz", f"{name}.json"])
        + " (npz: the trajectory; -final.npz: mask, A, v)"
    )
    return options.EXIT_AGREE


def plateau(cfg, test_error: float, final: dict, seeds: int) -> tuple[float, bool]:
    """(the linear rule's test error, seed mean; whether the learner left its plateau): left when
    the test error lies below it by more than 3 binomial standard errors of `seeds` x n_test test
    samples, the reading of `claims_realistic.figure_2` (docs/jsl.md §11)."""
    linear = float(np.mean(final["linear_error"]))
    se = math.sqrt(linear * (1 - linear) / (seeds * cfg.n_test))
    return linear, bool(test_error < linear - 3 * se)
