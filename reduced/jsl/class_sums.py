"""The population loss (P), its gradients and the exact 0-1 error as sums over moment classes.

Every class c (`classes`) has F_c = sum_r phi_r(theta) mono_r(c) (`moments`), so with the weights
w_c:
    L = sum_c w_c softplus(-F_c),    dL/dtheta = (dphi/dtheta) sum_c w_c (-sigmoid(-F_c)) mono(c),
two passes over the monomial table, stored (R, M): F = sum_r phi_r mono_r as R elementwise terms,
then the R weighted sums mono (w * dloss/dF) as one matrix-vector product. Measured against an (M,
R) table summed by XLA reductions: faster at D = 16 (663 classes), slower at D = 48 (2 million
classes; docs/benchmarks.md §l). A matrix-vector product's order of
additions depends on the BLAS threads, so runs sharded over devices agree to rounding, not to the
bit (tests/test_sweep.py). softplus and sigmoid are jax.nn's, whose values and derivatives stay
finite when e^F overflows.
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.jsl import JSLConfig, error

from . import classes, moments
from .state import named


class ClassWeights(NamedTuple):
    """A sum over moment classes as arrays: monomials mono (R, M) and weights w (M,)."""

    mono: jax.Array
    w: jax.Array


def class_weights(log_count, z0, random_patches: int, q):
    """w_c = N(c) (q/2)^Z_0 (1-q)^((L-1)C - Z_0), from log N(c) (traceable in q; 0^0 = 1 at q = 0 or
    1)."""
    q = jnp.asarray(q)
    z0 = jnp.asarray(z0, q.dtype)
    log_w = (
        jnp.asarray(log_count, q.dtype)
        + jax.scipy.special.xlogy(z0, q / 2)
        + jax.scipy.special.xlog1py(random_patches - z0, -q)
    )
    return jnp.exp(log_w)


# `class_weights` called from the host on NumPy tables: one compiled program per table shape
class_weights_jit = jax.jit(class_weights)


class ClassTable(NamedTuple):
    """The classes of (D, C, p) cut at max_nonzero, as NumPy arrays: monomials (R, M), log N and Z_0
    of each class."""

    mono: np.ndarray
    log_count: np.ndarray
    z0: np.ndarray
    random_patches: int


def class_table(D: int, C: int, p: int, max_nonzero: Optional[int]) -> ClassTable:
    """`classes.moment_classes` with their monomials (`moments.monomials`)."""
    cls = classes.moment_classes(D, C, p, max_nonzero)
    der = moments.derive(C, p)
    return ClassTable(
        np.ascontiguousarray(moments.monomials(der.exponents, cls.variables).T),
        cls.log_count,
        cls.variables[:, p].astype(np.float64),
        cls.random_patches,
    )


def coefficients(cfg: JSLConfig, theta):
    """(phi, dphi/dtheta, phi_plus) of `moments` at theta, with cfg's (possibly traced) beta, tau,
    nu."""
    return moments.coefficients(
        moments.derive(cfg.C, cfg.p), theta, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D
    )


def F_from(mono, phi):
    """sum_r phi_r mono_r over the classes, as R elementwise terms added in order (a reduction over
    the leading axis of an (R, M) table ran 8x slower at M = 2 million)."""
    F = mono[0] * phi[0]
    for r in range(1, mono.shape[0]):
        F = F + mono[r] * phi[r]
    return F


def loss_and_gradients(cfg: JSLConfig, theta, table: ClassWeights):
    """[L, dL/dalpha, dL/dgamma, dL/drho] of (P) over the classes."""
    phi, jac, _ = coefficients(cfg, theta)
    F = F_from(table.mono, phi)
    loss = jnp.sum(table.w * jax.nn.softplus(-F))
    dloss_dF = -table.w * jax.nn.sigmoid(-F)
    return jnp.concatenate([loss[None], jnp.sum(jac * (table.mono @ dloss_dF), axis=1)])


def F_of(cfg: JSLConfig, theta, table: ClassWeights):
    """F of every class at theta."""
    return F_from(table.mono, coefficients(cfg, theta)[0])


def tie_tolerance(cfg: JSLConfig, theta, table: ClassWeights):
    """Per class, a bound on the rounding error of the computed F_c: |F_c| below it counts as F_c =
    0.

    Rounding model (u = unit roundoff, l = max(|gamma - beta|, |rho - beta|)/tau): Lambda, Gamma, Xi
    err by relative <= (2 l + 6) u (an exp of a rounded logit over a rounded sum), so A = Lambda -
    Gamma and B = Gamma - Xi err by <= (2 l + 7) u (Lambda + Gamma), (2 l + 7) u (Gamma + Xi)
    absolutely, y = D alpha by u |y|. One monomial of phi_r has at most p + 1 such factors and p + 1
    products, and phi_r sums N of them, so |phi_r computed - phi_r| <= ((p + 1)(2 l + 7) + p + 1 +
    N) u phi_plus_r, phi_plus_r being phi_r with absolute coefficients at |y|, Lambda + Gamma, Gamma
    + Xi, Xi. mono_r are integers (products of class moments, each rounded once: p u). The dot
    product over R terms adds R u sum_r |phi_r| |mono_r|. So
        |F_c computed - F_c| <= ((p + 1)(2 l + 7) + 2 p + 1 + N + R) u sum_r phi_plus_r |mono_r(c)|,
    first order; a factor 4 covers the evaluation order of the lambdified common subexpressions and
    the BLAS dot. Exact zeros: configurations mapped to their negation by a set permutation, and T =
    0 at gamma = rho (docs/derivations/jsl.md §2.4, §3e); genuine |F| are O(alpha^p), far above
    (tests/test_reduced_observables.py).
    """
    der = moments.derive(cfg.C, cfg.p)
    u = float(jnp.finfo(jnp.dtype(cfg.dtype)).eps) / 2
    s = named(theta)
    ell = jnp.maximum(jnp.abs(s.gamma - cfg.sigma_A), jnp.abs(s.rho - cfg.sigma_A)) / cfg.tau
    p, R = cfg.p, der.exponents.shape[0]
    factor = 4 * u * ((p + 1) * (2 * ell + 7) + 2 * p + 1 + der.terms + R)
    plus = coefficients(cfg, theta)[2]
    return factor * F_from(jnp.abs(table.mono), plus)


def population_error(cfg: JSLConfig, theta, table: ClassWeights):
    """P(F < 0) + 1/2 P(F = 0) over the classes, ties by `tie_tolerance` (y = +1 WLOG,
    docs/derivations/jsl.md §2.3)."""
    wrong = error.wrong(F_of(cfg, theta, table), tie_tolerance(cfg, theta, table))
    return jnp.sum(table.w * wrong.astype(table.w.dtype))


def sampled_classes(cfg: JSLConfig, counts, dtype) -> jax.Array:
    """Monomials (R, M) of sampled configurations given by their type counts (M, K) (traceable): the
    class variables counts @ `moments.per_type_variables`, T shifted by C, then the products (exact
    in float64 below 2^53)."""
    der = moments.derive(cfg.C, cfg.p)
    per_type = jnp.asarray(moments.per_type_variables(cfg.C, cfg.p), dtype)
    variables = jnp.asarray(counts, dtype) @ per_type
    variables = variables.at[:, 0].add(cfg.C)
    columns = []
    # static integer powers: repeated products, exact for integers below 2^53
    for row in der.exponents:
        mono = jnp.ones(variables.shape[:1], dtype)
        for v in np.flatnonzero(row):
            mono = mono * variables[:, v] ** int(row[v])
        columns.append(mono)
    return jnp.stack(columns)
