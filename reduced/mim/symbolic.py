"""The per-query MIM loss of one masked patch, built in sympy and differentiated there (Lemmas A.8,
5.1, 5.2).

For a masked query p in area n of cluster k (the "own" area) the scores are z_j A_j + B on the
unmasked keys of area j and B on the masked ones (B_self on p itself), docs/derivations/mim-model.md
§2. Write the softmax through its masses: S_j the unmasked mass of area j (u_j e^{z_j A_j + B_j}
when one B serves area j), M the masked mass and
    Z = sum_j S_j + M + e^{B_self},   Attn_j = S_j / Z.
The per-sample loss (Lemma A.8, conditional on p in M) is then a function of three numbers and z_n:
    l(S_n, R, Z) = 1/2 [z_n^2 (1 - S_n/Z)^2 + R/Z^2],   R = sum_{j != n} z_j^2 S_j^2,
whose partial derivatives sympy takes (`derive`). The chain rule through the masses is exact and
short, since d S_j / d A_j = z_j S_j, d S_j / d B = S_j (the unmasked keys B scores), d M / d B = M,
d Z / d B_self = e^{B_self}:
    dl/dA_j = (g_j + dl/dZ) z_j S_j,   g_n = dl/dS_n,   g_j = 2 z_j^2 S_j dl/dR  (j != n)
    dl/dB   = (g_j + dl/dZ) S_j^B + dl/dZ M^B     (S^B, M^B: the masses that B scores)
    dl/dB_self = dl/dZ e^{B_self}.
l is homogeneous of degree 0 in (S, M, e^{B_self}) (R of degree 2), so every partial above is
unchanged when all masses are scaled by one factor e^{-m}: the levels compute the masses with the
scores shifted by their largest m, so no exponential overflows (`reduced.mim.dynamics.terms`,
`reduced.mim.joint.sample_terms`).
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache
from typing import Callable

import sympy as sp

S_n, R, Z = sp.symbols("S_n R Z", positive=True)
z_n = sp.symbols("z_n", positive=True)
ARGS = (S_n, R, Z, z_n)


def per_sample_loss() -> sp.Expr:
    """l(S_n, R, Z, z_n) = 1/2 [z_n^2 (1 - S_n/Z)^2 + R/Z^2] (Lemma A.8 with Attn_j = S_j / Z)."""
    return sp.Rational(1, 2) * (z_n**2 * (1 - S_n / Z) ** 2 + R / Z**2)


@dataclasses.dataclass(frozen=True)
class Derivation:
    """The loss, its partial derivatives in (S_n, R, Z) and the compiled (lambdified to JAX)
    form."""

    loss: sp.Expr
    gradients: tuple  # d l / d(S_n, R, Z)
    compiled: Callable  # (S_n, R, Z, z_n) -> [l, dl/dS_n, dl/dR, dl/dZ]

    def __call__(self, *args):
        return self.compiled(*args)


@lru_cache(maxsize=None)
def derive() -> Derivation:
    """Build l, differentiate it with sympy.diff and lambdify it to JAX (common subexpressions
    shared)."""
    loss = per_sample_loss()
    grads = tuple(sp.diff(loss, x) for x in (S_n, R, Z))
    return Derivation(loss, grads, sp.lambdify(ARGS, [loss, *grads], modules="jax", cse=True))


def render(latex: bool = False) -> str:
    """Human-readable derivation for `dynsim derive mim`."""
    der = derive()
    fmt = sp.latex if latex else sp.sstr
    lines = [
        "# Reduced MIM: loss of one masked query p in area n, conditional on p in M (Lemma A.8)",
        "# S_j: unmasked mass of area j; Z = sum_j S_j + (masked mass) + e^{B_self}; R = "
        "sum_{j != n} z_j^2 S_j^2",
        f"l = {fmt(der.loss)}",
    ]
    for name, g in zip(("S_n", "R", "Z"), der.gradients):
        lines.append(f"d l / d {name} = {fmt(g)}")
    lines += [
        "# chain rule (g_n = dl/dS_n, g_j = 2 z_j^2 S_j dl/dR for j != n):",
        "d l / d A_j = (g_j + dl/dZ) z_j S_j",
        "d l / d B_j = (g_j + dl/dZ) S_j + dl/dZ (C'_j - u_j) e^{B_j}",
        "d l / d B_self = dl/dZ e^{B_self}",
    ]
    return "\n".join(lines)
