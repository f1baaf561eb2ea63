"""Ctrl-C (SIGINT) and SIGTERM inside compiled runs: stop within seconds, exit 130 / 143.

A compiled run blocks the main thread in XLA, where Python's signal handlers cannot run: without it
a Ctrl-C would take effect only when the whole run returned. `watch()` (the CLI wraps every command
in it) makes the C-level signal handler write the signal number to a socket
(`signal.set_wakeup_fd`); a thread reads it and raises the flag that `raise_if_interrupted()` reads.
Compiled runs call `raise_if_interrupted()` from their host callback every ~40 ms of work
(`recording.run`), which raises KeyboardInterrupt there: JAX aborts the run and the main thread gets
it back wrapped (`progress.interrupted`). When the main thread runs Python, the handler itself
raises KeyboardInterrupt, as Python's default SIGINT handler does. A run with no callback (an ODE
solve) is stopped by the watchdog: GRACE_S seconds after the first signal, or at once on a second
one, the process prints the interrupted line and leaves through `os._exit` (files are written
atomically, so the ones on disk are complete).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import threading
from typing import Iterator, Optional

SIGNALS = (signal.SIGINT, signal.SIGTERM)
# watchdog: the clean path (a callback every few ms of work) exits well before; the issue asks <= 5
# s
GRACE_S = 4.0
MESSAGE = "dynsim: interrupted; files already written are complete (writes are atomic)"

_state = {"signal": None, "aborted": False, "count": 0, "watching": False}


def received() -> Optional[int]:
    """The first signal received under `watch()` (signal.SIGINT or SIGTERM), or None."""
    return _state["signal"]


def exit_code() -> int:
    """The exit status of an interrupted command: 128 + the signal number (130 for SIGINT, 143 for
    SIGTERM)."""
    return 128 + int(_state["signal"] or signal.SIGINT)


def raise_if_interrupted(*_) -> None:
    """Raise KeyboardInterrupt once a signal arrived under `watch()` (from any thread: a compiled
    run's host callback calls it). After the block the signal is still `received()`, but later runs
    in the process are not stopped."""
    if _state["watching"] and _state["signal"] is not None:
        _state["aborted"] = True
        raise KeyboardInterrupt(f"signal {_state['signal']}")


class _QuietAbort(logging.Filter):
    """Drop JAX's "jax.debug.callback failed" traceback when the failure is our own abort
    (`raise_if_interrupted`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt))


def _in_gc_callback(frame) -> bool:
    """True when `frame` runs inside a garbage-collector callback (JAX registers one): an exception
    raised there is printed as "Exception ignored in ..." with a traceback and goes nowhere."""
    codes = {getattr(cb, "__code__", None) for cb in gc.callbacks} - {None}
    while frame is not None and codes:
        if frame.f_code in codes:
            return True
        frame = frame.f_back
    return False


def _handler(signum, frame) -> None:
    """Python-level handler (main thread, between bytecodes): record the signal and raise
    KeyboardInterrupt, unless a compiled run's callback already aborted for it (its error is on its
    way up and carries the interrupt), or the signal landed in a garbage-collector callback (the
    flag stays up: the run's next `raise_if_interrupted` or the watchdog stops it)."""
    _state["signal"] = _state["signal"] or signum
    if not _state["aborted"] and not _in_gc_callback(frame):
        _state["aborted"] = True
        raise KeyboardInterrupt(f"signal {signum}")


def _leave() -> None:
    """Print the interrupted line and exit at once with `exit_code()` (no interpreter teardown)."""
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.write(MESSAGE + "\n")
        sys.stderr.flush()
    os._exit(exit_code())


def _watch(sock: socket.socket, done: threading.Event) -> None:
    """Read the signal numbers the C handler writes; raise the flag; arm the watchdog; a second
    signal leaves now."""
    while True:
        try:
            data = sock.recv(16)
        except OSError:
            data = b""
        if not data or done.is_set():
            sock.close()
            return
        for signum in data:
            if signum not in SIGNALS:
                continue
            _state["signal"] = _state["signal"] or signum
            _state["count"] += 1
            if _state["count"] > 1:
                _leave()
            timer = threading.Timer(GRACE_S, lambda: done.is_set() or _leave())
            timer.daemon = True
            timer.start()


@contextlib.contextmanager
def watch() -> Iterator[None]:
    """While the block runs, SIGINT and SIGTERM stop compiled runs too (see the module docstring).
    Outside the main thread (signals cannot be caught there) it does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    done = threading.Event()
    quiet = _QuietAbort()
    previous = {s: signal.getsignal(s) for s in SIGNALS}
    old_fd = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    _state.update(signal=None, aborted=False, count=0, watching=True)
    for s in SIGNALS:
        signal.signal(s, _handler)
    logging.getLogger("jax._src.debugging").addFilter(quiet)
    threading.Thread(
        target=_watch, args=(reader, done), daemon=True, name="dynsim-interrupt"
    ).start()
    try:
        yield
    finally:
        _state["watching"] = False
        done.set()
        signal.set_wakeup_fd(old_fd)
        for s, h in previous.items():
            signal.signal(s, h)
        logging.getLogger("jax._src.debugging").removeFilter(quiet)
        writer.close()  # the watcher's recv returns b"" and it ends
