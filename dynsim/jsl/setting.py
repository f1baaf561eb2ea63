"""The JSL setting (Jelassi, Sander, Li 2022) as a plugin: registered through the entry point
`jsl = "dynsim.jsl.setting:SETTING"` of the group `dynsim.settings` (pyproject.toml).

A light record: the levels, the checks, the sweep and each command's work are "module:attr"
references, loaded on first use; the config (pure Python) and the levels' declarations
(`arguments`) are all `--help` reads. `compare`, `check-theorems` and `derive` are the core's
(`dynsim.cli.runs`); JSL's own commands are its figures and `transfer`."""

from __future__ import annotations

import functools

from dynsim.claims import EXIT_TEXT
from dynsim.setting import Command, Ref, Setting

from . import arguments
from .config import DTYPES, FIELD_HELP, PARTITIONS, TEMPERATURES, JSLConfig

RUN_FIGURE = Ref("dynsim.jsl.cli_figures:run_figure")

COMMANDS = (
    Command(
        "figure",
        "jsl-fig4",
        "dynsim.jsl.figure_options:fig4_arguments",
        functools.partial(RUN_FIGURE, name="jsl-fig4"),
        estimate="dynsim.jsl.resources:estimate_realistic",
        help="JSL Figure 4: a realistic run learns patch association",
        description="JSL Figure 4 from a realistic run (E): (1) the same-set mask, (2) the "
        "learned A, (3) test error against steps with the GLM and Bayes reference "
        "lines, (4) cos(w*, v) against steps. Writes jsl-fig4.png and "
        "jsl-fig4.npz. Defaults: the recipe of docs/derivations/jsl.md §6 (D=16, "
        "C=4, q=0.5, unit temperature, N=20000).",
    ),
    Command(
        "figure",
        "jsl-fig2",
        "dynsim.jsl.figure_options:fig2_arguments",
        functools.partial(RUN_FIGURE, name="jsl-fig2"),
        estimate="dynsim.jsl.resources:estimate_realistic",
        help="JSL Figure 2: low test error without patch association on CNN-labelled Gaussian data",
        description="JSL Figure 2: iid standard Gaussian patches labelled by a "
        "one-hidden-layer CNN with cubic activation over the sets S_l; the "
        "positional-attention model is trained from a random start. Writes "
        "jsl-fig2.png and jsl-fig2.npz.",
    ),
    Command(
        "transfer",
        "jsl",
        "dynsim.jsl.figure_options:transfer_arguments",
        "dynsim.jsl.cli_figures:run_transfer",
        estimate="dynsim.jsl.resources:estimate_transfer",
        verb_help="pretrain, then fine-tune v on a new feature (Section 5)",
        description="JSL Section 5 (Theorems 5.1, 5.2): pretrain on the realistic problem (E), "
        "then on a downstream feature fine-tune only v, from N(0, omega^2), on N~ "
        "samples with A frozen: (a) the pretrained A, (b) A at initialization, (c) "
        "a GLM baseline. Prints test error against N~ and writes transfer.png, "
        "transfer.json.",
    ),
    Command(
        "experiment",
        "jsl-images",
        "dynsim.images.jsl_options:arguments",
        "dynsim.images.cli_jsl:run",
        estimate="dynsim.images.jsl_options:estimate",
        verb_help="run a paper's real-image experiment in miniature (sklearn digits)",
        help="JSL Section 6 on the digits: positional vs standard attention vs a CNN on permuted "
        "images, and the positional encodings' localization",
        description=Ref("dynsim.images.jsl_options:DESCRIPTION"),
    ),
)

DESCRIPTIONS = {
    "compare": "Compare reduced (alpha, gamma, rho) population dynamics with full-matrix "
    "GD on the JSL model (T).",
    "check-theorems": "Judge JSL's claims (docs/jsl.md 12-13): Lemma 4.1 (full exact run), Lemma "
    "4.3 (d gamma > 0 at every saved state), Theorem 4.1 (gap to the Bayes "
    "error against f* decreasing over the ladder D = 36, 40, 44, 48 with q(D - "
    "C) kept; --quick: 32, 36, 40; --sizes), Theorem 3.1 (monotone-link GLMs "
    "against f*), and the realistic claims (Lemma 4.2, Theorems 4.2, 5.1, "
    "Figure 2); unit temperature judged, sqrt_d reported. Defaults: D=36, C=4, "
    "q=0.5, eta=0.005, T = 2e8 steps: the idealized reduced runs are the "
    "gradient flow (the eta -> 0 limit of GD) to t = eta T = 1e6, and the GD "
    "runs cap their steps (Lemma 4.1 60,000, GLM 500, the realistic runs at their "
    "plan's horizon, --realistic-sizes T), so --steps reaches every trained run. "
    "Prints a table of verdicts (holds, fails, not "
    'applicable, not evaluated) and measurements; --json prints {"config", "claims", '
    '"measurements"}. ' + EXIT_TEXT,
    "derive": "Print the per-configuration reduced JSL loss built in sympy and its "
    "derivatives in alpha, gamma, rho (D, beta, tau, nu stay symbols).",
}

SETTING = Setting(
    name="jsl",
    description="Jelassi, Sander, Li (2022): positional-attention ViT",
    config=JSLConfig,
    reduced=arguments.REDUCED,
    full=arguments.FULL,
    checks="dynsim.jsl.checks:CHECKS",
    claims=arguments.CLAIMS,
    derive=arguments.DERIVATION,
    plot="dynsim.jsl.hooks:plot",
    descriptions=DESCRIPTIONS,
    estimates={
        "compare": "dynsim.jsl.resources:estimate_compare",
        "check-theorems": "dynsim.jsl.resources:estimate_check",
        "derive": "dynsim.jsl.resources:estimate_derive",
    },
    sweep="dynsim.jsl.sweep_spec:SWEEP",
    commands=COMMANDS,
    field_help=FIELD_HELP,
    resources="dynsim.jsl.resources:needs",
    field_choices={"temperature": TEMPERATURES, "partition": PARTITIONS, "dtype": DTYPES},
)
