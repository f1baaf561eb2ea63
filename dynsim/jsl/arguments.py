"""The options of `dynsim compare jsl`, declared without the levels: `--help` reads them from
here."""

from __future__ import annotations

from dynsim.cli import options


def compare_arguments(parser, setting) -> None:
    """Options of `compare jsl`: every JSLConfig field, the full level's mode and the checker's
    band."""
    options.config_options(parser, setting)
    run = parser.add_argument_group("run")
    run.add_argument(
        "--mode",
        choices=("exact", "sampled", "realistic"),
        default="exact",
        help="full level: exact population loss by enumeration; a fresh batch of N samples each "
        "step; "
        "or realistic (E): N fixed samples, random start (omega), held-out test set (default: "
        "exact)",
    )
    run.add_argument(
        "--replicates",
        type=int,
        default=None,
        help="independent runs in --mode sampled, for the Monte Carlo band (default: 8)",
    )
    options.seeds_option(
        run,
        None,
        "--mode realistic only: the runs of each N, one vmapped program, averaged with "
        "a standard error (8 when left out)",
    )
    run.add_argument(
        "--ladder",
        type=options.int_list,
        default=None,
        metavar="N1,N2,...",
        help="--mode realistic: training-set sizes for the approach table (Theorem 4.2) "
        "(default: N/16, N/4, N)",
    )
    run.add_argument(
        "--confidence",
        type=float,
        default=0.999,
        help="confidence of the Monte Carlo band, family-wise over recorded steps and observables "
        "(default: 0.999)",
    )
    options.out_options(run, "directory for report.json, trajectories.npz, compare.png")
    options.report_options(run)
    options.method_options(run)
