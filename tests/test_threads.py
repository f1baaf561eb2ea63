"""Runs side by side in one process's threads (`dynsim.sweeps.threads.side_by_side`): every task
once, at most `threads` at once, tasks taken only when a thread is free, and a failure, Ctrl-C or
a caller that leaves stops the compiled runs still going within seconds instead of waiting for
them."""

from __future__ import annotations

import threading
import time

import jax
import jax.numpy as jnp
import pytest

from dynsim import interrupt, recording
from dynsim.sweeps import executors
from dynsim.sweeps.threads import side_by_side

# a compiled run of 1e12 steps: hours unless its host callback stops it
ENDLESS = jax.jit(
    lambda x: recording.run(lambda s, t: jnp.sin(s) * 0.5 + 0.1, lambda s, t: s, x, 10**12, 10**11)
)
# how soon a stopped run must have ended: its callback comes every ~0.1 s of work on an idle
# machine (the interrupt tests' bound, dynsim.interrupt.GRACE_S, with room for a loaded one)
STOP_S = 2 * interrupt.GRACE_S


def endless(_):
    return jax.block_until_ready(ENDLESS(jnp.ones(3)))


def test_every_task_once_at_most_threads_at_once_taken_when_a_thread_is_free():
    lock, running, most, taken = threading.Lock(), [0], [0], []

    def fn(i):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return i * i

    def tasks():
        for i in range(7):
            taken.append(i)
            yield (i,)

    seen = []
    for result in side_by_side(tasks(), fn, 3):
        # when a result comes back, no more tasks were taken than threads plus those finished
        assert len(taken) <= 3 + len(seen)
        seen.append(result)
    assert sorted(seen) == [i * i for i in range(7)]
    assert most[0] == 3  # side by side, never more than asked


def test_the_executor_runs_threads_in_process_and_gives_the_same_results():
    tasks = [(i,) for i in range(5)]
    one = list(executors.run(tasks, fn=lambda i: i + 1))
    three = sorted(executors.run(tasks, fn=lambda i: i + 1, threads=3))
    assert one == three == [1, 2, 3, 4, 5]


def test_a_failure_stops_the_compiled_runs_still_going(caplog):
    def fails(_):
        time.sleep(0.5)  # the endless run is under way
        raise ValueError("a seed failed")

    started = time.perf_counter()
    with pytest.raises(ValueError, match="a seed failed"):
        list(side_by_side([(0,), (1,)], lambda i: endless(i) if i == 0 else fails(i), 2))
    assert time.perf_counter() - started < 0.5 + STOP_S
    # the stopped run's callback raised on purpose: no "callback failed" traceback in the log
    assert not [r for r in caplog.records if r.exc_info], caplog.text
    assert not interrupt._stop.is_set()  # later runs are not stopped
    short = jax.jit(lambda x: recording.run(lambda s, t: s + 1.0, lambda s, t: s, x, 100, 10))
    assert float(jax.block_until_ready(short(jnp.zeros(())))[0]) == 100.0


def test_a_caller_that_leaves_early_stops_the_runs_still_going():
    results = side_by_side([(0,), (1,)], lambda i: endless(i) if i == 0 else "quick", 2)
    assert next(results) == "quick"
    started = time.perf_counter()
    results.close()  # the caller is done: the endless run stops, it is not waited out
    assert time.perf_counter() - started < STOP_S


def test_ctrl_c_stops_every_run_and_reaches_the_caller(monkeypatch):
    """A signal under `interrupt.watch` (its flag, as the handler sets it): each thread's compiled
    run stops at its callback, and the caller gets KeyboardInterrupt."""
    monkeypatch.setattr(
        interrupt, "_state", {**interrupt._state, "signal": None, "count": 0, "watching": True}
    )
    timer = threading.Timer(0.5, lambda: interrupt._state.update(signal=2))
    started = time.perf_counter()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        list(side_by_side([(0,), (1,)], endless, 2))
    timer.join()
    assert time.perf_counter() - started < 0.5 + STOP_S
