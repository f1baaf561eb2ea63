"""A progress bar for compiled runs: the scan reports each record through a host callback.

Compiled code calls `report(done)` at every record (`recording.run`); it draws only inside
`bar(...)`, so library calls stay silent unless the caller asks for a bar (the CLI does, on a
terminal). Off a terminal (SLURM, nohup, a pipe) a bar draws nothing, or with `plain=True` writes
one plain line per `advance` instead (done/total, elapsed, ETA): a log file then says how far a long
run is.

Library calls (`tracked`, e.g. `reduced.jsl.simulate(cfg, progress=...)`): progress=None draws a
bar once a run has taken DELAY seconds, on a terminal or in a Jupyter notebook (whose output
honours the carriage return), and elsewhere writes one plain line every INTERVAL seconds;
progress=True draws from the start, progress=False never. Inside a bar already drawn (the CLI's)
a library call draws nothing of its own.
"""

from __future__ import annotations

import contextlib
import functools
import sys
import time
from typing import Callable, Iterator, Optional

import jax
import numpy as np

from . import interrupt
from .validation import check_bool

_active: Optional[dict] = None

# a library call's bar appears after this many seconds of work (a short run prints nothing) ...
DELAY = 3.0
# ... and off a terminal writes one plain line at most this often (a log stays short)
INTERVAL = 30.0


@contextlib.contextmanager
def bar(
    total: int,
    label: str,
    stream=None,
    enabled: Optional[bool] = None,
    unit: str = "steps",
    plain: bool = False,
    delay: float = 0.0,
    interval: float = 0.0,
) -> Iterator[None]:
    """Draw a one-line progress bar of `total` units on `stream` (stderr) while the block runs.

    unit="steps": compiled runs move it (`report`); any other unit (e.g. "points") moves only by
    `advance`. enabled=None: a bar on a terminal (or a notebook); off one nothing, or with `plain`
    one plain line per `advance` (a "steps" bar: per report, at most one per `interval` seconds).
    Nothing is drawn before `delay` seconds have passed.
    """
    global _active
    interrupt.raise_if_interrupted()  # a safe point before each run (and its compiling)
    stream = stream or sys.stderr
    tty = stream.isatty() or notebook(stream)
    on = tty if enabled is None else enabled
    lines = enabled is None and not tty and plain and (unit != "steps" or interval > 0)
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
                "delay": delay,
                "interval": interval if lines else 0.1,
                "drawn": False,
            }
            if on or lines
            else None
        ),
    )
    try:
        yield
    finally:
        if _active is not None and not _active["plain"] and _active["drawn"]:
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
    """Move the active bar by `count` units (e.g. finished points of a sweep); a safe point for
    Ctrl-C between runs (`interrupt.raise_if_interrupted`)."""
    interrupt.raise_if_interrupted()
    state = _active
    if state is not None:
        state["done"] += count
        _draw(state, state["done"], force=True)


def _draw(state: dict, done: int, force: bool = False) -> None:
    now = time.perf_counter()
    first = state.setdefault("first", (now, done))  # the rate counts from here: compiling is done
    if now - state["start"] < state["delay"]:
        return
    if not force and now - state["last"] < state["interval"] and done < state["total"]:
        return
    state["last"], state["drawn"] = now, True
    frac = min(done / state["total"], 1.0)
    width = 30
    elapsed = now - state["start"]
    counts = f"{done}/{state['total']} {state['unit']}, {elapsed:.0f} s elapsed"
    if done > first[1] and now > first[0]:  # a rate measured after the first report
        left = (now - first[0]) / (done - first[1]) * max(state["total"] - done, 0)
        counts += f", ~{left:.0f} s left"
    if state["plain"]:
        state["stream"].write(f"{state['label']}: {counts}\n")
    else:
        state["stream"].write(f"\r{state['label']}: [{'#' * int(width * frac):<{width}}] {counts} ")
    state["stream"].flush()


def notebook(stream) -> bool:
    """True when `stream` is a Jupyter kernel's output stream (it draws a carriage return as a
    terminal does)."""
    return type(stream).__module__.split(".")[0] == "ipykernel"


def tracked(label: str, total: Callable[..., Optional[int]]):
    """Give a library entry point the keyword `progress` (module docstring): its bar counts
    `total(*args, **kwargs)` steps (None: no bar, e.g. a run no compiled scan moves)."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, progress: Optional[bool] = None, **kwargs):
            check_bool("progress", progress, optional=True)
            if progress is None and _active is not None:
                return fn(*args, **kwargs)  # inside the caller's bar
            steps = total(*args, **kwargs) if progress is not False else None
            if steps is None:
                with bar(1, label, enabled=False):
                    return fn(*args, **kwargs)
            with bar(
                steps,
                label,
                enabled=progress,
                plain=True,
                delay=0.0 if progress else DELAY,
                interval=INTERVAL,
            ):
                return fn(*args, **kwargs)

        return run

    return wrap


def interrupted(exc: BaseException) -> bool:
    """True for Ctrl-C, also when it struck inside a compiled run's host callback (`report`): JAX
    then raises a JaxRuntimeError whose message carries the KeyboardInterrupt instead of the
    KeyboardInterrupt itself."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    return isinstance(exc, jax.errors.JaxRuntimeError) and "KeyboardInterrupt" in str(exc)
