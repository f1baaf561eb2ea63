"""The population error against the labelling function f* (docs/derivations/jsl.md §1, §2.4), not
against y.

f*(X) = sum_l Threshold_{0.9C}(sum_{i in S_l} <w*, X_i>); for C < 10 a set passes the threshold only
if its C patches all carry the same sign, so with y = +1 WLOG f* = C (1 + N+ - N-), N+- = the random
sets entirely +-1. The moment classes (`classes`) need not determine N+ - N-, so the class DP
carries it as one more class variable (a set of type (C, 0) adds +1, (0, C) adds -1), and the
classes are then merged by sign(1 + N+ - N-): each class's weight split into the three f*-sign
buckets. Theorems 3.1, 4.1 count f* F <= 0 as a failure (f* = 0 included).
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.jsl import JSLConfig

from . import class_sums, classes, moments
from .sums import type_probabilities
from .class_sums import ClassWeights
from .configurations import set_types


class SignedClasses(NamedTuple):
    """The moment classes of (D, C, p) split by sign(f*): ClassWeights (monomials, weights) and sign
    (M,) in {-1, 0, 1}."""

    weights: ClassWeights
    sign: jax.Array
    # a Monte Carlo sample (equal weights 1/M): its error has a standard error
    sampled: bool = False


def signed_type_variables(C: int, p: int) -> np.ndarray:
    """`moments.per_type_variables` with a last column: +1 for the all-(+1) type (C, 0), -1 for (0,
    C), else 0."""
    delta = [[1 if a == C else -1 if b == C else 0] for a, b in set_types(C)]
    return np.hstack([moments.per_type_variables(C, p), np.array(delta, np.int64)])


def signed_classes(D: int, C: int, p: int):
    """(variables (M, V), sign(1 + N+ - N-) (M,), log N (M,), random patches): the classes merged
    per f*-sign."""
    cls = classes.build(D, C, p, None, None, signed_type_variables(C, p))
    sign = np.sign(1 + cls.variables[:, -1])
    keyed = np.hstack([cls.variables[:, :-1], sign[:, None]])
    keys, inverse = np.unique(keyed, axis=0, return_inverse=True)
    shift = cls.log_count.max()
    counts = np.zeros(keys.shape[0])
    np.add.at(counts, inverse.ravel(), np.exp(cls.log_count - shift))
    return keys[:, :-1], keys[:, -1], np.log(counts) + shift, cls.random_patches


def signed_table(cfg: JSLConfig) -> SignedClasses:
    """The f*-signed class table of cfg's (D, C, p, q, dtype), built once (the last two used
    kept)."""
    return _signed_table(cfg.D, cfg.C, cfg.p, cfg.q, cfg.dtype)


@functools.lru_cache(maxsize=2)
def _signed_table(D: int, C: int, p: int, q: float, dtype: str) -> SignedClasses:
    variables, sign, log_count, patches = signed_classes(D, C, p)
    w = np.asarray(class_weights_np(log_count, variables[:, p], patches, q))
    keep = w > 0
    mono = moments.monomials(moments.derive(C, p).exponents, variables[keep]).T
    return SignedClasses(
        ClassWeights(jnp.asarray(np.ascontiguousarray(mono), dtype), jnp.asarray(w[keep], dtype)),
        jnp.asarray(sign[keep], dtype),
    )


def class_weights_np(log_count, z0, random_patches: int, q: float):
    """`class_sums.class_weights` in float64."""
    return class_sums.class_weights_jit(
        log_count, np.asarray(z0, np.float64), random_patches, np.float64(q)
    )


def sampled_signed(cfg: JSLConfig, key, samples: int) -> SignedClasses:
    """`samples` configurations drawn from their law (Monte Carlo, weight 1/samples each), with
    sign(f*)."""
    prob = type_probabilities(jnp.asarray(cfg.q, cfg.dtype), cfg.C)
    n = jax.random.multinomial(
        key, cfg.L - 1, prob, shape=(samples, prob.shape[0]), dtype=jnp.dtype(cfg.dtype)
    )
    types = set_types(cfg.C)
    delta = n[:, types.index((cfg.C, 0))] - n[:, types.index((0, cfg.C))]
    return SignedClasses(
        ClassWeights(
            class_sums.sampled_classes(cfg, n, cfg.dtype),
            jnp.full((samples,), 1.0 / samples, cfg.dtype),
        ),
        jnp.sign(1 + delta),
        True,
    )


def failures(cfg: JSLConfig, theta, table: SignedClasses):
    """Per class 1[f* F <= 0]: f* = 0 fails, |F| <= `class_sums.tie_tolerance` counts as F = 0 (a
    failure too)."""
    F = class_sums.F_of(cfg, theta, table.weights)
    tol = class_sums.tie_tolerance(cfg, theta, table.weights)
    return jnp.where(jnp.isfinite(F), jnp.where(table.sign * F > tol, 0.0, 1.0), jnp.nan)


def error(cfg: JSLConfig, theta, table: SignedClasses):
    """P[f* F <= 0] at the state theta = (alpha, gamma, rho) (Theorems 3.1, 4.1), and its Monte
    Carlo standard error (0 for an exact table: its weights are not equal)."""
    err, se = _error_jit(
        cfg, jnp.asarray(theta, cfg.dtype), table.weights, table.sign, table.sampled
    )
    return float(err), float(se)


@functools.partial(jax.jit, static_argnums=4)
def _error_jit(cfg: JSLConfig, theta, weights: ClassWeights, sign, sampled: bool):
    """`error`'s sums in one compiled program (called from the host: one compile per table shape,
    not one per operation); cfg's numbers traced."""
    wrong = failures(cfg, theta, SignedClasses(weights, sign, sampled))
    err = jnp.sum(weights.w * wrong)
    se = jnp.std(wrong, ddof=1) / jnp.sqrt(weights.w.shape[0]) if sampled else 0.0
    return err, se
