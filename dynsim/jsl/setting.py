"""The JSL setting (Jelassi, Sander, Li 2022) as dynsim presents it, registered through the entry
point `jsl = "dynsim.jsl.setting:SETTING"` of the group `dynsim.settings` (pyproject.toml): its two
levels with the options their specs accept (`reduced.jsl.spec`, `full.jsl.spec`), the claims
`check-theorems jsl` judges with their names and ladders, the derivation, the sweep and JSL's own
commands (its figures, `dynsim.jsl.figures`, and `transfer`, `dynsim.jsl.transfer`). `compare`,
`check-theorems` and `derive` are the core's (`dynsim.cli.runs`); the work they call is in
`dynsim.jsl.hooks`, `dynsim.jsl.sweep` and `dynsim.jsl.resources`, named below, since importing
them loads the levels (or, for the estimates, reads the names declared here)."""

from __future__ import annotations

import functools

from dynsim import runoptions
from dynsim.claims import EXIT_TEXT
from dynsim.cli import options
from dynsim.setting import (
    STABILITY,
    VERDICT,
    Command,
    Ref,
    Setting,
    SweepSpec,
    SweepTable,
    time_name,
)
from dynsim.images import jsl_options
from dynsim.verbs import Claims, Derivation, Level, Option
from full.jsl import spec as full_spec
from reduced.jsl import spec as reduced_spec

from . import checks, figures, realistic_plan, transfer
from .config import DTYPES, FIELD_HELP, MAX_DERIVE_C, MAX_P, PARTITIONS, TEMPERATURES, JSLConfig
from .events import EVENTS
from .mutations import CATALOGUE

HOOKS = "dynsim.jsl.hooks"
RESOURCES = "dynsim.jsl.resources"
WORK = "dynsim.jsl.sweep"

COROLLARY = "Lemma 4.3 corollary"
IDEALIZED = ("Lemma 4.1", "Lemma 4.3", COROLLARY, "Theorem 4.1", "Theorem 3.1")
REALISTIC = (
    "Lemma 4.2 (realistic)",
    "Theorem 4.2",
    "Theorem 5.1",
    "Figure 2",
)
CLAIMS = IDEALIZED + REALISTIC

# Theorem 4.1's default sizes: exact class sums, flow to t = 1e6 (docs/jsl.md 12)
LADDER = (36, 40, 44, 48)
QUICK_LADDER = (32, 36, 40)  # CI-sized: seconds per point
# the flow needs an exact class sum: D = 64 has 15.1 million classes (docs/benchmarks.md l)
MAX_FLOW_D = 64

REDUCED = Level(
    simulate="reduced.jsl.simulation:simulate",
    options=options.level_options(reduced_spec.ReducedOptions),
    flow=True,
    validate=reduced_spec.validate_reduced,
    describe=f"{HOOKS}:describe_reduced",
    report=f"{HOOKS}:report",
)

FULL = Level(
    simulate="full.jsl.simulation:simulate",
    options=options.level_options(full_spec.FullOptions),
    modes=full_spec.MODES,
    mode_help=full_spec.MODE_HELP,
    unread=full_spec.UNREAD,
    validate=full_spec.validate_full,
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
        None,
        "the realistic runs and the GLM of each judged point, averaged or counted per claim; "
        f"fewer than 6 cannot decide Theorem 4.2 (derived: {realistic_plan.CHECK_SEEDS}, "
        f"--plan decide {realistic_plan.DECIDE.seeds})",
        verbs=("check-theorems",),
    ),
    Option(
        "--plan",
        "the realistic runs' plan: default, quick (--quick's) or decide (Theorem 4.2 at N = "
        f"{':'.join(map(str, realistic_plan.DECIDE.n_ladder))} with "
        f"{realistic_plan.DECIDE.seeds} seeds, docs/jsl.md §13; hours on 2 cores, each seed stored "
        "in --out)",
        choices=tuple(realistic_plan.PLANS),
        default=None,
        verbs=("check-theorems",),
    ),
    Option(
        "--quick",
        f"CI-sized: Theorem 4.1's ladder D = {', '.join(map(str, QUICK_LADDER))} "
        f"instead of {', '.join(map(str, LADDER))}, a smaller GLM training set",
        action="store_true",
        verbs=("check-theorems",),
    ),
    Option(
        "--sizes",
        "Theorem 4.1's ladder of D, at least 3 sizes, each with q(D - C) = the judged point's "
        f"(default: {','.join(map(str, LADDER))}; at most D = "
        f"{MAX_FLOW_D}, the exact class sum)",
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

CHECK_THEOREMS = Claims(
    plan=f"{HOOKS}:check_plan",
    options=CHECK_OPTIONS,
    defaults=CHECK_DEFAULTS,
    why=CHECK_WHY,
    names=CLAIMS,
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

TIMES = tuple(time_name(e) for e in EVENTS)  # t0, t1_attention, ...: eta * steps
SWEEP_DEFAULTS = {"mode": "exact", "replicates": None, "confidence": runoptions.CONFIDENCE}
NOT_OFFERED = {
    "reduced_patch_association": "Definition 2.2 at the reduced state is one 0/1 flag for every "
    "row (Lemma 4.1), min(sigma_A, gamma) > rho: 1 from the first step wherever gamma >= rho "
    "(Lemma 4.3), 0 where the attention anti-associates (q = 0.9 at D = 9), so a phase diagram of "
    "it is one colour; final_attention_ratio grades it ((C-1) Gamma / ((D-C) Xi) = (C-1)/(D-C) "
    "exp((gamma - rho)/tau) at the end: below (C-1)/(D-C) when anti-associated, above 1 once the "
    "sets are learned, T1_attention); full_patch_association is the full level's",
}

# the flow's refusals need the reduced sums (JAX): loaded only for --method flow
CHECK_FLOW = Ref(f"{WORK}:check_flow_point")


def validate_point(cfg: JSLConfig, options: dict, level: str) -> None:
    """Refuse, before any work, a point its levels cannot run: the reduced sum's options and its
    int64 moments, the flow's sum and t_max, the full level's mode, replicates and exact size
    (`reduced_spec`, `full_spec`)."""
    if level != "full":
        reduced_spec.check_sum_options(**{k: options.get(k) for k in reduced_spec.SUM_OPTIONS})
        reduced_spec.check_moments_fit(cfg.D, cfg.C, cfg.p)
        if options.get("method") == "flow":
            CHECK_FLOW(cfg, options)
    if level != "reduced":
        mode, replicates = options.get("mode", "exact"), options.get("replicates")
        full_spec.validate_run_options(cfg, mode, replicates)


SWEEP = SweepSpec(
    reduced=f"{WORK}:reduced_group",
    full=f"{WORK}:full_group",
    group=f"{WORK}:level_group",
    check=validate_point,
    summary=f"{WORK}:point_summary",
    reduced_options=reduced_spec.SUM_OPTIONS,
    defaults=SWEEP_DEFAULTS,
    traced=tuple(JSLConfig.NUMBERS) + ("seed",),
    seeded=f"{WORK}:seeded",
    table=SweepTable(
        heatmaps=("T1_attention", "final_error", "final_attention_ratio"),
        columns=("final_loss", "final_error", "T1_attention"),
        extra_columns=("sum_method",),
        example="JSL grid, e.g. --D 16,36 --C 4 --p 3,5 --q 0.2,0.3,0.4 --seeds 4",
        level_summaries=tuple(k for e in EVENTS + TIMES for k in (e, e + "_censored"))
        + (
            "final_loss",
            "final_error",
            "patch_association",
            "final_attention_ratio",
            "final_alpha",
            "final_gamma",
            "final_rho",
            "nonfinite_from_step",
        )
        + STABILITY,
        point_summaries=(
            "sum_method",
            "configurations",
            "dropped_probability",
            "loss_bound",
            "loss_se_mc",
        )
        + VERDICT,
        not_offered=NOT_OFFERED,
    ),
)

COMMANDS = (
    Command(
        "figure",
        "jsl-fig4",
        figures.fig4_arguments,
        functools.partial(figures.run_figure, name="jsl-fig4"),
        estimate=f"{RESOURCES}:estimate_realistic",
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
        figures.fig2_arguments,
        functools.partial(figures.run_figure, name="jsl-fig2"),
        estimate=f"{RESOURCES}:estimate_realistic",
        help="JSL Figure 2: low test error without patch association on CNN-labelled Gaussian data",
        description="JSL Figure 2: iid standard Gaussian patches labelled by a "
        "one-hidden-layer CNN with cubic activation over the sets S_l; the "
        "positional-attention model is trained from a random start. Writes "
        "jsl-fig2.png and jsl-fig2.npz.",
    ),
    Command(
        "transfer",
        "jsl",
        transfer.arguments,
        transfer.run,
        estimate=f"{RESOURCES}:estimate_transfer",
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
        jsl_options.arguments,
        "dynsim.images.cli_jsl:run",
        estimate=jsl_options.estimate,
        verb_help="run a paper's real-image experiment in miniature (sklearn digits)",
        help="JSL Section 6 on the digits: positional vs standard attention vs a CNN on permuted "
        "images, and the positional encodings' localization",
        description=jsl_options.DESCRIPTION,
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
    reduced=REDUCED,
    full=FULL,
    checks=checks.CHECKS,
    claims=CHECK_THEOREMS,
    derive=DERIVATION,
    plot=f"{HOOKS}:plot",
    descriptions=DESCRIPTIONS,
    estimates={
        "compare": f"{RESOURCES}:estimate_compare",
        "check-theorems": f"{RESOURCES}:estimate_check",
        "derive": f"{RESOURCES}:estimate_derive",
    },
    sweep=SWEEP,
    commands=COMMANDS,
    field_help=FIELD_HELP,
    resources=f"{RESOURCES}:needs",
    field_choices={"temperature": TEMPERATURES, "partition": PARTITIONS, "dtype": DTYPES},
    mutations=CATALOGUE,
)
