"""Gradient descent of a reduced setting in one `lax.scan`: y <- y - step * grad(y), recorded by `dynsim.recording`."""

from __future__ import annotations

from typing import Any, Callable, Optional

import jax

from dynsim import recording


def descend(y, step, grad, scale=None):
    """One GD update y - step * grad, leaf by leaf; `scale` (a tied parameter's 1/entries) multiplies step * grad."""
    if scale is None:
        return jax.tree.map(lambda y, s, g: y - s * g, y, step, grad)
    return jax.tree.map(lambda y, s, g, c: y - s * g * c, y, step, grad, scale)


def run(grad: Callable, step, observe: Callable, y0, steps: int, record_every: int, scale=None,
        track: Optional[Callable[[Any, Any], Any]] = None, aux0: Any = None, nonfinite: bool = False):
    """GD from y0 for `steps` steps, `observe(y)` recorded at `recording.recorded_steps`; traceable.

    track(aux, y): a running statistic of the visited states (e.g. the largest |alpha|), from aux0.
    Returns (final y, final aux, records); nonfinite: `recording.run`'s (the step where y stops being finite).
    """

    def update(carry, t):
        y, aux = carry
        g = grad(y)
        if track is not None:
            aux = track(aux, y)
        return descend(y, step, g, scale), aux

    (y, aux), records = recording.run(update, lambda carry, t: observe(carry[0]), (y0, aux0), steps, record_every,
                                        nonfinite)
    return y, aux, records
