"""The ICL setting (Zhang, Frei, Bartlett 2024: a linear self-attention layer learns linear models
in context) as a third-party package would declare it, registered through the entry point
`icl = "dynsim.icl.setting:SETTING"` of the group `dynsim.settings` (pyproject.toml): its two levels
with the options their specs accept (`reduced.icl.spec`, `full.icl.spec`), the claims
`check-theorems icl` judges, the derivation and the sweep. `compare`, `check-theorems`, `derive`
and `sweep` are the core's; the work they call is in `dynsim.icl.hooks`, named below, since
importing it loads the levels."""

from __future__ import annotations

from dynsim import runoptions
from dynsim.claims import EXIT_TEXT
from dynsim.cli import options
from dynsim.setting import STABILITY, VERDICT, Command, Setting, SweepSpec, SweepTable
from dynsim.verbs import Claims, Derivation, Level, Option
from full.icl import spec as full_spec

from . import figures, resources
from .mutations import CATALOGUE
from .config import DTYPES, MAX_N, MAX_TESTS, MODES, ICLConfig

HOOKS = "dynsim.icl.hooks"
WORK = "dynsim.icl.sweep"
CLAIM_NAMES = ("Theorem 4.1 limit", "Theorem 4.2 error", "Sec. 4.2 covariate shift")
SHIFT = 4.0  # the covariate shift's default: test covariates of covariance 4 Lambda
TESTS = 32768  # test prompts of the error claim's Monte Carlo


REDUCED = Level(
    simulate="reduced.icl.simulation:simulate",
    flow=True,
    describe=f"{HOOKS}:describe_reduced",
    report=f"{HOOKS}:report",
)

FULL = Level(
    simulate="full.icl.training:simulate",
    options=options.level_options(full_spec.FullOptions),
    modes=MODES,
    mode_help=full_spec.MODE_HELP,
    unread=full_spec.UNREAD,
    validate=full_spec.validate_full,
    describe=f"{HOOKS}:describe_full",
)

CLAIMS_GROUP = "the test prompts"
CHECK_THEOREMS = Claims(
    plan=f"{HOOKS}:check_plan",
    options=(
        Option(
            "--shift",
            f"covariate shift of Sec. 4.2: test covariates of covariance SHIFT x Lambda; 1 is no "
            f"shift (the claim is then not applicable) (default: {SHIFT:g})",
            type=options.float_in(0.0, float("inf"), "must be a finite number > 0"),
            default=SHIFT,
            verbs=("check-theorems",),
            group=CLAIMS_GROUP,
        ),
        Option(
            "--test-length",
            "examples M in each test prompt of Theorem 4.1's error (default: N)",
            type=options.integer_in(1, MAX_N),
            metavar="M",
            verbs=("check-theorems",),
            group=CLAIMS_GROUP,
        ),
        Option(
            "--tests",
            f"test prompts of the error's Monte Carlo, in 32 batches (default: {TESTS})",
            type=options.integer_in(32, MAX_TESTS),
            default=TESTS,
            verbs=("check-theorems",),
            group=CLAIMS_GROUP,
        ),
    ),
    exclude={"batch": "the claims train on the exact population loss"},
    names=CLAIM_NAMES,
)

DERIVATION = Derivation(render=f"{HOOKS}:derive")

SWEEP = SweepSpec(
    reduced=f"{WORK}:sweep_reduced",
    full=f"{WORK}:sweep_full",
    group=f"{WORK}:sweep_group",
    check=f"{WORK}:sweep_check",
    summary=f"{WORK}:summary",
    reduced_options=(),
    full_options=("mode", "replicates", "confidence"),
    defaults={"mode": "exact", "replicates": None, "confidence": runoptions.CONFIDENCE},
    traced=ICLConfig.NUMBERS,
    seeded=f"{WORK}:seeded",
    table=SweepTable(
        heatmaps=("learned_error", "learned_over_theorem"),
        columns=("final_gap", "final_loss"),
        extra_columns=("theorem_error", "learned_error", "learned_over_theorem"),
        example="ICL grid, e.g. --d 2,3,4 --N 5,10,20",
        level_summaries=("final_loss", "final_gap") + STABILITY,
        point_summaries=("theorem_error", "learned_error", "learned_over_theorem") + VERDICT,
    ),
)

COMMANDS = (
    Command(
        "figure",
        "icl-error",
        figures.arguments,
        figures.run,
        help="ICL: the trained layer's prediction error against N, the paper's formula and OLS",
        description="Zhang, Frei, Bartlett: for each prompt length N, train the full layer (exact "
        "population GD) and measure its prediction error on fresh prompts (Monte Carlo), beside "
        "Theorem 4.1's closed form and ordinary least squares on the same prompts. Writes "
        "icl-error.png and icl-error.json.",
    ),
)

DESCRIPTIONS = {
    "compare": "Compare the reduced (u, diag W11^KQ) dynamics, gradients derived in sympy, with "
    "GD on every entry of the linear self-attention layer's W^PV and W^KQ.",
    "check-theorems": "Judge Theorem 4.1's limit (u W11^KQ -> Gamma^-1) and prediction error on a "
    "new task, and Sec. 4.2's covariate shift, on the full layer trained by GD on the exact "
    "population loss (docs/icl.md §7). " + EXIT_TEXT,
    "derive": "Print the reduced loss built in sympy from the Gaussian moment identity, its "
    "gradients in u and a_k and the minimizer u a_k = 1/gamma_k.",
}

SETTING = Setting(
    name="icl",
    description="Zhang, Frei, Bartlett (2024): linear self-attention learns linear models "
    "in context",
    config=ICLConfig,
    reduced=REDUCED,
    full=FULL,
    checks="dynsim.icl.checks:CHECKS",
    claims=CHECK_THEOREMS,
    derive=DERIVATION,
    sweep=SWEEP,
    commands=COMMANDS,
    descriptions=DESCRIPTIONS,
    field_choices={"dtype": DTYPES},
    resources=resources.needs,
    mutations=CATALOGUE,
)
