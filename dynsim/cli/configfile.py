"""`--config FILE.toml` and `--print-config` of every command.

A config file holds `key = value` lines whose keys are the command's option names (config fields
such as `D`, `q`, `kappa_c`, and the command's own options such as `mode` or `seeds`; `-` or `_`
alike). Each value becomes the option's command-line text (`--q=0.5`) placed before the options
typed on the command line, so a typed option overrides the file and a file gives exactly the run its
options would give. `--print-config` prints the command's resolved options in that format and exits,
so `dynsim CMD --print-config > run.toml; dynsim CMD --config run.toml` runs the same problem.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math

from typing import Any

from dynsim import inputs

from .options import UsageError, config

# a config file holds a few dozen options: a larger file is not one
MAX_CONFIG_BYTES = 1 << 20

# options that say where or how to write, not what to compute: --print-config leaves them out
NOT_PRINTED = frozenset({"out", "config", "print_config", "help", "json", "no_plot"})


def add_options(parser: argparse.ArgumentParser) -> None:
    """--config FILE.toml and --print-config."""
    g = parser.add_argument_group("config file")
    g.add_argument(
        "--config",
        default=None,
        metavar="FILE.toml",
        help="read options from a TOML file (keys: option names, e.g. D = 16, q = 0.5, mode = "
        '"exact"); '
        "options on the command line override it",
    )
    g.add_argument(
        "--print-config",
        action="store_true",
        help="print this command's resolved options as TOML (a file for --config) and exit",
    )


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    return {
        a.dest: a
        for a in parser._actions
        if a.option_strings and a.dest not in ("help", "config", "print_config")
    }


def _is_flag(action: argparse.Action) -> bool:
    return isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))


def _text(value: Any, action: argparse.Action, where: str) -> str:
    """The command-line text of a TOML value for `action`."""
    if isinstance(value, bool):
        raise UsageError(f"{where} = {str(value).lower()} is invalid: a boolean is only for a flag")
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, list) and getattr(action.type, "comma_list", False):
        if any(isinstance(v, (list, dict, bool)) for v in value):
            raise UsageError(f"{where} = {value!r} is invalid: a list of single values is expected")
        return ",".join(v if isinstance(v, str) else repr(v) for v in value)
    if isinstance(value, (list, dict)):
        return json.dumps(value)
    raise UsageError(
        f"{where} = {value!r} is invalid: {type(value).__name__} values are not options"
    )


def tokens(parser: argparse.ArgumentParser, path: str) -> list[str]:
    """The command-line tokens that the TOML file `path` stands for, in the file's order."""
    data = inputs.read_toml(path, MAX_CONFIG_BYTES, "--config")
    actions = _actions(parser)
    out = []
    for key, value in data.items():
        dest = key.replace("-", "_")
        where = f"{path}: {key}"
        if dest not in actions:
            raise UsageError(
                f"{where} is not an option of `{parser.prog}`; the keys it takes: "
                + ", ".join(sorted(actions))
            )
        action = actions[dest]
        option = max(action.option_strings, key=len)
        if _is_flag(action):
            if not isinstance(value, bool):
                raise UsageError(
                    f"{where} = {value!r} is invalid: {option} is a flag, give true or false"
                )
            if value == isinstance(action, argparse._StoreTrueAction):
                out.append(option)
            continue
        out.append(f"{option}={_text(value, action, where)}")
    return out


def _toml(value: Any) -> str:
    """One TOML value (scalars, strings, arrays, inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return (
            "nan"
            if math.isnan(value)
            else ("inf" if value > 0 else "-inf")
            if math.isinf(value)
            else repr(value)
        )
    if isinstance(value, str):
        return json.dumps(value)  # a TOML basic string: JSON's escapes are TOML's
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(k))} = {_toml(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def _printable(value: Any, action: argparse.Action) -> Any:
    """The value --print-config writes for `action`: a one-item list of a list option as its
    item."""
    if (
        isinstance(value, list)
        and len(value) == 1
        and (getattr(action.type, "comma_list", False) or getattr(action.type, "one_item", False))
    ):
        return value[0]
    return value


def render(args: argparse.Namespace, parser: argparse.ArgumentParser) -> str:
    """The options of `args` as TOML: every config field at the value the run uses (given, else the
    command's default, else the config's; a field derived at run time, such as JSL's d = D, as a
    comment) and every other option's value."""
    actions = _actions(parser)
    values = {d: getattr(args, d) for d in actions if hasattr(args, d)}
    cls = getattr(args, "config_class", None)
    if cls is not None:
        if hasattr(args, "config_defaults"):
            config(args)  # one config: validate it before printing it
        for f in dataclasses.fields(cls):
            if f.name in actions and f.name not in values:
                values[f.name] = getattr(args, "config_defaults", {}).get(f.name, f.default)
    lines = [
        f"# dynsim {' '.join(getattr(args, 'argv', []))}",
        "# every option of this run: dynsim ... --config THIS_FILE runs it again",
    ]
    for dest in actions:
        if dest in NOT_PRINTED or dest not in values:
            continue
        value = values[dest]
        if value is None:
            lines.append(f"# {dest} = (derived or the command's default)")
        elif _is_flag(actions[dest]) and value is False:
            continue
        else:
            lines.append(f"{dest} = {_toml(_printable(value, actions[dest]))}")
    return "\n".join(lines)
