"""Query classes and the exact expectation tables of the reduced MIM dynamics.

Exchangeability (mim-model-spec §10b): the mask law is exchangeable within each area and Q starts at 0, so for
a masked query p in area n the state depends only on the area sizes, and queries whose own area has the same
size and whose other areas have the same sizes share one trajectory. A class is the signature (own size, sorted
sizes of the other areas); its state is one A and one B per area (own first, then the others by size) and
B_self. Areas of equal size other than the own one are exchangeable too, so they carry equal values.
Conditional on p in M the unmasked counts u_j of the C'_j = |P_{k,j}| - 1{j = n} other patches of each area are
multivariate hypergeometric (P - 1 patches, P - |M| unmasked drawn); the latents are i.i.d. per area.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from dynsim.mim import data

MAX_CONFIGURATIONS = 2_000_000  # (class, counts, latents) rows of the exact expectation


class Classes(NamedTuple):
    """The query classes of a config and, per cluster and area, which class and which position holds each area."""

    sizes: list  # per class: the area sizes in class order (own first)
    of_area: np.ndarray  # (K, max N): class of the queries of area (k, n); -1 where the area does not exist
    position: np.ndarray  # (K, max N, max N): position[k, n, j] = where area j sits in the class order of (k, n)


def classes(cfg) -> Classes:
    """Group the areas (k, n) of every cluster into query classes by signature (own size, sorted other sizes)."""
    K, N = cfg.K, cfg.max_areas
    of_area = -np.ones((K, N), dtype=np.int64)
    position = -np.ones((K, N, N), dtype=np.int64)
    signatures: dict = {}
    sizes: list = []
    for k, cluster in enumerate(cfg.areas):
        lengths = [len(a) for a in cluster]
        for n in range(len(cluster)):
            others = sorted((lengths[j], j) for j in range(len(cluster)) if j != n)
            order = [n] + [j for _, j in others]
            sig = (lengths[n], tuple(s for s, _ in others))
            if sig not in signatures:
                signatures[sig] = len(sizes)
                sizes.append([lengths[j] for j in order])
            of_area[k, n] = signatures[sig]
            position[k, n, order] = np.arange(len(order))
    return Classes(sizes, of_area, position)


class Table(NamedTuple):
    """Per class c, rows r of the expectation: counts u, latents z, weights w; populations C' per class."""

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
        partial = np.concatenate([partial[rows], np.tile(vals, partial.shape[0])[keep][:, None]], axis=1)
        sums = new_sums[keep]
    return partial


def count_size(caps: list[int], total: int) -> int:
    """How many vectors `count_vectors` would return (dynamic programming, nothing enumerated)."""
    ways = np.zeros(total + 1, dtype=object)
    ways[0] = 1
    for cap in caps:
        new = np.zeros_like(ways)
        for s in range(total + 1):
            if ways[s]:
                for v in range(min(cap, total - s) + 1):
                    new[s + v] += ways[s]
        ways = new
    return int(ways[total])


def table(cfg, cls: Classes, mean_field: bool) -> Table:
    """The expectation over (counts, latents) for every class: exact enumeration, or counts at their means."""
    P, drawn = cfg.P, cfg.P - cfg.masked
    N = cfg.max_areas
    values, _ = data.z_law(cfg)
    rows_u, rows_z, rows_w, pops = [], [], [], []
    total = 0
    for sizes in cls.sizes:
        caps = [sizes[0] - 1] + list(sizes[1:])
        n_u = 1 if mean_field else count_size(caps, drawn)
        total += n_u * values.size ** len(sizes)
        if total > MAX_CONFIGURATIONS:
            raise ValueError(f"the exact reduced expectation needs more than {MAX_CONFIGURATIONS:,} (counts, latents) "
                             f"rows (P = {P}, areas {sizes}, {values.size} latent value(s) per area): use "
                             "approximation='mean_field' (counts at their means), a smaller P or z = 'const'")
        if mean_field:
            u = np.array([[drawn * c / (P - 1) for c in caps]])
            pu = np.ones(1)
        else:
            u = count_vectors(caps, drawn).astype(float)
            log_p = sum(_log_comb(c, u[:, j]) for j, c in enumerate(caps)) - math.lgamma(P) + math.lgamma(drawn + 1) \
                + math.lgamma(P - drawn)
            pu = np.exp(log_p)
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


def _log_comb(n: int, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln

    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
