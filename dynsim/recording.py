"""Run a step function with `lax.scan` and record observables every `record_every` steps; a host
callback every ~40 ms of work draws the progress bar and stops the run on Ctrl-C / SIGTERM
(`dynsim.interrupt`)."""

from __future__ import annotations

import functools
import math
from typing import Any, Callable

import jax
import numpy as np

from . import progress
from .divergence import NONFINITE

# Element operations between two host callbacks (`_work`): a fraction of a second of work between
# checks, so even a 100x underestimate of a step's work stops a run within seconds; the measurement
# that chose it is in docs/benchmarks.md §l.
CHECK_WORK = 2e8


def recorded_steps(steps: int, record_every: int) -> np.ndarray:
    """The recorded step numbers: 0, record_every, 2 record_every, ..., and `steps` itself."""
    marks = np.arange(0, steps + 1, record_every)
    if marks[-1] != steps:
        marks = np.append(marks, steps)
    return marks


def with_first_step(steps: int, record_every: int) -> np.ndarray:
    """`recorded_steps` with step 1 among them (steps >= 1): one run records both itself and its
    first GD step (`first_step_rows`)."""
    if steps < 1:
        raise ValueError(f"steps = {steps} has no first step")
    return np.union1d(recorded_steps(steps, record_every), [1])


def first_step_rows(steps: int, record_every: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows of the `recorded_steps`, rows of steps 0 and 1) in records taken at
    `with_first_step`."""
    marks = with_first_step(steps, record_every)
    return np.searchsorted(marks, recorded_steps(steps, record_every)), np.array([0, 1])


def run(
    step: Callable[[Any, Any], Any],
    observe: Callable[[Any, Any], Any],
    state: Any,
    steps: int,
    record_every: int,
    nonfinite: bool = False,
    first: bool = False,
):
    """Apply `state = step(state, t)` for t = 0..steps-1 and record `observe(state, t)` at
    `recorded_steps` (first=True: `with_first_step`).

    Traceable (call it inside jit): an outer `lax.scan` over the records (the first after zero
    steps), inner loops over the steps between two host callbacks; the program holds one copy of
    `step` and one of `observe`, whatever steps, record_every and the callbacks' spacing.
    Returns the final state and the records stacked along a leading axis. nonfinite=True (observe
    returning a dict): the records also hold NONFINITE, the first step t whose state has a NaN or an
    infinity (-1 before it), checked after every step, not only at the records
    (`dynsim.divergence.take` reads it).
    """

    t0 = jax.numpy.asarray(0)
    # jitted here so that the loop below reuses the trace `check_every` makes of it (one trace of
    # the step, not two); the program inlines it
    step = jax.jit(step)
    every = check_every(step, state, t0, record_every)
    report = functools.partial(progress.report, total=steps)  # the run's count of `steps`

    def advance(c):
        state, t, bad = step(c[0], c[1]), c[1] + 1, c[2]
        return (
            state,
            t,
            bad if not nonfinite else jax.numpy.where((bad < 0) & ~_finite(state), t, bad),
        )

    def steps_then_report(carry, length):
        carry = jax.lax.fori_loop(0, length, lambda _, c: advance(c), carry)
        jax.debug.callback(report, carry[1])
        return carry

    def record(carry):
        out = observe(carry[0], carry[1])
        return {**out, NONFINITE: carry[2]} if nonfinite else out

    def block(carry, length):  # `length` steps (traced) in chunks of at most `every`, then a record
        carry = jax.lax.fori_loop(
            0,
            (length + every - 1) // every,
            lambda i, c: steps_then_report(c, jax.numpy.minimum(every, length - i * every)),
            carry,
        )
        return carry, record(carry)

    start = (state, t0, jax.numpy.where(_finite(state), -1, 0) if nonfinite else t0)
    marks = (with_first_step if first else recorded_steps)(steps, record_every)
    lengths = np.diff(marks, prepend=0)
    carry, records = jax.lax.scan(block, start, jax.numpy.asarray(lengths, "int32"))
    return carry[0], records


def _finite(tree) -> jax.Array:
    """Whether every floating-point entry of `tree` is finite (integer and key leaves are)."""
    leaves = [
        x
        for x in jax.tree.leaves(tree)
        if jax.numpy.issubdtype(jax.numpy.result_type(x), jax.numpy.inexact)
    ]
    return (
        jax.numpy.all(jax.numpy.stack([jax.numpy.isfinite(x).all() for x in leaves]))
        if leaves
        else jax.numpy.asarray(True)
    )


def check_every(step: Callable, state: Any, t, record_every: int) -> int:
    """Steps between two host callbacks: CHECK_WORK / (the step's `_work`), within [1,
    record_every]."""
    work = _work(jax.make_jaxpr(step)(state, t).jaxpr)
    return int(min(max(CHECK_WORK // max(work, 1.0), 1), record_every))


def _work(jaxpr) -> float:
    """A rough count of the element operations of one evaluation of `jaxpr`: each primitive's output
    elements (times the contracted size for a dot_general); a scan's body times its length, a cond's
    largest branch, a while's body once (its trip count is not known)."""
    total = 0.0
    for eqn in jaxpr.eqns:
        values = [
            x for v in eqn.params.values() for x in (v if isinstance(v, (tuple, list)) else (v,))
        ]
        inner = [getattr(x, "jaxpr", x) for x in values if hasattr(getattr(x, "jaxpr", x), "eqns")]
        if inner:
            total += eqn.params.get("length", 1) * max(_work(j) for j in inner)
            continue
        size = sum(math.prod(getattr(v.aval, "shape", ())) for v in eqn.outvars)
        if eqn.primitive.name == "dot_general":
            (contracting, _), _ = eqn.params["dimension_numbers"]
            size *= math.prod(eqn.invars[0].aval.shape[i] for i in contracting)
        total += size
    return total
