"""The reduced JSL state named: (alpha, gamma, rho) of Section 4.1. The solvers (GD's scan, the
LSODA flow, vmap over starts) carry it as one 3-vector; `named(state)` reads its entries by name."""

from __future__ import annotations

from typing import Any, NamedTuple


class Theta(NamedTuple):
    """alpha: value/feature alignment <w*, v> (Section 4.1); gamma: the within-set entry of A;
    rho: the between-set entry of A (Lemma 4.1: A has three distinct entries, beta on the
    diagonal)."""

    alpha: Any
    gamma: Any
    rho: Any


def named(state) -> Theta:
    """The 3-vector (alpha, gamma, rho) as a `Theta` (entries read by index, as the programs
    compiled from it always did)."""
    return Theta(state[0], state[1], state[2])
