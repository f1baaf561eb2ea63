"""Theorem 4.2's sample size at a finite size: the first-order finite-N fluctuation of A around the
exact population gradient flow, and the probability that it leaves every row associated
(docs/jsl.md §13).

A realistic run (E) on N samples follows the flow theta(t) of (P) (the N -> infinity limit its
proof rests on) plus a deviation delta(t). To first order in delta and in 1/sqrt(N),

    d delta / dt = -H(t) delta - e_N(t),   e_N = (1/N) sum_n (g_n - E g),

with H the population Hessian of (P) along the flow and g_n sample n's gradient there (the
parameters: A's off-diagonal entries and v; the diagonal is frozen). So delta(t) = Phi(t, 0)
delta(0) + (1/N) sum_n psi_n(t): Phi is the flow's linear propagator, delta(0) the start's
N(0, omega^2) spread, and psi_n solves d psi_n / dt = -H psi_n - (g_n - E g), psi_n(0) = 0,
independently over n.

Row i is associated while each within-set entry exceeds each between-set entry: (gamma - rho)(t) +
c . delta(t) > 0 for every pair vector c = e_ij - e_ik (j in S(i), k not). At this order delta is
Gaussian, with the pairs' covariance Sigma(N) = C (omega^2 Phi Phi^T + Cov[psi] / N) C^T, so the
probability that a run is associated on every row at flow time t is

    P_assoc(N, t) = P[(gamma - rho)(t) + x > 0 for every pair], x ~ N(0, Sigma(N)),

read on DRAWS fixed Gaussian draws (standard error at most 0.5 / sqrt(DRAWS)); the pairs of a row
share its within-set entries, and that correlation is kept.

H is exact: on the flow v = alpha w*, the noise is orthogonal to w* and independent over patches,
so the Hessian in (A, alpha) is an expectation over the sign configurations alone and the one in
v's orthogonal part is sigma^2 E[sum_j d^2 L / d proj_j^2] times the projector (the cross terms
vanish). Under Lemma 4.1's symmetry (permutations of the sets and within them) that expectation is
the group average of its sum over one configuration per orbit (`reduced.jsl.configurations`: the
L - 1 random sets' count types, weighted by their probability), and the group average of a matrix
over the parameter pairs is the mean over each orbit of index pairs (`symmetrize`). Cov[psi] is a
Monte Carlo estimate from SAMPLES samples of a fixed key (SAMPLE_TAG: never a judged seed's
data; relative standard error of a variance at most sqrt(2 / SAMPLES) = 3%). H and the centred
gradients are held at their mean over each interval between consecutive flow times (an exponential
integrator, exact for piecewise-constant H).

Leading order: the linearization drops terms of relative size |c . delta| / (gamma - rho); where
P_assoc is far from 0 and 1 that ratio is of order 1 for some pair, so P_assoc is a first-order
prediction, not a bound.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

import reduced.jsl
from full.jsl import realistic, sampling
from full.jsl.training import model_for
from reduced.jsl.configurations import enumerate_configurations, set_types

from . import data, partition
from .config import JSLConfig

# fold_in tag of the samples the psi_n are estimated on (the judged seeds use SEED_TAG)
SAMPLE_TAG = 0x5A3E
SAMPLES = 2048
# flow times: log-spaced from eta to the settling window's start, then evenly over the window
LOG_TIMES = 96
WINDOW_TIMES = 17
# Gaussian draws of P_assoc: standard error at most 0.5 / sqrt(DRAWS) = 0.0035
DRAWS = 20_000


@dataclasses.dataclass(frozen=True)
class Fluctuation:
    """The first-order law of the pair differences over the settling window: per window flow time,
    the flow's gap gamma - rho, and draws of the pairs' deviations from the start's spread and from
    one sample (`probability` scales the latter by 1 / sqrt(N))."""

    t: np.ndarray  # (times,) flow times of the window
    gap: np.ndarray  # (times,)
    start: np.ndarray  # (times, DRAWS, pairs)
    sample: np.ndarray  # (times, DRAWS, pairs)

    def probability(self, N: float) -> np.ndarray:
        """P_assoc(N, t) at each window time: every pair keeps its order."""
        x = self.gap[:, None, None] + self.start + self.sample / np.sqrt(N)
        return np.mean(np.all(x > 0, axis=-1), axis=-1)

    def n_min(self, target: float, cap: float = 1e9) -> float:
        """The smallest N (to 1%) with P_assoc >= target at every window time; inf above `cap`."""
        if np.min(self.probability(cap)) < target:
            return float("inf")
        lo, hi = 1.0, cap
        while hi / lo > 1.01:
            mid = float(np.sqrt(lo * hi))
            lo, hi = (mid, hi) if np.min(self.probability(mid)) < target else (lo, mid)
        return hi


def pair_vectors(cfg: JSLConfig) -> np.ndarray:
    """(pairs, D (D - 1) + d): c = e_ij - e_ik for j in S(i) other than i and k outside S(i), in the
    flat parameters (A's off-diagonal entries row by row, then v)."""
    within, between = partition.orbit_masks(cfg)
    off = ~np.eye(cfg.D, dtype=bool)
    index = np.full((cfg.D, cfg.D), -1)
    index[off] = np.arange(off.sum())
    rows = []
    for i in range(cfg.D):
        for j in np.flatnonzero(within[i]):
            for k in np.flatnonzero(between[i]):
                c = np.zeros(off.sum() + cfg.d)
                c[index[i, j]], c[index[i, k]] = 1.0, -1.0
                rows.append(c)
    return np.array(rows)


def _pattern(cols: np.ndarray) -> np.ndarray:
    """Per row of cols (n, k) an integer naming its equality pattern (labels in order of first
    appearance, read in base k)."""
    out = np.zeros(cols.shape[0], dtype=np.int64)
    for r, row in enumerate(cols.tolist()):
        seen: dict = {}
        for c, value in enumerate(row):
            out[r] += seen.setdefault(value, len(seen)) * cols.shape[1] ** c
    return out


def symmetrize(cfg: JSLConfig, w_star: np.ndarray):
    """H -> its average over Lemma 4.1's group (permutations of the sets and within them) and the
    rotations of v about w*: an A-A entry ((i, j), (k, l)) averaged over the index quadruples of
    its orbit (the same equalities among i, j, k, l and the same same-set relations: the group
    maps any two such quadruples onto each other), an A-v column along w* over the orbit of (i, j),
    the v-v block to a w* w*^T + b (I - w* w*^T). Exact (`test_sample_size`: an exact H is left
    as it is, to rounding)."""
    off = ~np.eye(cfg.D, dtype=bool)
    rows_i, cols_j = np.nonzero(off)
    n, S = rows_i.size, partition.set_of(cfg)
    rows, cols = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    first, second = rows.ravel(), cols.ravel()
    quad = np.stack([rows_i[first], cols_j[first], rows_i[second], cols_j[second]], 1)
    pair = np.stack([rows_i, cols_j], 1)
    _, orbit_AA = np.unique(_pattern(quad) * 4**4 + _pattern(S[quad]), return_inverse=True)
    _, orbit_A = np.unique(_pattern(pair) * 4**2 + _pattern(S[pair]), return_inverse=True)
    perp = np.eye(cfg.d) - np.outer(w_star, w_star)

    def mean_over(x, orbit):
        return (np.bincount(orbit, x.ravel()) / np.bincount(orbit))[orbit].reshape(x.shape)

    def apply(H: np.ndarray) -> np.ndarray:
        H = (H + H.T) / 2
        out = np.zeros_like(H)
        out[:n, :n] = mean_over(H[:n, :n], orbit_AA)
        out[:n, n:] = np.outer(mean_over(H[:n, n:] @ w_star, orbit_A), w_star)
        out[n:, :n] = out[:n, n:].T
        vv = H[n:, n:]
        on_line = w_star @ vv @ w_star
        out[n:, n:] = on_line * np.outer(w_star, w_star) + np.trace(perp @ vv) / (cfg.d - 1) * perp
        return out

    return apply


def representatives(cfg: JSLConfig) -> tuple[np.ndarray, np.ndarray]:
    """One sign configuration s (y = +1) per orbit of Lemma 4.1's group, and each orbit's
    probability: the signal set (the first set) all +1, the other L - 1 sets filled by their count
    types (a patches +1, b patches -1, the rest 0) as `enumerate_configurations` counts them."""
    counts, weights = enumerate_configurations(cfg.D, cfg.C, cfg.q)
    types, sets = set_types(cfg.C), partition.sets(cfg)
    s = np.zeros((len(counts), cfg.D))
    s[:, sets[0]] = 1.0
    for m, row in enumerate(counts):
        filled = [t for t, k in enumerate(row) for _ in range(k)]
        for members, t in zip(sets[1:], filled):
            a, b = types[t]
            s[m, members] = [1.0] * a + [-1.0] * b + [0.0] * (cfg.C - a - b)
    return s, weights


def _program(cfg: JSLConfig):
    """At a flow state (alpha, gamma, rho): the centred per-sample gradients (SAMPLES, P) and the
    exact Hessian (P, P), both in the flat parameters (A's off-diagonal entries, then v)."""
    within, between = (jnp.asarray(m, float) for m in partition.orbit_masks(cfg))
    off = ~np.eye(cfg.D, dtype=bool)
    n_off = int(off.sum())
    model = model_for(cfg)
    w_star = data.feature(cfg, jnp.float64)
    key = jax.random.fold_in(jax.random.key(cfg.seed), SAMPLE_TAG)
    X, y = data.sample(key, cfg, SAMPLES, w_star, jnp.float64)
    s_rep, weight = (jnp.asarray(a) for a in representatives(cfg))
    diagonal = cfg.sigma_A * jnp.eye(cfg.D)
    perp = jnp.eye(cfg.d) - jnp.outer(w_star, w_star)
    one = jnp.ones(1)

    def matrix(entries):
        return jnp.zeros((cfg.D, cfg.D)).at[off].set(entries) + diagonal

    def loss(theta, X, y):
        params = {"params": {"A": matrix(theta[:n_off]), "v": theta[n_off:]}}
        return realistic.empirical_loss(model, params, X, y)

    def line_loss(entries, alpha, s):  # one configuration on the line v = alpha w*
        return sampling.projections_loss(model, matrix(entries), one, (alpha * s)[None])

    def hessian(entries, alpha, s_rep, weight):
        line = jnp.concatenate([entries, alpha[None]])
        one_config = jax.hessian(lambda th, s: line_loss(th[:n_off], th[n_off], s))
        H_line = jnp.einsum("m,mab->ab", weight, jax.vmap(lambda s: one_config(line, s))(s_rep))
        curvature = jax.vmap(
            lambda s: jnp.trace(jax.hessian(lambda p: line_loss(entries, 1.0, p))(alpha * s))
        )(s_rep)
        H = jnp.zeros((n_off + cfg.d, n_off + cfg.d))
        H = H.at[:n_off, :n_off].set(H_line[:n_off, :n_off])
        H = H.at[:n_off, n_off:].set(jnp.outer(H_line[:n_off, n_off], w_star))
        H = H.at[n_off:, :n_off].set(jnp.outer(w_star, H_line[n_off, :n_off]))
        vv = H_line[n_off, n_off] * jnp.outer(w_star, w_star)
        return H.at[n_off:, n_off:].set(vv + cfg.sigma**2 * jnp.dot(weight, curvature) * perp)

    # the samples and configurations are arguments, not constants of the program: a program holding
    # them would be written whole into the persistent compilation cache
    @jax.jit
    def at(alpha, gamma, rho, X, y, s_rep, weight):
        entries = (gamma * within + rho * between)[off]
        theta = jnp.concatenate([entries, alpha * w_star])
        G = jax.vmap(lambda x, t: jax.grad(loss)(theta, x[None], t[None]))(X, y)
        return G - jnp.mean(G, axis=0), hessian(entries, alpha, s_rep, weight)

    sym = symmetrize(cfg, np.asarray(w_star))

    def evaluate(alpha, gamma, rho):
        E, H = at(alpha, gamma, rho, X, y, s_rep, weight)
        return np.asarray(E), sym(np.asarray(H))

    return evaluate


def flow_times(rc: JSLConfig, t_window: float) -> np.ndarray:
    """LOG_TIMES log-spaced flow times from eta to t_window, then WINDOW_TIMES evenly to eta T."""
    early = np.geomspace(rc.eta, t_window, LOG_TIMES, endpoint=False)
    return np.concatenate([early, np.linspace(t_window, rc.eta * rc.steps, WINDOW_TIMES)])


def fluctuation(rc: JSLConfig, settled_part: float) -> Fluctuation:
    """`Fluctuation` at rc's D, C, p, q, nu, sigma_A, omega and seed over the window [(1 -
    settled_part) eta T, eta T], from the flow started at (alpha, gamma, rho) = 0 (the realistic
    start's mean), in float64."""
    cfg = rc.replace(dtype="float64", N=1, n_test=1)
    t_end = cfg.eta * cfg.steps
    t_window = (1 - settled_part) * t_end
    traj = reduced.jsl.simulate(
        cfg, (0.0, 0.0, 0.0), method="flow", t_max=t_end, times=flow_times(cfg, t_window)
    )
    t = np.asarray(traj["t"], float)
    state = np.stack([np.asarray(traj[k], float) for k in ("alpha", "gamma", "rho")], axis=1)
    at = _program(cfg)
    C = pair_vectors(cfg)
    psi, Phi = np.zeros((SAMPLES, C.shape[1])), np.eye(C.shape[1])
    z_start, z_sample = np.random.default_rng(SAMPLE_TAG).standard_normal((2, DRAWS, len(C)))
    out: dict = {"t": [], "gap": [], "start": [], "sample": []}
    previous = None
    for k in range(len(t)):
        E, H = at(*state[k])
        if previous is not None:  # E and H held at their mean over [t_{k-1}, t_k]
            dt = t[k] - t[k - 1]
            lam, U = np.linalg.eigh((H + previous[1]) / 2)
            decay = np.exp(-lam * dt)
            small = np.abs(lam * dt) < 1e-12
            weight = np.where(small, dt, (1 - decay) / np.where(small, 1.0, lam))
            psi = ((psi @ U) * decay - ((E + previous[0]) / 2 @ U) * weight) @ U.T
            Phi = (U * decay) @ (U.T @ Phi)
        previous = (E, H)
        if t[k] >= t_window * (1 - 1e-12):
            out["t"].append(t[k])
            out["gap"].append(state[k, 1] - state[k, 2])
            out["start"].append(z_start @ _root(rc.omega**2 * (C @ Phi) @ (C @ Phi).T))
            out["sample"].append(z_sample @ _root(np.cov(psi @ C.T, rowvar=False)))
    return Fluctuation(*(np.asarray(out[k]) for k in ("t", "gap", "start", "sample")))


def _root(cov: np.ndarray) -> np.ndarray:
    """R with R^T R = cov (the symmetric square root; rounding's negative eigenvalues dropped)."""
    lam, U = np.linalg.eigh((cov + cov.T) / 2)
    return (U * np.sqrt(np.clip(lam, 0.0, None))) @ U.T
