"""Realistic runs (E) for the claims: `full.jsl.realistic`'s GD plus what Lemma 4.2 and Theorem 4.2
are judged on.

Per seed: the same data, start, GD and records as `full.jsl.realistic.run` (same key layout, the
same step with its v-gradient read from X transposed: equal to rounding), optionally with the
training labels shuffled (a negative control), plus the sharpness at every record and the largest
one-step rise of the loss (`full.jsl.realistic.train(with_sharpness=True)`, the GD stability
premise). Added at the final step T:

- the 0-1 error against the labelling function f* (docs/derivations/jsl.md §1): f*(X) = sum_l
  Threshold_{0.9C}(z_l),
  z_l = sum_{i in S_l} <w*, X_i>, Threshold_c(z) = z if |z| > c else 0; an error is f* F <= 0 (f* =
    0 counts as one);
- the same error of the sign-of-count GLM sum_j <w*, X_j> on the same test points;
- the tangent of v to the line of w*, tan(T) = |v - alpha w*| / |alpha| (alpha = <v, w*>);
- its sampling prediction (Lemma 4.2). On the line, at (A, alpha w*), proj = alpha s does not read
  the noise xi, and
  the v-gradient of (E) splits into (sum G s) w* + n with n = sum_nj G_nj xi_nj, G = dL/dproj (n,
    D): given (y, s),
  n ~ N(0, sigma^2 |G|_F^2 (I - w* w*^T)) exactly, |n| = sigma |G|_F chi_{d-1}. A component u of v
    off the line
  adds (to first order) the curvature term sigma^2 h u to that gradient, h = sum_nj d^2 L / d
    proj_nj^2 (the mean
  over xi of the Hessian in u; different patches' noises are independent, so only the diagonal
    counts). Where GD
  has equilibrated the off-line component, sigma^2 h u = -n, so at confidence c
      tan(T) <= bound_c = sigma |G|_F sqrt(chi2_c(d - 1)) / (sigma^2 h |alpha(T)|) = |G|_F
        sqrt(chi2_c(d - 1)) / (sigma h |alpha(T)|),
  evaluated with the run's training labels at its final (A(T), alpha(T)). The equilibration time of
    u is
  1 / (eta sigma^2 h) steps (reported as "relaxation_steps").
"""

from __future__ import annotations

import functools
import os
import threading
import time
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from scipy.stats import chi2

from dynsim import store as store_mod
from dynsim.jsl import JSLConfig, data
from dynsim.jsl.error import f_star_error
from dynsim.resources import usable_cores
from dynsim.sweeps import executors
from dynsim.trajectory import Trajectory, seed_statistics
from full.jsl import realistic, sampling
from full.jsl.training import model_for

# confidence that every seed of a run lies within its prediction (per seed: its R-th root, so that
# the max over R seeds is read at this confidence, not at 1 - R (1 - c))
LEMMA_4_2_CONFIDENCE = 0.99
# part of a stored run's key: bump it when what `run` computes changes, even by an ulp, so that
# older stored runs are recomputed (the commit log says what each value changed)
RUN_VERSION = 5


def tangent(v, w_star):
    """|v - alpha w*| / |alpha| with alpha = <v, w*>: the tangent of the angle between v and the
    line of w*."""
    alpha, r, _ = sampling.split_v(v, w_star)
    return r / jnp.abs(alpha)


def on_line_curvature(cfg: JSLConfig, A, alpha, s, y):
    """(|G|_F, h) of the empirical loss (E) at (A, v = alpha w*), proj = alpha s: G = dL/dproj, h =
    sum_nj d^2L/dproj_nj^2.

    Samples do not interact, so the Hessian in proj is block-diagonal over n: h = sum_j <E_j, H E_j>
    with E_j the indicator of patch j in every sample (one Hessian-vector product per patch).
    """
    grad = jax.grad(lambda proj: sampling.projections_loss(model_for(cfg), A, y, proj))
    proj = alpha * s
    E = jnp.broadcast_to(jnp.eye(cfg.D, dtype=s.dtype)[:, None, :], (cfg.D,) + s.shape)
    h = jnp.sum(jax.vmap(lambda e: e * jax.jvp(grad, (proj,), (e,))[1])(E))
    return jnp.linalg.norm(grad(proj)), h


def _one_seed(cfg: JSLConfig, shuffle, key, w_star):
    (X, y), test = realistic.datasets(cfg, key, w_star)
    y_train = jnp.where(shuffle, jax.random.permutation(jax.random.fold_in(key, 7), y), y)
    params0 = realistic.initial_params(cfg, jax.random.fold_in(key, 2), w_star)
    params, rec = realistic.train(cfg, params0, w_star, (X, y_train), test, with_sharpness=True)
    A, v = params["params"]["A"], params["params"]["v"]
    alpha = jnp.dot(v, w_star)
    g_norm, h = on_line_curvature(cfg, A, alpha, X @ w_star, y_train)
    X_test, _ = test
    s_test = data.signs(X_test, w_star)
    final = {
        "A": A,
        "A0": params0["params"]["A"],
        "v": v,
        "alpha": alpha,
        "tangent": tangent(v, w_star),
        "f_star_error": f_star_error(cfg, model_for(cfg).apply(params, X_test), s_test),
        "glm_f_star_error": f_star_error(cfg, jnp.sum(s_test, axis=-1), s_test),
        "grad_norm": g_norm,
        "curvature": h,
    }
    return rec, final


_seed_jit = jax.jit(_one_seed)  # cfg a pytree: its numbers traced
# `_seed_jit` compiled ahead, one program for each shape of its arguments (`_seed_program`), the
# latest MAX_PROGRAMS kept
MAX_PROGRAMS = 8
_compiling = threading.Lock()


def _seed_program(*args):
    """`_seed_jit(*args)` through a program compiled ahead for args' shapes, once (under a lock).
    Seeds side by side then run one program at once: a first call through the jitted function
    itself would hold the seeds beside it until its whole run ended, not only its compilation."""
    leaves, tree = jax.tree.flatten(args)
    with _compiling:
        program = _compiled(tree, tuple(jax.typeof(x) for x in leaves))
    return program(*args)


@functools.lru_cache(maxsize=MAX_PROGRAMS)
def _compiled(tree, avals):
    """`_seed_jit` compiled for arguments of this structure and these shapes and dtypes (an
    lru_cache: `dynsim.mutation.fresh` forgets it with JAX's own caches)."""
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]
    return _seed_jit.lower(*jax.tree.unflatten(tree, specs)).compile()


def seed_run(cfg: JSLConfig, r: int, shuffle: bool = False) -> tuple[dict, dict]:
    """Seed r of `run` alone (its key k_r, `realistic.seed_key`): (records, finals) as numpy arrays
    of that seed. A plain top-level function of plain data, so it runs the same in this process or
    on a Dask worker (`dynsim.sweeps.executors`)."""
    w_star = data.feature(cfg, jnp.dtype(cfg.dtype))
    rec, final = _seed_program(cfg, jnp.asarray(bool(shuffle)), realistic.seed_key(cfg, r), w_star)
    return (
        {k: np.asarray(v) for k, v in rec.items()},
        {k: np.asarray(v) for k, v in final.items()},
    )


def combine(cfg: JSLConfig, per_seed: list) -> tuple[dict, dict]:
    """`run`'s (seed statistics of the records, finals with a leading seed axis) from the seeds'
    (records, finals) in seed order; finals also get "bound" (at the per-seed confidence c^(1/R) of
    c = LEMMA_4_2_CONFIDENCE over the R seeds) and "relaxation_steps"."""
    records = {k: np.stack([rec[k] for rec, _ in per_seed]) for k in per_seed[0][0]}
    final = {k: np.stack([fin[k] for _, fin in per_seed]) for k in per_seed[0][1]}
    c_seed = LEMMA_4_2_CONFIDENCE ** (1.0 / len(per_seed))
    quantile = float(np.sqrt(chi2.ppf(c_seed, cfg.d - 1)))
    final["bound"] = (
        final["grad_norm"] * quantile / (cfg.sigma * final["curvature"] * np.abs(final["alpha"]))
    )
    final["relaxation_steps"] = 1.0 / (cfg.eta * cfg.sigma**2 * final["curvature"])
    return seed_statistics(records), final


def run(cfg: JSLConfig, seeds: int, *, shuffle: bool = False) -> tuple[dict, dict]:
    """`seeds` realistic runs (seed r has realistic.run's key k_r), one a core side by side
    (`seed_run`, `side_by_side`): (seed statistics of the records, numpy finals).

    finals also holds "bound" (seeds,): bound_c of the module docstring, every seed within it at
    c = LEMMA_4_2_CONFIDENCE (`combine`).
    """
    realistic.check_seeds(seeds)
    tasks = [(cfg.to_dict(), r, bool(shuffle), False) for r in range(seeds)]
    got = {
        r: (records, final)
        for r, records, final, _ in executors.run(
            tasks, fn=compute_seed, threads=side_by_side(seeds)
        )
    }
    return combine(cfg, [got[r] for r in range(seeds)])


def run_key(cfg: JSLConfig, r: int, shuffle: bool) -> str:
    """The store key of seed r of `run(cfg, ..., shuffle=shuffle)`: every field of cfg, the seed
    index, the shuffle, the confidence and RUN_VERSION."""
    return store_mod.point_key(
        {
            "setting": "jsl",
            "run": "realistic_runs.seed_run",
            "run_version": RUN_VERSION,
            "config": cfg.to_dict(),
            "seed_index": r,
            "shuffle": bool(shuffle),
            "lemma_4_2_confidence": LEMMA_4_2_CONFIDENCE,
        }
    )


def _packed(arrays: dict) -> Trajectory:
    return Trajectory([0], {k: np.asarray(v)[None] for k, v in arrays.items()}, {})


def compute_seed(cfg: dict, r: int, shuffle: bool, alone: bool = True) -> tuple:
    """A task of `run_stored` (config as a dict: plain data for a Dask worker): (r, records,
    finals, cost). cost: the seed's "wall_s", and "cpu_s" the CPU time of the process that ran it
    (every thread: XLA's included) where it ran `alone` in its process (one after the other, or a
    LocalCluster worker of one thread), else None (seeds side by side share one process's time)."""
    wall, cpu = time.perf_counter(), time.process_time()
    records, final = seed_run(JSLConfig(**cfg), r, shuffle)
    cost = {
        "wall_s": time.perf_counter() - wall,
        "cpu_s": time.process_time() - cpu if alone else None,
    }
    return r, records, final, cost


def cost_of(summary: dict) -> Optional[tuple[float, Optional[float]]]:
    """A stored seed's (wall_s, cpu_s or None) from its summary; None for a seed stored without a
    wall time. A read-back file is not trusted: a value that is not a finite non-negative number is
    no value."""

    def sound(v) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v < float("inf")

    wall, cpu = summary.get("wall_s"), summary.get("cpu_s")
    if not sound(wall):
        return None
    return float(wall), float(cpu) if sound(cpu) else None


def run_stored(
    store,
    cfg: JSLConfig,
    seeds: int,
    *,
    shuffle: bool = False,
    executor: Optional[dict] = None,
    log: Callable[[str], None] = lambda s: None,
) -> tuple[dict, dict, int]:
    """`run`, each seed read from `store` (a `dynsim.store.Store`) when it holds it, else computed
    and written there (atomically) as soon as it finishes: an interruption loses only the seeds
    still running. `executor`: where the missing seeds run, `dynsim.sweeps.executors.run`'s
    scheduler, workers, security (None: here, as many side by side as this process has cores,
    `side_by_side`). Each seed's wall time (and CPU time where it ran alone) is stored with it, and
    the log ends with what the seeds computed cost. Returns (records, finals, seeds read back)."""
    realistic.check_seeds(seeds)
    got: dict = {}
    for r in range(seeds):
        found = store.load(run_key(cfg, r, shuffle), trajectories=True)
        if found is not None:
            t = found["trajectories"]
            got[r] = tuple({k: v[0] for k, v in t[name].items()} for name in ("records", "final"))
    loaded = len(got)
    here = not elsewhere(executor)
    at_once = side_by_side(seeds - loaded) if here else 1
    todo = [(cfg.to_dict(), r, bool(shuffle), at_once == 1) for r in range(seeds) if r not in got]
    start, cpu, worker_cpu = time.perf_counter(), time.process_time(), 0.0
    for done, (r, records, final, cost) in enumerate(
        executors.run(todo, fn=compute_seed, log=log, threads=at_once, **(executor or {})), 1
    ):
        store.save(
            run_key(cfg, r, shuffle),
            {"config": cfg.to_dict(), "seed_index": r, "shuffle": bool(shuffle), **cost},
            {"records": _packed(records), "final": _packed(final)},
        )
        got[r], worker_cpu = (records, final), worker_cpu + (cost["cpu_s"] or 0.0)
        elapsed, left = time.perf_counter() - start, len(todo) - done
        log(
            f"  N = {cfg.N}: seed {r} stored ({cost['wall_s']:.0f} s), {done} of {len(todo)} in "
            f"{elapsed:.0f} s"
            + (f", about {elapsed / done * left:.0f} s for the {left} left" if left else "")
        )
    if todo:
        cpu = time.process_time() - cpu if here else worker_cpu
        log(
            f"  N = {cfg.N}: {len(todo)} seeds in {time.perf_counter() - start:.0f} s"
            + (f", {at_once} side by side" if at_once > 1 else "")
            + f", {cpu:.0f} CPU s in {'this process' if here else 'the workers'}"
        )
    return (*combine(cfg, [got[r] for r in range(seeds)]), loaded)


def elsewhere(executor: Optional[dict]) -> bool:
    """Whether `executor` names Dask workers or a scheduler (else the seeds run in this process)."""
    return bool(executor and any(executor.values()))


def side_by_side(seeds: int) -> int:
    """How many seeds run at once in this process: one a core (`resources.usable_cores`), at most
    `seeds`."""
    return max(1, min(usable_cores(), seeds))


def runner(store, log: Callable[[str], None], executor: Optional[dict] = None) -> Callable:
    """`run`, or its stored form when a store is given (`run_stored`: finished seeds read back, the
    others run where `executor` says)."""
    if store is None:
        if elsewhere(executor):
            raise ValueError("workers or a scheduler need a store (--out) to write the seeds to")
        return run

    def stored(rc: JSLConfig, seeds: int, shuffle: bool = False):
        records, final, loaded = run_stored(
            store, rc, seeds, shuffle=shuffle, executor=executor, log=log
        )
        if loaded:
            log(
                f"  {loaded} of {seeds} seeds read back from the store {store.root} (finished "
                "earlier)"
            )
        return records, final

    return stored


def missing(cfg: JSLConfig, runs: list, seeds: int, root: Optional[str]) -> list:
    """The N of every seed of `runs` = [(N, shuffle)] at cfg that the store under `root` does not
    hold (None: every seed), without opening or creating anything there."""
    if root is None or not os.path.isdir(os.path.join(root, "points")):  # nothing stored yet
        return [N for N, _ in runs for _ in range(seeds)]

    def held(N, r, shuffle):
        return os.path.exists(store_mod.point_path(root, run_key(cfg.replace(N=N), r, shuffle)))

    return [N for N, shuffle in runs for r in range(seeds) if not held(N, r, shuffle)]
