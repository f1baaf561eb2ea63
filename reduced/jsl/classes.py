"""Moment classes of the random sets: the distinct values of (T, S, Z) and how many patch
assignments give each.

A class (`moments`) is a value of the class variables (T, S_2..S_p, Z_0..Z_{p-2}); its probability
is N(c) (q/2)^Z_0 (1-q)^((L-1)C - Z_0), where N(c) counts the assignments of {+1, -1, 0} to the
(L-1)C random patches that give class c (Z_0 is the number of nonzero ones). The law of the L-1
independent sets is a convolution, built here set by set: the classes after r sets, each pushed by
the K set types (a type (a, b) arises in C!/(a! b! c!) ways), equal keys merged. The table is kept
split by Z_0 (a set adds a + b to it), which bounds the arrays that are sorted at once and makes
truncation at Z_0 <= max_nonzero a cut of whole buckets.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np


from dynsim.validation import text_count

from .configurations import set_types
from .moments import per_type_variables
from .spec import check_moments_fit

INT63 = 2**63 - 1


class TooManyClasses(ValueError):
    """The class table would exceed the `limit` given to `moment_classes`."""


class Classes(NamedTuple):
    """The moment classes of (D, C, p), cut at Z_0 <= max_nonzero: variables (M, V) int64 and log N
    (M,)."""

    variables: np.ndarray  # T, S_2..S_p, Z_0..Z_{p-2} per class
    log_count: np.ndarray  # log N(c)
    random_patches: int  # (L-1) C


def _radix(lo: np.ndarray, hi: np.ndarray) -> Optional[np.ndarray]:
    """Place values of a mixed-radix int64 key over the ranges [lo, hi], or None if the key would
    overflow."""
    size = [int(b - a + 1) for a, b in zip(lo, hi)]
    if math.prod(size) > INT63:
        return None
    place = np.ones(len(size), dtype=np.int64)
    for i in range(len(size) - 2, -1, -1):
        place[i] = place[i + 1] * size[i + 1]
    return place


def _merge(keys: np.ndarray, counts: np.ndarray):
    """Equal keys (rows) merged, counts added; keys sorted."""
    if keys.ndim == 1:
        # a concatenation of sorted runs: the merge sort is cheap
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        new = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]])
    else:
        order = np.lexsort(keys.T[::-1])
        keys = keys[order]
        new = np.flatnonzero(np.r_[True, np.any(keys[1:] != keys[:-1], axis=1)])
    return keys[new], np.add.reduceat(counts[order], new)


_too_many: dict = {}  # (D, C, p, max_nonzero) -> a limit that was exceeded
_built: dict = {}  # the last two complete tables


def moment_classes(
    D: int, C: int, p: int, max_nonzero: Optional[int] = None, limit: Optional[int] = None
) -> Classes:
    """Every moment class of the L-1 random sets with Z_0 <= max_nonzero (None: all), and its count
    N(c).

    limit: raise TooManyClasses as soon as more classes than this appear (the count never decreases
    from one set to the next: adding an all-zero set maps classes one to one), so a refusal costs at
    most a table of `limit` classes.
    """
    check_moments_fit(D, C, p)
    key = (D, C, p, max_nonzero)
    # known: more classes than a limit at least this
    if limit is not None and limit <= _too_many.get(key, -1):
        raise TooManyClasses(
            f"more than {text_count(limit)} moment classes (D = {D}, C = {C}, p = {p}, "
            f"max_nonzero = {max_nonzero})"
        )
    cls = _built.get(key)
    if cls is None:
        cls = build(D, C, p, max_nonzero, limit)
        if limit is None or cls.variables.shape[0] <= limit:  # complete: kept (the last two tables)
            if len(_built) >= 2:
                del _built[next(iter(_built))]
            _built[key] = cls
    if limit is not None and cls.variables.shape[0] > limit:
        _too_many[key] = max(limit, _too_many.get(key, -1))
        raise TooManyClasses(
            f"more than {text_count(limit)} moment classes (D = {D}, C = {C}, p = {p}, "
            f"max_nonzero = {max_nonzero})"
        )
    return cls


def build(
    D: int,
    C: int,
    p: int,
    max_nonzero: Optional[int],
    limit: Optional[int],
    per_type: Optional[np.ndarray] = None,
) -> Classes:
    """`moment_classes` without the refusal cache (a partial table past `limit` is returned short).
    per_type: the (K, V) per-type variables (default `per_type_variables`; extra trailing columns
    are carried as class variables)."""
    sets = D // C - 1
    # columns: t, S_2.., Z_0, Z_1.., extra
    per_type = per_type_variables(C, p) if per_type is None else per_type
    z0 = p  # the column of Z_0
    other = [v for v in range(per_type.shape[1]) if v != z0]
    steps = per_type[:, other]
    nonzero = per_type[:, z0]
    ways = np.array(
        [math.comb(C, a) * math.comb(C - a, b) for a, b in set_types(C)], dtype=np.float64
    )
    budget = sets * C if max_nonzero is None else min(max_nonzero, sets * C)
    lo = np.minimum(steps.min(axis=0), 0) * sets
    hi = np.maximum(steps.max(axis=0), 0) * sets
    place = _radix(lo, hi)
    encode = (lambda rows: (rows - lo) @ place) if place is not None else (lambda rows: rows)
    offsets = steps if place is None else steps @ place  # adding a set adds its row to the key
    buckets = {0: (encode(np.zeros((1, len(other)), np.int64)), np.ones(1))}
    for _ in range(sets):
        new = {}
        for z in range(budget + 1):
            parts = [
                (buckets[z - nonzero[k]][0] + offsets[k], buckets[z - nonzero[k]][1] * ways[k])
                for k in range(len(ways))
                if z - nonzero[k] in buckets
            ]
            if parts:
                new[z] = _merge(
                    np.concatenate([k for k, _ in parts]), np.concatenate([c for _, c in parts])
                )
        buckets = new
        if limit is not None and sum(len(c) for _, c in buckets.values()) > limit:
            return Classes(
                np.zeros((limit + 1, per_type.shape[1]), np.int64), np.zeros(limit + 1), sets * C
            )
    rows, logs = [], []
    for z, (keys, counts) in sorted(buckets.items()):
        if place is not None:  # decode the mixed-radix key
            digits = np.empty((keys.size, len(other)), np.int64)
            rest = keys.copy()
            for i, pl in enumerate(place):
                digits[:, i], rest = np.divmod(rest, pl)
            keys = digits + lo
        block = np.empty((keys.shape[0], per_type.shape[1]), np.int64)
        block[:, other] = keys
        block[:, z0] = z
        rows.append(block)
        logs.append(np.log(counts))
    variables = np.concatenate(rows)
    variables[:, 0] += C  # T = C + sum of the random sets' t
    return Classes(variables, np.concatenate(logs), sets * C)


def count(
    D: int, C: int, p: int, max_nonzero: Optional[int] = None, limit: Optional[int] = None
) -> Optional[int]:
    """Number of moment classes of (D, C, p) cut at max_nonzero (built and cached), None if more
    than `limit`."""
    try:
        return moment_classes(D, C, p, max_nonzero, limit).variables.shape[0]
    except TooManyClasses:
        return None
