"""The MIM setting (Huang, Wen, Chi, Liang 2024) as a plugin: registered through the entry point
`mim = "dynsim.mim.setting:SETTING"` of the group `dynsim.settings` (pyproject.toml).

A light record: everything but names and help lines is a "module:attr" reference, loaded on first
use (the config too: its areas need NumPy); the levels, claims and derivation are declared in
`arguments` and run by the core's verbs (`dynsim.cli.runs`); MIM's own commands are its figures."""

from __future__ import annotations

from dynsim.claims import EXIT_TEXT
from dynsim.setting import Command, Frames, Ref, Setting

from . import arguments

CLI_FIGURES = "dynsim.mim.cli_figures"
FIGURE_OPTIONS = "dynsim.mim.figure_options"  # the options, light: --help loads no level

COMMANDS = (
    Command(
        "figure",
        "mim-phases",
        f"{FIGURE_OPTIONS}:phases_arguments",
        f"{CLI_FIGURES}:run_phases",
        estimate="dynsim.mim.resources:estimate_phases",
        help="MIM: FP and PP trajectories for Delta > 0 (two phases) and Delta < 0 (one phase)",
        description=Ref(f"{FIGURE_OPTIONS}:PHASES_DESCRIPTION"),
    ),
    Command(
        "figure",
        "mim-attention",
        f"{FIGURE_OPTIONS}:attention_arguments",
        f"{CLI_FIGURES}:run_attention",
        estimate="dynsim.mim.resources:estimate_attention",
        help="MIM: attention maps of the trained full model and its attention diversity",
        description=Ref(f"{FIGURE_OPTIONS}:ATTENTION_DESCRIPTION"),
    ),
    Command(
        "experiment",
        "mim-images",
        "dynsim.images.mim_options:arguments",
        "dynsim.images.cli_mim:run",
        estimate="dynsim.images.mim_options:estimate",
        verb_help="the papers' Section 6 experiments in miniature on real images (digits)",
        help="MIM Section 6 on the digits: masked reconstruction against supervised attention "
        "diversity",
        description=Ref("dynsim.images.mim_options:DESCRIPTION"),
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
    coords="dynsim.mim.frames:coords",
    present=("area_present", "class_area_present"),
)

SETTING = Setting(
    name="mim",
    description="Huang, Wen, Chi, Liang (2024): masked image modeling, FP and PP correlations",
    config="dynsim.mim.config:MIMConfig",
    reduced=arguments.REDUCED,
    full=arguments.FULL,
    checks="dynsim.mim.checks:CHECKS",
    claims=arguments.CLAIMS,
    derive=arguments.DERIVATION,
    plot="dynsim.mim.hooks:plot",
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
        # the levels' options checked first, light (`level_checks`)
        "compare": "dynsim.mim.level_checks:estimate_compare",
        "check-theorems": "dynsim.mim.resources:estimate_check",
    },
    sweep="dynsim.mim.sweep_spec:SWEEP",
    commands=COMMANDS,
    field_help="dynsim.mim.config:FIELD_HELP",
    resources="dynsim.mim.resources:needs",
    field_parsers=arguments.FIELD_PARSERS,
    field_choices=arguments.FIELD_CHOICES,
    frames=FRAMES,
)
