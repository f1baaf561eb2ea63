"""Full-matrix gradient descent on the JSL model (modes exact and sampled): one jit-compiled
`lax.scan`."""

from __future__ import annotations

from typing import Mapping, Optional

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import divergence, environment, recording
from dynsim.jsl import JSLConfig, partition, traced  # noqa: F401 (traced: JSLConfig as a pytree)
from dynsim.trajectory import Trajectory, seed_statistics

from .. import engine
from . import population, sampling
from .module import PositionalAttentionViT
from .observables import reduction


def model_for(cfg: JSLConfig) -> PositionalAttentionViT:
    """The flax module of model (T) for this config."""
    zeros = nn.initializers.zeros
    return PositionalAttentionViT(cfg.D, cfg.d, cfg.tau, cfg.p, cfg.nu, A_init=zeros, v_init=zeros)


def optimizer(cfg: JSLConfig) -> optax.GradientTransformation:
    """Plain GD at learning rate eta; the diagonal of A is masked out of every update (it stays
    sigma_A)."""
    off_diagonal = 1.0 - jnp.eye(cfg.D, dtype=cfg.dtype)

    def freeze_diagonal(updates, params):
        return {"params": {**updates["params"], "A": updates["params"]["A"] * off_diagonal}}

    return optax.chain(optax.stateless(freeze_diagonal), optax.sgd(cfg.eta))


def initial_params(cfg: JSLConfig, w_star, init: Optional[Mapping] = None) -> dict:
    """Idealized start of Parametrization 3.1 (A = sigma_A I, v = nu^(1/(p-1)) w*) unless `init`
    says otherwise.

    `init` may give "alpha", "gamma", "rho" (A constant on the orbits, v = alpha w*) or the arrays
    "A", "v".
    """
    init = dict(init or {})
    allowed = {"alpha", "gamma", "rho", "A", "v"}
    if set(init) - allowed:
        raise ValueError(
            f"init has unknown keys {sorted(set(init) - allowed)}; allowed: {sorted(allowed)}"
        )
    dtype = jnp.dtype(cfg.dtype)
    within, between = partition.orbit_masks(cfg)
    if "A" in init:
        A = np.array(init["A"], dtype=float)
        if A.shape != (cfg.D, cfg.D):
            raise ValueError(f"init['A'] has shape {A.shape}, expected ({cfg.D}, {cfg.D})")
    else:
        A = (
            cfg.sigma_A * np.eye(cfg.D)
            + init.get("gamma", 0.0) * within
            + init.get("rho", 0.0) * between
        )
    np.fill_diagonal(A, cfg.sigma_A)
    if "v" in init:
        v = jnp.asarray(init["v"], dtype)
        if v.shape != (cfg.d,):
            raise ValueError(f"init['v'] has shape {v.shape}, expected ({cfg.d},)")
    else:
        v = init.get("alpha", cfg.alpha0) * w_star
    return {"params": {"A": jnp.asarray(A, dtype), "v": jnp.asarray(v, dtype)}}


def train(cfg: JSLConfig, mode: str, params0, w_star, configs, key):
    """GD from params0 on (P): exact (`configs`) or a fresh batch of cfg.N samples a step (key;
    drawn in law through the projections, `sampling`); the records."""
    model, opt = model_for(cfg), optimizer(cfg)
    if mode == "exact":

        def loss(params, k):
            return population.exact_loss(model, params, configs, w_star)

        grad = jax.grad(loss)
    # a fresh batch's loss and gradient, drawn in law without the N D d noise normals (`sampling`)
    else:

        def loss(params, k):
            return sampling.loss(model, params, k, cfg, w_star, cfg.N)

        def grad(params, k):
            return sampling.grad(model, params, k, cfg, w_star, cfg.N)

    # the recorded loss uses its own samples, never the training batches
    eval_key = engine.eval_key(key)

    def observe(params, t):
        obs = reduction(cfg, params["params"]["A"], params["params"]["v"], w_star)
        obs["loss"] = loss(params, jax.random.fold_in(eval_key, t))
        if mode == "exact":
            # drift off the orbit symmetry (tie tolerance)
            spread = jnp.maximum(obs["gamma_spread"], obs["rho_spread"])
            obs["error"] = population.exact_error(model, params, configs, w_star, spread)
        return obs

    _, rec = engine.train(
        grad, opt, params0, observe, cfg.steps, cfg.record_every, key, nonfinite=True
    )
    return rec


train_jit = jax.jit(train, static_argnums=1)  # cfg a pytree: its numbers traced


def train_replicates(cfg: JSLConfig, mode: str, params0, w_star, keys):
    """`train` for every key in `keys`, vmapped: independent replicate runs as one program."""
    return jax.vmap(lambda k: train(cfg, mode, params0, w_star, None, k))(keys)


train_replicates_jit = jax.jit(train_replicates, static_argnums=1)


def check_start(cfg: JSLConfig, params0, w_star) -> None:
    """Mode 'exact' integrates the noise out only for v in span(w*) (Lemma 4.2): refuse a v off that
    line."""
    dtype = jnp.dtype(cfg.dtype)
    v0 = np.asarray(params0["params"]["v"], float)
    off_line = np.linalg.norm(v0 - (v0 @ np.asarray(w_star, float)) * np.asarray(w_star, float))
    # alpha w* rounded to the dtype is off the line by at most u |v| (each component rounded once);
    # 64 eps is wide
    if off_line > 64 * float(np.finfo(dtype).eps) * max(1.0, np.linalg.norm(v0)):
        raise ValueError(
            f"init['v'] has a part orthogonal to w* of norm {off_line:.3g}: mode='exact' "
            f"integrates "
            "the noise out only for v in span(w*) (Lemma 4.2); use mode='sampled'"
        )


def run(cfg: JSLConfig, mode: str, params0, w_star, R: int) -> Trajectory:
    """GD in mode "exact" (one run) or "sampled" (R replicates, vmapped) from params0, as a
    Trajectory."""
    configs = population.enumerate_configurations(cfg) if mode == "exact" else None
    if mode == "exact":
        rec = train_jit(cfg, mode, params0, w_star, configs, engine.base_key(cfg))
        observables = {k: np.asarray(v) for k, v in rec.items()}
    else:
        rec = train_replicates_jit(cfg, mode, params0, w_star, engine.replicate_keys(cfg, R))
        observables = seed_statistics(rec, keep_seeds=False)
    return trajectory(
        cfg,
        mode,
        observables,
        R,
        None if configs is None else int(configs.w.shape[0]),
        stacklevel=4,
    )


def trajectory(
    cfg: JSLConfig,
    mode: str,
    observables: dict,
    R: int,
    configurations: Optional[int],
    stacklevel: int = 3,
) -> Trajectory:
    """The full Trajectory of one run (mode "exact" or "sampled") from its recorded observables
    (stacklevel: of the divergence warning, from here)."""
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "full",
        mode,
        cfg,
        replicates=R,
        configurations=configurations,
        batch_size=cfg.N if mode == "sampled" else None,
        partition_sets=partition.sets(cfg).tolist(),
    )
    exact = divergence.take(observables)
    divergence.flag(
        divergence.nonfinite(observables, steps), steps, meta, "full", cfg.eta, stacklevel, exact
    )
    return Trajectory(steps, observables, meta)
