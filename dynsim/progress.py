"""A progress bar for compiled runs: the scan reports each record through a host callback.

Compiled code calls `report(done)` at every record (`recording.run`); it draws only inside
`bar(...)`, so library calls stay silent unless the caller asks for a bar (the CLI does, on a
terminal). Off a terminal (SLURM, nohup, a pipe) a bar draws nothing, or with `plain=True` writes
one plain line per `advance` instead (done/total, elapsed, ETA): a log file then says how far a long
run is.
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Iterator, Optional

import jax
import numpy as np

from . import interrupt

_active: Optional[dict] = None


@contextlib.contextmanager
def bar(
    total: int,
    label: str,
    stream=None,
    enabled: Optional[bool] = None,
    unit: str = "steps",
    plain: bool = False,
) -> Iterator[None]:
    """Draw a one-line progress bar of `total` units on `stream` (stderr) while the block runs.

    unit="steps": compiled runs move it (`report`); any other unit (e.g. "points") moves only by
    `advance`. enabled=None: a bar on a terminal; off one nothing, or with `plain` (and a unit other
    than "steps") one plain line per `advance`.
    """
    global _active
    stream = stream or sys.stderr
    tty = stream.isatty()
    on = tty if enabled is None else enabled
    lines = enabled is None and not tty and plain and unit != "steps"
    previous, _active = (
        _active,
        (
            {
                "total": max(total, 1),
                "label": label,
                "stream": stream,
                "unit": unit,
                "done": 0,
                "start": time.perf_counter(),
                "last": -1.0,
                "plain": lines,
            }
            if on or lines
            else None
        ),
    )
    try:
        yield
    finally:
        if _active is not None and not _active["plain"]:
            stream.write("\n")
            stream.flush()
        _active = previous


def report(done) -> None:
    """Host side of the callback of compiled runs: stop the run if a signal arrived
    (`interrupt.raise_if_interrupted`), else redraw a steps bar (at most 10 times a second)."""
    interrupt.raise_if_interrupted()
    state = _active
    if state is None or state["unit"] != "steps":
        return
    _draw(state, int(np.max(np.asarray(done))))


def advance(count: int = 1) -> None:
    """Move the active bar by `count` units (e.g. finished points of a sweep)."""
    state = _active
    if state is not None:
        state["done"] += count
        _draw(state, state["done"], force=True)


def _draw(state: dict, done: int, force: bool = False) -> None:
    now = time.perf_counter()
    if not force and now - state["last"] < 0.1 and done < state["total"]:
        return
    state["last"] = now
    frac = min(done / state["total"], 1.0)
    width = 30
    elapsed = now - state["start"]
    eta = elapsed / frac - elapsed if frac > 0 else float("nan")
    counts = f"{done}/{state['total']} {state['unit']}, {elapsed:.0f} s elapsed, ~{eta:.0f} s left"
    if state["plain"]:
        state["stream"].write(f"{state['label']}: {counts}\n")
    else:
        state["stream"].write(f"\r{state['label']}: [{'#' * int(width * frac):<{width}}] {counts} ")
    state["stream"].flush()


def interrupted(exc: BaseException) -> bool:
    """True for Ctrl-C, also when it struck inside a compiled run's host callback (`report`): JAX
    then raises a JaxRuntimeError whose message carries the KeyboardInterrupt instead of the
    KeyboardInterrupt itself."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, jax.errors.JaxRuntimeError) and "KeyboardInterrupt" in str(exc)
