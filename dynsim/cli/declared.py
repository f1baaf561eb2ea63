"""The flags of a level's declared options: one `dynsim.verbs.Option` per field of a
`dynsim.runoptions.Options` record (`level_options`), and the shared --seeds (`seeds`, declared once
in `dynsim.runoptions`)."""

from __future__ import annotations

from dynsim import runoptions
from dynsim.verbs import Option

from .argtypes import at_least, int_list

# how a level's option is parsed (`dynsim.runoptions.PARSES`): its kind -> the argparse type
PARSERS = {
    "int": lambda: int,
    "float": lambda: float,
    "at_least": at_least,
    "int_list": lambda: int_list,
}


def option_of(name: str, declared: dict, default=None) -> Option:
    """The `dynsim.verbs.Option` of one field declared by `dynsim.runoptions.option`."""
    parse = declared["parse"] or ()
    flag = parse[:1] == ("flag",)
    return Option(
        declared["flag"] or "--" + name.replace("_", "-"),
        declared["help"],
        type=None if flag or not parse else PARSERS[parse[0]](*parse[1:]),
        default=default,
        choices=declared["choices"],
        metavar=declared["metavar"],
        action="store_true" if flag else None,
        verbs=declared["verbs"],
        group=declared["group"],
        modes=declared["modes"],
        checker=declared["checker"],
    )


def level_options(record) -> tuple[Option, ...]:
    """The flags of a level's `dynsim.runoptions.Options` record, one per field, in its order."""
    return tuple(option_of(*field) for field in runoptions.declared(record))


def seeds(default, use: str, flag: str = "--seeds", **declared) -> Option:
    """--seeds N (`dynsim.runoptions.seeds`, declared there once) as a `dynsim.verbs.Option`."""
    field = runoptions.seeds(default, use, flag, **declared)
    return option_of("seeds", field.metadata["option"], default)
