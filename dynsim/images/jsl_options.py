"""The options of `dynsim experiment jsl-images`, its config and its resource estimate, light:
--help and a refused value import no JAX (the run is `dynsim.images.cli_jsl`; docs/images.md
section 1)."""

from __future__ import annotations

import dataclasses

from dynsim import resources
from dynsim.cli import options

__all__ = ["Config", "arguments", "config", "estimate", "runs", "DESCRIPTION", "NAME", "LEARNERS"]

LEARNERS = ("positional", "standard", "cnn")


@dataclasses.dataclass(frozen=True)
class Config:
    """The experiment's sizes (the command's defaults: docs/images.md §1)."""

    patch: int = 2
    seeds: int = 5
    steps: int = 600
    batch: int = 128
    lr: float = 0.01
    width: int = 16
    n_test: int = 360
    k: int = 4  # jsl_localization.K_DEFAULT
    seed: int = 0
    dtype: str = "float32"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def runs(conditions) -> list[tuple[str, str]]:
    """(learner, condition) of every training: each learner on each condition, and (a) with P
    frozen on the permuted digits (the localization claim's negative control)."""
    return [(m, c) for m in LEARNERS for c in conditions] + [("frozen", "permuted")]


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
    "claim holds, 1 when some claim fails, 3 when none fails but some claim is not applicable or "
    "not evaluated, 2 on invalid input."
)
DIGITS = 1797  # sklearn's digits


def arguments(parser, setting) -> None:
    """The options of `experiment jsl-images`."""
    d, at_least = Config(), options.at_least
    options.declare(
        parser.add_argument_group("data and models"),
        [
            ("--patch", (1, 2), d.patch,
             "patch side: 2 (a 4 x 4 grid, 16 positions) or 1 (8 x 8, 64 positions)"),
            ("--width", at_least(1), d.width, "width of P, the values and the CNN's channels"),
            ("--dtype", ("float32", "float64"), d.dtype, "dtype of training"),
        ],
    )  # fmt: skip
    options.declare(
        parser.add_argument_group("training and evaluation"),
        [
            ("--steps", at_least(1), d.steps, "Adam steps per learner"),
            ("--batch-size", at_least(1), d.batch, "images per step"),
            ("--learning-rate", options.float_in(0.0, 10.0, "must lie in (0, 10)"), d.lr,
             "Adam's learning rate, in (0, 10)"),
            ("--n-test", at_least(1), d.n_test, "test images per seed's split"),
            ("--top-k", at_least(1), d.k,
             "k of the localization score: each position's k most similar other positions"),
        ],
    )  # fmt: skip
    g = parser.add_argument_group("run")
    options.seeds_option(g, d.seeds, "at least 2: intervals and paired comparisons are over them")
    options.declare(
        g,
        [
            ("--seed", at_least(0), d.seed,
             "seed of the splits, permutations, initializations and batches"),
        ],
    )  # fmt: skip
    options.out_options(g)


def config(args):
    """The Config of `args`, refused (ValueError naming the option) when the sizes do not fit."""
    cfg = Config(
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


# dynsim.resources times work at 1e9 operations a second, a rate set for element-wise steps; these
# learners are dense products and convolutions, which XLA runs about 10x faster on the CPU (the
# default's count against its measured CPU time: docs/benchmarks.md m)
MATMUL = 10.0


def estimate(args) -> list:
    """The options checked (`config`), then what a run holds and does: every seed's digits, the
    minibatches' activations and the losses; per step of each learner-condition pair, the forward
    and backward (about three forwards) of the three learners on a minibatch (the CNN's two 3 x 3
    convolutions dominate)."""
    config(args)  # the options' checks first: a refused value imports no JAX
    D, d, w = (8 // args.patch) ** 2, args.patch**2, args.width
    pairs = len(runs(range(3 if args.patch == 2 else 4)))
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
            flops=3.0 * pairs / 3 * args.seeds * args.steps * args.batch_size * per_image / MATMUL,
            instead="fewer --steps or --seeds, or a smaller --batch-size",
        )
    ]
