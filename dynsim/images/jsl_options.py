"""The options of `dynsim experiment jsl-images`, its config and its resource estimate, light:
--help and a refused value import no JAX (the run is `dynsim.images.cli_jsl`; docs/images.md
section 1)."""

from __future__ import annotations

import dataclasses

from dynsim import resources
from dynsim.cli import options

__all__ = [
    "Config", "Run", "arguments", "config", "estimate", "runs", "DESCRIPTION", "NAME", "LEARNERS",
    "CONDITIONS",
]  # fmt: skip

# the learners of dynsim.images.jsl_models: three ViT blocks (attention vanilla, positional, none)
LEARNERS = ("vit", "positional", "no-attention", "cnn")
CONDITIONS = ("original", "permuted")


@dataclasses.dataclass(frozen=True)
class Config:
    """The experiment's sizes (the command's defaults: docs/images.md §1)."""

    patch: int = 2
    seeds: int = 5
    steps: int = 1000
    batch: int = 64
    lr: float = 0.003
    width: int = 32
    heads: int = 4
    n_test: int = 360
    k: int = 4  # jsl_localization.K_DEFAULT
    translations: bool = True
    seed: int = 0
    dtype: str = "float32"

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class Run:
    """One training of every seed: a learner on a condition, with or without the random
    translations, P learned or frozen at its start."""

    learner: str
    condition: str
    translations: bool
    frozen: bool = False

    @property
    def label(self) -> str:
        """'vit permuted', 'vit permuted no translations', 'vit permuted P frozen', ..."""
        extra = ("" if self.translations else " no translations") + " P frozen" * self.frozen
        return f"{self.learner} {self.condition}{extra}"


def runs(cfg: Config) -> list[Run]:
    """Every training: the ViT and the CNN on original and permuted digits (Figure 5a), the
    positional-attention and no-attention blocks on permuted digits, and the ViT on permuted
    digits with the translations switched and with P frozen (the localization's controls)."""
    t = cfg.translations
    return [
        *(Run(m, c, t) for m in ("vit", "cnn") for c in CONDITIONS),
        *(Run(m, "permuted", t) for m in ("positional", "no-attention")),
        Run("vit", "permuted", not t),
        Run("vit", "permuted", t, frozen=True),
    ]


NAME = "jsl-images"
DESCRIPTION = (
    "JSL Section 6 and Figure 5 in miniature on the 8 x 8 digits scikit-learn ships: trains one "
    "pre-LN ViT block with learned positional encodings P added to the tokens, the same block with "
    "positional attention (Definition 3.2: logits from P only), the block without attention (a "
    "control) and a small CNN, on original and patch-permuted digits, several seeds each, with "
    "random translations of up to 1 pixel of the original image before patching and permutation "
    "(--no-translations: none); test accuracies with 95 % Student-t seed intervals; the rank "
    "correlation between the similarities p_i^T p_j of the ViT trained on permuted digits and "
    "minus the grid distance after the inverse permutation, before it, without translations and "
    "with P frozen, against random encodings, the top-k distance beside it. Judges three claims "
    "(positional ~ standard attention; the ViT keeps its accuracy on permuted digits while the "
    "CNN loses it; the learned positions are localized after the inverse permutation) on paired "
    "per-seed intervals and reports whether the localization needs attention (against the "
    "no-attention block). Writes jsl-images.json and jsl-images.png. Exit 0 when every claim "
    "holds, 1 when some claim fails, 3 when none fails but some claim is not applicable or not "
    "evaluated, 2 on invalid input."
)
DIGITS = 1797  # sklearn's digits


def arguments(parser, setting) -> None:
    """The options of `experiment jsl-images`."""
    d, at_least = Config(), options.at_least
    models = parser.add_argument_group("data and models")
    options.declare(
        models,
        [
            ("--patch", (1, 2), d.patch,
             "patch side: 2 (a 4 x 4 grid, 16 positions) or 1 (8 x 8, 64 positions)"),
            ("--width", at_least(1), d.width,
             "width of the blocks' tokens and P, and the CNN's channels"),
            ("--heads", at_least(1), d.heads, "attention heads, a divisor of --width"),
            ("--dtype", ("float32", "float64"), d.dtype, "dtype of training"),
        ],
    )  # fmt: skip
    models.add_argument(
        "--no-translations", dest="translations", action="store_false",
        help="train every learner without the random translations of up to 1 pixel (default: "
        "translated)",
    )  # fmt: skip
    options.declare(
        parser.add_argument_group("training and evaluation"),
        [
            ("--steps", at_least(1), d.steps,
             "Adam steps per learner (a cosine decay of the learning rate to 0 over them)"),
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
        lr=args.learning_rate, width=args.width, heads=args.heads, n_test=args.n_test,
        k=args.top_k, translations=args.translations, seed=args.seed, dtype=args.dtype,
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
    if cfg.width % cfg.heads:
        raise ValueError(
            f"--heads = {cfg.heads} is invalid: must divide --width = {cfg.width} (the heads "
            "split the width)"
        )
    if cfg.k > D - 1:
        raise ValueError(
            f"--top-k = {cfg.k} is invalid: at most {D - 1} (the other positions "
            f"of {D} at --patch {cfg.patch})"
        )
    return cfg


# dynsim.resources times work at 1e9 operations a second, a rate set for element-wise steps; these
# learners are dense products, which XLA runs about 20x faster on the CPU (the default's count
# against its measured CPU time: docs/benchmarks.md)
MATMUL = 20.0
MLP_RATIO = 4  # the blocks' MLP hidden width over their width, the ViT's


def _per_image(learner: str, D: int, d: int, w: int) -> int:
    """Multiply-adds times 2 of one forward of `learner` on one image."""
    if learner == "cnn":  # two 3 x 3 convolutions on the 64 pixels
        return 2 * 64 * (9 * w + 9 * w * w)
    attention = 0 if learner == "no-attention" else 4 * w * w + 2 * D * w  # Q, K, V, O, mixing
    return 2 * D * (d * w + attention + 2 * MLP_RATIO * w * w)  # embedding, attention, MLP


def estimate(args) -> list:
    """The options checked (`config`), then what a run holds and does: every seed's digits, the
    minibatches' activations and the losses; per step of each training (`runs`), the forward
    and backward (about three forwards) of its learner on a minibatch."""
    cfg = config(args)  # the options' checks first: a refused value imports no JAX
    D, d, w = (8 // cfg.patch) ** 2, cfg.patch**2, cfg.width
    work = sum(_per_image(r.learner, D, d, w) for r in runs(cfg))
    opts = {"--steps": args.steps, "--seeds": args.seeds, "--batch-size": args.batch_size}
    return [
        resources.Need(
            "training: steps x seeds x trainings x batch x forward and backward",
            opts,
            bytes=8.0 * cfg.seeds * (3 * DIGITS * 64 + cfg.steps + cfg.batch * D * MLP_RATIO * w),
            flops=3.0 * cfg.seeds * cfg.steps * cfg.batch * work / MATMUL,
            instead="fewer --steps or --seeds, or a smaller --batch-size",
        )
    ]
