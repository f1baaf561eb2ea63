"""Input checks shared by the settings: named errors (parameter, value, what is allowed), and how
every message spells what it names: a count of any size (`text_count`, `shown`) and the close names
of a misspelt one (`did_you_mean`)."""

from __future__ import annotations

import difflib
import math
import numbers
import reprlib
from typing import Any, Iterable, Optional


INT64_MAX = 2**63 - 1  # the largest seed jax.random.key takes, and a command line's integers
# A count with more digits is printed in scientific notation ("4.08e+477"): Python refuses to
# convert an integer of more than 4300 digits to text, and a long one is not read digit by digit.
FULL_DIGITS = 15
# `shown` writes an integer value of more bits (about 30 digits) as `text_count` does
SHOWN_BITS = 100


def text_count(n: Optional[int] = None, log10: Optional[float] = None) -> str:
    """A count in full ("4,080,465") up to FULL_DIGITS digits, else in scientific notation with
    three significant digits ("4.08e+477"), however large; with `log10` instead of n (a count too
    large to build), from its base-10 logarithm."""
    if n is not None:
        n = int(n)
        if abs(n) < 10**FULL_DIGITS:
            return f"{n:,}"
        e = int(math.log10(abs(n)))  # log10 of an int of any size; within one of the exponent
        e += (abs(n) >= 10 ** (e + 1)) - (abs(n) < 10**e)
        mantissa = round(abs(n) / 10 ** (e - 2))  # int / int, correctly rounded: 100 to 1000
    else:
        e = math.floor(log10)
        mantissa = round(10 ** (log10 - e + 2))
    if mantissa == 1000:
        mantissa, e = 100, e + 1
    return f"{'-' if n is not None and n < 0 else ''}{mantissa // 100}.{mantissa % 100:02d}e+{e}"


def count_value(n: int) -> Any:
    """A count as a JSON file holds it: the integer while a float could hold it (up to about
    1.8e308, what a JSON reader's number takes), else its `text_count` text."""
    return int(n) if abs(int(n)).bit_length() <= 1024 else text_count(n)


def shown(value: Any) -> str:
    """repr(value) as an error message names it; an integer of more than SHOWN_BITS bits as
    `text_count` spells it (repr refuses past 4300 digits)."""
    if is_int(value) and abs(int(value)).bit_length() > SHOWN_BITS:
        return text_count(value)
    return repr(value)


class Short(reprlib.Repr):
    """reprlib's bounded repr (a long list prints its first items), an integer spelled as `shown`
    spells it."""

    def repr_int(self, x, level):
        return shown(x)


def did_you_mean(candidates: Iterable[Any], *words: Any) -> str:
    """ " (did you mean NAME?)" naming the candidate closest to each word that has a close one
    (difflib, case-insensitive), or "" when none has."""
    lookup = {str(c).lower(): str(c) for c in candidates}
    found = [
        lookup[close[0]]
        for w in words
        if (close := difflib.get_close_matches(str(w).lower(), lookup, n=1))
    ]
    found = list(dict.fromkeys(found))
    return f" (did you mean {', '.join(found)}?)" if found else ""


def check_seed(fail, seed: int) -> None:
    """fail("seed", seed, why) for a seed past INT64_MAX (an integer >= 0 checked before)."""
    if seed > INT64_MAX:
        fail("seed", seed, f"must be at most 2^63 - 1 = {INT64_MAX} (what jax.random.key takes)")


def check_int64(fail, cfg: Any, names: Iterable[str]) -> None:
    """fail(name, value, why) for each integer field of `names` past int64 (what numpy and JAX take,
    and the command line's bound); a field that is None or not an integer is left to its check."""
    for name in names:
        value = getattr(cfg, name)
        if is_int(value) and abs(int(value)) > INT64_MAX:
            fail(name, value, f"must be at most 2^63 - 1 = {INT64_MAX} in magnitude (int64)")


def is_int(x: Any) -> bool:
    """An integer, not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_real(x: Any) -> bool:
    """A finite real number, not a bool (nor an integer past the floats' range)."""
    if not isinstance(x, numbers.Real) or isinstance(x, bool):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def check_int(name: str, value: Any, low: int) -> None:
    """Raise `<name> = <value> is invalid: must be an integer >= low` unless value is such an
    integer."""
    if not is_int(value) or value < low:
        raise ValueError(f"{name} = {shown(value)} is invalid: must be an integer >= {low}")


def check_bool(name: str, value: Any, optional: bool = False) -> None:
    """Raise `<name> = <value> is invalid: must be True or False` (or None, where `optional`) unless
    it is one: a switch is never read by truth value, where "False" or "no" would mean True."""
    if not (isinstance(value, bool) or (optional and value is None)):
        allowed = "None, True or False" if optional else "True or False"
        raise ValueError(f"{name} = {shown(value)} is invalid: must be {allowed}")


def check_bools(optional: tuple = (), **switches: Any) -> None:
    """`check_bool` for each keyword (those named in `optional` may also be None)."""
    for name, value in switches.items():
        check_bool(name, value, name in optional)


def check_type(name: str, value: Any, kind: type, what: str) -> None:
    """Raise `<name> must be <what>, got <its type>` (a TypeError) unless value is a `kind`."""
    if not isinstance(value, kind):
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")


def check_between(name: str, value: Any, low: float, high: float) -> None:
    """Raise `<name> = <value> is invalid: must lie strictly between low and high` unless it is a
    finite number there."""
    if not is_real(value) or not low < value < high:
        raise ValueError(
            f"{name} = {shown(value)} is invalid: must lie strictly between {low} and {high}"
        )


def check_positive(name: str, value: Any, why: str = "") -> None:
    """Raise `<name> = <value> is invalid: must be a finite number > 0<why>` unless it is one (NaN
    and infinity are refused: a tolerance or a scale of inf accepts everything)."""
    if not is_real(value) or not value > 0:
        raise ValueError(f"{name} = {shown(value)} is invalid: must be a finite number > 0{why}")


def lower_bounds(fail, cfg: Any, bounds: dict) -> None:
    """For each field name -> (bound, strict): fail(name, value, "must be > bound" or ">= bound")
    when violated."""
    for name, (bound, strict) in bounds.items():
        value = getattr(cfg, name)
        if value < bound or (strict and value == bound):
            fail(name, value, f"must be {'>' if strict else '>='} {bound}")


DEFAULT_REPLICATES = 8  # independent runs of a full level's mode "sampled"


def check_setting(cfg: Any, config_class: type, mode: str, modes: tuple) -> None:
    """cfg must be a `config_class`, mode one of `modes`."""
    name = config_class.__name__
    check_type("cfg", cfg, config_class, f"{'an' if name[0] in 'AEIOU' else 'a'} {name}")
    if mode not in modes:
        raise ValueError(f"mode = {mode!r} is invalid: must be one of {', '.join(modes)}")


def mode_replicates(
    mode: str, value: Optional[int], default: int = DEFAULT_REPLICATES, name: str = "replicates"
) -> int:
    """The number of replicate runs of a full level: 1 in mode "exact" (deterministic), else
    `replicates(value, default)`. name: what the messages call the count (a command line's
    `--replicates`)."""
    if mode == "exact":
        if value not in (None, 1):
            raise ValueError(
                f"{name} = {shown(value)} is invalid in mode 'exact': the exact run is "
                "deterministic"
            )
        return 1
    return replicates(value, default, name)


def replicates(value: Optional[int], default: int, name: str = "replicates") -> int:
    """The replicate count of a sampled run: `default` for None, else an integer >= 2 (a standard
    error needs two)."""
    R = default if value is None else value
    if not is_int(R) or R < 2:
        raise ValueError(
            f"{name} = {shown(value)} is invalid: must be an integer >= 2 in mode 'sampled' "
            "(the standard error needs at least two runs)"
        )
    return int(R)
