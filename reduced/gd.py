"""Gradient descent of a reduced setting in one `lax.scan`: y <- y - step * grad(y), recorded by
`dynsim.recording`."""

from __future__ import annotations

from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import recording


def descend(y, step, grad, scale=None):
    """One GD update y - step * grad, leaf by leaf; `scale` (a tied parameter's 1/entries)
    multiplies step * grad."""
    if scale is None:
        return jax.tree.map(lambda y, s, g: y - s * g, y, step, grad)
    return jax.tree.map(lambda y, s, g, c: y - s * g * c, y, step, grad, scale)


def run(
    grad: Callable,
    step,
    observe: Callable,
    y0,
    steps: int,
    record_every: int,
    scale=None,
    track: Optional[Callable[[Any, Any], Any]] = None,
    aux0: Any = None,
    nonfinite: bool = False,
    every_step: Optional[Callable[[Any], dict]] = None,
    first: bool = False,
):
    """GD from y0 for `steps` steps, `observe(y)` recorded at `recording.recorded_steps`; traceable.

    track(aux, y): a running statistic of the visited states (e.g. the largest |alpha|), from aux0.
    every_step(y): a dict of values read on the state after every step, recorded with `observe`'s as
    (record_every, ...) rows: `step_series` turns the rows back into one value per step. Returns
    (final y, final aux, records); nonfinite: `recording.run`'s (the step where y stops being
    finite); first: also recorded after step 1, `recording.run`'s.
    """

    def update(carry, t):
        y, aux, rows = carry
        g = grad(y)
        if track is not None:
            aux = track(aux, y)
        y = descend(y, step, g, scale)
        if every_step is not None:  # step t + 1 goes to slot t mod record_every
            rows = jax.tree.map(lambda r, v: r.at[t % record_every].set(v), rows, every_step(y))
        return y, aux, rows

    def seen(carry, t):
        out = observe(carry[0])
        return out if every_step is None else {**out, **carry[2]}

    # zeros, not NaN: the carry is checked finite
    rows0 = (
        None
        if every_step is None
        else jax.tree.map(
            lambda v: jnp.zeros((record_every,) + jnp.shape(v), jnp.result_type(v)), every_step(y0)
        )
    )
    (y, aux, _), records = recording.run(
        update, seen, (y0, aux0, rows0), steps, record_every, nonfinite, first
    )
    return y, aux, records


def step_series(recorded, rows) -> tuple[np.ndarray, np.ndarray]:
    """The every-step values of `run(every_step=...)`: (steps 1, 2, ..., values) from the rows
    (records, record_every, ...) recorded at the steps `recorded`. Slot j of the row recorded at
    step s holds the last step <= s that is j + 1 modulo record_every (a step of an earlier row
    where the last row is short; none, step <= 0, before the first)."""
    recorded, rows = np.asarray(recorded), np.asarray(rows)
    every = rows.shape[1]
    j = np.arange(every)[None, :]
    at = recorded[:, None] - np.mod(recorded[:, None] - 1 - j, every)
    keep = at > 0
    order = np.unique(at[keep], return_index=True)
    return order[0], rows[keep][order[1]]
