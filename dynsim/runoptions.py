"""A level's run options as one typed, self-checking record (a frozen dataclass deriving `Options`,
declared in the level's spec, as `Finetune` and `Flow` are records): each field declared with
`option`, which says, as data, its flag's help, the verbs and modes that read it and how the command
line parses it. The command line generates the flags from the fields
(`dynsim.cli.options.level_options`), as it does for a config's fields; a library caller gets the
same checks on construction. A level imports this module, never the command line.

The options every setting shares are declared once, here: `replicates`, `seeds` and the default of
the checker's confidence (`CONFIDENCE`, everywhere it is a default)."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Any, Optional

from dynsim.validation import DEFAULT_REPLICATES, INT64_MAX, is_int, is_real, shown

# the checker's family-wise confidence (`dynsim.checker.compare`), wherever it is a default
CONFIDENCE = 0.999
# how the command line parses an option's text, named as data: (kind, *arguments)
PARSES = ("int", "float", "at_least", "int_list", "flag")


def option(
    help: str,
    default: Any = None,
    *,
    parse: tuple = ("int",),
    metavar: Optional[str] = None,
    choices: Optional[tuple] = None,
    flag: Optional[str] = None,
    verbs: tuple[str, ...] = ("compare",),
    group: str = "run",
    modes: tuple[str, ...] = (),
    checker: bool = False,
):
    """A field of an `Options` record: its default and, in its metadata, the flag's declaration
    (`dynsim.verbs.Option`'s fields; `parse` one of PARSES with its arguments; a choice needs no
    parse; flag: --name-with-dashes when left out)."""
    if parse[0] not in PARSES:
        raise ValueError(f"parse = {parse!r} is invalid: its kind must be one of {PARSES}")
    declared = dict(
        help=help, parse=None if choices else parse, metavar=metavar, choices=choices, flag=flag,
        verbs=verbs, group=group, modes=modes, checker=checker,
    )  # fmt: skip
    return dataclasses.field(default=default, metadata={"option": declared})


def replicates(use: str = "", verbs: tuple[str, ...] = ("compare", "sweep"), modes=("sampled",)):
    """--replicates R: a full level's independent runs in mode "sampled", for the checker's Monte
    Carlo band (`dynsim.validation.mode_replicates` reads it); `use` adds what else reads it."""
    return option(
        f"independent runs in --mode sampled, for the Monte Carlo band (default: "
        f"{DEFAULT_REPLICATES}){use}",
        parse=("at_least", 1),
        metavar="R",
        verbs=verbs,
        modes=modes,
    )


def seeds(default: Optional[int], use: str, flag: str = "--seeds", **declared):
    """--seeds N, with one meaning in every command: N independent runs, each with its own random
    draws (data, initialization, batches) derived from --seed; `use` says what the command does
    with them."""
    shown_default = "derived" if default is None else default
    return option(
        f"number of independent runs, each with its own random draws derived from --seed; "
        f"{use} (default: {shown_default})",
        default,
        parse=("int",),
        metavar="N",
        flag=flag,
        **declared,
    )


def declared(record) -> list[tuple[str, dict, Any]]:
    """(name, its flag's declaration, its default) of every field of an `Options` record class."""
    return [
        (f.name, f.metadata["option"], f.default)
        for f in dataclasses.fields(record)
        if "option" in f.metadata
    ]


@dataclasses.dataclass(frozen=True)
class Options:
    """The base of a level's run options: every field checked on construction against its
    declaration (None: not given; an integer kind an integer within int64 and at least its bound,
    a float a finite number, a list of integers a sequence of them, a choice one of its choices, a
    flag a bool): a wrong type is a TypeError, a value out of range a ValueError, each naming the
    field. A subclass adds its own checks in `check`."""

    def __post_init__(self) -> None:
        for name, spec, _ in declared(type(self)):
            value = getattr(self, name)
            if value is not None:
                _check(f"{type(self).__name__}.{name}", value, spec)
        self.check()

    def check(self) -> None:
        """A record's own checks beyond each field's kind (none here)."""

    @classmethod
    def of(cls, values: dict) -> "Options":
        """The record of the fields `values` holds (other keys ignored: a command's other
        options)."""
        return cls(**{name: values[name] for name, _, _ in declared(cls) if name in values})


def _check(name: str, value, spec: dict) -> None:
    """One field against its declaration (`Options`)."""
    if spec["choices"] is not None:
        if value not in spec["choices"]:
            raise ValueError(
                f"{name} = {shown(value)} is invalid: must be one of {spec['choices']}"
            )
        return
    kind, *args = spec["parse"]
    if kind == "flag":
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be True or False, got {type(value).__name__}")
    elif kind == "float":
        if not isinstance(value, numbers.Real) or isinstance(value, bool):
            raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
        if not is_real(value):
            raise ValueError(f"{name} = {shown(value)} is invalid: must be a finite number")
    elif kind == "int_list":
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"{name} must be a list of integers, got {type(value).__name__}")
        for item in value:
            _integer(name, item, 1)
    else:
        _integer(name, value, args[0] if args else -INT64_MAX)


def _integer(name: str, value, low: int) -> None:
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if not low <= value <= INT64_MAX:
        raise ValueError(
            f"{name} = {shown(value)} is invalid: must be an integer in [{low}, 2^63 - 1]"
        )
