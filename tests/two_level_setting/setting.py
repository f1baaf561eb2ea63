"""The two-block setting's record: its levels, claims, derivation and sweep declared with
`dynsim.verbs`, their code given as "module:attr" references (hooks.py, levels.py), so reading the
record (`dynsim compare twoblock --help`) imports neither the levels nor JAX."""

from __future__ import annotations

from dynsim.setting import Checks, Setting, SweepSpec, SweepTable
from dynsim.verbs import Claims, Derivation, Level, Option

from .config import DTYPES, FORMS, MODES, TwoBlockConfig

HOOKS = "tests.two_level_setting.hooks"
LEVELS = "tests.two_level_setting.levels"
CLAIM_NAMES = ("monotone loss", "exact reduction")  # hooks.CLAIMS, without importing hooks

REDUCED = Level(
    simulate=f"{LEVELS}:reduced",
    options=(
        Option(
            "--form",
            "reduced level: recurrence (e' = c e iterated), closed (c^t e(0) in closed form) or "
            "first_order (the named approximation c = 1 - 2 eta k, judged with "
            "--approximation-tolerance) (default: recurrence)",
            choices=FORMS,
            default="recurrence",
            verbs=("compare", "sweep"),
        ),
        Option(
            "--approximation-tolerance",
            "with --form first_order: allowed |difference| as a fraction of each observable's "
            "largest magnitude, > 0 (default: 0.05)",
            type=float,
            default=0.05,
            checker=True,
        ),
    ),
    keywords=f"{HOOKS}:reduced_keywords",
    validate=f"{HOOKS}:validate_reduced",
    describe=f"{HOOKS}:describe_reduced",
    post=f"{HOOKS}:with_distance",
    report=f"{HOOKS}:report",
)

FULL = Level(
    simulate=f"{LEVELS}:full",
    options=(
        Option(
            "--replicates",
            "independent noisy runs in --mode noisy (default: 8)",
            type=int,
            metavar="R",
            verbs=("compare", "sweep"),
            modes=("noisy",),
        ),
    ),
    modes=MODES,
    mode_help="full level: exact GD on w, or noisy (N(0, sigma^2) added to every gradient "
    "coordinate, R replicate runs judged with a Student-t band) (default: exact)",
    unread={"exact": {"sigma": "--mode exact runs noiseless GD (sigma is --mode noisy's noise)"}},
    validate=f"{HOOKS}:validate_full",
    describe=f"{HOOKS}:describe_full",
    post=f"{HOOKS}:with_distance",
)

CLAIMS = Claims(
    plan=f"{HOOKS}:check_plan",
    options=(
        Option(
            "--form",
            "the reduced form the claims judge; first_order is the negative control of "
            "'exact reduction' (default: recurrence)",
            choices=FORMS,
            default="recurrence",
            verbs=("check-theorems",),
            group="claims",
        ),
    ),
    defaults={"steps": 60},
    why="60 steps take the default loss below 1e-5 (0.81^60 ~ 3e-6), where a rise would show",
    exclude={"sigma": "the claims judge noiseless GD", "seed": "noiseless GD draws nothing"},
    names=CLAIM_NAMES,
)

DERIVATION = Derivation(
    render=f"{HOOKS}:derive",
    options=(
        Option(
            "--expand",
            "print the contraction factors expanded (1 - 2 eta k + eta^2 k^2) instead of factored",
            action="store_true",
            verbs=("derive",),
        ),
    ),
    config=True,
)

SWEEP = SweepSpec(
    reduced=f"{HOOKS}:sweep_reduced",
    full=f"{HOOKS}:sweep_full",
    group=f"{HOOKS}:sweep_group",
    check=f"{HOOKS}:sweep_check",
    summary=f"{HOOKS}:summary",
    reduced_options=("form",),
    full_options=("mode", "replicates", "confidence"),
    defaults={"form": "recurrence", "mode": "exact", "replicates": None, "confidence": 0.999},
    traced=TwoBlockConfig.NUMBERS,
    seeded=f"{HOOKS}:seeded",
    table=SweepTable(
        heatmaps=("final_loss",),
        columns=("final_loss", "final_dist2"),
        example="two-block quadratic grid, e.g. --eta 0.1,0.2 --lam 2,3",
    ),
)

SETTING = Setting(
    name="twoblock",
    description="GD on a two-block diagonal quadratic (a test setting)",
    config=TwoBlockConfig,
    reduced=REDUCED,
    full=FULL,
    checks=Checks(
        compared=("err_a", "err_b", "loss", "dist2"),
        residuals={"spread": "max - min of w_i - 1 within a block: zero by symmetry"},
    ),
    claims=CLAIMS,
    derive=DERIVATION,
    sweep=SWEEP,
    field_choices={"dtype": DTYPES},
)
