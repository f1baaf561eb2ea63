"""The JSL figures and the transfer experiment: `figure jsl-fig4`, `figure jsl-fig2`, `transfer
jsl`, their work (their options and the checks on parsed values: `dynsim.jsl.figure_options`,
run by `options.config`)."""

from __future__ import annotations

import math
import os

import numpy as np

import full.jsl
from dynsim.cli import options, output
from dynsim.trajectory import atomic_savez, save_many
from full.jsl import transfer

from . import association, figure_options, partition, plotting, reference, run_checks


def run_figure(args, name: str) -> int:
    """`dynsim figure jsl-fig4|jsl-fig2`: the figure's PNG, its trajectory npz, the final A and v, a
    JSON summary."""
    cfg = options.config(args)  # checked by the command's check (jsl-fig2: --seeds, --partition)
    run_checks.validate_run_options(cfg, "realistic", seeds=args.seeds)
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


def run_transfer(args) -> int:
    """`dynsim transfer jsl`: pretrained A vs A at init vs GLM, test error against N~ (Section
    5)."""
    # every transfer option checked, before the pretraining (figure_options.check_transfer)
    cfg = options.config(args)
    kwargs = figure_options.transfer_keywords(args)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    output.log(
        f"pretraining (realistic, N={cfg.N}, {cfg.steps} steps), then fine-tuning v on a new "
        f"feature ..."
    )
    result = output.run_logged(
        "pretrain", cfg.steps, lambda: transfer.transfer(cfg, **kwargs), timings, "seconds"
    )
    lines = reference.lines(cfg)
    labels = {
        "pretrained": "(a) pretrained A, fine-tune v",
        "initial": "(b) A at initialization, fine-tune v",
        "glm": "(c) GLM baseline",
    }
    curves = {labels[k]: (result.mean[k], result.se[k]) for k in labels}
    # one set: transfer.json, moved last, records the figure's digest
    with output.Staged(args.out) as stage:
        plotting.transfer_plot(
            result.n_tilde,
            curves,
            stage.path("transfer.png"),
            references=lines,
            title=f"{plotting.PAPER}, Section 5, transfer: "
            f"{plotting.parameters(cfg, ('D', 'C', 'q'))}, overlap "
            rf"$\langle\tilde w, w^*\rangle$={args.overlap:g}, {args.finetune_seeds} "
            "fine-tuning seeds",
            meta=result.meta,
        )
        stage.commit(
            "transfer.json",
            {
                **result.to_dict(),
                "reference_lines": lines,
                "timings": timings,
                "invocation": output.invocation(args),
            },
        )
    print(result.table())
    print(
        "reference lines (exact, for the downstream feature): "
        + ", ".join(f"{k} = {v:.4g}" for k, v in lines.items())
    )
    print(output.wrote(args.out, ["transfer.png", "transfer.json"]))
    return options.EXIT_AGREE
