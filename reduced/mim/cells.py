"""Reduced MIM with several clusters, B free and the counts at their means: one state per joint
cell.

`joint` keeps one state per query p (A per cluster and area, B per joint type of the key, B_self).
Two queries p, p' of one joint cell (the same area in every cluster,
`dynsim.mim.records.cell_index`) see the same key populations by joint type: each has the C_g - 1
other patches of its own cell and every other cell whole. With the counts at their means
(P - |M|) C'_tau / (P - 1) the expectation depends on those populations only, so p and p' follow
one trajectory from Q = 0, exactly. This module runs that trajectory once per cell: the joint types
are the cells themselves (a query's own cell holds C_g - 1 keys, possibly 0, which then carries no
mass and no gradient), so every cell shares one table of key areas and the state is A (G, K, N),
B (G, G) and B_self (G,). The per-sample terms are `joint.sample_terms`', in matrix form over the
cells (`cluster_terms`); GD moves them by the same steps as `joint.run`.

B sums one term per cluster (spec §6, eq. 5.1): B_k, the part of B that cluster k's gradient moved,
runs beside B (it does not feed back) so that Lemma 5.3's projected PP correlations can be read.

Records: `fp_cell`, `area_attention_cell` (steps, G, K, N), `pp_max`, `pp_cluster_max` (steps, K:
max |B_k|) and the loss; the per-patch
views `fp_corr`, `area_attention` and `pp_corr` are attached where they fit a budget of entries
(then also `pp_cell` (steps, G, G) and `pp_self_cell` (steps, G)).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.mim import MIMConfig, records
from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: its numbers traced)

from .. import gd
from .joint import latents, rates
from .symbolic import derive


def tables(cfg: MIMConfig):
    """(u, w, C', key areas, own areas, latents, their weights, valid) of the cells under mean
    field: u (G, 1, G), w (G, 1), C' (G, G), key areas (G, K) shared by every cell, own areas
    (G, K)."""
    index = records.cell_index(cfg)
    G = index.size.size
    pop = index.size[None, :] - np.eye(G, dtype=np.int64)
    u = (cfg.P - cfg.masked) * pop[:, None, :] / (cfg.P - 1)
    Zv, Wz = latents(cfg)
    valid = np.arange(cfg.max_areas)[None, :] < np.array(cfg.areas_per_cluster)[:, None]
    dtype = jnp.dtype(cfg.dtype)
    return (
        jnp.asarray(u, dtype),
        jnp.ones((G, 1), dtype),
        jnp.asarray(pop, dtype),
        jnp.asarray(index.labels),
        jnp.asarray(index.labels),
        jnp.asarray(Zv, dtype),
        jnp.asarray(Wz, dtype),
        jnp.asarray(valid),
    )


def cluster_terms(der, A_k, B, Bs, u, pop, area_k, own_k, z, valid_k):
    """Every cell at once, one cluster and one latent vector z (N,): `joint.sample_terms` in matrix
    form, the keys' areas shared by every cell. Returns the loss (G,), dl/dA_k (G, N), dl/dB (G, T),
    dl/dB_self (G,), Attn (G, N)."""
    N = A_k.shape[1]
    onehot = jax.nn.one_hot(area_k, N, dtype=A_k.dtype)  # (T, N): the area of each key type
    held = pop > 0  # an empty type (a cell of one patch, as its own query's key type): no key
    s = jnp.where(held, jnp.take(z * A_k, area_k, axis=1), 0.0) + B  # (G, T): unmasked key's score
    masked = pop - u
    m = jnp.maximum(
        jnp.maximum(
            jnp.max(jnp.where(u > 0, s, -jnp.inf), axis=1),
            jnp.max(jnp.where(masked > 0, B, -jnp.inf), axis=1),
        ),
        Bs,
    )
    unmasked = u * jnp.exp(jnp.where(u > 0, s - m[:, None], -jnp.inf))
    M = masked * jnp.exp(jnp.where(masked > 0, B - m[:, None], -jnp.inf))
    e_self = jnp.exp(Bs - m)
    S = unmasked @ onehot  # (G, N): mass of the unmasked keys per area
    Z = jnp.sum(S, axis=1) + jnp.sum(M, axis=1) + e_self
    is_own = jnp.arange(N)[None, :] == own_k[:, None]
    Sn, zn = jnp.take_along_axis(S, own_k[:, None], axis=1)[:, 0], z[own_k]
    Rv = jnp.sum(jnp.where(is_own | ~valid_k[None, :], 0.0, (z * S) ** 2), axis=1)
    loss, dSn, dR, dZ = der(Sn, Rv, Z, zn)
    g = jnp.where(is_own, dSn[:, None], 2.0 * z**2 * S * dR[:, None])
    gA = (g + dZ[:, None]) * z * S
    gB = (jnp.where(held, jnp.take(g, area_k, axis=1), 0.0) + dZ[:, None]) * unmasked + dZ[
        :, None
    ] * M
    return loss, gA, gB, dZ * e_self, S / Z[:, None]


def expectations(tab, state):
    """Every cell: E[l_k] (G, K), E[dl/dA] (G, K, N), sum_k E[dl/dB] (G, G), sum_k E[dl/dB_self]
    (G,), E[Attn] (G, K, N), and each cluster's E[dl/dB] (K, G, G) and E[dl/dB_self] (K, G); the
    counts at their means (one row), the latents enumerated."""
    der = derive()
    u, _, pop, area, own, z, wz, valid = tab
    A, B, Bs = state[:3]

    def cluster(total, args):  # a scan, not a vmap: a batched key-area index makes a slow gather
        A_k, area_k, own_k, z_k, wz_k, valid_k = args
        per = jax.vmap(
            lambda zz: cluster_terms(der, A_k, B, Bs, u[:, 0], pop, area_k, own_k, zz, valid_k)
        )(z_k)
        loss, gA, gB, gBs, att = jax.tree.map(lambda x: jnp.einsum("v,v...->...", wz_k, x), per)
        return (total[0] + gB, total[1] + gBs), (loss, gA, att, gB, gBs)  # dl/dB: a sum over k

    (gB, gBs), (loss, gA, att, gBk, gBsk) = jax.lax.scan(
        cluster,
        (jnp.zeros_like(B), jnp.zeros_like(Bs)),
        (jnp.moveaxis(A, 1, 0), area.T, own.T, z, wz, valid),
    )
    return loss.T, jnp.moveaxis(gA, 0, 1), gB, gBs, jnp.moveaxis(att, 0, 1), gBk, gBsk


def projected_max(state):
    """max_{p,q} |B_{k,p,q}| per cluster k (K,), the self terms included: the PP correlation's
    projection on cluster k (spec §6, eq. 5.1), the share of B that cluster k's gradient moved."""
    Bk, Bsk = state[3:]
    return jnp.maximum(jnp.max(jnp.abs(Bk), axis=(1, 2)), jnp.max(jnp.abs(Bsk), axis=1))


def pp_recorded(cfg: MIMConfig, records_count: int, budget: int) -> bool:
    """Whether pp_corr (records x P^2) fits `budget` beside fp_corr and area_attention per patch."""
    per_patch = 2 * records_count * cfg.P * cfg.K * cfg.max_areas
    return per_patch + records_count * cfg.P**2 <= budget


def observe(cfg: MIMConfig, tab, sizes, with_pp: bool, state) -> dict:
    """fp_cell, area_attention_cell (G, K, N; NaN where cluster k has no area j), pp_max, its
    projection per cluster pp_cluster_max (K,), the loss (each cell's queries counted) and,
    `with_pp`, pp_cell and pp_self_cell."""
    A, B, Bs = state[:3]
    loss, _, _, _, att, _, _ = expectations(tab, state)
    valid = tab[-1]
    c, _ = rates(cfg, tab[2])
    out = {
        "fp_cell": jnp.where(valid[None], A, jnp.nan),
        "area_attention_cell": jnp.where(valid[None], att, jnp.nan),
        "pp_max": jnp.maximum(jnp.max(jnp.abs(B)), jnp.max(jnp.abs(Bs))),
        "pp_cluster_max": projected_max(state),
        "loss": c * jnp.sum(sizes[:, None] * loss),
    }
    if with_pp:
        out.update(pp_cell=B, pp_self_cell=Bs)
    return out


def run(cfg: MIMConfig, tab, sizes, with_pp: bool, every_step: bool = False, first: bool = False):
    """GD from Q = 0 in one lax.scan (`reduced.gd`), the steps of `joint.run`, each cluster's share
    of B and B_self (B_k, B_self_k) moved beside them by its own gradient; `every_step`: also
    pp_cluster_max after every step (pp_cluster_max_steps, `gd.step_series`); `first`: recorded at
    step 1 too (`dynsim.recording.with_first_step`). Returns (final state (A, B, B_self, B_k,
    B_self_k), records)."""
    pop = tab[2]
    c, per_entry = rates(cfg, pop)
    step = cfg.eta * c
    G, K = pop.shape[0], cfg.K
    dtype = pop.dtype
    y0 = (
        jnp.zeros((G, K, cfg.max_areas), dtype),
        jnp.zeros((G, G), dtype),
        jnp.zeros((G,), dtype),
        jnp.zeros((K, G, G), dtype),
        jnp.zeros((K, G), dtype),
    )

    def grad(y):
        _, gA, gB, gBs, _, gBk, gBsk = expectations(tab, y)
        return gA, gB, gBs, gBk, gBsk

    steps = (step,) * 5
    per_step = (lambda y: {"pp_cluster_max_steps": projected_max(y)}) if every_step else None
    state, _, rec = gd.run(
        grad,
        steps,
        lambda y: observe(cfg, tab, sizes, with_pp, y),
        y0,
        cfg.steps,
        cfg.record_every,
        scale=(1.0, per_entry, 1.0, per_entry, 1.0),
        nonfinite=True,
        every_step=per_step,
        first=first,
    )
    return state, rec


run_jit = jax.jit(run, static_argnums=(3, 4, 5))  # cfg a pytree: its numbers (eta) traced


def attach_per_patch(cfg: MIMConfig, observables: dict, budget: int) -> str:
    """Add fp_corr, area_attention (steps, P, K, N) and pp_corr (steps, P, P) from the cell records
    where they fit `budget` entries in all; return what was done."""
    index = records.cell_index(cfg)
    n = observables["loss"].shape[0]
    per_patch = 2 * n * cfg.P * cfg.K * cfg.max_areas <= budget
    if per_patch:
        for name, key in records.CELL_KEYS.items():
            observables[name] = observables[key][:, index.cell]
    pp = "pp_cell" in observables
    if pp:
        cell = index.cell
        out = observables["pp_cell"][:, cell[:, None], cell[None, :]]
        diag = np.arange(cfg.P)
        out[:, diag, diag] = observables["pp_self_cell"][:, cell]
        observables["pp_corr"] = out
    done = [
        x
        for x, ok in (("fp_corr", per_patch), ("area_attention", per_patch), ("pp_corr", pp))
        if ok
    ]
    return (
        f"per joint cell ({index.size.size} cells: the queries of a cell share their "
        "trajectory): fp_cell, area_attention_cell, pp_max, loss"
        + ("; pp_cell, pp_self_cell" if pp else "")
        + "; per patch: "
        + (", ".join(done) if done else f"none (beyond {budget:,} entries)")
    )
