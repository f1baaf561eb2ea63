"""F of reduced JSL as a polynomial in a few integer moments of the configuration, derived in sympy.

sigma(x) = x^p + nu x is a polynomial and, with v = alpha w*, patch i of set m has the
pre-activation x_i = y (A s_i + B t_m + Xi T), y = D alpha, A = Lambda - Gamma, B = Gamma - Xi, s_i
in {-1, 0, 1}, t_m the set's feature sum and T the total (docs/derivations/jsl.md §3a). Expanding
sigma(x_i) in s_i and t_m and summing over the patches of a set uses only sum_i s_i^0 = C, sum_i
s_i^j = t_m (j odd) and sum_i s_i^j = z_m (j even >= 2), z_m the set's nonzero patches. Summing over
the sets then leaves the moments of the random sets

    S_e = sum_m t_m^e (e = 2..p),    Z_e = sum_m z_m t_m^e (e = 0..p-2),    and T = C + sum_m t_m,

so F = sum_r phi_r(alpha, gamma, rho) mono_r(T, S, Z): configurations with equal moments ("a moment
class") have equal F, for every state. sympy expands, collects by moment monomial and differentiates
the coefficients phi_r; the loss gradient of one class is then -sigmoid(-F) sum_r mono_r
dphi_r/dtheta, which is what sympy.diff gives for softplus(-F) (tests/test_moments.py checks that,
and F against the per-type form of `symbolic`).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import jax
import numpy as np
import sympy as sp

from dynsim.jsl.model import activation

from .configurations import set_types
from .state import named
from .symbolic import STATE, alpha, beta, D, gamma, nu, rho, tau

y_, A_, B_, Xi_ = sp.symbols("y A B Xi", real=True)


def variable_names(p: int) -> tuple[str, ...]:
    """The class variables: T, S_2..S_p, Z_0..Z_{p-2} (Z_0 = nonzero random patches, which sets the
    weight)."""
    return ("T",) + tuple(f"S{e}" for e in range(2, p + 1)) + tuple(f"Z{e}" for e in range(p - 1))


def per_type_variables(C: int, p: int) -> np.ndarray:
    """(K, V) integers: what one random set of type (a, b) adds to each class variable (t = a - b, z
    = a + b)."""
    rows = []
    for a, b in set_types(C):
        t, z = a - b, a + b
        rows.append([t] + [t**e for e in range(2, p + 1)] + [z * t**e for e in range(p - 1)])
    return np.array(rows, dtype=np.int64)


def moment_F(C: int, p: int):
    """F as a sympy polynomial in y, A, B, Xi, nu and the class variables (sum over the signal set
    and the L-1 random sets, docs/derivations/jsl.md §3a, patch sums by the rules of the module
    docstring)."""
    s, t, z = sp.symbols("s t z", real=True)
    V = sp.symbols(" ".join(variable_names(p)), real=True)
    T = V[0]
    S = {e: V[e - 1] for e in range(2, p + 1)}
    Z = {e: V[p + e] for e in range(p - 1)}
    L1 = D / C - 1  # random sets
    per_patch = sp.Poly(sp.expand(activation(y_ * (A_ * s + B_ * t + Xi_ * T), p, nu)), s)
    per_set = 0  # sum over the C patches of one set, as a polynomial in (t, z)
    for (j,), coef in per_patch.terms():
        per_set += C * coef if j == 0 else (t * coef if j % 2 else z * coef)
    per_set = sp.Poly(sp.expand(per_set), t, z)
    signal = per_set.as_expr().subs({t: C, z: C})
    random = 0
    for (e, f), coef in per_set.terms():
        if f:  # z t^e summed over the random sets
            random += coef * Z[e]
        else:  # t^e summed over the random sets: L-1 sets, sum t = T - C
            random += coef * (L1 if e == 0 else T - C if e == 1 else S[e])
    return sp.expand(signal + random), V


GENS = (y_, A_, B_, Xi_, nu)  # phi_r are polynomials in these


@dataclasses.dataclass(frozen=True)
class MomentDerivation:
    """F = sum_r phi_r mono_r for set size C and degree p, and the compiled coefficients."""

    C: int
    p: int
    variables: tuple[sp.Symbol, ...]  # T, S_2..S_p, Z_0..Z_{p-2}
    exponents: np.ndarray  # (R, V): mono_r = prod_v variables_v^exponents[r, v]
    phi: tuple[sp.Expr, ...]  # phi_r, polynomials in (y, A, B, Xi, nu)
    # y, A, B, Xi as functions of (alpha, gamma, rho, beta, tau, D) (docs/derivations/jsl.md §3a)
    state: dict
    F: sp.Expr  # sum_r phi_r mono_r
    # (y, A, B, Xi, nu, D) -> (phi (R,), dphi/d(y, A, B, Xi) (4, R)); phi_plus (R,) at (|y|,
    # Lam+Gam, Gam+Xi, Xi, nu, D)
    compiled_phi: Callable
    compiled_plus: Callable
    # (alpha, gamma, rho, beta, tau, D) -> ((y, A, B, Xi, Lambda + Gamma, Gamma + Xi), d(y, A, B,
    # Xi)/dtheta (4, 3))
    compiled_state: Callable
    # most monomials in (y, A, B, Xi, nu) of one phi_r (the rounding bound of `tie_tolerance` uses
    # it)
    terms: int


@lru_cache(maxsize=None)
def derive(C: int, p: int) -> MomentDerivation:
    """Expand F in the moments (`moment_F`), collect by moment monomial, and differentiate the
    coefficients.

    dphi_r/dtheta is sympy's, by the chain rule through z = (y, A, B, Xi): dphi_r/dz (polynomials)
    times dz/dtheta (the softmax), each compiled on its own so that XLA sees two small expressions,
    not their expanded product."""
    F, V = moment_F(C, p)
    poly = sp.Poly(F, *V)
    exponents = np.array([m for m, _ in poly.terms()], dtype=np.int64)
    phi = tuple(c for _, c in poly.terms())
    e_g, e_r = sp.exp((gamma - beta) / tau), sp.exp((rho - beta) / tau)
    Z = 1 + (C - 1) * e_g + (D - C) * e_r
    Lam, Gam, Xi = 1 / Z, e_g / Z, e_r / Z
    state = {y_: D * alpha, A_: Lam - Gam, B_: Gam - Xi, Xi_: Xi}
    z = GENS[:4]
    compiled_phi = sp.lambdify(
        list(GENS) + [D],
        [list(phi), [[sp.diff(f, g) for f in phi] for g in z]],
        modules="jax",
        cse=True,
    )
    # phi_plus: every coefficient's absolute value (evaluated at |y|, Lambda + Gamma >= |A|, Gamma +
    # Xi >= |B|, Xi): what the rounding error of the computed phi_r and of the sum over r scale with
    # (`class_sums.tie_tolerance`)
    polys = [sp.Poly(c, *GENS) for c in phi]
    plus = [
        sum(sp.Abs(k) * sp.Mul(*(g**e for g, e in zip(GENS, m))) for m, k in q.terms())
        for q in polys
    ]
    compiled_plus = sp.lambdify(list(GENS) + [D], plus, modules="jax", cse=True)
    zs = [state[g] for g in z]
    compiled_state = sp.lambdify(
        [alpha, gamma, rho, beta, tau, D],
        [zs + [Lam + Gam, Gam + Xi], [[sp.diff(e, x) for x in STATE] for e in zs]],
        modules="jax",
        cse=True,
    )
    phi_F = sum(f * sp.Mul(*(v**e for v, e in zip(V, row))) for f, row in zip(phi, exponents))
    return MomentDerivation(
        C,
        p,
        tuple(V),
        exponents,
        phi,
        state,
        phi_F,
        compiled_phi,
        compiled_plus,
        compiled_state,
        max(len(q.terms()) for q in polys),
    )


def monomials(exponents: np.ndarray, variables: np.ndarray) -> np.ndarray:
    """mono_r of every class: (M, R) float64 from integer class variables (M, V), products taken in
    int64 (exact: |mono_r| <= D^p < 2^63 for D <= 196, p <= 7) and rounded once."""
    out = np.ones((variables.shape[0], exponents.shape[0]), dtype=np.int64)
    for v in range(exponents.shape[1]):
        for r in np.flatnonzero(exponents[:, v]):
            out[:, r] *= variables[:, v] ** exponents[r, v]
    return out.astype(np.float64)


def coefficients(der: MomentDerivation, theta, beta_, tau_, nu_, D_):
    """(phi (R,), dphi/dtheta (3, R), phi_plus (R,)) as JAX arrays at theta = (alpha, gamma,
    rho)."""
    jnp = jax.numpy
    dtype = theta.dtype

    def stack(xs):
        return jnp.stack([jnp.broadcast_to(jnp.asarray(x, dtype), ()) for x in xs])

    (y, A, B, Xi, LG, GX), dz = der.compiled_state(*named(theta), beta_, tau_, D_)
    phi, dphi = der.compiled_phi(y, A, B, Xi, nu_, D_)
    plus = der.compiled_plus(jnp.abs(y), LG, GX, Xi, nu_, D_)
    dz = jnp.stack([stack(row) for row in dz])  # (4, 3)
    # sums, not dot products: the same additions in every compiled program (see class_sums)
    return (
        stack(phi),
        jnp.sum(dz.T[:, :, None] * jnp.stack([stack(row) for row in dphi])[None], axis=1),
        stack(plus),
    )
