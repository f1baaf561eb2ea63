"""What MIM declares for the core's verbs, without the levels (`--help` reads it from here): the two
levels as `dynsim.verbs.Level`s with their options and modes, the claims, the derivation, and the
syntax MIM's config fields need. The work they name is in `dynsim.mim.hooks`, the checks of the
levels' options in `dynsim.mim.level_checks`."""

from __future__ import annotations

import argparse


from dynsim import inputs
from dynsim.cli import options
from dynsim.validation import DEFAULT_REPLICATES
from dynsim.verbs import Claims, Derivation, Level, Option

from . import checklist
from .config import DTYPES, PARTITIONS

APPROX_CHOICES = ("none", "pp_frozen", "mean_field", "pp_frozen+mean_field")


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


HOOKS = "dynsim.mim.hooks"
LEVEL_CHECKS = "dynsim.mim.level_checks"  # the validate hooks, light: a bad option imports no level

REDUCED = Level(
    simulate="reduced.mim:simulate",
    options=(
        Option(
            "--approximation",
            "reduced level: none (exact, B free; K > 1 runs per query and joint type), pp_frozen "
            "(B = 0), mean_field (counts at their means) or both (default: none)",
            choices=APPROX_CHOICES,
            verbs=("compare", "sweep"),
        ),
        Option(
            "--samples",
            "reduced level by Monte Carlo over the masked counts: S count vectors per query (B "
            "free, any K; for the P where the exact enumeration does not fit and mean field is too "
            "coarse; its bias is O(1/S), docs/mim.md §3b) (default: exact)",
            type=int,
            metavar="S",
        ),
        Option(
            "--approximation-tolerance",
            "with an approximation: allowed |difference| as a fraction of each observable's "
            "largest magnitude, > 0 (a stated choice, not a derived bound) (default: 0.05)",
            type=float,
            default=0.05,
            verbs=("compare", "sweep"),
            checker=True,
        ),
        Option(
            "--versus-frozen",
            "also run each point's reduced level with B = 0 (pp_frozen) and report the FP "
            "deviation max|A(B free) - A(B = 0)| / max|A| (fp_deviation_from_pp_frozen); "
            "doubles the reduced cost",
            action="store_true",
            verbs=("sweep",),
        ),
    ),
    keywords=f"{HOOKS}:reduced_keywords",
    flow=True,
    validate=f"{LEVEL_CHECKS}:validate_reduced",
    describe=f"{HOOKS}:describe_reduced",
    post=f"{HOOKS}:per_patch",
    report=f"{HOOKS}:report",
)

FULL = Level(
    simulate="full.mim:simulate",
    options=(
        Option(
            "--replicates",
            f"independent runs in --mode sampled (default: {DEFAULT_REPLICATES}), and in compare "
            "the independent Monte Carlo draws of the reduced level with --samples (default: 4)",
            type=options.at_least(1),
            verbs=("compare", "sweep"),
        ),
    ),
    keywords=f"{HOOKS}:full_keywords",
    modes=("exact", "sampled"),
    mode_help="full level: exact population loss (every cluster, latent vector and mask) or a "
    "fresh batch of N samples each step (default: exact)",
    unread={
        "exact": {
            "N": "--mode exact takes every cluster, latent vector and mask (N is --mode "
            "sampled's batch)"
        }
    },
    validate=f"{LEVEL_CHECKS}:validate_full",
    describe=f"{HOOKS}:describe_full",
)

# check-theorems mim judges the Delta > 0 theorems on a ladder of P at the parameters of
# docs/derivations/mim-model.md §10d (docs/mim.md §6)
CHECK_GROUP = "the P ladder (reduced level, mean_field: B free)"
CHECK_OPTIONS = (
    Option(
        "--quick",
        f"CI-sized ladder P = {', '.join(map(str, checklist.QUICK_LADDER))} "
        f"instead of P = {', '.join(map(str, checklist.LADDER))}: three rungs "
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
        f"{checklist.EPS} every run is lengthened by {checklist.EPS}/eps (T* grows like "
        f"1/eps) (default: {checklist.EPS})",
        type=eps_option,
        default=checklist.EPS,
        verbs=("check-theorems",),
        group=CHECK_GROUP,
    ),
)

CLAIMS = Claims(
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
    names=checklist.CLAIMS,
    precheck="dynsim.mim.checklist:check_clusters",
)

DERIVATION = Derivation(render=f"{HOOKS}:derive", config=False)
