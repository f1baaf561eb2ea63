"""Exact reference lines of the JSL setting: GLM error, Bayes error and the logistic-loss floor
(docs/derivations/jsl.md §2.4, §3e, §5).

Every line is a closed-form sum over multinomial counts, computed with exact integers (q is taken as
the exact binary value of the float cfg.q) and rounded once at the end (Python's int / int is
correctly rounded); D = 196, C = 4 takes well under a second. Notation (y = +1 WLOG,
docs/derivations/jsl.md §2.3): s_j = <w*, X_j>; the signal set has s_j = +1; each of the D - C other
patches has delta_j = +1, -1 w.p. q/2 each and 0 w.p. 1 - q; N+- = number of sets whose C patches
are all +-1.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .config import JSLConfig


def _check(cfg) -> None:
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")


def _q(cfg: JSLConfig) -> tuple[int, int]:
    """q = num/den exactly (the binary value of the float)."""
    f = Fraction(cfg.q)
    return f.numerator, f.denominator


def glm_error(cfg: JSLConfig) -> float:
    """Error P(T<0) + 1/2 P(T=0) of the Event-I model, the GLM sign(T), T = sum_j s_j
    (docs/derivations/jsl.md §3e).

    T = C + the sum of the n = D - C deltas. With k nonzero deltas of which m are -1, T = C + k - 2m
    and P(k, m) = binom(n, k) binom(k, m) (q/2)^k (1-q)^(n-k).
    """
    _check(cfg)
    n, C = cfg.D - cfg.C, cfg.C
    a, b = _q(cfg)
    total = 0
    for k in range(n + 1):
        # 2 x (number of sign patterns of k nonzero deltas with T < 0) + (number with T = 0); T < 0
        # <=> m > (k + C)/2.
        half, odd = divmod(k + C, 2)
        wrong = 2 * sum(math.comb(k, m) for m in range(half + 1, k + 1))
        if not odd and half <= k:
            wrong += math.comb(k, half)
        if wrong:
            # (q/2)^k (1-q)^(n-k) = a^k (b-a)^(n-k) 2^(n-k) / (b^n 2^n)
            total += math.comb(n, k) * a**k * (b - a) ** (n - k) * 2 ** (n - k) * wrong
    return total / (b**n * 2**n * 2)  # int / int is correctly rounded in Python


def _set_count_weights(cfg: JSLConfig):
    """(i, j, num, den): the L-1 random sets hold i all-(+1) and j all-(-1) sets with probability
    num/den (exact ints).

    (i, j, rest) ~ Multinomial(L-1; t, t, 1-2t) with t = (q/2)^C, the probability that a random set
    is all +1.
    """
    a, b = _q(cfg)
    A, B = a**cfg.C, (2 * b) ** cfg.C  # t = A / B
    R = cfg.L - 1
    powA = [A**k for k in range(R + 1)]
    powRest = [(B - 2 * A) ** k for k in range(R + 1)]
    den = B**R
    for i in range(R + 1):
        for j in range(R + 1 - i):
            r = R - i - j
            multinomial = math.comb(R, i) * math.comb(R - i, j)
            num = multinomial * powA[i + j] * powRest[r]
            if num:
                yield i, j, num, den


def bayes_error(cfg: JSLConfig) -> float:
    """Bayes error E[min(N+, N-) / (N+ + N-)] (docs/derivations/jsl.md §2.4), for the uniform label
    prior of `dynsim.jsl.data`.

    Posterior: p(X | y, l) is the same product over sets except that the signal set S_l (all y) has
    probability 1 instead of (q/2)^C, so p(X | y) is proportional to N_y(X) and P(y = +1 | X) = N+ /
    (N+ + N-); its error is the smaller side. With y = +1, N+ = 1 + i and N- = j for the random-set
    counts (i, j) of `_set_count_weights`.
    """
    _check(cfg)
    L = cfg.L
    lcm = math.lcm(*range(1, L + 1))  # N+ + N- = 1 + i + j <= L
    total, den = 0, 1
    for i, j, num, den in _set_count_weights(cfg):
        if j:
            total += num * min(1 + i, j) * (lcm // (1 + i + j))
    return total / (den * lcm)


def loss_floor(cfg: JSLConfig) -> float:
    """Population logistic-loss floor E[-log(N_y / (N+ + N-))] = H(y | X), in nats
    (docs/derivations/jsl.md §2.4).

    No F reaches below it: E[log(1 + e^(-yF))] >= the cross-entropy of the Bayes posterior. With y =
    +1 it is E[log1p(j / (1 + i))]. Each exact weight is rounded once, j/(1+i) once and log1p once
    (log1p(x(1+e)) errs by relative <= e, unlike log near 1), so each positive term errs by relative
    <= 4u; math.fsum adds them with one more rounding.
    """
    _check(cfg)
    terms = [num / den * math.log1p(j / (1 + i)) for i, j, num, den in _set_count_weights(cfg) if j]
    return math.fsum(terms)


def lines(cfg: JSLConfig) -> dict[str, float]:
    """The three reference lines: {"glm_error", "bayes_error", "loss_floor"}."""
    return {
        "glm_error": glm_error(cfg),
        "bayes_error": bayes_error(cfg),
        "loss_floor": loss_floor(cfg),
    }


def _count_and_sign_weights(cfg: JSLConfig):
    """{(T, N+ - N-): exact integer numerator} over the L-1 random sets, and their common
    denominator.

    A set of type (a, b) (a patches +1, b -1, c = C - a - b zero) has probability C!/(a! b! c!)
    (q/2)^(a+b) (1-q)^c = C!/(a! b! c!) num^(a+b) (2 (den - num))^c / (2 den)^C; it adds a - b to T
    and
    +1 (a = C), -1 (b = C) or 0 to N+ - N- (y = +1: the signal set adds C to T and 1 to f*/C = 1 +
      N+ - N-).
    """
    a_, b_ = _q(cfg)
    C = cfg.C
    step = {}
    for a in range(C + 1):
        for b in range(C + 1 - a):
            c = C - a - b
            num = math.comb(C, a) * math.comb(C - a, b) * a_ ** (a + b) * (2 * (b_ - a_)) ** c
            if num:
                key = (a - b, 1 if a == C else -1 if b == C else 0)
                step[key] = step.get(key, 0) + num
    state = {(C, 0): 1}
    for _ in range(cfg.L - 1):
        new: dict = {}
        for (t, s), w in state.items():
            for (dt, ds), v in step.items():
                new[(t + dt, s + ds)] = new.get((t + dt, s + ds), 0) + w * v
        state = new
    return state, (2 * b_) ** (C * (cfg.L - 1))


def glm_error_fstar(cfg: JSLConfig) -> float:
    """P[f* T <= 0] of the Event-I model sign(T), T = sum_j <w*, X_j> (Theorem 3.1's P[f* g <= 0];
    f* = 0 or T = 0 is a failure), with f* = C (1 + N+ - N-) (docs/derivations/jsl.md §2.4, y =
    +1)."""
    _check(cfg)
    state, den = _count_and_sign_weights(cfg)
    return sum(w for (t, s), w in state.items() if t * (1 + s) <= 0) / den


def bayes_error_fstar(cfg: JSLConfig) -> float:
    """P[f* = 0] = P[N+ = N-]: every F fails there, and the Bayes rule sign(N+ - N-) = sign(f*)
    fails nowhere else, so it is the least P[f* F <= 0] of any F (docs/derivations/jsl.md §2.4)."""
    _check(cfg)
    state, den = _count_and_sign_weights(cfg)
    return sum(w for (t, s), w in state.items() if 1 + s == 0) / den


def mislabel_fstar(cfg: JSLConfig) -> float:
    """P[y f* <= 0]: how often f* mislabels or ties (Definition 2.1 asks that it be negligible,
    P[y f* > 0] = 1 - d^(-omega(1))). With y = +1, y f* = C (1 + N+ - N-) <= 0 where the random
    sets all-(-1) at least match the signal set and the random all-(+1) sets together; it includes
    P[f* = 0] (`bayes_error_fstar`) (docs/derivations/jsl.md §2.4)."""
    _check(cfg)
    state, den = _count_and_sign_weights(cfg)
    return sum(w for (t, s), w in state.items() if 1 + s <= 0) / den
