"""The commands every setting gets from its `Setting` record: `compare NAME`, `check-theorems NAME`
(when it declares claims) and `derive NAME` (when it declares a derivation), one implementation each
for every setting. A setting declares what differs (`dynsim.verbs`: its levels' options and modes,
its claims' options and defaults); a command it declares itself under the same verb replaces the
generated one.

Their options are declared here, their work in `dynsim.cli.runs`, loaded when a command runs:
building the parser (`--help`) loads no level."""

from __future__ import annotations

from dynsim import runoptions, verbs
from dynsim.claims import EXIT_TEXT
from dynsim.setting import Command, Setting

from . import options

COMPARE_OUT = "directory for report.json, trajectories.npz, compare.png"


def add_options(parser, declared, groups: dict) -> None:
    """Add the declared `Option`s, each in its --help group (created in order of first use)."""
    for o in declared:
        if o.group not in groups:
            groups[o.group] = parser.add_argument_group(o.group)
        o.add(groups[o.group])


def compare_arguments(parser, setting: Setting) -> None:
    """Every config field, the full level's mode, both levels' options, the checker's band, the
    outputs and, when the reduced level has a flow, --method and --t-max."""
    options.config_options(parser, setting)
    full, modes = verbs.level(setting, "full"), verbs.modes(setting)
    run = parser.add_argument_group("run")
    run.add_argument(
        "--mode",
        choices=modes,
        default=modes[0],
        help=full.mode_help or f"full level (default: {modes[0]})",
    )
    add_options(parser, verbs.compare_options(setting), {"run": run})
    run.add_argument(
        "--confidence",
        type=float,
        default=runoptions.CONFIDENCE,
        help="confidence of the Monte Carlo band when a level carries standard errors, "
        f"family-wise over recorded steps and observables (default: {runoptions.CONFIDENCE})",
    )
    options.out_options(run, COMPARE_OUT)
    options.report_options(run)
    if verbs.level(setting, "reduced").flow:
        options.method_options(run)


def check_arguments(parser, setting: Setting) -> None:
    """Every config field (with the claims' defaults), the claims' own options, --only, --json,
    --verbose, --out and, when something runs on a cluster, where."""
    spec = verbs.claims(setting)
    options.config_options(parser, setting, spec.defaults, spec.why or None, spec.exclude)
    groups: dict = {}
    add_options(parser, spec.options, groups)
    if spec.names is not None:
        first = spec.options[0].group if spec.options else "run"
        run = groups.setdefault(first, parser.add_argument_group(first))
        options.only_option(run, spec.names)
    out = parser.add_argument_group("output")
    out.add_argument("--json", action="store_true", help=spec.json_help + " instead of the table")
    out.add_argument(
        "--verbose",
        action="store_true",
        help="after the table, each claim's statement, reading, regime and premises, the "
        "threshold's derivation, the negative control and the details (theorems.json has them "
        "always)",
    )
    options.out_options(out, spec.out_help)
    if spec.cluster:
        options.cluster_options(
            parser.add_argument_group(f"where {spec.cluster} run"),
            spec.cluster,
            "in this process, one a core side by side",
        )


def derive_arguments(parser, setting: Setting) -> None:
    """Every config field (unless the derivation reads none), its own options and --latex."""
    spec = verbs.derivation(setting)
    if spec.config:
        options.config_options(parser, setting)
    add_options(parser, spec.options, {})
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")


GENERATED = {
    "compare": (
        compare_arguments,
        "dynsim.cli.runs:run_compare",
        "Compare the reduced and the full level of {}.",
    ),
    "check-theorems": (
        check_arguments,
        "dynsim.cli.runs:run_check",
        "Evaluate the claims of {} on runs. " + EXIT_TEXT,
    ),
    "derive": (
        derive_arguments,
        "dynsim.cli.runs:run_derive",
        "Print the symbolic reduced loss of {} and its gradients.",
    ),
}
DEFAULT_ESTIMATE = {"compare": "dynsim.cli.runs:estimate_levels"}
DEFAULT_ESTIMATE["check-theorems"] = DEFAULT_ESTIMATE["compare"]


def commands(setting: Setting) -> list[Command]:
    """The generated commands of `setting` that it does not replace itself (reading the record loads
    nothing)."""
    declared = {"compare": True, "check-theorems": "claims", "derive": "derive"}
    out = []
    for verb, (arguments, run, text) in GENERATED.items():
        needs = declared[verb]
        if (needs is not True and not setting.declares(needs)) or setting.command(verb):
            continue
        out.append(
            Command(
                verb,
                setting.name,
                arguments,
                run,
                help=setting.description if verb == "compare" else "",
                description=setting.descriptions.get(verb) or text.format(setting.description),
                estimate=setting.estimates.get(verb, DEFAULT_ESTIMATE.get(verb)),
            )
        )
    return out
