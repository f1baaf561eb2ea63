"""The reduced JSL population loss per configuration, built in sympy and differentiated there.

The loss of one count configuration n (see `configurations`) is built from model (T)'s definition
(`dynsim.jsl.model.activation`, `logistic_loss`) with A constant on the orbits of Lemma 4.1
(diagonal beta, within-set gamma, between-set rho) and v = alpha w* (Lemma 4.2). sympy derives
d/dalpha, d/dgamma, d/drho; everything is lambdified once to JAX with common-subexpression
elimination.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import jax
import sympy as sp

from dynsim.jsl.model import activation, logistic_loss

from .configurations import set_types


class softplus(sp.Function):
    """softplus(x) = log(1 + e^x); lambdified to jax.nn.softplus, which does not overflow."""

    def fdiff(self, argindex=1):
        return sigmoid(self.args[0])


class sigmoid(sp.Function):
    """sigmoid(x) = 1/(1 + e^-x), the derivative of softplus; lambdified to jax.nn.sigmoid."""

    def fdiff(self, argindex=1):
        x = self.args[0]
        return sigmoid(x) * (1 - sigmoid(x))


alpha, gamma, rho = sp.symbols("alpha gamma rho", real=True)
beta, tau, nu, D = sp.symbols("beta tau nu D", positive=True)
STATE = (alpha, gamma, rho)


@dataclasses.dataclass(frozen=True)
class Derivation:
    """The symbolic reduced loss for set size C and degree p, and its compiled form."""

    C: int
    p: int
    n: tuple[sp.Symbol, ...]  # n_k: number of random sets of type k = set_types(C)[k]
    # Lambda, Gamma, Xi (one row of S on its orbits) and the total T
    definitions: dict[str, sp.Expr]
    # m for a signal patch and for +1, -1, 0 patches of a type-(a,b) set
    preactivations: dict[str, sp.Expr]
    F_named: sp.Expr  # F written with the symbols Lambda, Gamma, Xi, T
    F: sp.Expr
    loss: sp.Expr
    gradients: tuple[sp.Expr, sp.Expr, sp.Expr]  # d loss / d(alpha, gamma, rho)
    compiled: Callable  # (alpha, gamma, rho, beta, tau, nu, D, n) -> [loss, dalpha, dgamma, drho]
    # (alpha, gamma, rho, beta, tau, nu, D, n) -> F, the same sympy expression `F`
    compiled_F: Callable
    # (alpha, gamma, rho, beta, tau, nu, D, n, c) -> the two sums of `dynamics.tie_tolerance`
    compiled_scales: Callable


@lru_cache(maxsize=None)
def derive(C: int, p: int) -> Derivation:
    """Build the per-configuration loss of (P) for sets of size C and activation degree p, and its
    gradients."""
    types = set_types(C)
    n = sp.symbols(f"n0:{len(types)}", nonnegative=True, integer=True)
    # named for display, substituted below
    Lam_, Gam_, Xi_, T_ = sp.symbols("Lambda Gamma Xi T", real=True)
    # One row of the score matrix S on its orbits, shifted by the diagonal logit (softmax is shift
    # invariant).
    e_g, e_r = sp.exp((gamma - beta) / tau), sp.exp((rho - beta) / tau)
    Z = 1 + (C - 1) * e_g + (D - C) * e_r
    definitions = {
        Lam_: 1 / Z,
        Gam_: e_g / Z,
        Xi_: e_r / Z,
        T_: C + sum(nk * (a - b) for nk, (a, b) in zip(n, types)),
    }

    def m(s_i, T_set):
        """sum_j S_ij s_j for patch i with s_i in a set whose feature sum is T_set
        (docs/derivations/jsl.md §3a)."""
        return Lam_ * s_i + Gam_ * (T_set - s_i) + Xi_ * (T_ - T_set)

    def sigma(x):
        return activation(x, p, nu)

    u = D * alpha  # pre-activation = D * <v, sum_j S_ij X_j> = D alpha m_i
    F_named = C * sigma(u * m(1, C))
    for nk, (a, b) in zip(n, types):
        c = C - a - b
        F_named += nk * (
            a * sigma(u * m(1, a - b)) + b * sigma(u * m(-1, a - b)) + c * sigma(u * m(0, a - b))
        )
    # Per patch, y_i = D |alpha| (Lambda |s_i| + Gamma |T_set - s_i| + Xi |T - T_set|) scales the
    # rounding error c y_i of u_i = D alpha m_i, and x_i = |u_i| + 2 c y_i bounds where sigma' is
    # evaluated (`dynamics.tie_tolerance`).
    c_ = sp.Symbol("c", nonnegative=True)

    def patches(g):
        def term(s_i, T_set):
            y_i = (
                D
                * sp.Abs(alpha)
                * (Lam_ * abs(s_i) + Gam_ * sp.Abs(T_set - s_i) + Xi_ * sp.Abs(T_ - T_set))
            )
            return g(sp.Abs(u * m(s_i, T_set)) + 2 * c_ * y_i, y_i)

        out = C * term(1, C)
        for nk, (a, b) in zip(n, types):
            out += nk * (a * term(1, a - b) + b * term(-1, a - b) + (C - a - b) * term(0, a - b))
        return out.subs(definitions)

    scales = [
        patches(lambda x, y_i: (p * x ** (p - 1) + nu) * c_ * y_i),
        patches(lambda x, y_i: x**p + nu * x),
    ]
    a_, b_ = sp.symbols("a b", integer=True)
    pre = {
        "m_signal": m(1, C),
        "m_plus(a,b)": m(1, a_ - b_),
        "m_minus(a,b)": m(-1, a_ - b_),
        "m_zero(a,b)": m(0, a_ - b_),
    }
    F = F_named.subs(definitions)
    loss = logistic_loss(F, softplus)
    grads = tuple(sp.diff(loss, x) for x in STATE)
    compiled = sp.lambdify(
        [alpha, gamma, rho, beta, tau, nu, D, list(n)],
        [loss, *grads],
        modules=[{"softplus": jax.nn.softplus, "sigmoid": jax.nn.sigmoid}, "jax"],
        cse=True,
    )
    # F itself (for the 0-1 error): lambdified from the same expression, so sign(F) is the model's
    # sign.
    compiled_F = sp.lambdify(
        [alpha, gamma, rho, beta, tau, nu, D, list(n)], F, modules="jax", cse=True
    )
    compiled_scales = sp.lambdify(
        [alpha, gamma, rho, beta, tau, nu, D, list(n), c_], scales, modules="jax", cse=True
    )
    return Derivation(
        C,
        p,
        n,
        {str(k): v for k, v in definitions.items()},
        pre,
        F_named,
        F,
        loss,
        grads,
        compiled,
        compiled_F,
        compiled_scales,
    )


def render(C: int, p: int, latex: bool = False) -> str:
    """Human-readable derivation for `dynsim derive jsl`: definitions, loss, gradients after CSE."""
    der = derive(C, p)
    fmt = sp.latex if latex else sp.sstr
    types = set_types(C)
    lines = [
        f"# Reduced JSL population loss per count configuration (C = {C}, p = {p})",
        "# n_k = number of random sets of type k = (a_k, b_k): "
        + ", ".join(f"n{k}=({a},{b})" for k, (a, b) in enumerate(types)),
        "# Logits are shifted by the diagonal: softmax is invariant to a common shift.",
    ]
    for name, e in {**der.definitions, **der.preactivations}.items():
        lines.append(f"{name} = {fmt(e)}")
    lines.append(f"F = {fmt(der.F_named)}")
    lines.append("loss = softplus(-F) = log(1 + exp(-F))   (y = +1 without loss of generality)")
    subs, reduced = sp.cse(list(der.gradients))
    lines.append("# Gradients (sympy.diff), written with common subexpressions x_i:")
    for sym, e in subs:
        lines.append(f"{fmt(sym)} = {fmt(e)}")
    for var, g in zip(STATE, reduced):
        lines.append(f"d loss / d {var} = {fmt(g)}")
    return "\n".join(lines)
