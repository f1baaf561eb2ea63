"""The two levels of the two-block quadratic: the reduced recurrence of the block errors (e_a, e_b)
in NumPy, and the full vector w trained by optax GD on dynsim's full-level engine (JAX, compiled
once per shape: the config is a pytree whose numbers eta, lam, sigma are traced)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import environment, pytree, recording
from dynsim.trajectory import Trajectory, seed_statistics
from full import engine

from .config import FORMS, MODES, TwoBlockConfig

pytree.register(TwoBlockConfig)

DEFAULT_REPLICATES = 8


def contraction(cfg: TwoBlockConfig, form: str = "recurrence") -> np.ndarray:
    """(c_a, c_b): the factor each block error is multiplied by per step, (1 - eta k)^2; the
    first-order approximation drops the eta^2 k^2 term, 1 - 2 eta k."""
    dt = np.dtype(cfg.dtype)
    k, eta = np.array([1.0, cfg.lam], dt), dt.type(cfg.eta)
    return 1 - 2 * eta * k if form == "first_order" else (1 - eta * k) ** 2


def reduced(cfg: TwoBlockConfig, form: str = "recurrence", noisy: bool = False) -> Trajectory:
    """The block errors e = (e_a, e_b) from e(0) = (n_a, n_b) (w0 = 0, w* = 1): iterated
    e' = c e + q (form "recurrence"), or in closed form e(t) = c^t e(0) + q (1 - c^t) / (1 - c)
    (form "closed"), with q = eta^2 sigma^2 n under gradient noise (`noisy`: the expected errors)
    and 0 otherwise; form "first_order" iterates the named approximation c = 1 - 2 eta k."""
    if form not in FORMS:
        raise ValueError(f"form = {form!r} is invalid: must be one of {', '.join(FORMS)}")
    dt = np.dtype(cfg.dtype)
    n = np.array(cfg.blocks, dt)
    c = contraction(cfg, form)
    q = (dt.type(cfg.eta) * dt.type(cfg.sigma)) ** 2 * n if noisy else np.zeros(2, dt)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    if form == "closed":
        t = steps[:, None].astype(dt)
        ones = c == 1  # eta k = 2 (or 0): the geometric sum is t
        geometric = np.where(ones, t, (1 - c**t) / np.where(ones, 2, 1 - c))
        e = c**t * n + q * geometric
    else:
        marks, rows, state = set(steps.tolist()), [], n.copy()
        for t in range(cfg.steps + 1):
            if t in marks:
                rows.append(state)
            state = c * state + q
        e = np.array(rows)
    lam = dt.type(cfg.lam)
    observables = {"err_a": e[:, 0], "err_b": e[:, 1], "loss": (e[:, 0] + lam * e[:, 1]) / 2}
    extra = {"form": form, **({"approximation": "first_order"} if form == "first_order" else {})}
    return Trajectory(
        steps, observables, environment.meta("reduced", "noisy" if noisy else "exact", cfg, **extra)
    )


def curvatures(cfg: TwoBlockConfig) -> jnp.ndarray:
    """k in R^d: 1 on block a, lam on block b."""
    n_a, n_b = cfg.blocks
    return jnp.concatenate([jnp.ones(n_a, cfg.dtype), jnp.ones(n_b, cfg.dtype) * cfg.lam])


def _observe(cfg: TwoBlockConfig):
    """The recorded quantities of w (one run, or replicates along a leading axis): the block
    errors, the exact loss and the spread of the errors within a block (zero by symmetry: a
    reduction residual)."""
    n_a = cfg.blocks[0]
    k = curvatures(cfg)

    def observe(w, t):
        delta = w - 1.0
        sq = delta**2
        spread = jnp.maximum(jnp.ptp(delta[..., :n_a], -1), jnp.ptp(delta[..., n_a:], -1))
        return {
            "err_a": jnp.sum(sq[..., :n_a], -1),
            "err_b": jnp.sum(sq[..., n_a:], -1),
            "loss": 0.5 * jnp.sum(k * sq, -1),
            "spread": spread,
        }

    return observe


@jax.jit
def _exact(cfg: TwoBlockConfig) -> dict:
    """optax GD from w0 = 0 on the exact gradient k (w - 1), on dynsim's full-level engine."""
    k = curvatures(cfg)
    w0 = jnp.zeros(cfg.d, cfg.dtype)
    grad = lambda w: k * (w - 1.0)  # noqa: E731
    return engine.train(grad, optax.sgd(cfg.eta), w0, _observe(cfg), cfg.steps, cfg.record_every)[1]


@jax.jit
def _noisy(cfg: TwoBlockConfig, noise) -> dict:
    """optax GD of R replicates at once (w: (R, d)), step t's gradient k (w - 1) + sigma noise[t]
    (noise: (steps, R, d) standard normal draws, made outside: a noise drawn inside the compiled
    loop took 3 s to compile)."""
    k, opt = curvatures(cfg), optax.sgd(cfg.eta)
    w0 = jnp.zeros(noise.shape[1:], cfg.dtype)

    def step(state, t):
        w, opt_state = state
        updates, opt_state = opt.update(k * (w - 1.0) + cfg.sigma * noise[t], opt_state, w)
        return optax.apply_updates(w, updates), opt_state

    observe = _observe(cfg)
    return recording.run(
        step, lambda s, t: observe(s[0], t), (w0, opt.init(w0)), cfg.steps, cfg.record_every
    )[1]


def noise(cfg: TwoBlockConfig, replicates: int) -> np.ndarray:
    """The gradient noise of `replicates` runs, (steps, R, d) standard normal draws from the seed;
    replicate r's draws do not depend on R."""
    rng = np.random.default_rng(cfg.seed)
    draws = rng.standard_normal((replicates, cfg.steps, cfg.d)).astype(cfg.dtype)
    return np.ascontiguousarray(draws.transpose(1, 0, 2))


def full(cfg: TwoBlockConfig, mode: str = "exact", replicates: int | None = None) -> Trajectory:
    """The full level: exact GD on w, or (mode "noisy") `replicates` runs of GD with gradient noise
    (their mean, `<name>_se` and each run as `<name>_seeds`)."""
    engine.check_setting(cfg, TwoBlockConfig, mode, MODES)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    with environment.precision(cfg.dtype):
        if mode == "exact":
            if replicates not in (None, 1):
                raise ValueError(f"replicates = {replicates!r} is invalid in mode 'exact'")
            rec = {k: np.asarray(v) for k, v in _exact(cfg).items()}
            return Trajectory(steps, rec, environment.meta("full", mode, cfg, configurations=cfg.d))
        R = DEFAULT_REPLICATES if replicates is None else replicates
        if not isinstance(R, int) or R < 2:
            raise ValueError(f"replicates = {replicates!r} is invalid: mode 'noisy' needs >= 2")
        rec = _noisy(cfg, noise(cfg, R))
    # records (steps, R) -> seed_statistics' (R, steps)
    obs = seed_statistics({k: np.asarray(v).T for k, v in rec.items()}, keep_seeds=True)
    meta = environment.meta("full", mode, cfg, replicates=R, configurations=cfg.d)
    return Trajectory(steps, obs, meta)
