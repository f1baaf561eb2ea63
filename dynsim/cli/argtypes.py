"""The argparse types of dynsim's numeric options: each refuses, while parsing, with the value and
the range it must lie in (an integer within int64, `dynsim.resources.integer`)."""

from __future__ import annotations

import argparse
import math

from dynsim import resources


def at_least(low: int):
    """An argparse type: an integer >= low (a count) within int64 (`resources.integer`), refused
    while parsing with the value."""

    def integer(text: str) -> int:
        value = resources.integer(text)
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is invalid: must be an integer >= {low}")
        return value

    return integer


def integer_in(low: int, high: int, odd: bool = False, why: str = ""):
    """An argparse type: an integer in [low, high] (only odd ones with `odd`) within int64
    (`resources.integer`), refused while parsing with the value, the range and `why`."""

    def integer(text: str) -> int:
        value = resources.integer(text)
        if not low <= value <= high or (odd and value % 2 == 0):
            kind = "an odd integer" if odd else "an integer"
            raise argparse.ArgumentTypeError(
                f"{value} is invalid: must be {kind} in [{low}, {high}]{why}"
            )
        return value

    return integer


def float_in(low: float, high: float, why: str):
    """An argparse type: a finite real number in the open interval (low, high), refused while
    parsing with the value and `why`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not (math.isfinite(value) and low < value < high):
            raise argparse.ArgumentTypeError(f"{text!r} is invalid: {why}")
        return value

    parse.__name__ = "float"
    return parse


def int_list(text: str) -> list[int]:
    """An argparse type: a comma-separated list of integers."""
    try:
        values = [resources.integer(x) for x in text.split(",") if x.strip()]
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a comma-separated list of integers"
        ) from None
    if not values:
        raise argparse.ArgumentTypeError("the list is empty")
    return values


int_list.comma_list = True  # a --config list value is written as its comma-separated text
