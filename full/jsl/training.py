"""Full-matrix gradient descent on the JSL model: one jit-compiled `lax.scan`."""

from __future__ import annotations

import warnings
from typing import Mapping, Optional

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import environment, recording, validation
from dynsim.jsl import JSLConfig, data, partition
from dynsim.trajectory import Trajectory, seed_statistics

from . import population
from .module import PositionalAttentionViT
from .observables import reduction

MODES = ("exact", "sampled", "realistic")
DEFAULT_REPLICATES = 8


def model_for(cfg: JSLConfig) -> PositionalAttentionViT:
    """The flax module of model (T) for this config."""
    zeros = nn.initializers.zeros
    return PositionalAttentionViT(cfg.D, cfg.d, cfg.tau, cfg.p, cfg.nu, A_init=zeros, v_init=zeros)


def optimizer(cfg: JSLConfig) -> optax.GradientTransformation:
    """Plain GD at learning rate eta; the diagonal of A is masked out of every update (it stays sigma_A)."""
    off_diagonal = 1.0 - jnp.eye(cfg.D, dtype=cfg.dtype)

    def freeze_diagonal(updates, params):
        return {"params": {**updates["params"], "A": updates["params"]["A"] * off_diagonal}}

    return optax.chain(optax.stateless(freeze_diagonal), optax.sgd(cfg.eta))


def initial_params(cfg: JSLConfig, w_star, init: Optional[Mapping] = None) -> dict:
    """Idealized start of Parametrization 3.1 (A = sigma_A I, v = nu^(1/(p-1)) w*) unless `init` says otherwise.

    `init` may give "alpha", "gamma", "rho" (A constant on the orbits, v = alpha w*) or the arrays "A", "v".
    """
    init = dict(init or {})
    allowed = {"alpha", "gamma", "rho", "A", "v"}
    if set(init) - allowed:
        raise ValueError(f"init has unknown keys {sorted(set(init) - allowed)}; allowed: {sorted(allowed)}")
    dtype = jnp.dtype(cfg.dtype)
    within, between = partition.orbit_masks(cfg)
    if "A" in init:
        A = np.array(init["A"], dtype=float)
        if A.shape != (cfg.D, cfg.D):
            raise ValueError(f"init['A'] has shape {A.shape}, expected ({cfg.D}, {cfg.D})")
    else:
        A = cfg.sigma_A * np.eye(cfg.D) + init.get("gamma", 0.0) * within + init.get("rho", 0.0) * between
    np.fill_diagonal(A, cfg.sigma_A)
    if "v" in init:
        v = jnp.asarray(init["v"], dtype)
        if v.shape != (cfg.d,):
            raise ValueError(f"init['v'] has shape {v.shape}, expected ({cfg.d},)")
    else:
        v = init.get("alpha", cfg.alpha0) * w_star
    return {"params": {"A": jnp.asarray(A, dtype), "v": jnp.asarray(v, dtype)}}


def _train(cfg: JSLConfig, mode: str, params0, w_star, configs, key):
    model, opt = model_for(cfg), optimizer(cfg)
    if mode == "exact":
        def loss(params, k):
            return population.exact_loss(model, params, configs, w_star)
    else:
        def loss(params, k):
            return population.sampled_loss(model, params, k, cfg, w_star, cfg.N)

    grad = jax.grad(loss)
    eval_key = jax.random.fold_in(key, 2**32 - 1)  # the recorded loss uses its own samples, never the training batches

    def step(carry, t):
        params, opt_state = carry
        updates, opt_state = opt.update(grad(params, jax.random.fold_in(key, t)), opt_state, params)
        return optax.apply_updates(params, updates), opt_state

    def observe(carry, t):
        params = carry[0]["params"]
        obs = reduction(cfg, params["A"], params["v"], w_star)
        obs["loss"] = loss(carry[0], jax.random.fold_in(eval_key, t))
        if mode == "exact":
            spread = jnp.maximum(obs["gamma_spread"], obs["rho_spread"])  # drift off the orbit symmetry (tie tolerance)
            obs["error"] = population.exact_error(model, carry[0], configs, w_star, spread)
        return obs

    _, rec = recording.run(step, observe, (params0, opt.init(params0)), cfg.steps, cfg.record_every)
    return rec


_train_jit = jax.jit(_train, static_argnums=(0, 1))


def _train_replicates(cfg: JSLConfig, mode: str, params0, w_star, keys):
    """`_train` for every key in `keys`, vmapped: independent replicate runs as one program."""
    return jax.vmap(lambda k: _train(cfg, mode, params0, w_star, None, k))(keys)


_train_replicates_jit = jax.jit(_train_replicates, static_argnums=(0, 1))


def base_key(cfg: JSLConfig) -> jax.Array:
    """The key of a run's batches (mode "sampled" splits it into one key per replicate)."""
    return jax.random.fold_in(jax.random.key(cfg.seed), 1)


def check(cfg: JSLConfig, mode: str = "exact", replicates: Optional[int] = None, seeds: Optional[int] = None) -> int:
    """Validate the run arguments before any work; return the number of replicate runs (seeds in mode 'realistic')."""
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    if mode not in MODES:
        raise ValueError(f"mode = {mode!r} is invalid: must be one of {', '.join(MODES)}")
    if mode == "realistic":
        if replicates is not None:
            raise ValueError(f"replicates = {replicates!r} is invalid in mode 'realistic': it takes seeds "
                             "(independent training sets and starts), not replicates")
        from .realistic import DEFAULT_SEEDS, check_seeds

        return check_seeds(DEFAULT_SEEDS if seeds is None else seeds)
    if seeds is not None:
        raise ValueError(f"seeds = {seeds!r} is invalid in mode {mode!r}: seeds are for mode 'realistic' "
                         "(mode 'sampled' takes replicates)")
    if mode == "exact":
        if replicates not in (None, 1):
            raise ValueError(f"replicates = {replicates!r} is invalid in mode 'exact': the exact run is deterministic")
        population.check_exact(cfg)
        return 1
    return validation.replicates(replicates, DEFAULT_REPLICATES)


def simulate(cfg: JSLConfig, mode: str = "exact", init: Optional[Mapping] = None,
             replicates: Optional[int] = None, seeds: Optional[int] = None) -> Trajectory:
    """Train the full-matrix model by GD and record the observables every `record_every` steps.

    mode="exact": GD on the population loss (P), every (signal set, delta) configuration enumerated.
    mode="sampled": GD on a fresh batch of N samples of Assumption 1 (noise included) every step;
    `replicates` independent runs (default 8, vmapped) give each observable's mean and its standard
    error `<name>_se`, from which the checker builds its Monte Carlo band.
    mode="realistic": problem (E), `full.jsl.realistic.run(cfg, seeds)` (default 8 seeds, random start of
    Parametrization 3.1, so `init` is refused); returns its Trajectory.
    """
    R = check(cfg, mode, replicates, seeds)
    if mode == "realistic":
        if init is not None:
            raise ValueError(f"init = {init!r} is invalid in mode 'realistic': the start is random (Parametrization 3.1, "
                             "realistic case, std cfg.omega); use mode 'exact' or 'sampled' for a given start")
        from . import realistic

        return realistic.run(cfg, R)[0]
    dtype = jnp.dtype(cfg.dtype)
    w_star = data.feature(cfg, dtype)
    params0 = initial_params(cfg, w_star, init)
    if mode == "exact":
        v0 = np.asarray(params0["params"]["v"], float)
        off_line = np.linalg.norm(v0 - (v0 @ np.asarray(w_star, float)) * np.asarray(w_star, float))
        # alpha w* rounded to the dtype is off the line by at most u |v| (each component rounded once); 64 eps is wide
        if off_line > 64 * float(np.finfo(dtype).eps) * max(1.0, np.linalg.norm(v0)):
            raise ValueError(f"init['v'] has a part orthogonal to w* of norm {off_line:.3g}: mode='exact' integrates "
                             "the noise out only for v in span(w*) (Lemma 4.2); use mode='sampled'")
    configs = population.enumerate_configurations(cfg) if mode == "exact" else None
    base = base_key(cfg)
    if mode == "exact":
        rec = _train_jit(cfg, mode, params0, w_star, configs, base)
        observables = {k: np.asarray(v) for k, v in rec.items()}
    else:
        keys = jax.random.split(base, R)
        rec = _train_replicates_jit(cfg, mode, params0, w_star, keys)
        observables = seed_statistics(rec, keep_seeds=False)
    return trajectory(cfg, mode, observables, R, None if configs is None else int(configs.w.shape[0]))


def trajectory(cfg: JSLConfig, mode: str, observables: dict, R: int, configurations: Optional[int]) -> Trajectory:
    """The full Trajectory of one run (mode "exact" or "sampled") from its recorded observables."""
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "full", mode, cfg,
        replicates=R,
        configurations=configurations,
        batch_size=cfg.N if mode == "sampled" else None,
        partition_sets=partition.sets(cfg).tolist(),
    )
    bad = ~np.all([np.isfinite(v) for v in observables.values()], axis=0)
    if bad.any():
        meta["nonfinite_from_step"] = int(steps[np.argmax(bad)])
        warnings.warn(f"full trajectory is not finite from step {meta['nonfinite_from_step']}: "
                      f"the run diverged; lower eta (now {cfg.eta})", RuntimeWarning, stacklevel=3)
    return Trajectory(steps, observables, meta)
