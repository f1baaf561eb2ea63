"""Reduced MIM: per-query gradient descent on the FP correlations A and PP correlations B (Lemmas
5.1, 5.2).

By Lemma A.1's corollary only the rows w_p = Q^T e_p of masked queries move, and the loss splits
into one term per query, so GD on Q is P independent GDs on (A_{p,v_{k,j}}, B_{p,q}).
Exchangeability (see `classes`) leaves one state per query class: A_j and B_j per area (own area
first) and B_self. The expectation over the unmasked counts and the latents is a weighted sum
(`classes.table`), the per-sample loss and its partial derivatives come from sympy (`symbolic`).
Approximations, by name: "pp_frozen" keeps B = 0 (the theory's claim), which also decouples the
clusters; "mean_field" puts the counts at their means (the proofs' high-probability event).
"""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.mim import MIMConfig, records

from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: its numbers traced)

from .. import gd
from . import classes as classes_mod
from . import joint as joint_module
from .spec import Approximation, check_reduced, exact_joint
from .symbolic import derive

# entries (160 MB in float64) of per-patch views expanded from the per-class records, in all
PATCH_BUDGET = 20_000_000
# the same budget, under its former name (pp_corr: recorded steps x P^2 entries)
PP_BUDGET = PATCH_BUDGET
# what GD and the flow record
RECORDED = ("fp_class", "area_attention_class", "pp_class", "pp_self", "pp_max", "loss")


def validate_run_options(
    cfg: MIMConfig,
    approximation: Approximation = None,
    method: str = "gd",
    samples=None,
    replicates=None,
) -> tuple[str, ...]:
    """Validate before any work (`spec.check_reduced` and the exact
    joint-type expectation's size, `joint.check_size`); return the normalized approximations."""
    approx = check_reduced(cfg, approximation, method, samples, replicates)
    if exact_joint(cfg, approx, samples):
        joint_module.check_size(cfg)
    return approx


class Indices:
    """Where each patch's observables sit in the class states, per cluster and area (numpy, static):
    the class index (`records.class_index`: of_area, rank, area) and the class of every (p, k). O(K
    (P + N)): no per-patch-pair and no per-patch-and-area table."""

    def __init__(self, cfg: MIMConfig, cls: classes_mod.Classes):
        self.index = cls
        self.cls = records.class_of_patch(cls)  # (P, K)
        # (K, N)
        self.sizes = np.array(
            [[len(x) for x in cl] + [0] * (cfg.max_areas - len(cl)) for cl in cfg.areas]
        )


def pp_corr(idx: "Indices", pp_class: np.ndarray, pp_self: np.ndarray, patches=None) -> np.ndarray:
    """B_{p,q} (steps, P, P), or the rows of `patches` only (steps, len(patches), P), from the class
    states (K = 1; B = 0 under pp_frozen): B_self on the diagonal, else B of the area of q in the
    class of p (`records.pp_rows`)."""
    return records.pp_rows(idx.index, np.asarray(pp_class), np.asarray(pp_self), patches)


def per_patch_entries(records: int, P: int, K: int, areas: int) -> tuple[int, int]:
    """(entries of fp_corr and area_attention, entries of pp_corr) that `attach_per_patch` expands
    for `records` records: 2 records P K areas while that fits PATCH_BUDGET, then records P^2 while
    the sum fits; 0 where not."""
    used = 2 * records * P * K * areas
    used = used if used <= PATCH_BUDGET else 0
    pp = records * P * P
    return used, pp if used + pp <= PP_BUDGET else 0


def attach_per_patch(cfg: MIMConfig, idx: "Indices", observables: dict) -> str:
    """Add the per-patch views of the per-class records to `observables` while they fit PATCH_BUDGET
    entries in all: fp_corr and area_attention (steps x P x K x N each) first, then pp_corr (steps x
    P^2); return what was done."""
    steps = observables["loss"].shape[0]
    used, pp_used = per_patch_entries(steps, cfg.P, cfg.K, cfg.max_areas)
    per_patch, pp = used > 0, pp_used > 0
    # a Monte Carlo run's standard errors expand alike
    se = ("", "_se") if "loss_se" in observables else ("",)
    if per_patch:
        for name, key in records.CLASS_KEYS.items():
            for x in se:
                observables[name + x] = records.expand(idx.index, observables[key + x])
    if pp:
        for x in se:
            observables["pp_corr" + x] = pp_corr(
                idx, observables["pp_class" + x], observables["pp_self" + x]
            )
    done = [
        n
        for n, ok in (("fp_corr", per_patch), ("area_attention", per_patch), ("pp_corr", pp))
        if ok
    ]
    left = [n for n in ("fp_corr", "area_attention", "pp_corr") if n not in done]
    return (
        f"per class: {', '.join(RECORDED)}; per patch: "
        + (", ".join(done) if done else "none")
        + (
            f" ({', '.join(left)} beyond {PATCH_BUDGET:,} entries: dynsim.mim.records expands "
            f"any slice)"
            if left
            else ""
        )
    )


def class_meta(cfg: MIMConfig, cls: classes_mod.Classes) -> dict:
    """What a reduced trajectory's meta says about its classes (GD and flow alike)."""
    return {
        "classes": [list(s) for s in cls.sizes],
        "class_of_area": cls.of_area.tolist(),
        "areas": [[list(a) for a in cl] for cl in cfg.areas],
        "delta": cfg.delta,
    }


def terms(der, A, B, Bs, u, pop, z):
    """One query class and one table row, the own area first: l, dl/dA (N,), dl/dB (N,), dl/dB_self,
    Attn (N,) by `symbolic`'s chain rule. The masses are taken with every score shifted by the
    largest one that counts (m: the softmax and every partial are unchanged), so none exceeds 1 and
    no exponential overflows; a mass of count 0 is exactly 0 (its exponent is -inf), never 0 x
    inf."""
    s = z * A + B
    masked = pop - u
    m = jnp.maximum(
        jnp.maximum(
            jnp.max(jnp.where(u > 0, s, -jnp.inf)), jnp.max(jnp.where(masked > 0, B, -jnp.inf))
        ),
        Bs,
    )
    S = u * jnp.exp(jnp.where(u > 0, s - m, -jnp.inf))
    M = masked * jnp.exp(jnp.where(masked > 0, B - m, -jnp.inf))
    e_self = jnp.exp(Bs - m)
    Z = jnp.sum(S) + jnp.sum(M) + e_self
    own = jnp.arange(A.shape[-1]) == 0
    loss, dS, dR, dZ = der(S[0], jnp.sum(jnp.where(own, 0.0, (z * S) ** 2)), Z, z[0])
    g = jnp.where(own, dS, 2.0 * z**2 * S * dR) + dZ
    return loss, g * z * S, g * S + dZ * M, dZ * e_self, S / Z


def expectations(der, A, B, Bs, tab):
    """Per class: E[l], E[dl/dA_j], E[dl/dB_j], E[dl/dB_self], E[Attn_j] over the table rows
    (`terms` per row)."""
    u, z, w, pop = tab
    z = jnp.broadcast_to(z, u.shape)
    row = jax.vmap(terms, in_axes=(None, None, None, None, 0, None, 0))  # the rows of one class
    per = jax.vmap(row, in_axes=(None, 0, 0, 0, 0, 0, 0))(der, A, B, Bs, u, pop, z)

    def mean(x):
        return jnp.einsum("cm,cm...->c...", w, jnp.broadcast_to(x, w.shape + x.shape[2:]))

    return tuple(mean(x) for x in per)


def rates(cfg: MIMConfig, pop):
    """(c, 1/C'_j): c = (|M|/P)/K = P(p in M) P(cluster k), the weight of one query's conditional
    loss, and the share of one entry in B_j, which C'_j entries of Q hold (0 where the area has no
    other patch)."""
    c = (cfg.masked / cfg.P) / cfg.K
    per_entry = jnp.where(pop > 0, 1.0 / jnp.where(pop > 0, pop, 1.0), 0.0)
    return c, per_entry


def gradient(approx: tuple, tab, state):
    """(E[dl/dA], E[dl/dB_j], E[dl/dB_self]) per class (Lemmas 5.1, 5.2); zero for B, B_self under
    "pp_frozen"."""
    A, B, Bs = state
    _, gA, gB, gBs, _ = expectations(derive(), A, B, Bs, tab)
    if "pp_frozen" in approx:
        return gA, jnp.zeros_like(B), jnp.zeros_like(Bs)
    return gA, gB, gBs


def observe(cfg: MIMConfig, tab, valid, class_weight, state) -> dict:
    """The observables GD and the flow record at one class state, all per class (`RECORDED`): A
    (fp_class) and the expected unmasked-area attention (area_attention_class) per class and area in
    class order, NaN where a class has fewer areas; B (pp_class), B_self (pp_self), their max |.|
    (pp_max) and the loss."""
    A, B, Bs = state
    pop = tab[3]
    c, _ = rates(cfg, pop)
    loss, _, _, _, att = expectations(derive(), A, B, Bs, tab)
    pp_max = joint_module.pp_max_of(pop, state)
    return {
        "fp_class": jnp.where(valid, A, jnp.nan),
        "area_attention_class": jnp.where(valid, att, jnp.nan),
        "pp_class": B,
        "pp_self": Bs,
        "pp_max": pp_max,
        "loss": c * jnp.sum(class_weight * loss),
    }


def initial_state(tab):
    """Q = 0: A, B (classes, max areas) and B_self (classes,) all zero."""
    n_cls, N = tab[3].shape
    zeros = jnp.zeros((n_cls, N), tab[3].dtype)
    return zeros, zeros, jnp.zeros((n_cls,), zeros.dtype)


STATE = ("A", "B", "B_self")  # the names of a state's first entries in Trajectory.final


def final_state(state) -> dict[str, np.ndarray]:
    """Trajectory.final of a reduced run: its last A, B, B_self (per class, per query and joint
    type, or per joint cell; a leading replicate axis with samples); further entries left out."""
    return {name: np.asarray(x) for name, x in zip(STATE, state)}


def run(
    cfg: MIMConfig,
    approx: tuple,
    tab,
    valid,
    class_weight,
    every_step: bool = False,
    first: bool = False,
):
    """GD from Q = 0: A -= eta c E[dl/dA], B_j -= eta c E[dl/dB_j] / C'_j, B_self -= eta c
    E[dl/dB_self] (B, B_self frozen under "pp_frozen"); `every_step`: also max |B| after every step
    (pp_cluster_max_steps, one cluster: `gd.step_series`); `first`: recorded at step 1 too
    (`dynsim.recording.with_first_step`). Returns (final state, records)."""
    c, per_entry = rates(cfg, tab[3])
    step = cfg.eta * c
    pop = tab[3]
    per_step = (
        (lambda y: {"pp_cluster_max_steps": joint_module.pp_max_of(pop, y)[None]})
        if every_step
        else None
    )
    state, _, rec = gd.run(
        lambda y: gradient(approx, tab, y),
        (step, step, step),
        lambda y: observe(cfg, tab, valid, class_weight, y),
        initial_state(tab),
        cfg.steps,
        cfg.record_every,
        scale=(1.0, per_entry, 1.0),
        nonfinite=True,
        every_step=per_step,
        first=first,
    )
    return state, rec


run_jit = jax.jit(run, static_argnums=(1, 5, 6))  # cfg a pytree: its numbers (eta) traced
# R Monte Carlo tables at once: u, z, w with a leading replicate axis, the populations shared
run_replicates_jit = jax.jit(
    lambda cfg, approx, tab, valid, class_weight: jax.vmap(
        lambda u, z, w: run(cfg, approx, (u, z, w, tab[3]), valid, class_weight)
    )(*tab[:3]),
    static_argnums=1,
)


def setup(cfg: MIMConfig, approx: tuple, samples: Optional[int] = None, replicates: int = 1):
    """The classes, the expectation table, the indices and the arrays of a run (GD and flow alike):
    (cls, tab, idx, table arrays (u, z, w, populations), valid (classes, N), class weights). With
    `samples`, u, z and w carry a leading axis of `replicates` Monte Carlo tables
    (`classes.sample_rngs`)."""
    cls = classes_mod.classes(cfg)
    if samples is None:
        tab = classes_mod.table(cfg, cls, mean_field="mean_field" in approx)
    else:
        draws = [
            classes_mod.table(cfg, cls, False, samples, rng)
            for rng in classes_mod.sample_rngs(cfg.seed, replicates)
        ]
        tab = classes_mod.Table(
            *(np.stack([getattr(d, f) for d in draws]) for f in ("u", "z", "w")),
            draws[0].populations,
            draws[0].valid,
        )
    idx = Indices(cfg, cls)
    dtype = jnp.dtype(cfg.dtype)
    # number of queries per class, summed over clusters and areas: the loss is their weighted sum
    class_weight = np.zeros(len(cls.sizes))
    for k in range(cfg.K):
        np.add.at(
            class_weight,
            cls.of_area[k, : cfg.areas_per_cluster[k]],
            idx.sizes[k, : cfg.areas_per_cluster[k]],
        )
    arrays = tuple(jnp.asarray(x, dtype) for x in (tab.u, tab.z, tab.w, tab.populations))
    return cls, tab, idx, arrays, jnp.asarray(tab.valid), jnp.asarray(class_weight, dtype)
