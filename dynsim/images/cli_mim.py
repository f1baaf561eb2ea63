"""`dynsim experiment mim-images`: the command's options and its run (MIM Section 6 in miniature on
the digits; docs/images.md section 2)."""

from __future__ import annotations

import argparse
import math
import os

from dynsim import claims, environment, resources
from dynsim.cli import options, output

from . import digits, mim_experiment, mim_plotting
from .mim_model import OBJECTIVES

__all__ = ["arguments", "run", "estimate", "DESCRIPTION", "NAME"]

NAME = "mim-images"
DEFAULTS = mim_experiment.Config()
DESCRIPTION = (
    "MIM Section 6 in miniature on the 8 x 8 digits scikit-learn ships: the same one-layer "
    "softmax attention (patches with one-hot positional encodings, merged query-key Q from 0, a "
    "linear read-out) trained by masked reconstruction and by a supervised objective (and, with "
    "--objectives, a contrastive one), several seeds each. Compares the attention diversity of "
    "Section 6 (top-k coordinates, ties to the lower patch index) and the average attention "
    "distance, with 95 % Student-t seed intervals, and judges 'masked reconstruction learns "
    "more diverse attention' on the paired per-seed difference's interval. Writes "
    "mim-images.json and mim-images.png. Exit 0 when every claim holds, 1 otherwise, 2 on "
    "invalid input."
)


def _float_in(low: float, high: float, what: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and low < value < high):
            raise argparse.ArgumentTypeError(f"{text!r} is invalid: {what}")
        return value

    parse.__name__ = "float"
    return parse


def _objectives(text: str) -> list:
    names = [t.strip() for t in text.split(",")]
    bad = [n for n in names if n not in OBJECTIVES]
    if not names or bad or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(
            f"{text!r} is invalid: a comma-separated list of distinct names of {OBJECTIVES}"
        )
    return names


_objectives.__name__ = "list of str"


def arguments(parser, setting) -> None:
    """The options of `experiment mim-images`."""
    at_least = options.at_least
    g = parser.add_argument_group("data and model")
    g.add_argument(
        "--patch",
        type=int,
        choices=(1, 2),
        default=DEFAULTS.patch,
        help="patch side: 2 (a 4 x 4 grid, P = 16) or 1 (8 x 8, P = 64) (default: 2)",
    )
    g.add_argument(
        "--mask-ratio",
        type=_float_in(0.0, 1.0, "gamma must lie in (0, 1)"),
        default=DEFAULTS.mask_ratio,
        help="masking ratio gamma: round(gamma P) patches masked per image "
        f"(Definition 2.5) (default: {DEFAULTS.mask_ratio})",
    )
    g.add_argument(
        "--width",
        type=at_least(1),
        default=DEFAULTS.width,
        help=f"width of the value W^V (default: {DEFAULTS.width})",
    )
    g.add_argument(
        "--objectives",
        type=_objectives,
        default=list(DEFAULTS.objectives),
        help="objectives to train, comma-separated, of masked, supervised, "
        "contrastive (default: masked,supervised)",
    )
    g.add_argument(
        "--dtype",
        choices=("float32", "float64"),
        default=DEFAULTS.dtype,
        help=f"dtype of training (default: {DEFAULTS.dtype})",
    )
    g = parser.add_argument_group("training and evaluation")
    g.add_argument(
        "--steps",
        type=at_least(1),
        default=DEFAULTS.steps,
        help=f"Adam steps per model (default: {DEFAULTS.steps})",
    )
    g.add_argument(
        "--batch-size",
        type=at_least(2),
        default=DEFAULTS.batch,
        help=f"images per step (default: {DEFAULTS.batch})",
    )
    g.add_argument(
        "--learning-rate",
        type=_float_in(0.0, 10.0, "must lie in (0, 10)"),
        default=DEFAULTS.learning_rate,
        help=f"Adam's learning rate (default: {DEFAULTS.learning_rate})",
    )
    g.add_argument(
        "--n-test",
        type=at_least(2),
        default=DEFAULTS.n_test,
        help=f"test images per seed's split (default: {DEFAULTS.n_test})",
    )
    g.add_argument(
        "--eval-images",
        type=at_least(2),
        default=DEFAULTS.eval_images,
        help="test images whose attention is measured, the first of the test split "
        f"(default: {DEFAULTS.eval_images}, Section 6's count)",
    )
    g.add_argument(
        "--top-k",
        type=at_least(1),
        default=None,
        help="k of the attention diversity (default: min(10, P // 4))",
    )
    g = parser.add_argument_group("run")
    options.seeds_option(g, DEFAULTS.seeds, "intervals and the paired comparison are over them")
    g.add_argument(
        "--seed",
        type=at_least(0),
        default=DEFAULTS.seed,
        help="seed of the splits, initializations, batches and masks (default: 0)",
    )
    options.out_options(g)


def config(args) -> mim_experiment.Config:
    """The Config of `args`, refused (ValueError naming the option) when the sizes do not fit."""
    cfg = mim_experiment.Config(
        patch=args.patch, seeds=args.seeds, steps=args.steps, batch=args.batch_size,
        learning_rate=args.learning_rate, mask_ratio=args.mask_ratio, width=args.width,
        n_test=args.n_test, eval_images=args.eval_images, top_k=args.top_k,
        objectives=tuple(args.objectives), seed=args.seed, dtype=args.dtype,
    )  # fmt: skip
    n = 1797  # sklearn's digits
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
    """What a run holds and does: the digits and the training losses per seed, the evaluation's
    attention maps; the layer's forward on every batch and its backward (twice the forward)."""
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


def _table(summary: dict) -> str:
    def cell(v):
        return "-" if v is None else f"{v['mean']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"

    head = (
        f"{'objective':<12} {'diversity':>26} {'distance':>26} {'loss / base':>26} {'accuracy':>26}"
    )
    rows = [head, "-" * len(head)]
    for name, s in summary.items():
        rows.append(
            f"{name:<12} "
            + " ".join(
                f"{cell(s[k]):>26}" for k in ("diversity", "distance", "loss_ratio", "accuracy")
            )
        )
    return "\n".join(rows)


def run(args) -> int:
    """`dynsim experiment mim-images`."""
    cfg = config(args)
    try:
        digits.load(cfg.patch)  # the images extra: refused before any work when missing
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}

    def runner(label, steps, fn):
        return output.run_logged(f"{label} ({cfg.seeds} seeds)", steps, fn, timings, label)

    with environment.precision(cfg.dtype):
        result = mim_experiment.run(cfg, runner)
    found = mim_experiment.items(cfg, result)
    summary = mim_experiment.summary(result)
    meta = {"dtype": cfg.dtype, "device": environment.device(), "versions": environment.versions()}
    with output.Staged(args.out) as stage:
        mim_plotting.figure(
            result,
            stage.path(f"{NAME}.png"),
            f"MIM Section 6 in miniature: digits, P = {cfg.P}, gamma = {cfg.mask_ratio}, "
            f"{cfg.steps} steps, {cfg.seeds} seeds",
            meta,
        )
        settings = {**vars(cfg), "objectives": list(cfg.objectives), "k": cfg.k, "P": cfg.P}
        stage.commit(
            f"{NAME}.json",
            {
                **claims.to_dict(found, settings),
                "results": result,
                "summary": summary,
                "provenance": meta,
                "timings": timings,
                "invocation": output.invocation(args),
            },
        )
    print(_table(summary))
    print(claims.table(found))
    print(output.wrote(args.out, [f"{NAME}.png", f"{NAME}.json"]))
    return claims.exit_code(found)
