"""The finite configuration sum behind the exact population loss (P) of JSL.

With v = alpha w* and A constant on the orbits of Lemma 4.1, F(X) depends on X only through the
count type (a, b) of every random set (a patches carrying +w*, b carrying -w*) and the total T = C +
sum (a - b); WLOG y = +1 and the signal set is any fixed one (docs/derivations/jsl.md §3a-§3b). A
configuration is the vector n of how many of the L-1 random sets have each type.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np


@lru_cache(maxsize=None)
def set_types(C: int) -> tuple[tuple[int, int], ...]:
    """All count types (a, b), a + b <= C, of one random set; K = (C+1)(C+2)/2 of them."""
    return tuple((a, b) for a in range(C + 1) for b in range(C + 1 - a))


def type_log_probabilities(C: int, q: float) -> np.ndarray:
    """log P[type (a, b)] = log(C!/(a! b! c!) (q/2)^(a+b) (1-q)^c), -inf where impossible."""
    out = []
    for a, b in set_types(C):
        c = C - a - b
        logp = math.lgamma(C + 1) - math.lgamma(a + 1) - math.lgamma(b + 1) - math.lgamma(c + 1)
        for power, prob in ((a + b, q / 2), (c, 1 - q)):
            if power:
                logp = logp + (power * math.log(prob) if prob > 0 else -math.inf)
        out.append(logp)
    return np.array(out)


def count(D: int, C: int) -> int:
    """Number of configurations in the full sum: multisets of L-1 types, C(L-1+K-1, K-1)."""
    K = len(set_types(C))
    return math.comb(D // C - 1 + K - 1, K - 1)


def count_truncated(D: int, C: int, max_nonzero: int | None) -> int:
    """Number of configurations with at most `max_nonzero` nonzero random patches, counted without
    enumerating.

    Dynamic programming over the types: ways[r][z] = multisets of r sets with z nonzero patches in
    all.
    """
    sets, budget = D // C - 1, D - C if max_nonzero is None else max_nonzero
    ways = [[0] * (budget + 1) for _ in range(sets + 1)]
    ways[0][0] = 1
    for a, b in set_types(C):
        z = a + b
        new = [[0] * (budget + 1) for _ in range(sets + 1)]
        for r in range(sets + 1):
            for used in range(budget + 1):
                if ways[r][used]:
                    for n in range(sets - r + 1):
                        if used + n * z > budget:
                            break
                        new[r + n][used + n * z] += ways[r][used]
        ways = new
    return sum(ways[sets])


def enumerate_configurations(D: int, C: int, q: float, max_nonzero: int | None = None):
    """Count vectors n (M, K) and their probabilities W(n) (M,), dropping zero-probability ones.

    W(n) = (L-1)!/prod n_k! prod p_k^n_k. With `max_nonzero`, only configurations whose number of
    nonzero random patches sum_k n_k (a_k + b_k) is <= max_nonzero are kept (see
    `tail_probability`).
    """
    types = set_types(C)
    K, sets = len(types), D // C - 1
    nonzero = [a + b for a, b in types]
    budget = D - C if max_nonzero is None else max_nonzero
    rows: list[tuple[int, ...]] = []

    def rec(k: int, left: int, room: int, prefix: tuple[int, ...]) -> None:
        if k == K - 1:
            if left * nonzero[k] <= room:
                rows.append(prefix + (left,))
            return
        for n in range(left + 1):
            if n * nonzero[k] > room:
                break
            rec(k + 1, left - n, room - n * nonzero[k], prefix + (n,))

    rec(0, sets, budget, ())
    n = np.array(rows, dtype=np.int64).reshape(-1, K)
    w = weights(n, C, q)
    keep = w > 0
    return n[keep], w[keep]


def weights(n: np.ndarray, C: int, q: float) -> np.ndarray:
    """W(n) = (L-1)!/prod n_k! prod p_k^n_k of count vectors n (M, K) (0 where impossible)."""
    sets = int(n[0].sum()) if len(n) else 0
    logp = type_log_probabilities(C, q)
    with np.errstate(invalid="ignore"):
        terms = np.where(n > 0, n * logp[None, :], 0.0)
    log_factorial = np.array([math.lgamma(x + 1) for x in range(sets + 1)])
    logw = math.lgamma(sets + 1) - log_factorial[n].sum(axis=1) + terms.sum(axis=1)
    return np.exp(logw)


def tail_probability(D: int, C: int, q: float, max_nonzero: int | None) -> float:
    """Probability dropped by truncation at `max_nonzero`: exactly P[Bin(D - C, q) >
    max_nonzero]."""
    n = D - C
    if max_nonzero is None or max_nonzero >= n:
        return 0.0
    return float(
        math.fsum(
            math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(max_nonzero + 1, n + 1)
        )
    )


def truncation_bounds(
    D: int,
    C: int,
    p: int,
    nu: float,
    tau: float,
    dropped: float,
    max_abs_alpha: float,
    max_Gamma: float,
    max_Xi: float,
) -> dict[str, float]:
    """Rigorous bounds on the error that dropping probability `dropped` induces
    (docs/derivations/jsl.md §3b).

    They use |m_i| <= 1, |s_j - m_i| <= 2, |softplus'| <= 1 and sigma, sigma' increasing in |x|:
    loss <= P (log 2 + D sigma(D|alpha|)); d/dalpha <= P D^2 sigma'(D|alpha|);
    per-entry d/dA_ij within (between) sets <= P 2|alpha| D sigma'(D|alpha|) Gamma/tau (Xi/tau).
    The alpha, Gamma, Xi are the largest values met along the run.
    """
    x = D * max_abs_alpha
    sig, dsig = x**p + nu * x, p * x ** (p - 1) + nu
    return {
        "loss": dropped * (math.log(2.0) + D * sig),
        "grad_alpha": dropped * D * D * dsig,
        "grad_gamma_per_entry": dropped * 2 * max_abs_alpha * D * dsig * max_Gamma / tau,
        "grad_rho_per_entry": dropped * 2 * max_abs_alpha * D * dsig * max_Xi / tau,
    }
