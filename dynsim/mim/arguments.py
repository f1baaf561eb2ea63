"""The options of `dynsim compare mim` and `derive mim` and the syntax MIM's config fields need,
declared without the levels: `--help` reads them from here."""

from __future__ import annotations

import argparse
import json

from dynsim.cli import options

from .config import DTYPES, PARTITIONS

APPROX_CHOICES = ("none", "pp_frozen", "mean_field", "pp_frozen+mean_field")


def z_option(text: str):
    """--z: const | uniform:L:U | V1:P1,V2:P2,... (or the same as JSON: ["uniform", L, U], [[V1,
    P1], ...], which --print-config writes)."""
    try:
        if text.startswith("["):
            value = json.loads(text)
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


def compare_arguments(parser, setting) -> None:
    """Options of `compare mim`: every MIMConfig field, the full level's mode, the reduced
    approximation."""
    options.config_options(parser, setting)
    run = parser.add_argument_group("run")
    run.add_argument(
        "--mode",
        choices=("exact", "sampled"),
        default="exact",
        help="full level: exact population loss (every cluster, latent vector and mask) or a fresh "
        "batch of N samples each step (default: exact)",
    )
    run.add_argument(
        "--approximation",
        choices=APPROX_CHOICES,
        default=None,
        help="reduced level: none (exact, B free; K > 1 runs per query and joint type), pp_frozen "
        "(B = 0), mean_field (counts at their means) or both (default: none)",
    )
    run.add_argument(
        "--replicates",
        type=int,
        default=None,
        help="independent runs in --mode sampled (default: 8), and independent Monte Carlo draws "
        "of the "
        "reduced level with --samples (default: 4)",
    )
    run.add_argument(
        "--samples",
        type=int,
        default=None,
        metavar="S",
        help="reduced level by Monte Carlo over the masked counts: S count vectors per query (B "
        "free, "
        "any K; for the P where the exact enumeration does not fit and mean field is too coarse; "
        "its bias is O(1/S), docs/mim.md §3b) (default: exact)",
    )
    run.add_argument(
        "--confidence",
        type=float,
        default=0.999,
        help="confidence of the Monte Carlo band in --mode sampled (default: 0.999)",
    )
    run.add_argument(
        "--approximation-tolerance",
        type=float,
        default=0.05,
        help="with an approximation: allowed |difference| as a fraction of each observable's "
        "largest "
        "magnitude, > 0 (a stated choice, not a derived bound) (default: 0.05)",
    )
    options.out_options(run)
    options.report_options(run)
    options.method_options(run)


def derive_arguments(parser, setting) -> None:
    """Options of `derive mim`: --latex."""
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")
