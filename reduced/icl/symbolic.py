"""The reduced loss of the linear self-attention layer in sympy, and the gradients sympy derives
from it (docs/icl.md §4).

On the reduced manifold (every block but w22^PV = u and W11^KQ = U zero) the prediction is
y_hat = u w^T S U x_q, S the prompt's empirical covariance, and with diagonal Lambda and
U = diag(a) (the diagonal initialization keeps it diagonal) the population loss is a sum over the
coordinates k, coupled only through u and the constant tr Lambda = T:

    L(u, a) = sum_k l_k,  l_k = (1/2) [u^2 m_k - 2 u a_k lambda_k^2 + lambda_k],

m_k the k-th term of tr E[S A S] with A = U Lambda U^T, built here from the moment identity (M1)
of docs/icl.md. Then dL/da_k = dl_k/da_k and dL/du = sum_k dl_k/du."""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import sympy as sp

u, a, lam, T, N = sp.symbols("u a_k lambda_k T N", real=True)
ARGS = (u, a, lam, T, N)


def prompt_term() -> sp.Expr:
    """m_k: the k-th term of tr E[S A S] for A = U Lambda U^T = diag(a_k^2 lambda_k), from (M1):
    E[S A S] = (1 + 1/N) Lambda A Lambda + (1/N) tr(A Lambda) Lambda, whose trace is the sum over k
    of (1 + 1/N) lambda_k^2 A_kk + (1/N) A_kk lambda_k T."""
    A_kk = a**2 * lam
    return (1 + 1 / N) * lam**2 * A_kk + A_kk * lam * T / N


def summand() -> sp.Expr:
    """l_k = (1/2) [u^2 m_k - 2 u a_k lambda_k^2 + lambda_k]: E tr((u S U - I) Lambda (u S U -
    I)^T)'s k-th term (docs/icl.md eq. (R))."""
    return sp.Rational(1, 2) * (u**2 * prompt_term() - 2 * u * a * lam**2 + lam)


@dataclasses.dataclass(frozen=True)
class Derivation:
    """The summand, its partial derivatives in u and a_k, and their compiled (lambdified to JAX)
    forms."""

    loss: sp.Expr
    d_u: sp.Expr
    d_a: sp.Expr
    compiled: Callable  # (u, a, lambda, T, N) -> [l_k, dl_k/du, dl_k/da_k], vectorized over k

    def __call__(self, *args):
        return self.compiled(*args)


@lru_cache(maxsize=None)
def derive() -> Derivation:
    """Build l_k, differentiate it with sympy.diff and lambdify it to JAX."""
    loss = summand()
    d_u, d_a = sp.diff(loss, u), sp.diff(loss, a)
    return Derivation(loss, d_u, d_a, sp.lambdify(ARGS, [loss, d_u, d_a], modules="jax", cse=True))


def minimum() -> sp.Expr:
    """The product u a_k where dl_k/da_k = 0 with u != 0: 1 / gamma_k (Theorem 4.1's Gamma^{-1})."""
    p = sp.symbols("p", real=True)
    (root,) = sp.solve(sp.diff(summand(), a).subs(a, p / u) / u, p)
    return sp.simplify(root)


def render(latex: bool = False, at: dict | None = None) -> str:
    """`dynsim derive icl`: the summand, its gradients, the minimizer and, with `at` (d, N, the
    spectrum), the numbers there."""
    der, show = derive(), sp.latex if latex else sp.sstr
    lines = [
        "# Reduced ICL (Zhang, Frei, Bartlett): u = w22^PV, U = W11^KQ = diag(a_k), "
        "Lambda = diag(lambda_k), T = tr Lambda",
        "# L(u, a) = sum_k l_k, from E[S A S] = (1 + 1/N) Lambda A Lambda + (1/N) tr(A Lambda) "
        "Lambda (docs/icl.md eq. (M1))",
        f"l_k = {show(der.loss)}",
        f"d l_k / d u = {show(sp.factor(der.d_u))}",
        f"d L / d a_k = {show(sp.factor(der.d_a))}",
        "d L / d u = sum_k d l_k / d u;  gradient flow: du/dt = -dL/du, da_k/dt = -dL/da_k",
        f"u a_k at dL/da_k = 0: {show(minimum())}  (= 1/gamma_k, Gamma = (1 + 1/N) Lambda + T/N I)",
    ]
    if at is not None:
        spectrum, n = at["spectrum"], at["N"]
        total = sum(spectrum)
        limit = [float(minimum().subs({lam: x, T: total, N: n})) for x in spectrum]
        lines.append(
            f"at d = {len(spectrum)}, N = {n}, lambda = {[round(x, 6) for x in spectrum]}: "
            f"Gamma^-1 = diag({', '.join(f'{x:.6g}' for x in limit)})"
        )
    return "\n".join(lines)
