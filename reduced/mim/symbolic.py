"""The per-query MIM loss of one masked patch, built in sympy and differentiated there (Lemmas A.8, 5.1, 5.2).

For a masked query p in area n of cluster k (the "own" area) the scores are z_j A_j + B_j on the unmasked
patches of area j and B_j on its masked ones (B_self on p itself), docs/derivations/mim-model.md §2. With u_j unmasked patches
among the C'_j patches of area j other than p, the softmax denominator is
    Z = sum_j [u_j e^{z_j A_j + B_j} + (C'_j - u_j) e^{B_j}] + e^{B_self}
and the per-sample loss (Lemma A.8, conditional on p in M) is
    l = 1/2 [z_n^2 (1 - Attn_n)^2 + sum_{j != n} z_j^2 Attn_j^2],   Attn_j = u_j e^{z_j A_j + B_j} / Z.
Two views of the same l are derived: the "own" view keeps the own area and B_self explicit and folds every
other area into W = sum_{j != n} [...] and R = sum_{j != n} z_j^2 (u_j e^{z_j A_j + B_j})^2; the "other" view
also keeps one generic other area i explicit (W, R then run over j not in {n, i}). W and R do not depend on the
explicit variables, so sympy's partial derivatives of the two views are the exact partials of l in
(A_n, B_n, B_self) and in (A_i, B_i) for every i: one small expression serves any number of areas.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import sympy as sp

A0, B0, Ai, Bi, Bs = sp.symbols("A_n B_n A_i B_i B_self", real=True)
u0, C0, ui, Ci, W, R = sp.symbols("u_n C_n u_i C_i W R", nonnegative=True)
z0, zi = sp.symbols("z_n z_i", positive=True)
OWN_ARGS = (A0, B0, Bs, u0, C0, z0, W, R)
OTHER_ARGS = (A0, B0, Bs, u0, C0, z0, Ai, Bi, ui, Ci, zi, W, R)


def per_sample_loss(other: bool) -> tuple[sp.Expr, sp.Expr, sp.Expr, sp.Expr]:
    """(l, Z, Attn_n, Attn_i) of the own view (other=False, Attn_i = 0) or the other view (other=True)."""
    e0 = u0 * sp.exp(z0 * A0 + B0)
    Z = e0 + (C0 - u0) * sp.exp(B0) + sp.exp(Bs) + W
    ei = sp.Integer(0)
    if other:
        ei = ui * sp.exp(zi * Ai + Bi)
        Z = Z + ei + (Ci - ui) * sp.exp(Bi)
    loss = sp.Rational(1, 2) * (z0**2 * (1 - e0 / Z) ** 2 + zi**2 * (ei / Z) ** 2 + R / Z**2)
    return loss, Z, e0 / Z, ei / Z


@dataclasses.dataclass(frozen=True)
class Derivation:
    """The two views, their partial derivatives and the compiled (lambdified to JAX) forms."""

    own_loss: sp.Expr
    other_loss: sp.Expr
    own_gradients: tuple  # d l / d(A_n, B_n, B_self)
    other_gradients: tuple  # d l / d(A_i, B_i)
    own: Callable  # (*OWN_ARGS) -> [l, dA_n, dB_n, dB_self, Attn_n]
    other: Callable  # (*OTHER_ARGS) -> [dA_i, dB_i, Attn_i]


@lru_cache(maxsize=None)
def derive() -> Derivation:
    """Build both views, differentiate them with sympy.diff and lambdify them to JAX (common subexpressions shared)."""
    own_loss, _, att0, _ = per_sample_loss(other=False)
    other_loss, _, _, atti = per_sample_loss(other=True)
    own_grads = tuple(sp.diff(own_loss, x) for x in (A0, B0, Bs))
    other_grads = tuple(sp.diff(other_loss, x) for x in (Ai, Bi))
    own = sp.lambdify(OWN_ARGS, [own_loss, *own_grads, att0], modules="jax", cse=True)
    other = sp.lambdify(OTHER_ARGS, [*other_grads, atti], modules="jax", cse=True)
    return Derivation(own_loss, other_loss, own_grads, other_grads, own, other)


def render(latex: bool = False) -> str:
    """Human-readable derivation for `dynsim derive mim`."""
    der = derive()
    fmt = sp.latex if latex else sp.sstr
    lines = ["# Reduced MIM: loss of one masked query p in area n, conditional on p in M (Lemma A.8)",
             "# u_j unmasked of the C'_j patches of area j other than p; W, R: the areas not written out",
             f"l (own view) = {fmt(der.own_loss)}",
             f"l (other view) = {fmt(der.other_loss)}"]
    for name, g in zip(("A_n", "B_n", "B_self"), der.own_gradients):
        lines.append(f"d l / d {name} = {fmt(g)}")
    for name, g in zip(("A_i", "B_i"), der.other_gradients):
        lines.append(f"d l / d {name} = {fmt(g)}")
    return "\n".join(lines)
