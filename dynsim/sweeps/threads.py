"""Runs side by side in this process's threads: XLA releases the GIL while a compiled run executes,
and one run of a small problem keeps about one core busy, so k runs in k threads take about 1/k of
the time on k cores (docs/benchmarks.md §s), the same compiled program for all, with results equal
bit for bit to the runs one after the other."""

from __future__ import annotations

from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Callable, Iterable, Iterator

from dynsim import interrupt, progress

# seconds between two looks at the finished runs or a Dask sweep's finished chunks (and at Ctrl-C):
# small against a run or a chunk (seconds) and against the interrupt watchdog (interrupt.GRACE_S)
POLL_S = 0.05


def side_by_side(tasks: Iterable, fn: Callable, threads: int) -> Iterator:
    """fn(*task) of each task as it finishes, at most `threads` at once, each task taken from
    `tasks` only when a thread is free. A failure or Ctrl-C (or the caller leaving early): the runs
    still going stop at their next host callback (`interrupt.stopping`) and are waited for, and the
    error, or KeyboardInterrupt, reaches the caller."""
    todo, threads = iter(tasks), max(1, int(threads))
    pending: set = set()
    pool = ThreadPoolExecutor(threads, thread_name_prefix="dynsim-run")

    def take() -> None:
        task = next(todo, None)
        if task is not None:
            pending.add(pool.submit(fn, *task))

    finished = False
    try:
        for _ in range(threads):
            take()
        while pending:
            interrupt.raise_if_interrupted()
            done, _ = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                pending.discard(future)
                yield _result(future)
                take()
        finished = True
    finally:
        if not finished:
            with interrupt.stopping():
                for future in pending:
                    future.cancel()
                wait(pending)
        pool.shutdown(wait=True)


def _result(future: Future):
    """The run's result; a run stopped by Ctrl-C inside its compiled program: KeyboardInterrupt."""
    try:
        return future.result()
    except Exception as exc:
        if progress.interrupted(exc):
            raise KeyboardInterrupt from exc
        raise
