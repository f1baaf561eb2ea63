"""The options of the JSL figures and the transfer experiment (`figure jsl-fig4`, `figure jsl-fig2`,
`transfer jsl`) and their checks on parsed values (`config_options(check=...)`, run by the command
line before the estimate and the work): light (pure Python), so `--help` and a refused value import
no level; the work is in `dynsim.jsl.cli_figures`."""

from __future__ import annotations

from dynsim.cli import options

from . import partition, transfer_args

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


# `transfer_args.validate_transfer_args`' keywords -> the options of `dynsim transfer jsl`
TRANSFER_OPTIONS = {
    "seeds": "--finetune-seeds",
    "steps": "--finetune-steps",
    "eta": "--finetune-eta",
    "n_tilde": "--n-tilde",
    "overlap": "--overlap",
}


def transfer_keywords(args) -> dict:
    """The keywords of `full.jsl.transfer.transfer` from the options of `dynsim transfer jsl` (an
    option left out: the library's default)."""
    given = {
        "overlap": args.overlap,
        "seeds": args.finetune_seeds,
        "n_tilde": None if args.n_tilde is None else tuple(args.n_tilde),
        "steps": args.finetune_steps,
        "eta": args.finetune_eta,
    }
    return {k: v for k, v in given.items() if v is not None}


def check_transfer(cfg, args) -> None:
    """Every transfer option (`transfer_args.validate_transfer_args`), before the pretraining;
    the messages name the options typed."""
    transfer_args.validate_transfer_args(cfg, **transfer_keywords(args), names=TRANSFER_OPTIONS)


def transfer_arguments(parser, setting) -> None:
    """Options of `transfer jsl`: every JSLConfig field (the pretraining), the downstream task,
    --out."""
    options.config_options(
        parser,
        setting,
        TRANSFER_DEFAULTS,
        "the Figure 4 recipe pretrained longer (50,000 steps) on "
        "fewer samples (N = 4000), which the transfer needs",
        check=check_transfer,
    )
    g = parser.add_argument_group("transfer")
    g.add_argument(
        "--overlap",
        type=float,
        default=0.0,
        help="<w~, w*> of the downstream feature, in [-1, 1] (default: 0)",
    )
    g.add_argument(
        "--n-tilde",
        type=options.int_list,
        default=None,
        metavar="N1,N2,...",
        help="downstream sample sizes (default: 8,16,32,64,128,256)",
    )
    options.seeds_option(
        g,
        8,
        "of the fine-tuning at each N~ (the pretraining is one run), averaged with a standard "
        "error",
        option="--finetune-seeds",
    )
    g.add_argument(
        "--finetune-steps",
        type=int,
        default=None,
        help="GD steps of the fine-tuning (default: the library's)",
    )
    g.add_argument(
        "--finetune-eta",
        type=float,
        default=None,
        help="fine-tuning learning rate (default: the library's)",
    )
    options.out_options(g)
