"""The options of `dynsim experiment mim-images`, the checks of their values and its resource
estimate, light: --help and a refused value import no JAX (the run is `dynsim.images.cli_mim`;
docs/images.md section 2)."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Optional

from dynsim import resources
from dynsim.cli import options

from . import digits

__all__ = ["Sizes", "arguments", "sizes", "estimate", "DESCRIPTION", "NAME", "OBJECTIVES"]

# dynsim.images.mim_model.OBJECTIVES (spelled here: that module imports JAX; a test checks they
# agree)
OBJECTIVES = ("masked", "supervised", "contrastive")
DIGITS = 1797  # sklearn's digits


@dataclasses.dataclass(frozen=True)
class Sizes:
    """The experiment's sizes and their defaults, those of `dynsim.images.mim_experiment.Config`
    (a test checks they agree): docs/images.md section 2."""

    patch: int = 2
    seeds: int = 5
    steps: int = 1500
    batch: int = 64
    learning_rate: float = 0.01
    mask_ratio: float = 0.5
    width: int = 32
    n_test: int = 297
    eval_images: int = 152  # Section 6 averages over 152 example images
    top_k: Optional[int] = None
    objectives: tuple = ("masked", "supervised")
    seed: int = 0
    dtype: str = "float32"

    @property
    def P(self) -> int:
        return (digits.SIDE // self.patch) ** 2


NAME = "mim-images"
DEFAULTS = Sizes()
DESCRIPTION = (
    "MIM Section 6 in miniature on the 8 x 8 digits scikit-learn ships: the same one-layer "
    "softmax attention (patches with one-hot positional encodings, merged query-key Q from 0, a "
    "linear read-out) trained by masked reconstruction and by a supervised objective (and, with "
    "--objectives, a contrastive one), several seeds each. Compares the attention diversity of "
    "Section 6 (top-k coordinates, ties to the lower patch index) and the average attention "
    "distance, with 95 % Student-t seed intervals, and judges 'masked reconstruction learns "
    "more diverse attention' on the paired per-seed difference's interval. Writes "
    "mim-images.json and mim-images.png. Exit 0 when every claim holds, 1 when some claim "
    "fails, 3 when none fails but some claim is not applicable or not evaluated, 2 on invalid "
    "input."
)


def _objectives(text: str) -> list:
    names = [t.strip() for t in text.split(",")]
    bad = [n for n in names if n not in OBJECTIVES]
    if not names or bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"{text!r} is invalid: a comma-separated list of distinct names of {OBJECTIVES}"
        )
    return names


_objectives.__name__ = "list of str"
_objectives.comma_list = True  # a --config list value is written as its comma-separated text


def arguments(parser, setting) -> None:
    """The options of `experiment mim-images`."""
    d, at_least = DEFAULTS, options.at_least
    options.declare(
        parser.add_argument_group("data and model"),
        [
            ("--patch", (1, 2), d.patch,
             "patch side: 2 (a 4 x 4 grid, P = 16) or 1 (8 x 8, P = 64)"),
            ("--mask-ratio", options.float_in(0.0, 1.0, "gamma must lie in (0, 1)"), d.mask_ratio,
             "masking ratio gamma: round(gamma P) patches masked per image (Definition 2.5)"),
            ("--width", at_least(1), d.width, "width of the value W^V"),
            ("--objectives", _objectives, list(d.objectives),
             "objectives to train, comma-separated, of masked, supervised, contrastive "
             "(default: masked,supervised)"),
            ("--dtype", ("float32", "float64"), d.dtype, "dtype of training"),
        ],
    )  # fmt: skip
    options.declare(
        parser.add_argument_group("training and evaluation"),
        [
            ("--steps", at_least(1), d.steps, "Adam steps per model"),
            ("--batch-size", at_least(2), d.batch, "images per step"),
            ("--learning-rate", options.float_in(0.0, 10.0, "must lie in (0, 10)"),
             d.learning_rate, "Adam's learning rate"),
            ("--n-test", at_least(2), d.n_test, "test images per seed's split"),
            ("--eval-images", at_least(2), d.eval_images,
             "test images whose attention is measured, the first of the test split "
             f"(default: {d.eval_images}, Section 6's count)"),
            ("--top-k", at_least(1), None,
             "k of the attention diversity (default: min(10, P // 4))"),
        ],
    )  # fmt: skip
    g = parser.add_argument_group("run")
    options.seeds_option(g, d.seeds, "intervals and the paired comparison are over them")
    options.declare(
        g,
        [
            ("--seed", at_least(0), d.seed,
             "seed of the splits, initializations, batches and masks"),
        ],
    )  # fmt: skip
    options.out_options(g)


def sizes(args) -> Sizes:
    """The sizes of `args`, refused (ValueError naming the option) when they do not fit."""
    cfg = Sizes(
        patch=args.patch, seeds=args.seeds, steps=args.steps, batch=args.batch_size,
        learning_rate=args.learning_rate, mask_ratio=args.mask_ratio, width=args.width,
        n_test=args.n_test, eval_images=args.eval_images, top_k=args.top_k,
        objectives=tuple(args.objectives), seed=args.seed, dtype=args.dtype,
    )  # fmt: skip
    n = DIGITS
    if cfg.seeds < 1:
        raise ValueError(f"--seeds = {cfg.seeds} is invalid: must be an integer >= 1")
    if not 1 <= round(cfg.mask_ratio * cfg.P) <= cfg.P - 1:
        raise ValueError(
            f"--mask-ratio = {cfg.mask_ratio} is invalid: round(gamma P) must lie in 1..{cfg.P - 1}"
            f" at P = {cfg.P}"
        )
    if cfg.n_test > n - cfg.batch:
        raise ValueError(
            f"--n-test = {cfg.n_test} is invalid: leaves fewer training images than a batch "
            f"({cfg.batch}); at most {n - cfg.batch}"
        )
    if cfg.eval_images > cfg.n_test:
        raise ValueError(
            f"--eval-images = {cfg.eval_images} is invalid: at most --n-test = {cfg.n_test}"
        )
    if cfg.top_k is not None and cfg.top_k > cfg.P:
        raise ValueError(f"--top-k = {cfg.top_k} is invalid: at most P = {cfg.P} patches")
    return cfg


def estimate(args) -> list:
    """The options checked (`sizes`), then what a run holds and does: the digits and the training
    losses per seed, the evaluation's attention maps; the layer's forward on every batch and its
    backward (twice the forward)."""
    sizes(args)
    P, d = (digits.SIDE // args.patch) ** 2, args.patch**2
    n, runs = d + P, args.seeds * len(args.objectives)
    # per image: scores (P x P from n), value (P x width from n), the mixing, the read-out
    layer = 2 * P * n * n + 2 * P * P * n + 2 * P * n * args.width + 2 * P * P * args.width
    views = 2 if "contrastive" in args.objectives else 1
    opts = {"--steps": args.steps, "--seeds": args.seeds, "--batch-size": args.batch_size}
    return [
        resources.Need(
            "training: steps x seeds x objectives x batch x the layer's forward and backward",
            opts,
            bytes=8.0 * runs * (args.steps + 1797 * P * d + 4 * n * n + args.batch_size * P * n),
            flops=3.0 * views * runs * args.steps * args.batch_size * layer,
            instead="fewer --steps or --seeds, or a smaller --batch-size",
        ),
        resources.Need(
            "evaluation: attention maps of the evaluation images",
            {"--eval-images": args.eval_images, "--seeds": args.seeds},
            bytes=8.0 * runs * args.eval_images * P * P,
            flops=2.0 * runs * args.n_test * layer,
            instead="fewer --eval-images or --seeds",
        ),
    ]
