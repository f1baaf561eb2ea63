"""What each file dynsim reads back must hold, declared field by field (docs/data.md §4).

A schema maps a path to a `Kind`: the JSON types the value there may have and, for numbers, a
range. A path is keys joined by "." (each an fnmatch pattern: "*" is every key of a mapping,
"*_censored" every key ending so), "[]" standing for every item of a list: "errors.*.max_abs",
"claims[].kind", "areas[][][]". Only what is declared is checked: a missing field, an unknown extra
field and the parts of a container of another type pass; parents are judged before their children.
Each format's schema is declared beside its reader; `FORMATS` lists the formats, so that a test can
ask that each one is probed (tests/test_hostile_folders.py).

A value that does not fit is refused in one line naming the file and the field:
`what = 'path' is invalid: field "errors.loss.max_abs" is text, not a number or null`.
"""

from __future__ import annotations

import math
from fnmatch import fnmatchcase
from typing import Any, Iterator, NamedTuple, Optional

# every format dynsim reads back from a folder (the rows of docs/data.md §4's table)
FORMATS = (
    "report.json",
    "theorems.json",
    "trajectories.npz",
    "table.csv",
    "sweep.json",
    "store point",
    "lock",
)

WORDS = {
    "object": "a mapping",
    "list": "a list",
    "text": "text",
    "number": "a number",
    "integer": "an integer",
    "bool": "a boolean",
    "null": "null",
}


class InputError(ValueError):
    """A file or text refused as input (a ValueError: the command line exits 2); `missing`: the
    file does not exist."""

    missing = False


class Kind(NamedTuple):
    """The JSON types a field may have (names of WORDS; "number" takes integers too) and, for a
    number, its range: low <= value <= high, NaN only where `nan`, infinities only where `infinite`
    (and the range holds them)."""

    types: tuple[str, ...]
    low: float = -math.inf
    high: float = math.inf
    nan: bool = False
    infinite: bool = True


def kind(*types: str, low=-math.inf, high=math.inf, nan=False, infinite=True) -> Kind:
    """A `Kind` of `types` (see WORDS)."""
    unknown = [t for t in types if t not in WORDS]
    if unknown:
        raise ValueError(f"kind = {unknown[0]!r} is invalid: must be one of {', '.join(WORDS)}")
    return Kind(tuple(types), low, high, nan, infinite)


def type_of(value: Any) -> str:
    """The name in WORDS of a parsed JSON value's type."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    for name, cls in (("integer", int), ("number", float), ("text", str), ("list", list)):
        if isinstance(value, cls):
            return name
    return "object" if isinstance(value, dict) else type(value).__name__


def described(types) -> str:
    """The types as words: "a number or null"."""
    words = [WORDS[t] for t in types]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def judged(value: Any, expected: Kind) -> Optional[str]:
    """Why `value` does not fit `expected` ("text, not a number or null"); None when it fits."""
    found = type_of(value)
    fits = found in expected.types or (found == "integer" and "number" in expected.types)
    if not fits:
        return f"{WORDS.get(found, found)}, not {described(expected.types)}"
    if found not in ("integer", "number"):
        return None
    if isinstance(value, float) and math.isnan(value):
        return None if expected.nan else "NaN, not a number"
    if math.isinf(value) and not expected.infinite:
        return f"{value}, not a finite number"
    if not expected.low <= value <= expected.high:
        return f"{value!r}, outside [{expected.low!r}, {expected.high!r}]"
    return None


def matches(value: Any, parts: list[str], at: str = "") -> Iterator[tuple[str, Any]]:
    """(concrete path, value) of every place in `value` that the path `parts` names."""
    if not parts:
        yield at, value
        return
    head, rest = parts[0], parts[1:]
    if head == "[]":
        items = [(f"{at}[{i}]", v) for i, v in enumerate(value)] if isinstance(value, list) else []
    elif isinstance(value, dict):
        dot = "." if at else ""
        items = [(f"{at}{dot}{k}", v) for k, v in value.items() if fnmatchcase(str(k), head)]
    else:
        items = []
    for where, item in items:
        yield from matches(item, rest, where)


def depth(path: str) -> int:
    """How deep a schema path reaches (its parents are judged first)."""
    return path.count(".") + path.count("[]")


def problem(doc: Any, schema: dict[str, Kind]) -> Optional[str]:
    """The first way `doc` (a parsed JSON object) breaks `schema`, as words ('field "x" is text,
    not a number'); None when it holds."""
    if not isinstance(doc, dict):
        return f"a JSON {WORDS.get(type_of(doc), type_of(doc))}, not an object"
    for path in sorted(schema, key=depth):
        parts = [p for p in path.replace("[]", ".[]").split(".") if p]
        for where, value in matches(doc, parts):
            why = judged(value, schema[path])
            if why is not None:
                return f'field "{where}" is {why}'
    return None


def check(doc: Any, schema: dict[str, Kind], what: str, where: Any) -> Any:
    """`doc` if it holds `schema` (`problem`), else an InputError naming the file `where` (read as
    `what`) and the field."""
    why = problem(doc, schema)
    if why is not None:
        raise InputError(f"{what} = {str(where)!r} is invalid: {why}")
    return doc
