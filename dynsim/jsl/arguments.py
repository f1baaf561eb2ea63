"""What JSL declares for the core's verbs, without the levels (`--help` reads it from here): the two
levels as `dynsim.verbs.Level`s with their options and modes, the claims and the derivation. The
work they name is in `dynsim.jsl.hooks`, loaded when a command runs."""

from __future__ import annotations

from dynsim.cli import options
from dynsim.setting import Ref
from dynsim.verbs import Claims, Derivation, Level, Option

from . import checklist, realistic_plan
from .config import MAX_DERIVE_C, MAX_P
from .run_checks import DEFAULT_SEEDS, MODES

HOOKS = "dynsim.jsl.hooks"
CHECKS = "dynsim.jsl.run_checks"  # light: loading the levels' checks imports no level

# config fields a mode of the full level does not read (the reduced level reads none of them)
UNREAD = {
    "exact": {
        "N": "--mode exact enumerates the population (N is --mode sampled's batch and --mode "
        "realistic's training set)",
        "omega": "--mode realistic's random start only",
        "n_test": "--mode realistic's test set only",
    },
    "sampled": {
        "omega": "--mode realistic's random start only",
        "n_test": "--mode realistic's test set only",
    },
    "realistic": {},
}

FULL_OPTIONS = (
    Option(
        "--replicates",
        f"independent runs in --mode sampled, for the Monte Carlo band (default: {DEFAULT_SEEDS})",
        type=int,
        verbs=("compare", "sweep"),
        modes=("sampled",),
    ),
    options.seeds(
        None,
        "--mode realistic only: the runs of each N, one vmapped program, averaged with "
        f"a standard error ({DEFAULT_SEEDS} when left out)",
        modes=("realistic",),
    ),
    Option(
        "--ladder",
        "--mode realistic: training-set sizes for the approach table (Theorem 4.2) "
        "(default: N/16, N/4, N)",
        type=options.int_list,
        metavar="N1,N2,...",
        modes=("realistic",),
    ),
)

# how a sweep's reduced level evaluates the population sum (`reduced.jsl.sums.choose`)
SUM_OPTIONS = (
    Option(
        "--max-configurations",
        "reduced level: most moment classes summed; above it the sum is truncated or sampled "
        "(default: 20,000,000; D = 64, C = 4, p = 3 has 15.1 million)",
        type=int,
        verbs=("sweep",),
    ),
    Option(
        "--tail-target",
        "reduced level: largest probability a truncation may drop (default: 1e-12)",
        type=float,
        verbs=("sweep",),
    ),
    Option(
        "--mc-samples",
        "reduced level: sampled configurations when neither fits (default: 1000000)",
        type=int,
        verbs=("sweep",),
    ),
)

REDUCED = Level(
    simulate="reduced.jsl:simulate",
    options=SUM_OPTIONS,
    flow=True,
    validate=f"{CHECKS}:validate_reduced",
    describe=f"{HOOKS}:describe_reduced",
    report=f"{HOOKS}:report",
)

FULL = Level(
    simulate="full.jsl:simulate",
    options=FULL_OPTIONS,
    modes=MODES,
    mode_help="full level: exact population loss by enumeration; a fresh batch of N samples each "
    "step; or realistic (E): N fixed samples, random start (omega), held-out test set (default: "
    "exact)",
    unread=UNREAD,
    validate=f"{CHECKS}:validate_full",
    describe=f"{HOOKS}:describe_full",
    joint={"realistic": Ref(f"{HOOKS}:compare_realistic")},
)

# in the theorems' regime: sign-of-count error 0.161 against y, 0.204 against f*, q(D - C) = C^2;
# eta 0.005 (at D = 36 and unit temperature GD diverges at 0.02 and oscillates at 0.01); T = 2e8
# steps, i.e. t = eta T = 1e6: the idealized claims run the gradient flow to that time (seconds),
# the GD runs cap their steps (docs/jsl.md 12); nu = 1e-4 puts alpha0 = nu^(1/(p-1)) = 0.01 below
# the Event-I plateau (0.073 at D = 36), the premise of Lemma 4.3: at the config's nu = 0.01,
# alpha0 = 0.1 lies above it and alpha only falls (no Event I)
CHECK_DEFAULTS = dict(
    D=36,
    C=4,
    q=0.5,
    nu=1e-4,
    eta=0.005,
    temperature="unit",
    steps=200_000_000,
    record_every=100,
    N=4000,
    n_test=8192,
)
CHECK_WHY = (
    "the theorems are judged in their regime, q(D - C) = C^2 at D = 36, nu small enough for "
    "Event I (alpha0 below its plateau), to t = eta T = 1e6 (docs/jsl.md 12), not at the small "
    "problem `compare jsl` runs in seconds"
)

CHECK_OPTIONS = (
    options.seeds(
        realistic_plan.CHECK_SEEDS,
        "the realistic runs and the GLM of each judged point, averaged or counted per claim; "
        "fewer than 6 cannot decide Theorem 4.2",
        verbs=("check-theorems",),
    ),
    Option(
        "--quick",
        f"CI-sized: Theorem 4.1's ladder D = {', '.join(map(str, checklist.QUICK_LADDER))} "
        f"instead of {', '.join(map(str, checklist.LADDER))}, a smaller GLM training set",
        action="store_true",
        verbs=("check-theorems",),
    ),
    Option(
        "--sizes",
        "Theorem 4.1's ladder of D, at least 3 sizes, each with q(D - C) = the judged point's "
        f"(default: {','.join(map(str, checklist.LADDER))}; at most D = "
        f"{checklist.MAX_FLOW_D}, the exact class sum)",
        type=options.int_list,
        metavar="D1,D2,D3,...",
        verbs=("check-theorems",),
    ),
    Option(
        "--realistic-sizes",
        "the realistic runs' problem and ladder (Lemma 4.2, Theorems 4.2, 5.1), any of D, C, q, "
        "eta, T (GD steps, capped by --steps), N (the ladder, joined by ':') and dtype (the "
        "realistic runs' own, set apart from --dtype); e.g. "
        "D=10,C=2,q=0.5,eta=0.015,T=60000,N=1000:4000:16000,dtype=float64 (default: "
        + realistic_plan.describe_sizes(realistic_plan.FULL)
        + ")",
        metavar="KEY=VALUE,...",
        verbs=("check-theorems",),
    ),
)

CLAIMS = Claims(
    plan=f"{HOOKS}:check_plan",
    options=CHECK_OPTIONS,
    defaults=CHECK_DEFAULTS,
    why=CHECK_WHY,
    names=checklist.CLAIMS,
    cluster="the realistic seeds",
    out_help="output directory; each seed of the realistic runs is stored in DIR/points as it "
    "finishes, so the same command run again reads back every seed an interruption left finished",
)

DERIVATION = Derivation(
    render=f"{HOOKS}:derive",
    config=False,
    options=(
        Option(
            "--C",
            f"patches per set, 2 <= C <= {MAX_DERIVE_C}: sympy's time grows with the (C+1)(C+2)/2 "
            "set types (default: 3)",
            # checked while parsing, before sympy is imported
            type=options.integer_in(
                2, MAX_DERIVE_C, why=" (sympy's time grows with the (C+1)(C+2)/2 set types)"
            ),
            default=3,
            verbs=("derive",),
        ),
        Option(
            "--p",
            f"activation degree, odd, 3 <= p <= {MAX_P} (default: 3)",
            type=options.integer_in(
                3, MAX_P, odd=True, why=" (beyond it x^p overflows float64 from |x| = 2 on)"
            ),
            default=3,
            verbs=("derive",),
        ),
    ),
)
