"""`dynsim experiment jsl-images`: the command's options and its run (JSL Section 6 in miniature on
the digits; docs/images.md section 1)."""

from __future__ import annotations

import argparse
import math
import os

import numpy as np

from dynsim import claims, environment, resources
from dynsim.cli import options, output

from . import digits, jsl_experiment, jsl_plotting
from .jsl_claims import interval

__all__ = ["arguments", "run", "estimate", "DESCRIPTION", "NAME"]

NAME = "jsl-images"
DESCRIPTION = (
    "JSL Section 6 and Figure 5 in miniature on the 8 x 8 digits scikit-learn ships: trains (a) a "
    "one-layer ViT with positional attention (A = P^T P, learned positional encodings P, model "
    "(T)'s value and readout), (b) the same layer with standard attention on the input plus P, "
    "(c) a small CNN, on original, patch-permuted and shuffle-grid digits, several seeds each; "
    "test accuracies with 95 % Student-t seed intervals; the similarities p_i^T P of (a) trained "
    "on permuted digits before and after the inverse permutation, and a localization score (mean "
    "grid distance of each position's top-k most similar positions, ties to the lower index) "
    "against its shuffled baseline and against (a) with P frozen at its initialization. Judges "
    "three claims (positional ~ standard attention; the ViT keeps its accuracy on permuted "
    "digits while the CNN loses it; the encodings are localized after the inverse permutation) "
    "on paired per-seed intervals. Writes jsl-images.json and jsl-images.png. Exit 0 when every "
    "claim holds, 1 otherwise, 2 on invalid input."
)
DIGITS = 1797  # sklearn's digits


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and 0.0 < value < 10.0):
        raise argparse.ArgumentTypeError(f"{text!r} is invalid: must lie in (0, 10)")
    return value


_positive_float.__name__ = "float"


def arguments(parser, setting) -> None:
    """The options of `experiment jsl-images`."""
    d = jsl_experiment.Config()
    at_least = options.at_least
    g = parser.add_argument_group("data and models")
    g.add_argument(
        "--patch",
        type=int,
        choices=(1, 2),
        default=d.patch,
        help="patch side: 2 (a 4 x 4 grid, 16 positions) or 1 (8 x 8, 64 positions) "
        f"(default: {d.patch})",
    )
    g.add_argument(
        "--width",
        type=at_least(1),
        default=d.width,
        help=f"width of P, the values and the CNN's channels (default: {d.width})",
    )
    g.add_argument(
        "--dtype",
        choices=("float32", "float64"),
        default=d.dtype,
        help=f"dtype of training (default: {d.dtype})",
    )
    g = parser.add_argument_group("training and evaluation")
    g.add_argument(
        "--steps",
        type=at_least(1),
        default=d.steps,
        help=f"Adam steps per learner (default: {d.steps})",
    )
    g.add_argument(
        "--batch-size",
        type=at_least(1),
        default=d.batch,
        help=f"images per step (default: {d.batch})",
    )
    g.add_argument(
        "--learning-rate",
        type=_positive_float,
        default=d.lr,
        help=f"Adam's learning rate, in (0, 10) (default: {d.lr})",
    )
    g.add_argument(
        "--n-test",
        type=at_least(1),
        default=d.n_test,
        help=f"test images per seed's split (default: {d.n_test})",
    )
    g.add_argument(
        "--top-k",
        type=at_least(1),
        default=d.k,
        help="k of the localization score: each position's k most similar other "
        f"positions (default: {d.k})",
    )
    g = parser.add_argument_group("run")
    options.seeds_option(g, d.seeds, "at least 2: intervals and paired comparisons are over them")
    g.add_argument(
        "--seed",
        type=at_least(0),
        default=d.seed,
        help=f"seed of the splits, permutations, initializations and batches (default: {d.seed})",
    )
    options.out_options(g)


def config(args):
    """The Config of `args`, refused (ValueError naming the option) when the sizes do not fit."""
    cfg = jsl_experiment.Config(
        patch=args.patch, seeds=args.seeds, steps=args.steps, batch=args.batch_size,
        lr=args.learning_rate, width=args.width, n_test=args.n_test, k=args.top_k,
        seed=args.seed, dtype=args.dtype,
    )  # fmt: skip
    D = (8 // cfg.patch) ** 2
    if cfg.seeds < 2:
        raise ValueError(
            f"--seeds = {cfg.seeds} is invalid: must be an integer >= 2 (the intervals need two)"
        )
    if cfg.n_test > DIGITS - 2:
        raise ValueError(
            f"--n-test = {cfg.n_test} is invalid: at most {DIGITS - 2} (of "
            f"{DIGITS} digits, two stay for training)"
        )
    if cfg.k > D - 1:
        raise ValueError(
            f"--top-k = {cfg.k} is invalid: at most {D - 1} (the other positions "
            f"of {D} at --patch {cfg.patch})"
        )
    return cfg


def estimate(args) -> list:
    """What a run holds and does: every seed's digits, the minibatches' activations and the
    losses; per step of each learner-condition pair, the forward and backward (about three
    forwards) of the three learners on a minibatch (the CNN's two 3 x 3 convolutions dominate)."""
    D, d, w = (8 // args.patch) ** 2, args.patch**2, args.width
    runs = len(jsl_experiment.runs(range(3 if args.patch == 2 else 4)))
    per_image = (
        2 * D * (d * w + D * w + 10 * w)  # (a): value, attention mixing, readout
        + 2 * D * (4 * d * w + 2 * w * w + 2 * D * w)  # (b): embedding, Q, K, V, scores, mixing
        + 2 * 64 * (9 * w + 9 * w * w)  # (c): two convolutions on the 64 pixels
    )
    opts = {"--steps": args.steps, "--seeds": args.seeds, "--batch-size": args.batch_size}
    return [
        resources.Need(
            "training: steps x seeds x learner-condition pairs x batch x forward and backward",
            opts,
            bytes=8.0 * args.seeds * (3 * DIGITS * 64 + args.steps + args.batch_size * 64 * 9 * w),
            flops=3.0 * runs / 3 * args.seeds * args.steps * args.batch_size * per_image,
            instead="fewer --steps or --seeds, or a smaller --batch-size",
        )
    ]


def _table(result: dict) -> str:
    conditions = list(result["conditions"])
    head = f"{'learner':<12}" + "".join(f"{c:>26}" for c in conditions)
    rows = [head, "-" * len(head)]
    for m in ("positional", "standard", "cnn", "frozen"):
        cells = []
        for c in conditions:
            if (m, c) not in result["accuracy"]:
                cells.append(f"{'-':>26}")
                continue
            mean, low, high = interval(result["accuracy"][(m, c)])
            cells.append(f"{f'{mean:.3f} [{low:.3f}, {high:.3f}]':>26}")
        rows.append(f"{m:<12}" + "".join(cells))
    local = result["localization"]
    rows.append(
        f"localization (top-{result['config']['k']} distance, grid cells; shuffled "
        f"baseline {local['positional']['baseline']:.3f}):"
    )
    for m in ("positional", "frozen"):
        for key in ("after", "before"):
            mean, low, high = interval(local[m][key])
            rows.append(
                f"  {m:<10} {key:<6} inverse permutation: {mean:.3f} [{low:.3f}, {high:.3f}]"
            )
    return "\n".join(rows)


def _record(result: dict) -> dict:
    """The JSON-ready numbers: per learner, condition and seed."""
    return {
        "conditions": result["conditions"],
        "grid": result["grid"],
        "accuracy": {f"{m}/{c}": [float(v) for v in a] for (m, c), a in result["accuracy"].items()},
        "final_minibatch_loss": {
            f"{m}/{c}": [float(v) for v in a] for (m, c), a in result["loss"].items()
        },
        "localization": {
            m: {k: (v if np.isscalar(v) else [float(x) for x in v]) for k, v in s.items()}
            for m, s in result["localization"].items()
        },
        "permutation": {c: p.tolist() for c, p in result["perms"].items()},
        "random_sd": result["random_sd"],
    }


def run(args) -> int:
    """`dynsim experiment jsl-images`."""
    cfg = config(args)
    try:
        digits.load(cfg.patch)  # the images extra: refused before any work when missing
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    total = len(jsl_experiment.runs(range(3 if cfg.patch == 2 else 4)))
    with environment.precision(cfg.dtype):
        result = output.run_logged(
            f"training ({cfg.seeds} seeds per learner and condition)", total,
            lambda: jsl_experiment.run(cfg), timings, "seconds", unit="runs",
        )  # fmt: skip
    found = result["items"]
    meta = {"dtype": cfg.dtype, "device": environment.device(), "versions": environment.versions()}
    with output.Staged(args.out) as stage:
        jsl_plotting.figure(result, stage.path(f"{NAME}.png"), meta)
        stage.commit(
            f"{NAME}.json",
            {
                **claims.to_dict(found, cfg.to_dict()),
                "results": _record(result),
                "provenance": meta,
                "timings": timings,
                "invocation": output.invocation(args),
            },
        )
    print(_table(result))
    print(claims.table(found))
    print(output.wrote(args.out, [f"{NAME}.png", f"{NAME}.json"]))
    return claims.exit_code(found)
