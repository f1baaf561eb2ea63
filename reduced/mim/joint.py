"""Reduced MIM for any number of clusters with the PP correlations B free: one state per query and
joint type.

With K > 1 clusters the PP correlation B_{p,q} = e_p^T Q e_q is shared by the clusters, so it no
longer takes one value per area. What is left of the symmetry (docs/mim.md §3b): for a masked query
p, two keys q, q' with the same area as each other in every cluster (the same *joint type* relative
to p: tau(q) = (a_1(q), ..., a_K(q))) are exchangeable (the mask law is exchangeable over patches,
the latents are per (cluster, area), Q starts at 0), so B_{p,q} = B_{p,q'} for all time. The state
of query p is

    A_{p,k,j}  (FP, per cluster k and area j of k),   B_{p,tau}  (PP, per joint type),   B_{p,p}
      (B_self).

For query p in cluster k with u_tau unmasked keys among the C'_tau keys of type tau (q != p), the
scores are z_j A_{k,j} + B_tau on unmasked keys of area j = tau_k and B_tau on masked ones, so with
    S_j = e^{z_j A_{k,j}} sum_{tau: tau_k = j} u_tau e^{B_tau}                       (unmasked mass
      of area j)
    Z   = sum_j S_j + sum_tau (C'_tau - u_tau) e^{B_tau} + e^{B_self}
the per-sample loss is l = 1/2 [z_n^2 (1 - S_n/Z)^2 + R/Z^2], R = sum_{j != n} z_j^2 S_j^2 (Lemma
A.8), whose partial derivatives in (S_n, R, Z) come from sympy (`reduced.mim.symbolic`); the chain
rule through S and Z is exact:
    dl/dA_{k,j} = (g_j + dl/dZ) z_j S_j,          g_n = dl/dS_n,  g_j = 2 z_j^2 S_j dl/dR (j != n)
    dl/dB_tau  = (g_{tau_k} + dl/dZ) u_tau e^{z A + B_tau} + dl/dZ (C'_tau - u_tau) e^{B_tau}
    dl/dB_self = dl/dZ e^{B_self}.
The expectation over the unmasked counts (multivariate hypergeometric over the joint types: P - |M|
unmasked among the P - 1 other patches, given p in M) and the latents is exact by enumeration, or
with the counts at their means ("mean_field"). GD on Q moves each coordinate of the row w_p = Q^T
e_p by eta dL/d(coordinate) (orthonormal embedding): A by eta c E[dl/dA], each of the C'_tau entries
of B_tau by eta c E[dl/dB_tau] / C'_tau, with c = (|M|/P)/K and dl/dB summed over the clusters. With
K = 1 the joint types are the areas and this is `dynamics` without its query classes.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.mim import MIMConfig, data
from dynsim.mim.partition import area_of
from dynsim.mim.latents import LIBRARY, Caller
from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: its numbers traced)

from .. import gd
from .classes import MAX_CONFIGURATIONS, count_rows, count_size, sample_rngs
from .symbolic import derive


class Types(NamedTuple):
    """Every query's joint types (numpy, static): padded to the largest number of types T of any
    query."""

    of_key: np.ndarray  # (P, P): type index of key q for query p (-1 on the diagonal)
    population: np.ndarray  # (P, T): C'_tau, 0 where padded
    area: np.ndarray  # (P, T, K): area of cluster k holding the keys of type tau (0 where padded)
    own: np.ndarray  # (P, K): a_k(p)


def joint_types(cfg: MIMConfig) -> Types:
    """The joint types of every query: keys q != p grouped by (a_1(q), ..., a_K(q))."""
    a = area_of(cfg.areas, cfg.P)  # (K, P)
    P, K = cfg.P, cfg.K
    per_query = []
    for p in range(P):
        others = [q for q in range(P) if q != p]
        labels, inverse = np.unique(a[:, others].T, axis=0, return_inverse=True)
        per_query.append(
            (
                labels,
                np.bincount(inverse.ravel(), minlength=labels.shape[0]),
                others,
                inverse.ravel(),
            )
        )
    T = max(lab.shape[0] for lab, *_ in per_query)
    of_key = np.full((P, P), -1, dtype=np.int64)
    population = np.zeros((P, T), dtype=np.int64)
    area = np.zeros((P, T, K), dtype=np.int64)
    for p, (labels, counts, others, inverse) in enumerate(per_query):
        of_key[p, others] = inverse
        population[p, : counts.size] = counts
        area[p, : labels.shape[0]] = labels
    return Types(of_key, population, area, a.T.copy())


class Expectation(NamedTuple):
    """The expectation's rows per query (counts) and per cluster (latents), padded with weight 0."""

    u: np.ndarray  # (P, rows, T) unmasked counts per joint type
    w: np.ndarray  # (P, rows) their probabilities given p in M
    z: np.ndarray  # (K, zrows, N) latent vectors of each cluster's areas (1 where padded)
    wz: np.ndarray  # (K, zrows) their probabilities


def check_size(cfg: MIMConfig, types: Types | None = None, caller: Caller = LIBRARY) -> int:
    """The number of count vectors the exact expectation enumerates over all queries (a dynamic
    program, nothing enumerated); refuses more than MAX_CONFIGURATIONS with what to do instead, in
    the caller's names (`dynsim.mim.latents.Caller`: --samples only where it takes them)."""
    types = joint_types(cfg) if types is None else types
    total = 0
    for caps in types.population:
        total += count_size([int(c) for c in caps if c > 0], cfg.P - cfg.masked, MAX_CONFIGURATIONS)
        if total > MAX_CONFIGURATIONS:
            samples = "samples" in caller.takes
            raise ValueError(
                f"the exact joint-type expectation ({caller.said('K', cfg.K)}, B free) needs more "
                f"than {MAX_CONFIGURATIONS:,} count vectors over the queries "
                f"({caller.said('P', cfg.P)}): use {caller.use('approximation', 'mean_field')} "
                "(counts at their means)"
                + (f", {caller.use('samples', 'S')} (Monte Carlo)" if samples else "")
                + f" or a smaller {caller.name('P')}"
            )
    return total


def expectation(
    cfg: MIMConfig,
    types: Types,
    mean_field: bool,
    samples: int | None = None,
    rng: np.random.Generator | None = None,
) -> Expectation:
    """Exact: every count vector of the multivariate hypergeometric law over each query's joint
    types, and every latent vector; "mean_field": the counts at their means (P - |M|) C'_tau / (P -
    1); `samples`: that many count vectors per query drawn from the law by `rng` (Monte Carlo,
    weight 1/samples each)."""
    P, drawn = cfg.P, cfg.P - cfg.masked
    if not mean_field and samples is None:
        check_size(cfg, types)
    rows_u, rows_w = [], []
    for p in range(P):
        u, w = count_rows(
            [int(c) for c in types.population[p] if c > 0], P, drawn, mean_field, samples, rng
        )
        rows_u.append(u)
        rows_w.append(w)
    M, T = max(u.shape[0] for u in rows_u), types.population.shape[1]
    U, W = np.zeros((P, M, T)), np.zeros((P, M))
    for p, (u, w) in enumerate(zip(rows_u, rows_w)):
        U[p, : u.shape[0], : u.shape[1]] = u
        W[p, : w.size] = w
    return Expectation(U, W, *latents(cfg))


def latents(cfg: MIMConfig) -> tuple[np.ndarray, np.ndarray]:
    """Every latent vector of each cluster's areas (K, V, N) (1 where padded), its probability
    (K, V)."""
    zs = [data.z_vectors(cfg, n) for n in cfg.areas_per_cluster]
    V, N = max(z.shape[0] for z, _ in zs), cfg.max_areas
    Zv, Wz = np.ones((cfg.K, V, N)), np.zeros((cfg.K, V))
    for k, (z, pz) in enumerate(zs):
        Zv[k, : z.shape[0], : z.shape[1]] = z
        Wz[k, : pz.size] = pz
    return Zv, Wz


def sample_terms(der, A_k, B, Bs, u, pop, area_k, own_k, z, valid_k):
    """One (query, cluster, count vector, latent vector): loss, dl/dA_k (N,), dl/dB (T,),
    dl/dB_self, Attn (N,). The masses are taken with the scores shifted by the largest one that
    counts (m; `symbolic`: nothing changes), so no exponential overflows; a mass of count 0 is
    exactly 0 (exponent -inf), never 0 x inf."""
    N = A_k.shape[0]
    held = pop > 0  # a padded type (or an empty one) carries no key: no score, no mass
    s = jnp.where(held, (z * A_k)[area_k], 0.0) + B  # (T,): an unmasked key's score, type tau
    masked = pop - u
    m = jnp.maximum(
        jnp.maximum(
            jnp.max(jnp.where(u > 0, s, -jnp.inf)), jnp.max(jnp.where(masked > 0, B, -jnp.inf))
        ),
        Bs,
    )
    unmasked = u * jnp.exp(jnp.where(u > 0, s - m, -jnp.inf))  # u_tau e^{z A + B_tau - m}
    M = masked * jnp.exp(jnp.where(masked > 0, B - m, -jnp.inf))  # (C'_tau - u_tau) e^{B_tau - m}
    e_self = jnp.exp(Bs - m)
    S = jax.ops.segment_sum(unmasked, area_k, num_segments=N)  # (N,): unmasked mass per area
    Z = jnp.sum(S) + jnp.sum(M) + e_self
    is_own = jnp.arange(N) == own_k
    Sn, zn = S[own_k], z[own_k]
    Rv = jnp.sum(jnp.where(is_own | ~valid_k, 0.0, (z * S) ** 2))
    loss, dSn, dR, dZ = der(Sn, Rv, Z, zn)
    g = jnp.where(is_own, dSn, 2.0 * z**2 * S * dR)
    gA = (g + dZ) * z * S
    gB = (jnp.where(held, g[area_k], 0.0) + dZ) * unmasked + dZ * M
    return loss, gA, gB, dZ * e_self, S / Z


def query_expectation(der, A, B, Bs, u, w, pop, area, own, z, wz, valid):
    """One query, every cluster: E[l_k], E[dl/dA_k] (K, N), sum_k E[dl/dB] (T,), sum_k
    E[dl/dB_self], E[Attn_k]."""

    def cluster(A_k, area_k, own_k, z_k, wz_k, valid_k):
        per = jax.vmap(
            lambda uu: jax.vmap(
                lambda zz: sample_terms(der, A_k, B, Bs, uu, pop, area_k, own_k, zz, valid_k)
            )(z_k)
        )(u)
        weight = w[:, None] * wz_k[None, :]
        return jax.tree.map(lambda x: jnp.einsum("rs,rs...->...", weight, x), per)

    loss, gA, gB, gBs, att = jax.vmap(cluster)(A, jnp.moveaxis(area, 1, 0), own, z, wz, valid)
    return loss, gA, jnp.sum(gB, axis=0), jnp.sum(gBs), att


def expectations(tables, state):
    """Every query (vmapped): per-query E[l_k] (P, K), E[dl/dA] (P, K, N), E[dl/dB] (P, T),
    E[dl/dB_self] (P,), E[Attn] (P, K, N)."""
    der = derive()
    u, w, pop, area, own, z, wz, valid = tables
    A, B, Bs = state
    return jax.vmap(lambda *a: query_expectation(der, *a, z, wz, valid))(
        A, B, Bs, u, w, pop, area, own
    )


def rates(cfg: MIMConfig, pop):
    """(c, 1/C'_tau): c = (|M|/P)/K weighs one query's conditional loss in one cluster; B_tau is
    held by C'_tau entries of Q (0 where padded)."""
    return (cfg.masked / cfg.P) / cfg.K, jnp.where(pop > 0, 1.0 / jnp.where(pop > 0, pop, 1.0), 0.0)


def observe(cfg: MIMConfig, tables, of_key, state) -> dict:
    """fp_corr, area_attention (P, K, N; NaN where cluster k has no area j), pp_corr (P, P), pp_max
    and the loss."""
    A, B, Bs = state
    loss, _, _, _, att = expectations(tables, state)
    valid = tables[-1]
    c, _ = rates(cfg, tables[2])
    pp = jnp.where(of_key < 0, Bs[:, None], jnp.take_along_axis(B, jnp.maximum(of_key, 0), axis=1))
    return {
        "fp_corr": jnp.where(valid[None], A, jnp.nan),
        "area_attention": jnp.where(valid[None], att, jnp.nan),
        "pp_corr": pp,
        "pp_max": jnp.max(jnp.abs(pp)),
        "loss": c * jnp.sum(loss),
    }


def pp_max_of(pop, state):
    """max |B| over the held key types (pop > 0) and |B_self| (`pp_max`; the class engine's too)."""
    _, B, Bs = state[:3]
    return jnp.maximum(jnp.max(jnp.where(pop > 0, jnp.abs(B), 0.0)), jnp.max(jnp.abs(Bs)))


def run(cfg: MIMConfig, tables, of_key, every_step: bool = False, first: bool = False):
    """GD from Q = 0 in one lax.scan (`reduced.gd`); `every_step`: also max |B| after every step
    (pp_cluster_max_steps, one value: B itself, `gd.step_series`); `first`: recorded at step 1 too
    (`dynsim.recording.with_first_step`). Returns (final state, records)."""
    pop = tables[2]
    c, per_entry = rates(cfg, pop)
    step = cfg.eta * c
    P, T = pop.shape
    dtype = pop.dtype
    y0 = (
        jnp.zeros((P, cfg.K, cfg.max_areas), dtype),
        jnp.zeros((P, T), dtype),
        jnp.zeros((P,), dtype),
    )

    def grad(y):
        _, gA, gB, gBs, _ = expectations(tables, y)
        return gA, gB, gBs

    per_step = (lambda y: {"pp_cluster_max_steps": pp_max_of(pop, y)[None]}) if every_step else None
    state, _, rec = gd.run(
        grad,
        (step, step, step),
        lambda y: observe(cfg, tables, of_key, y),
        y0,
        cfg.steps,
        cfg.record_every,
        scale=(1.0, per_entry, 1.0),
        nonfinite=True,
        every_step=per_step,
        first=first,
    )
    return state, rec


run_jit = jax.jit(run, static_argnums=(3, 4))  # cfg a pytree: its numbers (eta) traced


def run_replicates(cfg: MIMConfig, tables, of_key):
    """`run` over R Monte Carlo tables at once: u (R, P, S, T) and w (R, P, S) vmapped, the rest
    shared."""
    u, w, *rest = tables
    return jax.vmap(lambda uu, ww: run(cfg, (uu, ww, *rest), of_key))(u, w)


run_replicates_jit = jax.jit(run_replicates)


def setup(cfg: MIMConfig, mean_field: bool, samples: int | None = None, replicates: int = 1):
    """(types, expectation, the arrays `run` takes): u, w, C', areas, own areas, latents, their
    weights, valid. With `samples`, u and w carry a leading axis of `replicates` independent Monte
    Carlo tables (`classes.sample_rngs`)."""
    types = joint_types(cfg)
    if samples is None:
        ex = expectation(cfg, types, mean_field)
    else:
        draws = [
            expectation(cfg, types, False, samples, rng)
            for rng in sample_rngs(cfg.seed, replicates)
        ]
        ex = Expectation(
            np.stack([d.u for d in draws]), np.stack([d.w for d in draws]), draws[0].z, draws[0].wz
        )
    dtype = jnp.dtype(cfg.dtype)
    valid = np.arange(cfg.max_areas)[None, :] < np.array(cfg.areas_per_cluster)[:, None]
    tables = (
        jnp.asarray(ex.u, dtype),
        jnp.asarray(ex.w, dtype),
        jnp.asarray(types.population, dtype),
        jnp.asarray(types.area),
        jnp.asarray(types.own),
        jnp.asarray(ex.z, dtype),
        jnp.asarray(ex.wz, dtype),
        jnp.asarray(valid),
    )
    return types, ex, tables
