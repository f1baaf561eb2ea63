"""The realistic problem (E): full-batch GD on N fixed samples from the random start of
Parametrization 3.1 (realistic case).

Key layout of `run` (bit-for-bit reproducible from cfg.seed alone):

    w*            = dynsim.jsl.data.feature(cfg)                        (shared by every seed)
    k_r           = fold_in(fold_in(key(cfg.seed), SEED_TAG), r)        for seed r = 0 .. R-1
    data          = data.sample(fold_in(k_r, 0), cfg, cfg.N + cfg.n_test, w*)  (iid rows, one draw
      compiles once)
    training set  = its first cfg.N rows, test set = its last cfg.n_test rows
    A0, v0        = initial_params(cfg, fold_in(k_r, 2), w*)

k_r depends on r only, not on R: the first seeds of a run with more seeds are the same runs.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.flatten_util import ravel_pytree

from dynsim import divergence, environment, recording
from dynsim.draws import flat
from dynsim.jsl import JSLConfig, data, error, partition
from dynsim.jsl.model import logistic_loss
from .spec import DEFAULT_SEEDS, check_seeds
from dynsim.trajectory import Trajectory, seed_statistics

from .. import engine
from . import sampling
from .observables import reduction
from .training import model_for, optimizer

# fold_in tag of the realistic runs' key stream (other streams: 0x5EED w*, 1 sampled mode, ...)
SEED_TAG = 0x4EA1
# above this much data for all seeds at once, the seeds run in batches with lax.map
MAX_VMAP_BYTES = 1.5e9


def initial_params(cfg: JSLConfig, key, w_star) -> dict:
    """Parametrization 3.1, realistic case: A_ii = sigma_A, A_ij ~ N(0, omega^2) (i != j), v ~ N(0,
    omega^2 I_d).

    w_star is unused (accepted for symmetry with the idealized start, which puts v on w*).
    """
    del w_star
    dtype = jnp.dtype(cfg.dtype)
    k_A, k_v = jax.random.split(key)
    off = cfg.omega * flat(jax.random.normal, k_A, (cfg.D, cfg.D), dtype)
    A = jnp.where(jnp.eye(cfg.D, dtype=bool), jnp.asarray(cfg.sigma_A, dtype), off)
    v = cfg.omega * jax.random.normal(k_v, (cfg.d,), dtype)
    return {"params": {"A": A, "v": v}}


def empirical_loss(model, params, X, y):
    """Problem (E): (1/N) sum_n log(1 + exp(-y_n F(X_n)))."""
    return jnp.mean(logistic_loss(y * model.apply(params, X)))


def empirical_grad(model, params, X, y) -> dict:
    """The gradient of `empirical_loss` in (A, v) (the chain rule of jax.grad, contracted in another
    order).

    F reads X only through proj = X v (n, D). The gradient in (A, proj) is autodiff's; the
    v-gradient sum_nj G_nj X_nj (G = dL/dproj) is contracted as one row vector per sample (einsum
    "nj,njd->nd") and then summed over the samples. XLA:CPU streams X through that batched product
    faster than through autodiff's contraction over (n, j) at once (a transposed matrix-vector
    product of the (n D, d) matrix X), and no slower at any size measured down to D = d = 16
    (benchmarks/full_large.py; docs/benchmarks.md §l). X is still read twice a step: the v-gradient
    of a sample needs its F, so a single pass goes sample by sample, which XLA:CPU runs slower than
    the two passes (each sliced chunk of a loop over samples is copied before its product, and the
    loop body runs on one thread).
    """
    return empirical_value_and_grad(model, params, X, y)[1]


def empirical_value_and_grad(model, params, X, y, Xt=None):
    """(`empirical_loss`, `empirical_grad`) from one forward pass: the loss at params comes free.

    Xt: X as a (d, n D) matrix (`transposed`), read by the v-gradient instead of X: the contraction
    sum_nj G_nj X_nj is then a row-major matrix-vector product Xt @ vec(G), which XLA:CPU streams
    as fast as the forward X v (the same sums in another order: equal to rounding).
    """
    A, v = params["params"]["A"], params["params"]["v"]
    loss, (gA, G) = jax.value_and_grad(
        lambda A, proj: sampling.projections_loss(model, A, y, proj), argnums=(0, 1)
    )(A, X @ v)
    gv = jnp.einsum("nj,njd->nd", G, X).sum(axis=0) if Xt is None else Xt @ G.reshape(-1)
    return loss, {"params": {"A": gA, "v": gv}}


def transposed(X):
    """X (n, D, d) as the (d, n D) matrix `empirical_value_and_grad` reads (XLA keeps it as its own
    buffer when a loop reads it: twice X's memory)."""
    return X.reshape(-1, X.shape[-1]).T


SHARPNESS_ITERATIONS = 30  # Lanczos steps of `sharpness`


def sharpness(model, params, X, y, iterations: int = SHARPNESS_ITERATIONS):
    """lambda_max, the most positive eigenvalue of the Hessian of `empirical_loss` in what GD moves
    (v and the off-diagonal of A).

    Lanczos with full reorthogonalization on Hessian-vector products (forward-over-reverse) from a
    fixed pseudo-random start; returns the largest Ritz value, a lower bound on lambda_max that
    converges to it quickly (Kaniel-Paige). Not power iteration: that finds the eigenvalue of
    largest magnitude, which after a fast drop of the loss can be a negative one. GD at step eta
    is linearly stable where eta lambda_max < 2, so eta times this is the realistic runs'
    stability premise.
    """
    A0, v0 = params["params"]["A"], params["params"]["v"]
    off = 1.0 - jnp.eye(A0.shape[0], dtype=A0.dtype)
    x0, unravel = ravel_pytree((A0, v0))
    mask = ravel_pytree((off, jnp.ones_like(v0)))[0]
    D, d = A0.shape[0], v0.shape[0]
    k = min(iterations, D * (D - 1) + d)  # at most the dimension GD moves in

    def grad(z):
        A, v = unravel(z)
        g = empirical_grad(model, {"params": {"A": A, "v": v}}, X, y)["params"]
        return ravel_pytree((g["A"], g["v"]))[0] * mask

    def hvp(u):
        return jax.jvp(grad, (x0,), (u,))[1]

    def lanczos(j, c):
        Q, a, b, q, prev = c
        Q = Q.at[j].set(q)
        w = hvp(q)
        a_j = jnp.vdot(q, w)
        w = w - a_j * q - b[j - 1] * prev  # at j = 0: prev = 0 (and b[-1] is still 0)
        for _ in range(2):  # full reorthogonalization against every Lanczos vector so far
            w = w - Q.T @ (Q @ w)
        b_j = jnp.linalg.norm(w)
        nxt = jnp.where(b_j > 0, w / jnp.where(b_j > 0, b_j, 1.0), 0.0)
        return Q, a.at[j].set(a_j), b.at[j].set(b_j), nxt, q

    q = jax.random.normal(jax.random.key(0x5A4B), x0.shape, x0.dtype) * mask
    zeros = jnp.zeros(k, x0.dtype)
    Q = jnp.zeros((k,) + x0.shape, x0.dtype)
    q = q / jnp.linalg.norm(q)
    _, a, b, _, _ = jax.lax.fori_loop(0, k, lanczos, (Q, zeros, zeros, q, q * 0))
    T = jnp.diag(a) + jnp.diag(b[:-1], 1) + jnp.diag(b[:-1], -1)
    return jnp.linalg.eigvalsh(T)[-1]


# 0-1 error of sign F from the margins yF, ties 1/2, NaN if a margin is NaN
zero_one_error = error.margin_error


def train(cfg: JSLConfig, params0, w_star, train, test, with_sharpness: bool = False):
    """Full-batch GD on (E) over train = (X (n, D, d), y (n,)) from params0, diagonal of A frozen;
    traceable (cfg static).

    Records every observable of `observables.reduction` plus loss (training (E)), test_loss and
    test_error (0-1 error of sign F on test = (X_test, y_test), F = 0 counted 1/2), and the exact
    divergence step (`divergence.NONFINITE`, for `divergence.take`); with_sharpness: also
    "sharpness" (`sharpness`) and `engine.LOSS_RISE` (the largest relative rise of the training loss
    over one step so far), and the v-gradient reads X `transposed` (the claims' runs: twice X's
    memory, a faster step). Returns (final params, records).
    """
    model, opt = model_for(cfg), optimizer(cfg)
    X, y = train
    X_test, y_test = test

    def observe(params, t):
        obs = reduction(cfg, params["params"]["A"], params["params"]["v"], w_star)
        obs["loss"] = empirical_loss(model, params, X, y)
        margins = y_test * model.apply(params, X_test)
        obs["test_loss"] = jnp.mean(logistic_loss(margins))
        obs["test_error"] = zero_one_error(margins)
        if with_sharpness:
            obs["sharpness"] = sharpness(model, params, X, y)
        return obs

    if with_sharpness:  # the claims' runs: also X transposed once for the v-gradient
        Xt = transposed(X)
        return engine.train(
            lambda params: empirical_value_and_grad(model, params, X, y, Xt),
            opt,
            params0,
            observe,
            cfg.steps,
            cfg.record_every,
            nonfinite=True,
            descent=True,
        )
    return engine.train(
        lambda params: empirical_grad(model, params, X, y),
        opt,
        params0,
        observe,
        cfg.steps,
        cfg.record_every,
        nonfinite=True,
    )


def seed_key(cfg: JSLConfig, r: int):
    """k_r of seed r (module docstring)."""
    return jax.random.fold_in(jax.random.fold_in(jax.random.key(cfg.seed), SEED_TAG), r)


def datasets(cfg: JSLConfig, key, w_star):
    """Training set (first cfg.N) and test set (last cfg.n_test) of N + n_test iid points drawn from
    fold_in(k_r, 0)."""
    X, y = data.sample(
        jax.random.fold_in(key, 0), cfg, cfg.N + cfg.n_test, w_star, jnp.dtype(cfg.dtype)
    )
    return (X[: cfg.N], y[: cfg.N]), (X[cfg.N :], y[cfg.N :])


def one_seed(cfg: JSLConfig, key, w_star):
    """Sample the training and test sets and the start from k_r, then `train`: returns (params0,
    final params, records)."""
    train_set, test_set = datasets(cfg, key, w_star)
    params0 = initial_params(cfg, jax.random.fold_in(key, 2), w_star)
    params, records = train(cfg, params0, w_star, train_set, test_set)
    return params0, params, records


def data_bytes(cfg: JSLConfig, seeds: int) -> int:
    """Bytes of the training and test sets of all seeds together: seeds (N + n_test) D d
    itemsize."""
    return seeds * (cfg.N + cfg.n_test) * cfg.D * cfg.d * jnp.dtype(cfg.dtype).itemsize


def batch_size(cfg: JSLConfig, seeds: int) -> int:
    """Seeds run side by side (vmap): all of them unless their data would exceed MAX_VMAP_BYTES."""
    per_seed = data_bytes(cfg, 1)
    return max(1, min(seeds, int(MAX_VMAP_BYTES // per_seed)))


def _seeds(cfg: JSLConfig, keys, w_star, batch: int):
    def f(k):
        return one_seed(cfg, k, w_star)

    if batch >= keys.shape[0]:
        return jax.vmap(f)(keys)
    return jax.lax.map(f, keys, batch_size=batch)


_seeds_jit = jax.jit(_seeds, static_argnums=3)  # cfg a pytree: its numbers traced


@environment.guarded
def run(cfg: JSLConfig, seeds: int = DEFAULT_SEEDS):
    """`seeds` independent realistic runs (E) as one jit program (vmap, or lax.map over batches when
    the data is large).

    Returns (Trajectory, final). Trajectory (level "full", mode "realistic"): each recorded scalar
    as the seed mean, `<name>_se` = std(ddof=1)/sqrt(R) when R >= 2, and `<name>_seeds` (steps, R).
    final: numpy "A", "v" (final), "A0", "v0" (start), each with a leading seed axis, and "w_star"
    (d,).
    """
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    R = check_seeds(seeds)
    dtype = jnp.dtype(cfg.dtype)
    w_star = data.feature(cfg, dtype)
    keys = jax.vmap(lambda r: seed_key(cfg, r))(jnp.arange(R))
    batch = batch_size(cfg, R)
    params0, params, rec = _seeds_jit(cfg, keys, w_star, batch)
    # the earliest seed's first non-finite step, checked after every step
    exact = divergence.take(rec)
    observables = seed_statistics(rec)
    marks = recording.recorded_steps(cfg.steps, cfg.record_every)
    # rec: (seeds, steps)
    bad = divergence.nonfinite({k: np.asarray(v).T for k, v in rec.items()}, marks)
    A0, v0 = np.asarray(params0["params"]["A"]), np.asarray(params0["params"]["v"])
    w = np.asarray(w_star)
    within, between = partition.orbit_masks(cfg)
    meta = environment.meta(
        "full",
        "realistic",
        cfg,
        seeds=R,
        N=cfg.N,
        n_test=cfg.n_test,
        initial_projection={
            "alpha": (v0 @ w).tolist(),
            "gamma": A0[:, within].mean(axis=1).tolist(),
            "rho": A0[:, between].mean(axis=1).tolist(),
        },
        batch_size=cfg.N,
        replicates=R,
        partition_sets=partition.sets(cfg).tolist(),
        seed_execution="vmap"
        if batch >= R
        else f"lax.map in batches of {batch} seeds (data of all seeds "
        f"{data_bytes(cfg, R) / 1e9:.2f} GB > {MAX_VMAP_BYTES / 1e9:.1f} GB)",
        key_layout="k_r = fold_in(fold_in(key(seed), 0x4EA1), r); data fold_in(k_r, 0) (first "
        "N rows train, last n_test test), init fold_in(k_r, 2)",
    )
    divergence.flag(bad, marks, meta, "realistic", cfg.eta, 2, exact)
    final = {
        "A": np.asarray(params["params"]["A"]),
        "v": np.asarray(params["params"]["v"]),
        "A0": A0,
        "v0": v0,
        "w_star": w,
    }
    return Trajectory(marks, observables, meta), final
