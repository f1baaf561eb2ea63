"""Query classes and the exact expectation tables of the reduced MIM dynamics.

Exchangeability (docs/derivations/mim-model.md §10b): the mask law is exchangeable within each area
and Q starts at 0, so for a masked query p in area n the state depends only on the area sizes, and
queries whose own area has the same size and whose other areas have the same sizes share one
trajectory. A class is the signature (own size, sorted sizes of the other areas); its state is one A
and one B per area (own first, then the others by size) and B_self. Areas of equal size other than
the own one are exchangeable too, so they carry equal values. Conditional on p in M the unmasked
counts u_j of the C'_j = |P_{k,j}| - 1{j = n} other patches of each area are multivariate
hypergeometric (P - 1 patches, P - |M| unmasked drawn); the latents are i.i.d. per area.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from dynsim.mim import data, records
from dynsim.mim.latents import z_law

MAX_CONFIGURATIONS = 2_000_000  # (class, counts, latents) rows of the exact expectation


# sizes per class, of_area (K, N), rank (K, N), area (K, P): `records.class_index`
Classes = records.ClassIndex


def classes(cfg) -> Classes:
    """Group the areas (k, n) of every cluster into query classes by signature (own size, sorted
    other sizes); the position of area j in the class order of area n is `records.positions` (no (K,
    N, N) table)."""
    return records.class_index(cfg)


class Table(NamedTuple):
    """Per class c, rows r of the expectation: counts u, latents z, weights w; populations C' per
    class."""

    u: np.ndarray  # (classes, rows, max N)
    z: np.ndarray  # (classes, rows, max N)
    w: np.ndarray  # (classes, rows)
    populations: np.ndarray  # (classes, max N): C'_j (0 where padded)
    valid: np.ndarray  # (classes, max N) bool


def count_vectors(caps: list[int], total: int) -> np.ndarray:
    """Every integer vector u with 0 <= u_j <= caps[j] and sum u = total, shape (n, len(caps))."""
    rest = np.concatenate([np.cumsum(caps[::-1])[::-1][1:], [0]])  # capacity left after position j
    partial = np.zeros((1, 0), dtype=np.int64)
    sums = np.zeros(1, dtype=np.int64)
    for j, cap in enumerate(caps):
        vals = np.arange(cap + 1)
        new_sums = (sums[:, None] + vals[None, :]).ravel()
        keep = (new_sums <= total) & (new_sums + rest[j] >= total)
        rows = np.repeat(np.arange(partial.shape[0]), cap + 1)[keep]
        partial = np.concatenate(
            [partial[rows], np.tile(vals, partial.shape[0])[keep][:, None]], axis=1
        )
        sums = new_sums[keep]
    return partial


def count_size(caps: list[int], total: int, limit: Optional[int] = None) -> int:
    """How many vectors `count_vectors` would return: a dynamic program over prefix sums, nothing
    enumerated (O(len(caps) x total)); with `limit` the counts saturate at limit + 1 in int64,
    enough to refuse a table."""
    ways = np.zeros(total + 1, dtype=object if limit is None else np.int64)
    ways[0] = 1
    s = np.arange(total + 1)
    for cap in caps:
        # int64: <= (total + 1)(limit + 1)
        prefix = np.concatenate([np.zeros(1, ways.dtype), np.cumsum(ways)])
        ways = prefix[s + 1] - prefix[np.maximum(s - cap, 0)]
        if limit is not None:
            ways = np.minimum(ways, limit + 1)
    return int(ways[total])


def table(
    cfg,
    cls: Classes,
    mean_field: bool,
    samples: Optional[int] = None,
    rng: Optional[np.random.Generator] = None,
) -> Table:
    """The expectation over (counts, latents) for every class: exact enumeration, counts at their
    means, or `samples` count vectors drawn from the multivariate hypergeometric law by `rng` (Monte
    Carlo, weight 1/samples each, times the latents' exact weights)."""
    P, drawn = cfg.P, cfg.P - cfg.masked
    N = cfg.max_areas
    values, _ = z_law(cfg)
    rows_u, rows_z, rows_w, pops = [], [], [], []
    total = 0
    for sizes in cls.sizes:
        caps = [sizes[0] - 1] + list(sizes[1:])
        n_u = (
            1
            if mean_field
            else samples
            if samples is not None
            else count_size(caps, drawn, MAX_CONFIGURATIONS)
        )
        total += n_u * values.size ** len(sizes)
        if total > MAX_CONFIGURATIONS:
            raise ValueError(
                f"the exact reduced expectation needs more than {MAX_CONFIGURATIONS:,} "
                f"(counts, latents) rows (P = {P}, own area {sizes[0]}, other areas "
                f"{_sizes_text(sizes[1:])}, {values.size} latent value(s) per area): use "
                "approximation='mean_field' (counts at their means), a smaller P or z = 'const'"
            )
        u, pu = count_rows(caps, P, drawn, mean_field, samples, rng)
        zs, pz = data.z_vectors(cfg, len(sizes))
        u_rows = np.repeat(u, zs.shape[0], axis=0)
        z_rows = np.tile(zs, (u.shape[0], 1))
        w = np.repeat(pu, zs.shape[0]) * np.tile(pz, u.shape[0])
        rows_u.append(u_rows)
        rows_z.append(z_rows)
        rows_w.append(w)
        pops.append(caps)
    M = max(r.shape[0] for r in rows_w)
    C = len(cls.sizes)
    U, Z, Wt = np.zeros((C, M, N)), np.ones((C, M, N)), np.zeros((C, M))
    pop = np.zeros((C, N))
    valid = np.zeros((C, N), dtype=bool)
    for c in range(C):
        n_rows, n_areas = rows_u[c].shape
        U[c, :n_rows, :n_areas] = rows_u[c]
        Z[c, :n_rows, :n_areas] = rows_z[c]
        Wt[c, :n_rows] = rows_w[c]
        pop[c, :n_areas] = pops[c]
        valid[c, :n_areas] = True
    return Table(U, Z, Wt, pop, valid)


SAMPLES_TAG = 0x3C  # Monte Carlo counts of replicate r: numpy's default_rng([seed, SAMPLES_TAG, r])


def sample_rngs(seed: int, replicates: int) -> list[np.random.Generator]:
    """The generators of the Monte Carlo count tables, one per replicate (reduced classes and joint
    types alike)."""
    return [np.random.default_rng([seed, SAMPLES_TAG, r]) for r in range(replicates)]


def count_rows(
    caps: list[int],
    P: int,
    drawn: int,
    mean_field: bool,
    samples: Optional[int] = None,
    rng: Optional[np.random.Generator] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The rows (count vectors u, their weights) of an expectation over the unmasked counts of
    groups of sizes `caps` among the P - 1 patches other than the query, `drawn` of them unmasked:
    every vector with its hypergeometric probability, the means (P - |M|) caps / (P - 1) with weight
    1 ("mean_field"), or `samples` vectors drawn by `rng` with weight 1/samples (Monte Carlo)."""
    if mean_field:
        return np.array([[drawn * c / (P - 1) for c in caps]]), np.ones(1)
    if samples is not None:
        return rng.multivariate_hypergeometric(caps, drawn, size=samples).astype(float), np.full(
            samples, 1 / samples
        )
    u = count_vectors(caps, drawn).astype(float)
    return u, np.exp(hypergeometric_log_weights(caps, u, P, drawn))


def hypergeometric_log_weights(caps: list[int], u: np.ndarray, P: int, drawn: int) -> np.ndarray:
    """log P(u) of count vectors u (rows) when `drawn` of the P - 1 patches other than the query are
    unmasked and caps[j] of them belong to group j: prod_j C(caps_j, u_j) / C(P - 1, drawn)
    (multivariate hypergeometric)."""
    return (
        sum(_log_comb(c, u[:, j]) for j, c in enumerate(caps))
        - math.lgamma(P)
        + math.lgamma(drawn + 1)
        + math.lgamma(P - drawn)
    )


def _sizes_text(sizes: list[int]) -> str:
    """Area sizes as 'size x count' (a class can have hundreds of areas)."""
    values, counts = np.unique(sizes, return_counts=True)
    return ", ".join(f"{v} x {c}" for v, c in zip(values.tolist(), counts.tolist()))


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
