"""The MIM setting (Huang, Wen, Chi, Liang 2024) as dynsim presents it, registered through the entry
point `mim = "dynsim.mim.setting:SETTING"` of the group `dynsim.settings` (pyproject.toml): its two
levels with the options their specs accept (`reduced.mim.spec`, `full.mim.spec`), the syntax its
config fields need, the claims `check-theorems mim` judges with their names and ladder, the
derivation, the sweep and MIM's own commands (its figures, `dynsim.mim.figures`). `compare`,
`check-theorems` and `derive` are the core's (`dynsim.cli.runs`); the work they call is in
`dynsim.mim.hooks`, `dynsim.mim.sweep` and `dynsim.mim.resources`, named below, since importing
them loads the levels."""

from __future__ import annotations

import argparse

from dynsim import inputs, runoptions
from dynsim.claims import EXIT_TEXT
from dynsim.cli import options
from dynsim.images import mim_options
from dynsim.setting import STABILITY, VERDICT, Command, Frames, Ref, Setting, SweepSpec, SweepTable
from dynsim.verbs import Claims, Derivation, Level, Option
from full.mim import spec as full_spec
from reduced.mim import spec as reduced_spec

from . import figures, frames
from . import mutations as planted
from .config import DTYPES, FIELD_HELP, MAX_P, PARTITIONS, MIMConfig

HOOKS = "dynsim.mim.hooks"
RESOURCES = "dynsim.mim.resources"
WORK = "dynsim.mim.sweep"

CLAIMS = (
    "Thm 4.1 loss gap",
    "F.3 two-phase",
    "rate ratio side",
    "Lemma 5.3 switch",
    "Lemma 5.3 (b,c) small",
    "Sec. 5.4 PP small",
    "App. E global one-phase",
)

LADDER = (256, 1024, 4096, 16384)  # the full ladder of perfect squares (grid areas)
# CI-sized (the tests and --quick): the smallest three grid sizes that realise the same Delta
# (0.404, 0.400, 0.396; P = 64 realises 0.44, another problem)
QUICK_LADDER = (256, 1024, 4096)
EPS = 0.01  # Theorem 4.1's epsilon ("for any 0 < eps < 1"); the loss gap must be <= EPS at T


def check_clusters(values: dict) -> None:
    """--K: an integer >= 1, and K P within the config's MAX_P at the full ladder's largest P (the
    config would name its field, not the option; --quick's largest P would allow K up to 1,024,
    whose mean field needs about 0.6 TB from K = 256 on)."""
    K = values["K"]
    if isinstance(K, bool) or not isinstance(K, int) or K < 1:
        raise ValueError(
            f"--K = {K!r} is invalid: must be an integer >= 1 (the number of clusters)"
        )
    if K * LADDER[-1] > MAX_P:
        raise ValueError(
            f"--K = {K!r} is invalid: must be <= {MAX_P // LADDER[-1]:,} (the ladder's largest P = "
            f"{LADDER[-1]} lists every patch of each cluster's areas: K P at most {MAX_P:,})"
        )


def eps_option(text: str) -> float:
    """--eps: Theorem 4.1's "for any 0 < eps < 1", checked while parsing (before any import)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{value!r} is invalid: must lie strictly between 0 and 1")
    return value


def z_option(text: str):
    """--z: const | uniform:L:U | V1:P1,V2:P2,... (or the same as JSON: ["uniform", L, U], [[V1,
    P1], ...], which --print-config writes)."""
    try:
        if text.startswith("["):
            value = inputs.json_text(text, "--z")
            return tuple(value) if value and value[0] == "uniform" else [tuple(v) for v in value]
        if text == "const":
            return text
        if text.startswith("uniform:"):
            _, lo, hi = text.split(":")
            return ("uniform", float(lo), float(hi))
        return [tuple(float(x) for x in item.split(":")) for item in text.split(",")]
    except (ValueError, TypeError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not const, uniform:L:U or V1:P1,V2:P2,..."
        ) from None


FIELD_PARSERS = {"z": z_option, "partitions": options.json_option}
FIELD_CHOICES = {"partition": PARTITIONS, "dtype": DTYPES}


REDUCED = Level(
    simulate="reduced.mim.simulation:simulate",
    options=options.level_options(reduced_spec.ReducedOptions),
    keywords=f"{HOOKS}:reduced_keywords",
    flow=True,
    validate=reduced_spec.validate_reduced,
    describe=f"{HOOKS}:describe_reduced",
    post=f"{HOOKS}:per_patch",
    report=f"{HOOKS}:report",
)

FULL = Level(
    simulate="full.mim.training:simulate",
    options=options.level_options(full_spec.FullOptions),
    keywords=f"{HOOKS}:full_keywords",
    modes=full_spec.MODES,
    mode_help=full_spec.MODE_HELP,
    unread=full_spec.UNREAD,
    validate=full_spec.validate_full,
    describe=f"{HOOKS}:describe_full",
)

# check-theorems mim judges the Delta > 0 theorems on a ladder of P at the parameters of
# docs/derivations/mim-model.md §10d (docs/mim.md §6)
CHECK_GROUP = "the P ladder (reduced level, mean_field: B free)"
CHECK_OPTIONS = (
    Option(
        "--quick",
        f"CI-sized ladder P = {', '.join(map(str, QUICK_LADDER))} "
        f"instead of P = {', '.join(map(str, LADDER))}: three rungs "
        "leave a trend 1 degree of freedom, too few to resolve Sec. 5.4 PP small's "
        "slope (at the defaults it is not evaluated there, inconclusive, and holds on "
        "the default ladder)",
        action="store_true",
        verbs=("check-theorems",),
        group=CHECK_GROUP,
    ),
    Option(
        "--eps",
        f"Theorem 4.1's eps: loss gap <= eps (the attention it implies is reported); below "
        f"{EPS} every run is lengthened by {EPS}/eps (T* grows like "
        f"1/eps) (default: {EPS})",
        type=eps_option,
        default=EPS,
        verbs=("check-theorems",),
        group=CHECK_GROUP,
    ),
)

CHECK_THEOREMS = Claims(
    plan=f"{HOOKS}:check_plan",
    options=CHECK_OPTIONS,
    defaults=dict(kappa_c=0.9, kappa_s=0.4, mask_ratio=0.5, steps=1000),
    why="the theorems are judged at Delta = +0.4 (kappa = 0.9, 0.4; "
    "docs/derivations/mim-model.md §10d), gamma = 0.5, and steps counts the GD steps of "
    "the reference problem (P = 1024, gamma = 0.5, eta = 1, K = 1): every run takes "
    "ceil(steps (P/1024)^(1 - kappa_s) (0.5/gamma) (1/eta) K), the phases' time scale "
    "K P^(1 - kappa_s) / (gamma eta z^3) with z = 1 (docs/mim.md §6); every rung has K "
    "clusters, areas from --partition (the random areas of cluster k drawn from --seed "
    "and k)",
    exclude={
        "P": "the ladder: --quick or not",
        "z": "z = 1: the claims' per-query loss is z^2/2 [...]",
        "record_every": "about 100 records per run",
        "d": "the reduced level has no embedding",
        "partitions": "the areas come from --partition",
        "N": "the reduced level's loss is the population loss",
        "dtype": "float64",
    },
    names=CLAIMS,
    precheck=check_clusters,
)

DERIVATION = Derivation(render=f"{HOOKS}:derive", config=False)

# the flow's end time and save times, checked as `compare --method flow` checks them (its module
# imports JAX; a sweep has imported it before it checks the points)
FLOW_KEYWORDS = Ref("dynsim.sweeps.common:flow_keywords")
SWEEP_REDUCED = ("approximation", "versus_frozen")
SWEEP_FULL = ("mode", "replicates", "confidence", "approximation_tolerance")
SWEEP_DEFAULTS = {
    "approximation": None,
    "versus_frozen": False,
    "mode": "exact",
    "replicates": None,
    "confidence": runoptions.CONFIDENCE,
    "approximation_tolerance": None,
}


def approximation(cfg, options: dict):
    """The reduced level's approximation: the option, else None (exact, B free, any K; as `dynsim
    compare mim`)."""
    return options.get("approximation")


def validate_point(cfg, options: dict, level: str) -> None:
    """Refuse, before any work, a point its levels cannot run (the levels' specs; the exact
    joint-type size and the flow's times load modules of the levels, only where they are checked).
    One check
    for `dynsim.sweep` and `sweep mim`: its messages name the library's keywords
    (`dynsim.mim.latents.LIBRARY`)."""
    method = options.get("method", "gd")
    if level != "full":
        approx = reduced_spec.check_reduced(cfg, approximation(cfg, options), method)
        reduced_spec.joint_size(cfg, approx)
        if method == "flow":
            FLOW_KEYWORDS(cfg, options)  # checks t_max
    if level != "reduced":
        full_spec.check_full(cfg, options.get("mode", "exact"), options.get("replicates"))


def normalize(options: dict) -> dict:
    """--approximation none is the exact reduction (None); --approximation-tolerance checked as in
    compare mim (`reduced_spec.check_tolerance`)."""
    tol = options.get("approximation_tolerance")
    if tol is not None:
        reduced_spec.check_tolerance(tol)
    return {**options, "approximation": None} if options.get("approximation") == "none" else options


def one_point(cfg, options: dict, level: str):
    """A MIM point's group key: its config (P, the kappas and the mask ratio are all shapes)."""
    return cfg


SWEEP = SweepSpec(
    reduced=f"{WORK}:reduced_group",
    full=f"{WORK}:full_group",
    group=one_point,
    check=validate_point,
    summary=f"{WORK}:point_summary",
    reduced_options=SWEEP_REDUCED,
    full_options=SWEEP_FULL,
    defaults=SWEEP_DEFAULTS,
    normalize=normalize,
    seeded=f"{WORK}:seeded",
    table=SweepTable(
        heatmaps=("two_phase_local", "own_area_attention_min", "final_loss"),
        columns=("final_loss", "two_phase_local", "own_area_attention_min"),
        example="MIM grid, e.g. --P 16,64 --kappa-c 0.6,0.9 --kappa-s 0.4 --mask-ratio 0.5,0.75",
        level_summaries=(
            "final_loss",
            "own_area_attention_min",
            "pp_max",
            "pp_over_fp",
            "fp_deviation_from_pp_frozen",
            "two_phase_local",
            "one_phase_local",
            "local_patches",
            "nonfinite_from_step",
        )
        + STABILITY,
        point_summaries=("delta", "reduced_approximation") + VERDICT,
    ),
)


# what `compare mim` would need, once its options are checked (its module imports the levels)
NEEDS = Ref(f"{RESOURCES}:estimate_compare")


def estimate_compare(args) -> list:
    """`compare mim`'s estimate: the levels' checks first, then what the run would need
    (`dynsim.mim.resources.estimate_compare`). Where the reduced level enumerates the joint types
    exactly (`reduced_spec.exact_joint`) the run checks their size after the estimate (for a large P
    the joint types take long to build: an oversized run is refused first), and then the full
    level's options, in the order of `validate_reduced` and `validate_full`."""
    cfg, opts = options.config(args), vars(args)
    approx = reduced_spec.reduced_options(cfg, opts)
    if not reduced_spec.exact_joint(cfg, approx, opts["samples"]):
        full_spec.validate_full(cfg, opts)
    return NEEDS(args)


COMMANDS = (
    Command(
        "figure",
        "mim-phases",
        figures.phases_arguments,
        figures.run_phases,
        estimate=f"{RESOURCES}:estimate_phases",
        help="MIM: FP and PP trajectories for Delta > 0 (two phases) and Delta < 0 (one phase)",
        description=figures.PHASES_DESCRIPTION,
    ),
    Command(
        "figure",
        "mim-attention",
        figures.attention_arguments,
        figures.run_attention,
        estimate=f"{RESOURCES}:estimate_attention",
        help="MIM: attention maps of the trained full model and its attention diversity",
        description=figures.ATTENTION_DESCRIPTION,
    ),
    Command(
        "experiment",
        "mim-images",
        mim_options.arguments,
        "dynsim.images.cli_mim:run",
        estimate=mim_options.estimate,
        verb_help="the papers' Section 6 experiments in miniature on real images (digits)",
        help="MIM Section 6 on the digits: masked reconstruction against supervised attention "
        "diversity",
        description=mim_options.DESCRIPTION,
    ),
)

PER_AREA = ("patch", "cluster", "area")  # fp_corr[p, k, j]: A_{p, v_{k,j}}
PER_CLASS = ("class", "position")  # the reduced records per query class, areas in class order
PER_CELL = ("cell", "cluster", "area")  # the reduced records per joint cell (K > 1, mean field)
# the axes of the observables (docs/data.md); their coordinates: dynsim.mim.frames
FRAMES = Frames(
    dims={
        "fp_corr": PER_AREA,
        "area_attention": PER_AREA,
        "pp_corr": ("patch", "key"),
        "pp_cluster_max": ("cluster",),
        "fp_class": PER_CLASS,
        "area_attention_class": PER_CLASS,
        "pp_class": PER_CLASS,
        "pp_self": ("class",),
        "fp_cell": PER_CELL,
        "area_attention_cell": PER_CELL,
        "pp_cell": ("cell", "key_cell"),
        "pp_self_cell": ("cell",),
    },
    coords=frames.coords,
    present=("area_present", "class_area_present"),
)

SETTING = Setting(
    name="mim",
    description="Huang, Wen, Chi, Liang (2024): masked image modeling, FP and PP correlations",
    config=MIMConfig,
    reduced=REDUCED,
    full=FULL,
    checks="dynsim.mim.checks:CHECKS",
    claims=CHECK_THEOREMS,
    derive=DERIVATION,
    plot=f"{HOOKS}:plot",
    descriptions={
        "compare": "Compare the reduced per-query MIM dynamics (FP correlations A, PP "
        "correlations B, Lemmas 5.1-5.2) with full-matrix GD on the literal d x d "
        "matrix Q. With K = 1 the reduction is exact and both levels agree to "
        "float rounding, for any K: with K > 1 the PP correlations B stay free, "
        "one per query and joint type of the key (reduced.mim.joint). "
        "--approximation pp_frozen (B = 0, the theory's claim) reports its "
        "deviation from full and the PP magnitude it drops.",
        "check-theorems": "Judge the MIM claims on a P ladder of reduced runs with B free "
        "(mean_field; pp_frozen+mean_field reported beside): Theorem 4.1's loss "
        "gap <= eps; F.3's two phases "
        "for Delta > 0 with a Phase-I drop >= log 2; the initial rate ratio on the "
        "side of 1 of (1 - gamma) P^Delta; Lemma 5.3's switch (a) per local area "
        "class within a factor-4 band of Attn_1^2 = Attn_n and its items (b), (c) "
        "(the other correlations small through Phase I); Section 5.4's PP "
        "correlations small (max|B|/max|A| decreasing in P); Appendix E's global "
        "patches skipping Phase I. Each claim names its premises (Delta > 0, (1 - "
        "gamma) P^Delta >= 4, mean field valid: the own area wholly masked with "
        "small probability); a premise measured false makes it 'not applicable'. "
        "Section 6's attention diversity (trained, Theorem 4.1's ideal, collapse, "
        "random logits), Theorem 4.1's attention (implied by the loss gap) and its "
        "deficit against P (the theorem states no trend in P) are measurements. "
        "--K N runs every rung with N clusters (--partition grid or random, the "
        "random areas drawn from --seed): each claim reads every cluster's "
        "queries and names the worst cluster. --steps counts the steps of the "
        "reference problem (P = 1024, gamma = 0.5, eta = 1, K = 1); every run "
        "takes ceil(steps (P/1024)^(1 - kappa_s) (0.5/gamma) (1/eta) K). Prints "
        "a table (or --json: config, claims, "
        "measurements; docs/mim.md section 6). " + EXIT_TEXT,
        "derive": "Print the per-query MIM loss built in sympy (own-area and other-area "
        "views) and its derivatives in A_n, B_n, B_self, A_i, B_i.",
    },
    estimates={
        "compare": estimate_compare,
        "check-theorems": f"{RESOURCES}:estimate_check",
    },
    sweep=SWEEP,
    commands=COMMANDS,
    field_help=FIELD_HELP,
    resources=f"{RESOURCES}:needs",
    field_parsers=FIELD_PARSERS,
    field_choices=FIELD_CHOICES,
    frames=FRAMES,
    mutations=planted.catalogue(CLAIMS),
)
