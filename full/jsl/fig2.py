"""Figure 2 (Section 2): a ViT can fit a convolutional teacher on Gaussian patches without patch
association.

Data: patches X_j iid N(0, I_d), shape (n, D, d); labels y = sign f*(X), with the teacher a
one-hidden-layer CNN with cubic activation over the spatially localized sets S_l ("grid" partition):

    f*(X) = sum_l ( sum_{i in S_l} <w, X_i> )^3,   w a seeded unit filter shared by every set.

The paper's exact teacher (filters, widths) is in its unavailable appendix; this one filter of width
C is our choice. The learner is the positional-attention model (T) trained on (E) by
`full.jsl.realistic`.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import divergence, environment, recording
from dynsim.draws import flat
from dynsim.jsl import JSLConfig, partition
from dynsim.jsl.association import chance, patch_association
from dynsim.jsl.model import attention
from dynsim.jsl.partition import require_grid_partition
from dynsim.trajectory import Trajectory, seed_statistics

from . import realistic

DEFAULT_SEEDS = 8


def teacher_filter(cfg: JSLConfig, dtype=jnp.float64):
    """The CNN filter w of f*: a seeded random unit vector in R^d."""
    w = jax.random.normal(jax.random.fold_in(jax.random.key(cfg.seed), 0xF162), (cfg.d,), dtype)
    return w / jnp.linalg.norm(w)


def teacher(cfg: JSLConfig, X, w):
    """f*(X) = sum_l (sum_{i in S_l} <w, X_i>)^3 for X (..., D, d): a width-C conv with cubic
    activation, sum-pooled."""
    per_set = jnp.einsum("...Dd,d,lD->...l", X, w, jnp.asarray(_set_indicator(cfg), X.dtype))
    return jnp.sum(per_set**3, axis=-1)


def _set_indicator(cfg: JSLConfig) -> np.ndarray:
    """(L, D) 0/1 matrix: row l marks the patches of S_l."""
    return (partition.set_of(cfg)[None, :] == np.arange(cfg.L)[:, None]).astype(float)


def sample(key, cfg: JSLConfig, n: int, w, dtype=jnp.float64):
    """n points of Figure 2's data: X_j iid N(0, I_d), y = sign f*(X) (f* = 0 has probability 0; it
    would give +1)."""
    X = flat(jax.random.normal, key, (n, cfg.D, cfg.d), dtype)
    y = jnp.where(teacher(cfg, X, w) >= 0, 1.0, -1.0).astype(dtype)
    return X, y


def attention_scores(cfg: JSLConfig, A) -> dict:
    """Soft association scores of A (..., D, D): own-set attention mass (uniform value C/D) and the
    within/between per-entry attention ratio (1 when the attention ignores the sets, excluding the
    diagonal)."""
    S = attention(A, cfg.tau)
    within, between = (jnp.asarray(m) for m in partition.orbit_masks(cfg))
    same = jnp.asarray(partition.same_set_mask(cfg))
    own = jnp.mean(jnp.sum(jnp.where(same, S, 0.0), axis=-1), axis=-1)
    w_entry = jnp.sum(jnp.where(within, S, 0.0), axis=(-2, -1)) / within.sum()
    b_entry = jnp.sum(jnp.where(between, S, 0.0), axis=(-2, -1)) / between.sum()
    return {
        "own_set_attention": own,
        "within_between_ratio": w_entry / b_entry,
        "patch_association": patch_association(A, cfg),
    }


def _train_seeds(cfg: JSLConfig, keys, w):
    def one(key):
        k_train, k_test, k_init = jax.random.split(key, 3)
        dtype = jnp.dtype(cfg.dtype)
        train = sample(k_train, cfg, cfg.N, w, dtype)
        test = sample(k_test, cfg, cfg.n_test, w, dtype)
        params0 = realistic.initial_params(cfg, k_init, w)
        final, records = realistic.train(cfg, params0, w, train, test)
        X_test, y_test = test
        # what uniform attention computes: sign(sum_j <w, X_j>)
        linear = jnp.einsum("nDd,d->n", X_test, w)
        lin_err = jnp.mean(jnp.where(y_test * linear < 0, 1.0, 0.0))
        return params0, final, records, lin_err

    return jax.vmap(one)(keys)


_train_seeds_jit = jax.jit(_train_seeds)  # cfg a pytree: its numbers traced


@environment.guarded
def run_fig2(cfg: JSLConfig, seeds: int = DEFAULT_SEEDS):
    """Train model (T) on cfg.N Figure-2 samples per seed (vmapped), test on cfg.n_test; return
    (Trajectory, final).

    Trajectory (level "full", mode "fig2"): every recorded observable of `realistic.train` as the
    seed mean, `<name>_se` and `<name>_seeds` (steps, R). final: "A", "v", "A0", "v0" (R, ...), "w"
    (d,), the final scores per seed ("patch_association", "own_set_attention",
    "within_between_ratio", and the same at A0 under "<name>_initial"), "linear_error" (R,) the test
    error of sign(sum_j <w, X_j>), and "chance" = dynsim.jsl.association.chance(cfg),
    "uniform_own_set" = C/D.
    """
    require_grid_partition(cfg)
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 2:
        raise ValueError(
            f"seeds = {seeds!r} is invalid: must be an integer >= 2 (the standard error needs "
            f"two runs)"
        )
    dtype = jnp.dtype(cfg.dtype)
    w = teacher_filter(cfg, dtype)
    keys = jax.random.split(jax.random.fold_in(jax.random.key(cfg.seed), 0xF1C2), seeds)
    params0, params, rec, lin_err = _train_seeds_jit(cfg, keys, w)
    # the earliest seed's first non-finite step, checked after every step only per-step scalars (R,
    # steps) go into the Trajectory
    exact = divergence.take(rec)
    observables = seed_statistics({k: v for k, v in rec.items() if np.ndim(v) == 2})
    final = {
        "A": np.asarray(params["params"]["A"]),
        "v": np.asarray(params["params"]["v"]),
        "A0": np.asarray(params0["params"]["A"]),
        "v0": np.asarray(params0["params"]["v"]),
        "w": np.asarray(w),
        "linear_error": np.asarray(lin_err),
        "chance": chance(cfg),
        "uniform_own_set": cfg.C / cfg.D,
    }
    for name, value in attention_scores(cfg, jnp.asarray(final["A"])).items():
        final[name] = np.asarray(value)
    for name, value in attention_scores(cfg, jnp.asarray(final["A0"])).items():
        final[f"{name}_initial"] = np.asarray(value)
    marks = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "full",
        "fig2",
        cfg,
        replicates=seeds,
        partition_sets=partition.sets(cfg).tolist(),
        teacher="f*(X) = sum_l (sum_{i in S_l} <w, X_i>)^3, one seeded unit filter w",
        chance=chance(cfg),
        uniform_own_set=cfg.C / cfg.D,
        linear_error=float(np.mean(final["linear_error"])),
    )
    divergence.flag(
        divergence.nonfinite(
            {k: np.asarray(v).T for k, v in rec.items() if np.ndim(v) == 2}, marks
        ),
        marks,
        meta,
        "full (Figure 2)",
        cfg.eta,
        2,
        exact,
    )
    return Trajectory(marks, observables, meta), final
