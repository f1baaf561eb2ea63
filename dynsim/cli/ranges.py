"""Range syntax for a swept axis: START:STOP:STEP (every STEP from START, STOP included when the
grid reaches it) and START:STOP:logN (N values evenly spaced in log scale, both ends included), for
numeric config fields. Decimal arithmetic keeps `0.1:0.5:0.1` at the values typed by hand (0.3, not
0.30000000000000004)."""

from __future__ import annotations

import argparse
import decimal
import math

MAX_VALUES = 10_000  # one range; the run's size is then checked by its resource estimate


def _refuse(text: str, why: str):
    raise argparse.ArgumentTypeError(f"{text!r} is not a range: {why}")


def _number(text: str, part: str) -> decimal.Decimal:
    try:
        value = decimal.Decimal(part)
    except decimal.InvalidOperation:
        _refuse(text, f"{part!r} is not a number")
    if not value.is_finite():
        _refuse(text, f"{part!r} is not finite")
    return value


def linear(text: str, start: str, stop: str, step: str, integer: bool) -> list:
    """START, START + STEP, ... up to STOP (included when on the grid)."""
    a, b, s = (_number(text, p) for p in (start, stop, step))
    if integer and any(v != v.to_integral_value() for v in (a, b, s)):
        _refuse(text, "this field takes integers: START, STOP and STEP must be integers")
    if s == 0 or (b - a) * s < 0:
        _refuse(text, "STEP must be nonzero and lead from START towards STOP")
    count = int((b - a) / s) + 1
    if count > MAX_VALUES:
        _refuse(text, f"it gives {count} values; at most {MAX_VALUES} per range")
    values = [a + k * s for k in range(count)]
    return [int(v) if integer else float(v) for v in values]


def logarithmic(text: str, start: str, stop: str, count: str) -> list:
    """N values from START to STOP, evenly spaced in log scale, both ends exact and the others to 12
    significant digits (1e-3:1e-1:log3 gives 0.01, not 0.010000000000000002)."""
    a, b = float(_number(text, start)), float(_number(text, stop))
    if not count.isdigit() or not 2 <= int(count) <= MAX_VALUES:
        _refuse(text, f"logN takes a count N between 2 and {MAX_VALUES}")
    if a <= 0 or b <= 0:
        _refuse(text, "a log range needs START > 0 and STOP > 0")
    n = int(count)
    ratio = math.log(b / a)
    inner = [float(f"{a * math.exp(ratio * k / (n - 1)):.12g}") for k in range(1, n - 1)]
    return [a, *inner, b]


def expand(text: str, integer: bool) -> list:
    """The values of one range item (START:STOP:STEP or START:STOP:logN)."""
    parts = text.split(":")
    if len(parts) != 3:
        _refuse(text, "write START:STOP:STEP or START:STOP:logN")
    start, stop, last = (p.strip() for p in parts)
    if last.startswith("log"):
        if integer:
            _refuse(text, "a log range is for a float field")
        return logarithmic(text, start, stop, last[3:])
    return linear(text, start, stop, last, integer)
