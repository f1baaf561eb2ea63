"""Input checks shared by the settings: named errors (parameter, value, what is allowed)."""

from __future__ import annotations

import math
import numbers
from typing import Any, Optional


INT64_MAX = 2**63 - 1  # the largest seed jax.random.key takes, and a command line's integers


def check_seed(fail, seed: int) -> None:
    """fail("seed", seed, why) for a seed past INT64_MAX (an integer >= 0 checked before)."""
    if seed > INT64_MAX:
        fail("seed", seed, f"must be at most 2^63 - 1 = {INT64_MAX} (what jax.random.key takes)")


def is_int(x: Any) -> bool:
    """An integer, not a bool."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def is_real(x: Any) -> bool:
    """A finite real number, not a bool."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(float(x))


def check_int(name: str, value: Any, low: int) -> None:
    """Raise `<name> = <value> is invalid: must be an integer >= low` unless value is such an
    integer."""
    if not is_int(value) or value < low:
        raise ValueError(f"{name} = {value!r} is invalid: must be an integer >= {low}")


def check_bool(name: str, value: Any, optional: bool = False) -> None:
    """Raise `<name> = <value> is invalid: must be True or False` (or None, where `optional`) unless
    it is one: a switch is never read by truth value, where "False" or "no" would mean True."""
    if not (isinstance(value, bool) or (optional and value is None)):
        allowed = "None, True or False" if optional else "True or False"
        raise ValueError(f"{name} = {value!r} is invalid: must be {allowed}")


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
            f"{name} = {value!r} is invalid: must lie strictly between {low} and {high}"
        )


def check_positive(name: str, value: Any, why: str = "") -> None:
    """Raise `<name> = <value> is invalid: must be a finite number > 0<why>` unless it is one (NaN
    and infinity are refused: a tolerance or a scale of inf accepts everything)."""
    if not is_real(value) or not value > 0:
        raise ValueError(f"{name} = {value!r} is invalid: must be a finite number > 0{why}")


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
    if not isinstance(cfg, config_class):
        raise TypeError(f"cfg must be a {config_class.__name__}, got {type(cfg).__name__}")
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
                f"{name} = {value!r} is invalid in mode 'exact': the exact run is deterministic"
            )
        return 1
    return replicates(value, default, name)


def replicates(value: Optional[int], default: int, name: str = "replicates") -> int:
    """The replicate count of a sampled run: `default` for None, else an integer >= 2 (a standard
    error needs two)."""
    R = default if value is None else value
    if not is_int(R) or R < 2:
        raise ValueError(
            f"{name} = {value!r} is invalid: must be an integer >= 2 in mode 'sampled' "
            "(the standard error needs at least two runs)"
        )
    return int(R)
