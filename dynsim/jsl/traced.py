"""The traced numbers of a JSLConfig (`JSLConfig.TRACED`): batched runs vmap over them, one static config per group."""

from __future__ import annotations

from typing import NamedTuple, Sequence

import jax
import jax.numpy as jnp

from .config import JSLConfig

Numbers = NamedTuple("Numbers", [(name, jax.Array) for name in JSLConfig.TRACED])
Numbers.__doc__ = "The config's numbers that change no shape (JSLConfig.TRACED): traced, so sweeps vmap over them."

# the numbers a group's static config carries (the traced fields at their TRACED values)
STATIC = {name: value for name, value in JSLConfig.TRACED.items() if value is not None}
# a group's static config: STATIC and the seed (whose keys and draws are inputs of a group's program) at 0
CANONICAL = {**STATIC, "seed": 0}


def numbers_of(cfg: JSLConfig) -> Numbers:
    """`Numbers` of one config, in its dtype."""
    return Numbers(*(jnp.asarray(getattr(cfg, f), cfg.dtype) for f in Numbers._fields))


def stacked(cfgs: Sequence[JSLConfig], dtype) -> Numbers:
    """`Numbers` of several configs, stacked along a leading axis."""
    return Numbers(*(jnp.asarray([getattr(c, f) for c in cfgs], dtype) for f in Numbers._fields))


class View:
    """`cfg` with its `Numbers` replaced by (possibly traced) values: every function of a level reads either."""

    def __init__(self, cfg: JSLConfig, numbers: Numbers):
        self._cfg, self._numbers = cfg, numbers

    def __getattr__(self, name: str):
        if name in Numbers._fields:
            return getattr(self._numbers, name)
        return getattr(self._cfg, name)
