"""Random draws of several axes drawn flat and reshaped: `flat(jax.random.normal, key, shape)` is
`jax.random.normal(key, shape)`, the same numbers, in a program that compiles faster."""

from __future__ import annotations

import math
from typing import Callable


def flat(draw: Callable, key, shape: tuple, *args, **kwargs):
    """`draw(key, shape, *args, **kwargs)` for a jax.random sampler that transforms one word of
    random bits per element (normal, uniform, randint, choice, ...), drawn as one axis and reshaped:
    JAX's partitionable threefry numbers the elements in row-major order, so the values are the
    same, and XLA builds one counter for the draw instead of one per axis (about 0.3-0.45 s less
    compilation per two- or three-axis draw on CPU, docs/benchmarks.md m)."""
    return draw(key, (math.prod(shape),), *args, **kwargs).reshape(shape)
