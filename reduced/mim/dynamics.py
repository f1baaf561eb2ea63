"""Reduced MIM: per-query gradient descent on the FP correlations A and PP correlations B (Lemmas 5.1, 5.2).

By Lemma A.1's corollary only the rows w_p = Q^T e_p of masked queries move, and the loss splits into one
term per query, so GD on Q is P independent GDs on (A_{p,v_{k,j}}, B_{p,q}). Exchangeability (see `classes`)
leaves one state per query class: A_j and B_j per area (own area first) and B_self. The expectation over
the unmasked counts and the latents is a weighted sum (`classes.table`), the per-sample loss and its partial
derivatives come from sympy (`symbolic`). Approximations, by name: "pp_frozen" keeps B = 0 (the theory's
claim), which also decouples the clusters; "mean_field" puts the counts at their means (the proofs'
high-probability event).
"""

from __future__ import annotations

from typing import Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.mim import MIMConfig
from dynsim.mim.partition import area_of

from .. import gd
from . import classes as classes_mod
from .symbolic import derive

APPROXIMATIONS = ("pp_frozen", "mean_field")
PP_BUDGET = 50_000_000  # recorded steps x P^2 entries up to which pp_corr is expanded per patch pair (400 MB in float64)

Approximation = Union[None, str, Sequence[str]]


def approximations(approximation: Approximation) -> tuple[str, ...]:
    """Normalize None, "pp_frozen", "mean_field", "pp_frozen+mean_field" or a list of names to a tuple in
    APPROXIMATIONS order."""
    if approximation is None:
        return ()
    names = approximation.split("+") if isinstance(approximation, str) else list(approximation)
    bad = [n for n in names if n not in APPROXIMATIONS]
    if bad or not names:
        raise ValueError(f"approximation = {approximation!r} is invalid: must be None (exact), one of "
                         f"{', '.join(APPROXIMATIONS)}, or both ('pp_frozen+mean_field')")
    return tuple(n for n in APPROXIMATIONS if n in names)  # canonical order: "pp_frozen+mean_field"


def label(approx: tuple[str, ...]) -> str:
    """"exact" or the approximations joined by '+' (every output carries it)."""
    return "+".join(approx) if approx else "exact"


def check(cfg: MIMConfig, approximation: Approximation = None) -> tuple[str, ...]:
    """Validate before any work; return the normalized approximations."""
    if not isinstance(cfg, MIMConfig):
        raise TypeError(f"cfg must be a MIMConfig, got {type(cfg).__name__}")
    approx = approximations(approximation)
    if cfg.K > 1 and "pp_frozen" not in approx:
        raise ValueError(f"approximation = {approximation!r} is invalid with K = {cfg.K}: with several clusters the PP "
                         "correlations B_{p,q} differ across q within an area, which no class state holds; use "
                         "approximation='pp_frozen' (B = 0, the theory's claim) and compare it with the full level")
    if cfg.z != "const" and cfg.z[0] == "uniform":
        raise ValueError(f"MIMConfig.z = {cfg.z!r} is continuous: the reduced level takes an exact expectation and "
                         "needs a finite law ('const' or (value, probability) pairs); the full level's mode "
                         "'sampled' runs the uniform law")
    return approx


class Indices:
    """Where each patch's observables sit in the class states (numpy, static)."""

    def __init__(self, cfg: MIMConfig, cls: classes_mod.Classes):
        a = area_of(cfg.areas, cfg.P)  # (K, P)
        K, N = cfg.K, cfg.max_areas
        self.cls = np.stack([cls.of_area[k, a[k]] for k in range(K)], axis=1)  # (P, K)
        self.pos = np.stack([cls.position[k, a[k]] for k in range(K)], axis=1)  # (P, K, N), -1 where j >= N_k
        self.pp_pos = cls.position[0, a[0]][:, a[0]]  # (P, P): position of area a_0(q) in the class of p (cluster 0)
        self.sizes = np.array([[len(x) for x in cl] + [0] * (N - len(cl)) for cl in cfg.areas])  # (K, N)
        self.valid = self.pos >= 0


def pp_corr(idx: "Indices", pp_class: np.ndarray, pp_self: np.ndarray) -> np.ndarray:
    """B_{p,q} per patch pair (steps, P, P) from the class states (K = 1; B = 0 under pp_frozen): B_self on the
    diagonal, else B of the area of q in the class of p."""
    cls0 = idx.cls[:, 0]
    out = pp_class[:, cls0[:, None], idx.pp_pos]
    diag = np.arange(out.shape[1])
    out[:, diag, diag] = pp_self[:, cls0]
    return out


def expectations(der, A, B, Bs, tab):
    """Per class: E[l], E[dl/dA_j], E[dl/dB_j], E[dl/dB_self], E[Attn_j] over the table rows.

    The other view's aggregates over j not in {n, i} are W_own - T_i and R_own - r_i: a subtraction, whose absolute
    error u W_own is at most u Z, so Z and every term divided by Z keep a relative error of order u.
    """
    u, z, w, pop = tab
    s = z * A[:, None, :] + B[:, None, :]
    e = u * jnp.exp(s)
    T = e + (pop[:, None, :] - u) * jnp.exp(B)[:, None, :]
    r = (z * e) ** 2
    W_own = jnp.sum(T[..., 1:], axis=-1)
    R_own = jnp.sum(r[..., 1:], axis=-1)
    own = (A[:, None, 0], B[:, None, 0], Bs[:, None], u[..., 0], pop[:, None, 0], z[..., 0])
    loss, gA0, gB0, gBs, att0 = der.own(*own, W_own, R_own)
    ex = (lambda x: x[..., None])
    gA, gB, att = der.other(*(ex(x) for x in own), A[:, None, :], B[:, None, :], u, pop[:, None, :], z,
                            ex(W_own) - T, ex(R_own) - r)
    gA = gA.at[..., 0].set(gA0)
    gB = gB.at[..., 0].set(gB0)
    att = att.at[..., 0].set(att0)

    def mean(x):
        return jnp.einsum("cm,cm...->c...", w, jnp.broadcast_to(x, w.shape + x.shape[2:]))

    return mean(loss), mean(gA), mean(gB), mean(gBs), mean(att)


def rates(cfg: MIMConfig, pop):
    """(c, 1/C'_j): c = (|M|/P)/K = P(p in M) P(cluster k), the weight of one query's conditional loss, and the
    share of one entry in B_j, which C'_j entries of Q hold (0 where the area has no other patch)."""
    c = (cfg.masked / cfg.P) / cfg.K
    per_entry = jnp.where(pop > 0, 1.0 / jnp.where(pop > 0, pop, 1.0), 0.0)
    return c, per_entry


def gradient(approx: tuple, tab, state):
    """(E[dl/dA], E[dl/dB_j], E[dl/dB_self]) per class (Lemmas 5.1, 5.2); zero for B, B_self under "pp_frozen"."""
    A, B, Bs = state
    _, gA, gB, gBs, _ = expectations(derive(), A, B, Bs, tab)
    if "pp_frozen" in approx:
        return gA, jnp.zeros_like(B), jnp.zeros_like(Bs)
    return gA, gB, gBs


def observe(cfg: MIMConfig, tab, idx_arrays, class_weight, state) -> dict:
    """The observables GD and the flow record at one class state: fp_corr, area_attention per patch, B per class
    (pp_class, pp_self: what `pp_corr` expands, and pp_max their max |.|) and the loss."""
    A, B, Bs = state
    pop = tab[3]
    c, _ = rates(cfg, pop)
    cls_idx, pos, valid = idx_arrays
    loss, _, _, _, att = expectations(derive(), A, B, Bs, tab)
    safe = jnp.where(valid, pos, 0)
    fp = jnp.where(valid, A[cls_idx[..., None], safe], jnp.nan)
    aa = jnp.where(valid, att[cls_idx[..., None], safe], jnp.nan)
    pp_max = jnp.maximum(jnp.max(jnp.where(pop > 0, jnp.abs(B), 0.0)), jnp.max(jnp.abs(Bs)))
    return {"fp_corr": fp, "pp_class": B, "pp_self": Bs, "pp_max": pp_max, "area_attention": aa,
            "loss": c * jnp.sum(class_weight * loss)}


def initial_state(tab):
    """Q = 0: A, B (classes, max areas) and B_self (classes,) all zero."""
    n_cls, N = tab[3].shape
    zeros = jnp.zeros((n_cls, N), tab[3].dtype)
    return zeros, zeros, jnp.zeros((n_cls,), zeros.dtype)


def run(cfg: MIMConfig, approx: tuple, tab, idx_arrays, class_weight):
    """GD from Q = 0: A -= eta c E[dl/dA], B_j -= eta c E[dl/dB_j] / C'_j, B_self -= eta c E[dl/dB_self] (B, B_self
    frozen under "pp_frozen"); returns (final state, records)."""
    c, per_entry = rates(cfg, tab[3])
    step = cfg.eta * c
    state, _, rec = gd.run(lambda y: gradient(approx, tab, y), (step, step, step),
                           lambda y: observe(cfg, tab, idx_arrays, class_weight, y), initial_state(tab), cfg.steps,
                           cfg.record_every, scale=(1.0, per_entry, 1.0))
    return state, rec


run_jit = jax.jit(run, static_argnums=(0, 1))


def setup(cfg: MIMConfig, approx: tuple):
    """The classes, the expectation table, the indices and their arrays of a run (GD and flow alike):
    (cls, tab, idx, table arrays (u, z, w, populations), index arrays (cls, pos, valid), class weights)."""
    cls = classes_mod.classes(cfg)
    tab = classes_mod.table(cfg, cls, mean_field="mean_field" in approx)
    idx = Indices(cfg, cls)
    dtype = jnp.dtype(cfg.dtype)
    # number of queries per class, summed over clusters and areas: the loss is their weighted sum
    class_weight = np.zeros(len(cls.sizes))
    for k in range(cfg.K):
        for n in range(cfg.areas_per_cluster[k]):
            class_weight[cls.of_area[k, n]] += idx.sizes[k, n]
    arrays = tuple(jnp.asarray(x, dtype) for x in (tab.u, tab.z, tab.w, tab.populations))
    idx_arrays = (jnp.asarray(idx.cls), jnp.asarray(idx.pos), jnp.asarray(idx.valid))
    return cls, tab, idx, arrays, idx_arrays, jnp.asarray(class_weight, dtype)
