"""Command-line options generated from a setting's config dataclass: one option per field, as one
value (compare, check-theorems, ...) or as a comma-separated list (sweep); the options every
setting's commands share (--out,
--seeds, --json, --method, --only) and the exit codes. Declaring options imports nothing heavy:
  `--help` reads
them."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import typing
from typing import Any, Optional

from dynsim import inputs, resources
from dynsim.setting import Ref
from dynsim.validation import did_you_mean

from . import ranges
from .argtypes import at_least, float_in, int_list, integer_in  # noqa: F401
from .declared import level_options, option_of, seeds  # noqa: F401

EXIT_AGREE, EXIT_DISAGREE, EXIT_INVALID, EXIT_INTERRUPTED = 0, 1, 2, 130
OUT_ROOT = "dynsim-out"


class UsageError(Exception):
    """Invalid command-line input: reported on one line, exit code 2."""


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line and exit code 2 (no usage dump)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # every type=int option within int64
        self.register("type", int, resources.integer)

    def error(self, message):
        # the top-level parser's own name is the "dynsim: error:" prefix already
        raise UsageError(message if self.prog == "dynsim" else f"{self.prog}: {message}")

    def parse_args(self, args=None, namespace=None):
        """argparse's, with the closest known option named for an unknown one (the options of the
        command the arguments name)."""
        parsed, unknown = self.parse_known_args(args, namespace)
        if unknown:
            known = getattr(parsed, "command_parser", None) or self
            flags = [s for a in known._actions for s in a.option_strings]
            typed = [u.split("=")[0] for u in unknown if u.startswith("-")]
            hint = did_you_mean(flags, *typed)
            self.error(f"unrecognized arguments: {' '.join(unknown)}{hint}")
        return parsed

    def _check_value(self, action, value):
        """argparse's check of a choice (a verb, a setting's name, an option's choices), with the
        closest choice named for an unknown one."""
        try:
            super()._check_value(action, value)
        except argparse.ArgumentError as exc:
            hint = did_you_mean(action.choices or (), value)
            raise argparse.ArgumentError(action, exc.message + hint) from None


def field_kind(setting, f: dataclasses.Field, hints: dict):
    """The argparse type of config field `f`: the setting's own parser, else int, float or str from
    its hint."""
    if f.name in setting.field_parsers:
        return setting.field_parsers[f.name]
    hint = str(hints[f.name])
    return resources.integer if "int" in hint else float if "float" in hint else str


def field_help(setting, f: dataclasses.Field) -> str:
    """The --help text of config field `f`: the setting's, else the field's metadata["help"], else
    its name."""
    return setting.field_help.get(f.name) or f.metadata.get("help") or f.name.replace("_", " ")


def config_options(
    parser: argparse.ArgumentParser,
    setting,
    defaults: Optional[dict] = None,
    why: Optional[str] = None,
    exclude: Optional[dict] = None,
    check: Optional[typing.Callable[[Any, argparse.Namespace], None]] = None,
) -> None:
    """One option per field of `setting.config`. A command that needs other defaults than the
    config's (a paper's figure, a theorem's regime) gives them in `defaults` and says `why`: --help
    shows both values and the reason (one default per field everywhere, unless a command
    says otherwise). A field the command sets itself is in `exclude` (field -> why), said in --help
    and not an option. `config(args)` builds the config back, then calls check(cfg, args) (a
    module-level function, pure Python: it raises ValueError for an option's value the command
    refuses, before any work)."""
    cls = setting.config
    defaults, exclude = defaults or {}, exclude or {}
    if defaults and not why:
        raise TypeError(
            f"config_options: defaults {sorted(defaults)} differ from {cls.__name__}'s: say why"
        )
    hints = typing.get_type_hints(cls)
    notes = (
        [f"This command's defaults differ from {cls.__name__}'s for {', '.join(defaults)}: {why}."]
        if defaults
        else []
    )
    notes += (
        [
            "Set by this command, not options: "
            + "; ".join(f"{k} ({v})" for k, v in exclude.items())
            + "."
        ]
        if exclude
        else []
    )
    group = parser.add_argument_group(
        f"{setting.name.upper()} configuration (one option per {cls.__name__} field)",
        " ".join(notes) or None,
    )
    for f in dataclasses.fields(cls):
        if f.name in exclude:
            continue
        default = "derived" if f.default is None else f.default
        if f.name in defaults and defaults[f.name] != f.default:
            default = f"{defaults[f.name]} here; {cls.__name__}'s: {default}"
        group.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=field_kind(setting, f, hints),
            choices=setting.field_choices.get(f.name),
            default=argparse.SUPPRESS,
            help=f"{field_help(setting, f)} (default: {default})",
        )
    parser.set_defaults(config_defaults=defaults, config_class=cls)
    if check is not None:  # by reference: the report's invocation records its name
        parser.set_defaults(config_check=Ref(f"{check.__module__}:{check.__qualname__}"))


def config(args: argparse.Namespace):
    """The config of the command line: the command's defaults, then the options given; checked
    with the options by the command's `config_options(check=...)`."""
    cls = args.config_class
    fields = {f.name for f in dataclasses.fields(cls)}
    given = {k: v for k, v in vars(args).items() if k in fields}
    cfg = cls(**{**args.config_defaults, **given})
    if getattr(args, "config_check", None) is not None:
        args.config_check(cfg, args)
    return cfg


def values(args: argparse.Namespace) -> dict:
    """Every config field's value on the command line, not validated (a resource estimate reads it
    before the config is built): the config's defaults, the command's, then the options given (a
    sweep's are lists)."""
    cls = args.config_class
    out = {f.name: f.default for f in dataclasses.fields(cls)}
    return {
        **out,
        **getattr(args, "config_defaults", {}),
        **{k: v for k, v in vars(args).items() if k in out},
    }


def changed(args: argparse.Namespace) -> set[str]:
    """The config fields given (typed or in --config) with another value than the command's
    default: a --print-config file spells out every field, and a value equal to its default changes
    nothing."""
    cls = getattr(args, "config_class", None)
    if cls is None:
        return set()
    defaults = {f.name: f.default for f in dataclasses.fields(cls)}
    defaults.update(getattr(args, "config_defaults", None) or {})
    return {k for k in defaults if k in vars(args) and getattr(args, k) != defaults[k]}


def out_path(text: str) -> str:
    """--out with "~" expanded (a TOML file's or a quoted "~/x" reaches dynsim unexpanded); an
    empty path refused."""
    if not text.strip():
        raise UsageError(f"--out = {text!r} is invalid: an empty path; give a folder")
    return os.path.expanduser(text)


def declare(group, rows) -> None:
    """Add each row (flag, kind, default, help) to `group`: kind an argparse type, or a tuple of
    the choices (parsed by their items' type); the help ends with "(default: ...)" unless it says
    its own."""
    for flag, kind, default, text in rows:
        typed = dict(type=kind)
        if isinstance(kind, tuple):
            typed = dict(type=type(kind[0]), choices=kind)
        if "(default:" not in text:
            text = f"{text} (default: {default})"
        group.add_argument(flag, default=default, help=text, **typed)


def json_option(text: str) -> Any:
    """An argparse type: a JSON value, its nesting bounded (`dynsim.inputs.MAX_DEPTH`)."""
    if inputs.depth(text) > inputs.MAX_DEPTH:
        raise argparse.ArgumentTypeError(f"nested more than {inputs.MAX_DEPTH} deep")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise argparse.ArgumentTypeError(f"{text!r} is not valid JSON ({exc.msg})") from None


def list_of(kind):
    """An argparse type: one value of `kind` or a comma-separated list of them; for a number, an
    item may be a range, START:STOP:STEP or START:STOP:logN (`dynsim.cli.ranges`)."""
    numeric = kind in (float, resources.integer)

    def item(x: str) -> list:
        if numeric and ":" in x:
            return ranges.expand(x, integer=kind is not float)
        return [kind(x)]

    def parse(text: str) -> list:
        items = [x.strip() for x in text.split(",")]
        if not items or any(x == "" for x in items):
            raise argparse.ArgumentTypeError(
                f"{text!r} is not a value or a comma-separated list of values"
            )
        try:
            return [v for x in items for v in item(x)]
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: every item must be {kind.__name__}"
            ) from None
        except argparse.ArgumentTypeError as exc:  # the item's own message (e.g. out of range)
            raise argparse.ArgumentTypeError(
                f"{text!r}: every item must be {kind.__name__}: {exc}"
            ) from None

    parse.__name__ = f"list of {kind.__name__}"
    parse.comma_list = True  # a --config list value is written as its comma-separated text
    return parse


def one_item_list(kind):
    """An argparse type: one value of `kind` (a field with its own syntax), as a one-item list (a
    sweep's axis)."""

    def parse(text: str) -> list:
        return [kind(text)]

    parse.__name__ = getattr(kind, "__name__", "value")
    parse.one_item = True  # --print-config writes the item
    return parse


def cluster_options(group, what: str, default: str) -> None:
    """--scheduler, --security, --workers: where `what` run (`dynsim.sweeps.executors`)."""
    group.add_argument(
        "--scheduler",
        default=None,
        metavar="tls://HOST:PORT",
        help=f"run {what} on this existing Dask scheduler (a SLURM cluster "
        "through dask-jobqueue: docs/sweeps.md §6), with --security FILE: its TLS credentials "
        "(without them only with --insecure-scheduler)",
    )
    group.add_argument(
        "--insecure-scheduler",
        action="store_true",
        help="connect to a --scheduler without --security (tcp://): its workers' results are "
        "unpickled here, so this trusts the scheduler, every worker and the network to run "
        "code as you (default: refused)",
    )
    group.add_argument(
        "--security",
        default=None,
        metavar="FILE",
        help="TOML file with tls_ca_file, tls_client_cert (and tls_client_key): "
        "the --scheduler's TLS credentials, paths relative to FILE "
        "(docs/sweeps.md §6)",
    )
    group.add_argument(
        "--workers",
        type=int,
        default=None,
        help=f"run {what} on a private local Dask cluster of this many worker "
        "processes: TLS with temporary credentials, listening on 127.0.0.1 "
        f"only (default: {default})",
    )


def axis_options(parser: argparse.ArgumentParser, setting) -> None:
    """One option per config field taking one value or a comma-separated list (a swept axis); a
    field with its own syntax (a setting's field parser) takes one value."""
    cls = setting.config
    hints = typing.get_type_hints(cls)
    group = parser.add_argument_group(
        f"{setting.name.upper()} configuration: each {cls.__name__} field takes one "
        "value or a comma-separated list (a list is a swept axis)",
        "A number's list may hold ranges: START:STOP:STEP (STOP included when the steps reach "
        "it, e.g. --q 0.1:0.5:0.05) and START:STOP:logN (N values evenly spaced in log scale, "
        "e.g. --eta 1e-3:1e-1:log5).",
    )
    for f in dataclasses.fields(cls):
        kind = field_kind(setting, f, hints)
        if f.name in setting.field_parsers:
            typ, extra = one_item_list(kind), " (one value, not a list)"
        else:
            typ, extra = list_of(kind), ""
        default = "derived" if f.default is None else f.default
        group.add_argument(
            f"--{f.name.replace('_', '-')}",
            dest=f.name,
            type=typ,
            default=argparse.SUPPRESS,
            help=f"{field_help(setting, f)}{extra} (default: {default})",
        )
    parser.set_defaults(config_class=cls)


def without(argv: list[str], option: str) -> list[str]:
    """`argv` without `option VALUE` and `option=VALUE`."""
    out, skip = [], False
    for tok in argv:
        if skip:
            skip = False
        elif tok == option:
            skip = True
        elif not tok.startswith(option + "="):
            out.append(tok)
    return out


def only_option(group, names) -> None:
    """--only NAME[,NAME...]: judge only these claims, running only what they need."""
    group.add_argument(
        "--only",
        default=None,
        metavar="CLAIM[,CLAIM...]",
        help="judge only these claims and run only what they need (names as in the table, "
        "case-insensitive; quote names with spaces): " + ", ".join(names),
    )


def out_options(group, help: str = "output directory") -> None:
    """--out DIR; left out, `default_out` gives each command its own folder under
    ./dynsim-out."""
    group.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"{help} (default: ./{OUT_ROOT}/COMMAND-NAME, e.g. ./{OUT_ROOT}/compare-jsl; "
        "compare adds the mode when it is not exact: compare-jsl-realistic)",
    )


def seeds_option(group, default, use: str, option: str = "--seeds") -> None:
    """--seeds N (`seeds`) added to an argparse group."""
    seeds(default, use, flag=option).add(group)


def report_options(group) -> None:
    """--json, --explain, --no-plot and --strict of every `compare`."""
    group.add_argument(
        "--json", action="store_true", help="print the report as JSON instead of the table"
    )
    group.add_argument(
        "--explain",
        action="store_true",
        help="after the tables, what each printed quantity is (JSL: the events' definitions; MIM: "
        "the information gap's)",
    )
    group.add_argument("--no-plot", action="store_true", help="do not draw compare.png")
    group.add_argument(
        "--strict",
        action="store_true",
        help="exit 1 when a named reduced approximation (pp_frozen, mean_field) misses its stated "
        "tolerance; without it that gap is reported (verdict: APPROXIMATION GAP) and the exit is 0",
    )


def method_options(group) -> None:
    """--method and --t-max of `compare` (docs/flow.md)."""
    group.add_argument(
        "--method",
        choices=("gd", "flow"),
        default="gd",
        help="reduced level: gd (the recurrence, exact against full GD) or flow (the "
        "gradient-flow ODE, eta -> 0 limit, compared with full GD as an approximation: "
        "they differ by O(eta)) (default: gd)",
    )
    group.add_argument(
        "--t-max",
        type=float,
        default=None,
        metavar="T",
        help="--method flow: end time of the flow in units of eta * steps (default: eta * steps)",
    )


def default_out(args) -> str:
    """./dynsim-out/<command>-<name>[-<mode>]: one folder per command, so runs of different commands
    never mix."""
    mode = getattr(args, "mode", None)
    suffix = f"-{mode}" if args.command == "compare" and mode not in (None, "exact") else ""
    return os.path.join(OUT_ROOT, f"{args.command}-{args.target}{suffix}")
