"""Run a step function with `lax.scan` and record observables every `record_every` steps."""

from __future__ import annotations

from typing import Any, Callable

import jax
import numpy as np

from . import progress


def recorded_steps(steps: int, record_every: int) -> np.ndarray:
    """The recorded step numbers: 0, record_every, 2 record_every, ..., and `steps` itself."""
    marks = np.arange(0, steps + 1, record_every)
    if marks[-1] != steps:
        marks = np.append(marks, steps)
    return marks


def run(step: Callable[[Any, Any], Any], observe: Callable[[Any, Any], Any], state: Any, steps: int,
        record_every: int):
    """Apply `state = step(state, t)` for t = 0..steps-1 and record `observe(state, t)` at `recorded_steps`.

    Traceable (call it inside jit): an outer `lax.scan` over records, an inner one over steps.
    Returns the final state and the records stacked along a leading axis.
    """

    def block(length):
        def body(carry, _):
            s, t = carry
            for_steps = jax.lax.scan(lambda c, _: ((step(c[0], c[1]), c[1] + 1), None), (s, t), None, length=length)[0]
            jax.debug.callback(progress.report, for_steps[1])
            return for_steps, observe(*for_steps)

        return body

    t0 = jax.numpy.asarray(0)
    first = observe(state, t0)
    n_full, rest = divmod(steps, record_every)
    carry, recs = jax.lax.scan(block(record_every), (state, t0), None, length=n_full)
    parts = [jax.tree.map(lambda x: x[None], first), recs]
    if rest:
        carry, last = block(rest)(carry, None)
        parts.append(jax.tree.map(lambda x: x[None], last))
    records = jax.tree.map(lambda *xs: jax.numpy.concatenate(xs), *parts)
    return carry[0], records
