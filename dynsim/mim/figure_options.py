"""The options of the MIM figures (`figure mim-phases`, `figure mim-attention`), their descriptions
and their checks on parsed values: light (pure Python), so `--help` and a refused value import no
level; the work is in `dynsim.mim.cli_figures`."""

from __future__ import annotations

from dynsim.cli import options

from . import run_checks
from .arguments import APPROX_CHOICES
from .level_checks import approx_option, joint_size
from .run_checks import FIGURE

# mim-phases: the suggested settings of docs/derivations/mim-model.md §10d: Delta = +0.4 and Delta =
# -0.2.
PHASES_DEFAULTS = dict(P=1024, mask_ratio=0.5, eta=1.0, steps=3000, record_every=5)
ATTENTION_DEFAULTS = dict(steps=1000, record_every=50)
# Not read, so not listed: mim-phases takes its two runs' kappas from --kappa-pos/--kappa-neg (not
# --kappa-c/-s) and runs the reduced level only (no embedding dimension d, no samples N);
# mim-attention trains on the exact population loss (no samples N).
PHASES_UNREAD = {
    "kappa_c": "the two runs take --kappa-pos and --kappa-neg",
    "kappa_s": "the same",
    "d": "the reduced level has no embedding",
    "N": "the reduced level's loss is the population loss",
}
ATTENTION_UNREAD = {"N": "the model trains on the exact population loss"}
PHASES_DESCRIPTION = (
    "Reduced MIM dynamics (default approximation: mean_field, which keeps the PP correlations) at "
    "kappa = (0.9, 0.4) (Delta = +0.4) and (0.6, 0.4) (Delta = -0.2), side by side on a log-time "
    "axis: FP correlations of a local query (target, global, another local area) and of a global "
    "query, the predicted switch level -(Delta/2) log P, and the PP correlations. Writes "
    "mim-phases.png, mim-phases.npz (the plotted, log-spaced records), mim-phases.json."
)
ATTENTION_DESCRIPTION = (
    "Train the full MIM model (exact population GD), draw the attention of a local and a global "
    "query on the patch grid, and rank the trained attention by the attention diversity of "
    "Section 6 (top-k) and the average attention distance against the reference maps of "
    "check-theorems mim's diversity measurement (Theorem 4.1's ideal, a collapse, random logits) "
    "and against uniform and collapsed attention. Writes mim-attention.png and "
    "mim-attention.json."
)


def phases_arguments(parser, setting) -> None:
    """Options of `figure mim-phases`: every MIMConfig field it reads, the two runs' kappas, the
    approximation, --out."""
    options.config_options(
        parser,
        setting,
        PHASES_DEFAULTS,
        "the two phases need a large P (1024) and a long log-time horizon",
        PHASES_UNREAD,
        check=check_phases,
    )
    g = parser.add_argument_group("run")
    g.add_argument(
        "--kappa-pos",
        default="0.9,0.4",
        metavar="KC,KS",
        help="kappas of the Delta > 0 run (default: 0.9,0.4)",
    )
    g.add_argument(
        "--kappa-neg",
        default="0.6,0.4",
        metavar="KC,KS",
        help="kappas of the Delta < 0 run (default: 0.6,0.4)",
    )
    g.add_argument(
        "--approximation",
        choices=APPROX_CHOICES,
        default="mean_field",
        help="reduced approximation (default: mean_field; none is exact but only feasible for "
        "small P)",
    )
    options.out_options(g)


def attention_arguments(parser, setting) -> None:
    """Options of `figure mim-attention`: every MIMConfig field it reads, top-k, --out."""
    options.config_options(
        parser,
        setting,
        ATTENTION_DEFAULTS,
        "the attention maps are drawn after training to convergence",
        ATTENTION_UNREAD,
        check=check_attention,
    )
    g = parser.add_argument_group("run")
    g.add_argument(
        "--top-k",
        type=int,
        default=None,
        help="k of the diversity metric (default: min(10, P // 4))",
    )
    options.out_options(g)


def signed_configs(base, args) -> tuple:
    """`base` with the kappas of --kappa-pos and of --kappa-neg (each "KC,KS"): the Delta > 0 and
    Delta < 0 configs."""
    out = []
    for option, text in (("--kappa-pos", args.kappa_pos), ("--kappa-neg", args.kappa_neg)):
        try:
            kc, ks = (float(x) for x in text.split(","))
        except ValueError:
            raise ValueError(
                f"{option} = {text!r} is invalid: expected two numbers KC,KS, e.g. 0.9,0.4"
            ) from None
        try:
            out.append(base.replace(kappa_c=kc, kappa_s=ks))
        except ValueError as exc:  # the config names its field; the user gave this option
            raise ValueError(f"{option} = {text!r} is invalid: {exc}") from None
    return tuple(out)


def check_phases(cfg, args) -> None:
    """`figure mim-phases` runs the kappas of --kappa-pos and --kappa-neg: no explicit areas, both
    kappa pairs valid for the config, and the reduced level's options (`run_checks.check_reduced`;
    the exact joint-type size, K > 1 with --approximation none, is checked by the run:
    `check_phases_size`)."""
    if cfg.partitions is not None:
        raise ValueError(
            "--partitions is invalid for figure mim-phases: explicit areas override the "
            "kappas, so both runs would be the same; give the kappas with --kappa-pos and "
            "--kappa-neg"
        )
    for signed in signed_configs(cfg, args):
        run_checks.check_reduced(signed, approx_option(args.approximation), caller=FIGURE)


def check_phases_size(cfgs, approximation) -> None:
    """`figure mim-phases`'s exact joint-type size (K > 1 with --approximation none), in the
    figure's flags (no --samples), checked by the run: the joint types of a large P take long to
    build."""
    approx = run_checks.approximations(approx_option(approximation), FIGURE)
    for cfg in cfgs:
        joint_size(cfg, approx, caller=FIGURE)


def top_k(cfg, args) -> int:
    """k of the diversity metric: --top-k, else min(10, P // 4) (at least 1)."""
    return args.top_k if args.top_k is not None else max(1, min(10, cfg.P // 4))


def check_attention(cfg, args) -> None:
    """`figure mim-attention`: --top-k in [1, P], and the full level's mode exact fits
    (`run_checks.check_full`)."""
    k = top_k(cfg, args)
    if not 1 <= k <= cfg.P:
        raise ValueError(f"--top-k = {k} is invalid: must lie in [1, P] = [1, {cfg.P}]")
    run_checks.check_full(cfg, "exact", caller=FIGURE)
