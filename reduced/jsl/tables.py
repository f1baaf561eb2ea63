"""The sum behind (P) as arrays, cached: moment classes (default) or multisets of set types (the
reference).

Both sum the same population over the same configurations: `class_sums` over the distinct values of
the moments F depends on (`moments`, `classes`), `configurations` over every multiset of set types.
Truncation at max_nonzero keeps the configurations with at most that many nonzero random patches in
either form.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.jsl import JSLConfig
from dynsim.validation import count_value, text_count

from . import classes, configurations
from .class_sums import ClassWeights, class_table, class_weights_jit

ENUMERATIONS = ("classes", "multisets")
# above this the class sum is truncated, with bounds (15.1 million at D = 64, C = 4, p = 3)
MAX_CLASSES = 20_000_000
MAX_CONFIGURATIONS = 3_000_000  # the multiset reference's limit
BOUND_TARGET = 1e-12  # the default keeps every truncation bound below this


class Weights(NamedTuple):
    """The multiset sum as arrays: counts n (K, M) and probabilities w (M,)."""

    n: jax.Array
    w: jax.Array


def check_enumeration(enumeration) -> str:
    """enumeration, if it is one of ENUMERATIONS."""
    if enumeration not in ENUMERATIONS:
        raise ValueError(
            f"enumeration = {enumeration!r} is invalid: must be one of "
            f"{', '.join(map(repr, ENUMERATIONS))}"
        )
    return enumeration


class Table:
    """The sum of one (D, C, p, q) cut at max_nonzero: `weights` (ClassWeights or Weights), its size
    and dropped mass."""

    def __init__(self, cfg: JSLConfig, max_nonzero: Optional[int], enumeration: str = "classes"):
        self.max_nonzero, self.enumeration = max_nonzero, check_enumeration(enumeration)
        dtype = jnp.dtype(cfg.dtype)
        if enumeration == "multisets":
            n, w = configurations.enumerate_configurations(cfg.D, cfg.C, cfg.q, max_nonzero)
            self.n = jnp.asarray(n.T, dtype)
            self.weights = Weights(self.n, jnp.asarray(w, dtype))
        else:
            ct = class_table(cfg.D, cfg.C, cfg.p, max_nonzero)
            w = np.asarray(
                class_weights_jit(ct.log_count, ct.z0, ct.random_patches, np.float64(cfg.q))
            )
            # classes impossible at this q (q = 0 or 1) dropped, as the multiset sum does
            keep = w > 0
            self.weights = ClassWeights(
                jnp.asarray(ct.mono[:, keep], dtype), jnp.asarray(w[keep], dtype)
            )
        self.w = self.weights.w
        self.size = int(self.w.size)
        self.dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, max_nonzero)


_tables: dict = {}


def table(cfg: JSLConfig, max_nonzero: Optional[int], enumeration: str = "classes") -> Table:
    """The `Table` of cfg's (D, C, p, q, dtype) cut at max_nonzero, built once (the last four
    kept)."""
    key = (cfg.D, cfg.C, cfg.p, cfg.q, cfg.dtype, max_nonzero, enumeration)
    if key not in _tables:
        if len(_tables) >= 4:
            del _tables[next(iter(_tables))]
        _tables[key] = Table(cfg, max_nonzero, enumeration)
    return _tables[key]


def size(
    cfg: JSLConfig,
    max_nonzero: Optional[int],
    enumeration: str = "classes",
    limit: Optional[int] = None,
) -> Optional[int]:
    """Terms of the sum cut at max_nonzero, None if more than `limit` (classes are built to count
    them)."""
    if enumeration == "multisets":
        n = configurations.count_truncated(cfg.D, cfg.C, max_nonzero)
        return None if limit is not None and n > limit else n
    return classes.count(cfg.D, cfg.C, cfg.p, max_nonzero, limit)


def check_size(cfg: JSLConfig, max_nonzero: Optional[int], enumeration: str = "classes") -> None:
    """Refuse, before building it, a sum larger than MAX_CLASSES (classes) or MAX_CONFIGURATIONS
    (multisets)."""
    limit = MAX_CLASSES if enumeration == "classes" else MAX_CONFIGURATIONS
    if size(cfg, max_nonzero, enumeration, limit) is None:
        what = (
            "the full sum"
            if max_nonzero is None
            else f"the sum truncated at max_nonzero = {max_nonzero}"
        )
        raise ValueError(
            f"{what} has more than {text_count(limit)} "
            f"{'moment classes' if enumeration == 'classes' else 'configurations'} (D = "
            f"{cfg.D}, C = {cfg.C}, p = {cfg.p}, q = {cfg.q}). Use a smaller D, a smaller "
            f"max_nonzero (its bounds are reported in meta['truncation']), or the full model "
            f"in mode='sampled'."
        )


def truncation_meta(
    cfg: JSLConfig,
    size: int,
    max_nonzero: Optional[int],
    dropped: float,
    bounds: dict,
    enumeration: str = "classes",
) -> dict:
    """meta["truncation"] of a run: the sum's size, where it was cut, the dropped probability and
    the bounds."""
    return {
        "enumeration": enumeration,
        "configurations": size,  # terms summed: moment classes or multisets
        # multisets of the full sum
        "configurations_total": count_value(configurations.count(cfg.D, cfg.C)),
        "max_nonzero": max_nonzero,
        "dropped_probability": dropped,
        "bounds": bounds,
        # the recorded 0-1 error misses at most the dropped probability (each configuration
        # contributes <= 1)
        "error_bound": dropped,
    }
