"""Progress of long work: a bar of `total` units that runs move through host callbacks and loops
over runs move by `advance`.

Each run reports its own progress, `report(done, total, unit)`: a compiled scan its steps through
`jax.debug.callback` every ~CHECK_WORK element ops (`recording.run`), a gradient flow the save times
it has reached (`reduced.flow`). A "steps" bar counts a run's steps; a bar of other units (runs of
`check-theorems`, points of a sweep) shows the run beside its count ("now 12000/20000 steps") and
moves by its fraction of one unit. A run's time left is measured from its first report, and again
from each restart of its count (its next batch, its next seed): compiling is never counted as work
done. A bar of other units (a sweep's points) says its time left once the first unit has finished,
from the pace measured since the bar started (`time_left`: elapsed / finished units), counting down
until the next unit finishes: it shrinks as work finishes, and the first estimate, made before any
measurement, stays the command's rough one (`dynsim.resources.say_long`).

Where it draws: on a terminal one line redrawn in place; in a Jupyter notebook one output updated in
place (an IPython display handle; the kernel's stream is recognised by its type, so nothing imports
IPython elsewhere); off both (SLURM, nohup, a pipe, a file) one plain line at most every INTERVAL
seconds, and the last: a log then says how far a long run is. Nothing is drawn before a bar's
`delay`, and only inside `bar(...)`, so library calls stay silent unless the caller asks.

Library calls (`tracked`, e.g. `reduced.jsl.simulate(cfg, progress=...)`): progress=None draws a
bar once a run has taken DELAY seconds; progress=True draws from the start, progress=False never.
Inside a bar already drawn (the CLI's) a library call draws nothing of its own.
"""

from __future__ import annotations

import contextlib
import functools
import math
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
# a drawn bar is redrawn at most this often
REDRAW = 0.1
WIDTH = 30  # characters of the bar
REPORT_EVERY = 50  # steps between two reports of a trainer's scan (each a host round trip)


@contextlib.contextmanager
def bar(
    total: Optional[int],
    label: str,
    stream=None,
    enabled: Optional[bool] = None,
    unit: str = "steps",
    delay: float = 0.0,
) -> Iterator[None]:
    """Show the progress of `total` `unit`s on `stream` (stderr) while the block runs (module
    docstring); total=None: the first run's own total and unit.

    enabled=None: drawn on a terminal or in a notebook, plain lines elsewhere; True: drawn wherever;
    False: nothing. Nothing is shown before `delay` seconds have passed."""
    global _active
    interrupt.raise_if_interrupted()  # a safe point before each run (and its compiling)
    stream = stream or sys.stderr
    drawn = stream.isatty() or notebook(stream)
    state = None
    if enabled is not False:
        state = {
            "total": None if total is None else max(total, 1),
            "label": label,
            "stream": stream,
            "unit": unit,
            "done": 0,
            "run": None,  # the run in progress: its own count
            "finished": None,  # seconds from the start to the last unit finished (`advance`)
            "shown": None,  # the count last drawn
            "start": time.monotonic(),
            "last": -math.inf,
            "plain": enabled is None and not drawn,
            "notebook": notebook(stream),
            "delay": delay,
            "handle": None,  # the notebook's display
            "width": 0,  # characters of the line on the terminal, 0: none
        }
    previous, _active = _active, state
    try:
        yield
    finally:
        if state is not None and state["width"]:
            stream.write("\n")
            stream.flush()
        _active = previous


def report(done, total=None, unit: str = "steps") -> None:
    """Host side of a run's callback: stop the run if a signal arrived
    (`interrupt.raise_if_interrupted`), else note that it has done `done` (one count, or one per
    member of a vmapped run) of its `total` `unit`s, and redraw."""
    interrupt.raise_if_interrupted()
    state = _active
    if state is None:
        return
    now, done = time.monotonic(), float(np.max(np.asarray(done)))
    total = None if total is None else float(np.max(np.asarray(total)))
    run = state["run"]
    # a count back at (or below) its first report: the run's next batch, or another run
    if (
        run is None
        or (run["unit"], run["total"]) != (unit, total)
        or done <= run["first"] < run["done"]
    ):
        run = state["run"] = {"unit": unit, "total": total, "first": done, "done": done}
    run["done"] = max(run["done"], done)  # a flow's rejected step may look back a little
    if run["done"] == run["first"]:
        # its rate counts from the last report before the count moved: compiling, also the
        # compiling inside the callbacks, is over by then
        run["anchor"] = (now, done)
    if state["total"] is None and total is not None:
        state["total"], state["unit"] = max(int(total), 1), unit
    _draw(state, now)


def report_every(done, total: int) -> None:
    """Traceable: `report` `done` of `total` steps from a trainer's scan at every REPORT_EVERY-th
    step and the last."""
    jax.lax.cond(
        (done % REPORT_EVERY == 0) | (done == total),
        lambda: jax.debug.callback(functools.partial(report, total=total), done),
        lambda: None,
    )


def advance(count: int = 1) -> None:
    """Move the active bar by `count` units (e.g. finished points of a sweep); a safe point for
    Ctrl-C between runs (`interrupt.raise_if_interrupted`)."""
    interrupt.raise_if_interrupted()
    state = _active
    if state is not None:
        now = time.monotonic()
        state["done"] += count
        state["run"] = None
        state["finished"] = now - state["start"]  # the pace: finished units over this time
        _draw(state, now, force=True)


def pulse() -> None:
    """Redraw the active bar with its time elapsed while its work runs elsewhere (Dask workers,
    another process): off a terminal a plain line at most every INTERVAL seconds."""
    state = _active
    if state is not None:
        _draw(state, time.monotonic())


def make_room() -> None:
    """Clear a bar drawn on the terminal from its line, so that a log line takes it (the next update
    draws the bar again below)."""
    state = _active
    if state is not None and state["width"]:
        state["stream"].write("\r" + " " * state["width"] + "\r")
        state["width"], state["last"] = 0, -math.inf


def _draw(state: dict, now: float, force: bool = False) -> None:
    run, total = state["run"], state["total"]
    own = run is not None and run["unit"] == state["unit"]  # a steps bar's run
    done = run["done"] if own else state["done"]
    if total is None or now - state["start"] < state["delay"]:
        return
    end = done >= total and state["shown"] != done
    if not end and now - state["last"] < (INTERVAL if state["plain"] else REDRAW):
        if state["plain"] or not force:
            return
    state["last"], state["shown"] = now, done
    elapsed = now - state["start"]
    counts = f"{done:.0f}/{total} {state['unit']}, {duration(elapsed)} elapsed"
    if own:
        counts += _left(run["anchor"], now, done, total, ", ~{} left")
    elif state["finished"] is not None:
        left = time_left(state["finished"], done, total, elapsed - state["finished"])
        counts += "" if left is None else f", ~{duration(left)} left"
    if run is not None and not own:  # the run in progress, in its own unit
        of = f"/{run['total']:.0f}" if run["total"] else ""
        counts += f"; now {run['done']:.0f}{of} {run['unit']}"
        counts += _left(run["anchor"], now, run["done"], run["total"], " (~{} left)")
    text = f"{state['label']}: " + ("" if state["plain"] else _filled(done / total)) + counts
    if state["plain"]:
        state["stream"].write(text + "\n")
    elif state["notebook"]:
        _display(state, text)
        return
    else:
        state["stream"].write("\r" + text.ljust(state["width"]))
        state["width"] = max(len(text), 1)
    state["stream"].flush()


def _left(anchor, now: float, done: float, total, form: str) -> str:
    """`form` with the time left to `total` at the rate since `anchor` (time, count); "" before the
    count has moved from it."""
    if anchor is None or not total or done <= anchor[1] or now <= anchor[0]:
        return ""
    return form.format(duration((now - anchor[0]) / (done - anchor[1]) * max(total - done, 0)))


def time_left(finished: float, done: float, total: float, since: float = 0.0) -> Optional[float]:
    """Seconds left of `total` units at the measured pace: `done` units finished `finished` seconds
    after the start (finished / done seconds a unit) leave total - done units, less the `since`
    seconds passed since the last of them finished (a count down until the next one); never below
    0. None before a unit has finished."""
    if not done > 0 or not finished >= 0:
        return None
    return max(finished / done * max(total - done, 0) - max(since, 0.0), 0.0)


def _filled(fraction: float) -> str:
    return f"[{'#' * int(WIDTH * min(fraction, 1.0)):<{WIDTH}}] "


def _display(state: dict, text: str) -> None:
    """`text` as the notebook's one output of this bar: shown once, then updated in place."""
    from IPython.display import display  # in a notebook only: its kernel has imported IPython

    data = {"text/plain": text}
    if state["handle"] is None:
        state["handle"] = display(data, raw=True, display_id=True)
    else:
        state["handle"].update(data, raw=True)


def duration(seconds: float) -> str:
    """`seconds` as read at a glance: "42 s", "12 min", "3.5 h"."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def notebook(stream) -> bool:
    """True when `stream` is a Jupyter kernel's output stream."""
    return type(stream).__module__.split(".")[0] == "ipykernel"


def tracked(label: str, total: Callable[..., Optional[int]]):
    """Give a library entry point the keyword `progress` (module docstring): its bar counts
    `total(*args, **kwargs)` steps (None: the run's own total and unit, e.g. a flow's save
    times)."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(*args, progress: Optional[bool] = None, **kwargs):
            check_bool("progress", progress, optional=True)
            if progress is None and _active is not None:
                return fn(*args, **kwargs)  # inside the caller's bar
            steps = total(*args, **kwargs) if progress is not False else None
            with bar(steps, label, enabled=progress, delay=0.0 if progress else DELAY):
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
