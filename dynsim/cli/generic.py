"""The commands every setting gets from its `Setting` record alone: `compare NAME`, `check-theorems
NAME` (when it declares claims) and `derive NAME` (when it declares a derivation). A setting's own
command replaces them.

Their options are declared here, their work in `dynsim.cli.runs`, loaded when a command runs:
building the parser (`--help`) loads no level."""

from __future__ import annotations

from dynsim.setting import Command, Setting

from . import options


def compare_arguments(parser, setting: Setting) -> None:
    """Every config field, the full level's mode, the checker's band and the outputs."""
    options.config_options(parser, setting)
    run = parser.add_argument_group("run")
    run.add_argument(
        "--mode",
        choices=setting.modes,
        default=setting.modes[0],
        help=f"full level (default: {setting.modes[0]})",
    )
    run.add_argument(
        "--confidence",
        type=float,
        default=0.999,
        help="confidence of the Monte Carlo band when a level carries standard "
        "errors (default: 0.999)",
    )
    options.out_options(run)
    options.report_options(run)


def check_arguments(parser, setting: Setting) -> None:
    """Every config field, --json and --out."""
    options.config_options(parser, setting)
    g = parser.add_argument_group("output")
    g.add_argument(
        "--json", action="store_true", help='print {"claims": [...]} as JSON instead of the table'
    )
    options.out_options(g)


def derive_arguments(parser, setting: Setting) -> None:
    """Every config field and --latex."""
    options.config_options(parser, setting)
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")


def commands(setting: Setting) -> list[Command]:
    """The generated commands of `setting` that it does not declare itself (reading the record loads
    nothing)."""
    out = []
    if setting.command("compare") is None:
        out.append(
            Command(
                "compare",
                setting.name,
                compare_arguments,
                "dynsim.cli.runs:run_compare",
                help=setting.description,
                description=f"Compare the reduced and the full level of {setting.description}.",
                estimate="dynsim.cli.runs:estimate_levels",
            )
        )
    if setting.declares("claims") and setting.command("check-theorems") is None:
        out.append(
            Command(
                "check-theorems",
                setting.name,
                check_arguments,
                "dynsim.cli.runs:run_check",
                description=f"Evaluate the claims of {setting.description} on runs. Exit 0 only "
                f"when every "
                "claim holds; 1 when one fails, is not applicable or was "
                "not evaluated; 2 on "
                "invalid input.",
                estimate="dynsim.cli.runs:estimate_levels",
            )
        )
    if setting.declares("derive") and setting.command("derive") is None:
        out.append(
            Command(
                "derive",
                setting.name,
                derive_arguments,
                "dynsim.cli.runs:run_derive",
                description=f"Print the symbolic reduced loss of {setting.description} and its "
                "gradients.",
            )
        )
    return out
