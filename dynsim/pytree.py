"""Configs as JAX pytrees: a config's numbers are leaves, traced under jit and vmap; its other
fields are static.

jit keys its cache on a pytree's static part (its treedef), not on its leaves, so one compiled
program serves every value of a config's numbers at one shape (D, C, p, steps, dtype, ...). A config
class names its numbers in the class attribute `NUMBERS`; `register` makes it a pytree, `stack`
stacks configs of one shape along a leading axis for vmap and lax.map (the points of a sweep's
group).
"""

from __future__ import annotations

import dataclasses
import numbers as _numbers
from typing import Sequence

import jax
import jax.numpy as jnp

_REGISTERED: set = set()


def _leaf(value):
    """A number field as a leaf: Python and NumPy reals as float (an int q = 0 traced as an integer
    would make q^k an integer power); arrays and tracers as they are."""
    if isinstance(value, _numbers.Real) and not isinstance(value, bool):
        return float(value)
    return value


def register(cls):
    """Make the frozen dataclass `cls` a pytree whose leaves are its `NUMBERS` and whose treedef
    holds the other fields (hashable: ints, strings, None). Unflattening sets the fields without
    `__init__`, so validation never reads a tracer. Idempotent; returns cls."""
    if cls in _REGISTERED:
        return cls
    numbers = tuple(cls.NUMBERS)
    static = tuple(f.name for f in dataclasses.fields(cls) if f.name not in numbers)

    def flatten(cfg):
        return (
            tuple(_leaf(getattr(cfg, f)) for f in numbers),
            tuple(getattr(cfg, f) for f in static),
        )

    def unflatten(meta, leaves):
        cfg = object.__new__(cls)
        for name, value in zip(static + numbers, tuple(meta) + tuple(leaves)):
            object.__setattr__(cfg, name, value)
        return cfg

    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    _REGISTERED.add(cls)
    return cls


def shape(cfg):
    """What a compiled program of `cfg` is keyed on: its treedef (every field but the numbers)."""
    return jax.tree.structure(cfg)


def stack(cfgs: Sequence, dtype) -> object:
    """Configs of one shape as one config whose numbers are arrays (len(cfgs),) in `dtype` (the
    points of a group, for vmap and lax.map)."""
    first = shape(cfgs[0])
    for c in cfgs[1:]:
        if shape(c) != first:
            raise ValueError(
                f"stack needs configs of one shape: {c} differs from {cfgs[0]} in more than its "
                f"numbers {tuple(type(c).NUMBERS)}"
            )
    return jax.tree.map(lambda *xs: jnp.asarray(xs, dtype), *cfgs)
