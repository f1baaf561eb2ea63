"""A progress bar for compiled runs: the scan reports each record through a host callback.

Compiled code calls `report(done)` at every record (`recording.run`); it draws only inside `bar(...)`, so
library calls stay silent unless the caller asks for a bar (the CLI does, on a terminal).
"""

from __future__ import annotations

import contextlib
import sys
import time
from typing import Iterator, Optional

import numpy as np

_active: Optional[dict] = None


@contextlib.contextmanager
def bar(total: int, label: str, stream=None, enabled: Optional[bool] = None) -> Iterator[None]:
    """Draw a one-line progress bar of `total` steps on `stream` (stderr) while the block runs."""
    global _active
    stream = stream or sys.stderr
    on = stream.isatty() if enabled is None else enabled
    previous, _active = _active, ({"total": max(total, 1), "label": label, "stream": stream,
                                   "start": time.perf_counter(), "last": -1.0} if on else None)
    try:
        yield
    finally:
        if _active is not None:
            stream.write("\n")
            stream.flush()
        _active = previous


def report(done) -> None:
    """Host side of the callback: redraw the bar (at most 10 times a second)."""
    state = _active
    if state is None:
        return
    done = int(np.max(np.asarray(done)))
    now = time.perf_counter()
    if now - state["last"] < 0.1 and done < state["total"]:
        return
    state["last"] = now
    frac = min(done / state["total"], 1.0)
    width = 30
    elapsed = now - state["start"]
    eta = elapsed / frac - elapsed if frac > 0 else float("nan")
    state["stream"].write(f"\r{state['label']}: [{'#' * int(width * frac):<{width}}] {done}/{state['total']} steps, "
                          f"{elapsed:.0f} s elapsed, ~{eta:.0f} s left ")
    state["stream"].flush()
