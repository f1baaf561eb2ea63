"""The configuration sum of (P) as arrays: counts and weights of (D, C, q), cached, with its truncation."""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from dynsim.jsl import JSLConfig

from . import configurations

MAX_CONFIGURATIONS = 3_000_000  # above this the sum is truncated, with bounds
BOUND_TARGET = 1e-12  # the default keeps every truncation bound below this


class Weights(NamedTuple):
    """The configuration sum as arrays: counts n (K, M) and probabilities w (M,)."""

    n: jax.Array
    w: jax.Array


class Table:
    """The configuration table of one (D, C, q): counts n (K, M) and weights W (M,)."""

    def __init__(self, cfg: JSLConfig, max_nonzero: Optional[int]):
        self.max_nonzero = max_nonzero
        n, w = configurations.enumerate_configurations(cfg.D, cfg.C, cfg.q, max_nonzero)
        dtype = jnp.dtype(cfg.dtype)
        self.n = jnp.asarray(n.T, dtype)
        self.w = jnp.asarray(w, dtype)
        self.size = int(w.size)
        self.dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, max_nonzero)

    @property
    def weights(self) -> Weights:
        return Weights(self.n, self.w)


_tables: dict = {}


def table(cfg: JSLConfig, max_nonzero: Optional[int]) -> Table:
    """The `Table` of cfg's (D, C, q, dtype) cut at max_nonzero, built once."""
    key = (cfg.D, cfg.C, cfg.q, cfg.dtype, max_nonzero)
    if key not in _tables:
        _tables[key] = Table(cfg, max_nonzero)
    return _tables[key]


def check_size(cfg: JSLConfig, max_nonzero: Optional[int]) -> None:
    """Refuse, before enumerating, a sum larger than MAX_CONFIGURATIONS."""
    size = configurations.count_truncated(cfg.D, cfg.C, max_nonzero)
    if size > MAX_CONFIGURATIONS:
        what = "the full sum" if max_nonzero is None else f"the sum truncated at max_nonzero = {max_nonzero}"
        raise ValueError(
            f"{what} has {size:,} configurations (D = {cfg.D}, C = {cfg.C}, q = {cfg.q}), more than the "
            f"{MAX_CONFIGURATIONS:,} that fit. Use a smaller D, a "
            f"smaller max_nonzero (its bounds are reported in meta['truncation']), or the full model in mode='sampled'."
        )


def choose_max_nonzero(cfg: JSLConfig, scale: float) -> Optional[int]:
    """The smallest truncation whose dropped probability times `scale` is below BOUND_TARGET (None = all)."""
    if configurations.count(cfg.D, cfg.C) <= MAX_CONFIGURATIONS:
        return None
    for k in range(cfg.D - cfg.C + 1):
        if configurations.tail_probability(cfg.D, cfg.C, cfg.q, k) * scale <= BOUND_TARGET:
            return k
    return None


def truncation_meta(cfg: JSLConfig, size: int, max_nonzero: Optional[int], dropped: float, bounds: dict) -> dict:
    """meta["truncation"] of a run: the sum's size, where it was cut, the dropped probability and the bounds."""
    return {
        "configurations": size,
        "configurations_total": configurations.count(cfg.D, cfg.C),
        "max_nonzero": max_nonzero,
        "dropped_probability": dropped,
        "bounds": bounds,
        # the recorded 0-1 error misses at most the dropped probability (each configuration contributes <= 1)
        "error_bound": dropped,
    }
