"""Idealized population dynamics (P) of JSL in the reduced variables (alpha, gamma, rho)."""

from __future__ import annotations

import warnings
from typing import Mapping, NamedTuple, Optional, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment, recording
from dynsim.jsl import JSLConfig
from dynsim.trajectory import Trajectory

from . import configurations
from .symbolic import derive

MAX_CONFIGURATIONS = 3_000_000  # above this the sum is truncated, with bounds
BOUND_TARGET = 1e-12  # the default keeps every truncation bound below this

Init = Union[None, Mapping[str, float], Sequence[float]]


class Weights(NamedTuple):
    """The configuration sum as arrays: counts n (K, M) and probabilities w (M,)."""

    n: jax.Array
    w: jax.Array


class Numbers(NamedTuple):
    """The config's numbers that change no shape (q, nu, eta, sigma_A, tau): traced, so sweeps vmap over them."""

    q: jax.Array
    nu: jax.Array
    eta: jax.Array
    sigma_A: jax.Array
    tau: jax.Array


def numbers_of(cfg: JSLConfig) -> Numbers:
    """`Numbers` of one config, in its dtype."""
    return Numbers(*(jnp.asarray(getattr(cfg, f), cfg.dtype) for f in Numbers._fields))


class View:
    """`cfg` with its `Numbers` replaced by (possibly traced) values: every function here reads either."""

    def __init__(self, cfg: JSLConfig, numbers: Numbers):
        self._cfg, self._numbers = cfg, numbers

    def __getattr__(self, name: str):
        if name in Numbers._fields:
            return getattr(self._numbers, name)
        return getattr(self._cfg, name)


class Table:
    """The configuration table of one (D, C, q): counts n (K, M) and weights W (M,)."""

    def __init__(self, cfg: JSLConfig, max_nonzero: Optional[int]):
        self.max_nonzero = max_nonzero
        n, w = configurations.enumerate_configurations(cfg.D, cfg.C, cfg.q, max_nonzero)
        dtype = jnp.dtype(cfg.dtype)
        self.n = jnp.asarray(n.T, dtype)
        self.w = jnp.asarray(w, dtype)
        self.size = int(w.size)
        self.dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, max_nonzero)

    @property
    def weights(self) -> Weights:
        return Weights(self.n, self.w)


def loss_and_gradients(cfg: JSLConfig, state, table: Weights):
    """Population loss (P) and its partial derivatives in (alpha, gamma, rho): the weighted configuration sum."""
    der = derive(cfg.C, cfg.p)
    a, g, r = state[0], state[1], state[2]
    values = der.compiled(a, g, r, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n))
    return jnp.stack([jnp.sum(table.w * jnp.broadcast_to(v, table.w.shape)) for v in values])


def tie_tolerance(cfg: JSLConfig, state):
    """Bound on the rounding error of the computed F of any configuration: |F| below it counts as F = 0.

    Rounding model (u = unit roundoff of cfg.dtype, x = D|alpha|, l = max(|gamma - beta|, |rho - beta|)/tau):
    exp of a rounded logit errs by relative (2 l + 2) u, so Lambda, Gamma, Xi err by relative <= (2 l + 6) u;
    m_i = Lambda s_i + Gamma (T_m - s_i) + Xi (T - T_m) has integer coefficients with
    Lambda + Gamma |T_m - s_i| + Xi |T - T_m| <= 1, so it errs by <= (2 l + 9) u absolutely, and u_i = D alpha m_i by
    <= x (2 l + 11) u; sigma(u_i) then errs by <= sigma'(x) x (2 l + 11) u + 4 u sigma(x) (|u_i| <= x, sigma' increasing);
    summing D such terms in <= K + 4 groups adds (K + 4) u D sigma(x). A factor 4 covers the order in which the
    lambdified CSE code evaluates these (powers as products, common subexpressions). F is exactly 0 in exact
    arithmetic for configurations mapped to their negation by a set permutation (jsl-derivations 2.4) and for
    T = 0 whenever gamma = rho (jsl-derivations 3e, e.g. the idealized start); genuine |F| are O(alpha^p), far above.
    """
    u = float(jnp.finfo(jnp.dtype(cfg.dtype)).eps) / 2
    K = len(configurations.set_types(cfg.C))
    x = cfg.D * jnp.abs(state[0])
    ell = jnp.maximum(jnp.abs(state[1] - cfg.sigma_A), jnp.abs(state[2] - cfg.sigma_A)) / cfg.tau
    sig = x**cfg.p + cfg.nu * x
    xdsig = cfg.p * x**cfg.p + cfg.nu * x
    return 4 * u * cfg.D * (xdsig * (2 * ell + 11) + (K + 8) * sig)


def population_error(cfg: JSLConfig, state, table: Weights):
    """Exact population 0-1 error P(F < 0) + 1/2 P(F = 0), y = +1 WLOG (jsl-derivations 2.3), ties by `tie_tolerance`."""
    der = derive(cfg.C, cfg.p)
    F = der.compiled_F(state[0], state[1], state[2], cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n))
    F = jnp.broadcast_to(F, table.w.shape)
    tol = tie_tolerance(cfg, state)
    # a non-finite F (a diverged run) makes the error NaN, never a silent 0
    wrong = jnp.where(jnp.isfinite(F), jnp.where(F < -tol, 1.0, jnp.where(F <= tol, 0.5, 0.0)), jnp.nan).astype(table.w.dtype)
    return jnp.sum(table.w * wrong)


def orbit_step_sizes(cfg: JSLConfig) -> jnp.ndarray:
    """eta, eta/(D(C-1)), eta/(D(D-C)): GD on every A_ij of an orbit, in units of one entry (jsl-derivations 3c)."""
    D, C = cfg.D, cfg.C
    return jnp.array([cfg.eta, cfg.eta / (D * (C - 1)), cfg.eta / (D * (D - C))], dtype=cfg.dtype)


def attention_weights(cfg: JSLConfig, state):
    """(Lambda, Gamma, Xi): diagonal, within-set and between-set scores of a row of S (Section 4.1)."""
    logits = jnp.stack([jnp.asarray(cfg.sigma_A, state.dtype), state[1], state[2]]) / cfg.tau
    mult = jnp.array([1.0, cfg.C - 1, cfg.D - cfg.C], state.dtype)
    z = jax.nn.logsumexp(logits, b=mult)
    return jnp.exp(logits - z)


def initial_state(cfg: JSLConfig, init: Init = None) -> np.ndarray:
    """(alpha0, gamma0, rho0): Parametrization 3.1 (nu^(1/(p-1)), 0, 0) unless given."""
    if init is None:
        return np.array([cfg.alpha0, 0.0, 0.0])
    if isinstance(init, Mapping):
        unknown = set(init) - {"alpha", "gamma", "rho"}
        if unknown:
            raise ValueError(f"init has unknown keys {sorted(unknown)}; allowed: alpha, gamma, rho")
        vals = [init.get("alpha", cfg.alpha0), init.get("gamma", 0.0), init.get("rho", 0.0)]
    else:
        vals = list(init)
        if len(vals) != 3:
            raise ValueError(f"init = {init!r} must be (alpha, gamma, rho)")
    arr = np.asarray(vals, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"init = {init!r} must be finite")
    return arr


def derived_observables(cfg: JSLConfig, theta, table: Weights) -> dict:
    """within/between attention, patch association and the exact 0-1 error of the state (alpha, gamma, rho).

    within = (C-1) Gamma, between = (D-C) Xi (Section 4.1); by Lemma 4.1 every row is alike, so Top_C = S_l(i)
    (Definition 2.2, strict: ties fail) holds on all rows or none: 1.0 iff min(beta, gamma) > rho.
    """
    _, Gam, Xi = attention_weights(cfg, theta)
    return {
        "within_attention": (cfg.C - 1) * Gam,
        "between_attention": (cfg.D - cfg.C) * Xi,
        "patch_association": jnp.where(jnp.minimum(cfg.sigma_A, theta[1]) > theta[2], 1.0, 0.0).astype(theta.dtype),
        "error": population_error(cfg, theta, table),
    }


def _run(cfg: JSLConfig, table: Weights, state0, numbers: Optional[Numbers] = None):
    """GD from state0, recorded; with `numbers`, cfg's numbers are replaced by them (traced, for sweeps)."""
    if numbers is not None:
        cfg = View(cfg, numbers)
    sizes = orbit_step_sizes(cfg)

    def step(carry, t):
        theta, seen = carry
        grads = loss_and_gradients(cfg, theta, table)[1:]
        _, Gam, Xi = attention_weights(cfg, theta)
        seen = jnp.maximum(seen, jnp.stack([jnp.abs(theta[0]), Gam, Xi]))
        return theta - sizes * grads, seen

    def observe(carry, t):
        theta, _ = carry
        Lam, Gam, _ = attention_weights(cfg, theta)
        return {
            "alpha": theta[0],
            "gamma": theta[1],
            "rho": theta[2],
            "loss": loss_and_gradients(cfg, theta, table)[0],
            "own_set_attention": Lam + (cfg.C - 1) * Gam,
            # The barrier keeps XLA from fusing these with the five above, which moved own_set_attention by 1 ulp.
            **derived_observables(cfg, jax.lax.optimization_barrier(theta), table),
        }

    theta0 = jnp.asarray(state0, cfg.dtype)
    _, Gam0, Xi0 = attention_weights(cfg, theta0)
    carry0 = (theta0, jnp.stack([jnp.abs(theta0[0]), Gam0, Xi0]))
    (theta, seen), rec = recording.run(step, observe, carry0, cfg.steps, cfg.record_every)
    # The last state's alpha, Gamma, Xi count too (the loss is evaluated there).
    _, Gam, Xi = attention_weights(cfg, theta)
    seen = jnp.maximum(seen, jnp.stack([jnp.abs(theta[0]), Gam, Xi]))
    return rec, seen


_run_jit = jax.jit(_run, static_argnums=0)


def _choose_max_nonzero(cfg: JSLConfig, scale: float) -> Optional[int]:
    """The smallest truncation whose dropped probability times `scale` is below BOUND_TARGET (None = all)."""
    if configurations.count(cfg.D, cfg.C) <= MAX_CONFIGURATIONS:
        return None
    for k in range(cfg.D - cfg.C + 1):
        if configurations.tail_probability(cfg.D, cfg.C, cfg.q, k) * scale <= BOUND_TARGET:
            return k
    return None


def simulate(cfg: JSLConfig, init: Init = None, max_nonzero: Optional[int] = None, method: str = "gd",
             t_max: Optional[float] = None, **flow_options) -> Trajectory:
    """Run GD on the exact population loss (P) in (alpha, gamma, rho) and record observables.

    Updates (same units as full-matrix GD, jsl-derivations 3c): alpha -= eta dL/dalpha,
    gamma -= eta/(D(C-1)) dL/dgamma, rho -= eta/(D(D-C)) dL/drho; beta = sigma_A is fixed.
    The configuration sum is complete unless `max_nonzero` truncates it, or unless it has more
    than MAX_CONFIGURATIONS terms; then the truncation is chosen so that every bound stays below
    1e-12 along the run. The dropped probability and the bounds are in meta["truncation"].

    method="flow": the gradient flow d theta/dt = -(orbit_step_sizes/eta) dL/dtheta instead, solved to t_max
    (default eta * steps) by `reduced.jsl.flow.simulate_flow`, which takes `flow_options` (saves, t_min, times,
    rtol, atol, solver, max_steps).
    """
    if method != "gd" or t_max is not None or flow_options:
        from .flow import simulate_flow

        return simulate_flow(cfg, init, max_nonzero, method, t_max, **flow_options)
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    if max_nonzero is not None and (not isinstance(max_nonzero, int) or not 0 <= max_nonzero):
        raise ValueError(f"max_nonzero = {max_nonzero!r} must be an integer >= 0 (or None for the full sum)")
    theta0 = initial_state(cfg, init)
    auto = max_nonzero is None
    scale = 1.0
    chosen = _choose_max_nonzero(cfg, scale) if auto else max_nonzero
    while True:
        _check_size(cfg, chosen)
        table = _table(cfg, chosen)
        rec, seen = _run_jit(cfg, table.weights, theta0)
        seen = np.asarray(seen)
        bounds = configurations.truncation_bounds(cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, table.dropped, *seen)
        worst = max(bounds.values())
        if not auto or worst <= BOUND_TARGET or chosen is None or chosen >= cfg.D - cfg.C:
            break
        # Tighten: the bound factor along this run tells how small the dropped mass must be.
        scale = worst / max(table.dropped, 1e-300) * 2
        nxt = _choose_max_nonzero(cfg, scale)
        chosen = cfg.D - cfg.C if nxt is None or nxt <= chosen else nxt
    return trajectory(cfg, rec, seen, truncation_meta(cfg, table.size, table.max_nonzero, table.dropped, bounds))


def truncation_meta(cfg: JSLConfig, size: int, max_nonzero: Optional[int], dropped: float, bounds: dict) -> dict:
    """meta["truncation"] of a run: the sum's size, where it was cut, the dropped probability and the bounds."""
    return {
        "configurations": size,
        "configurations_total": configurations.count(cfg.D, cfg.C),
        "max_nonzero": max_nonzero,
        "dropped_probability": dropped,
        "bounds": bounds,
        # the recorded 0-1 error misses at most the dropped probability (each configuration contributes <= 1)
        "error_bound": dropped,
    }


def trajectory(cfg: JSLConfig, rec: dict, seen, truncation: dict, **extra) -> Trajectory:
    """The reduced Trajectory of one run from its records and the largest (|alpha|, Gamma, Xi) met."""
    records = {k: np.asarray(v) for k, v in rec.items()}
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta("reduced", "population", cfg, truncation=truncation, max_abs_alpha=float(seen[0]), **extra)
    _flag_nonfinite(records, steps, meta)
    return Trajectory(steps, records, meta)


def _check_size(cfg: JSLConfig, max_nonzero: Optional[int]) -> None:
    """Refuse, before enumerating, a sum larger than MAX_CONFIGURATIONS."""
    size = configurations.count_truncated(cfg.D, cfg.C, max_nonzero)
    if size > MAX_CONFIGURATIONS:
        what = "the full sum" if max_nonzero is None else f"the sum truncated at max_nonzero = {max_nonzero}"
        raise ValueError(
            f"{what} has {size:,} configurations (D = {cfg.D}, C = {cfg.C}, q = {cfg.q}), more than the "
            f"{MAX_CONFIGURATIONS:,} that fit. Use a smaller D, a "
            f"smaller max_nonzero (its bounds are reported in meta['truncation']), or the full model in mode='sampled'."
        )


_tables: dict = {}


def _table(cfg: JSLConfig, max_nonzero: Optional[int]) -> Table:
    key = (cfg.D, cfg.C, cfg.q, cfg.dtype, max_nonzero)
    if key not in _tables:
        _tables[key] = Table(cfg, max_nonzero)
    return _tables[key]


def _flag_nonfinite(records: dict, steps: np.ndarray, meta: dict) -> None:
    bad = np.zeros(steps.shape, bool)
    for v in records.values():
        bad |= ~np.isfinite(v).reshape(v.shape[0], -1).all(axis=1)
    if bad.any():
        first = int(steps[np.argmax(bad)])
        meta["nonfinite_from_step"] = first
        warnings.warn(f"{meta['level']} trajectory is not finite from step {first}: the run diverged; "
                      f"lower eta (now {meta['config']['eta']})", RuntimeWarning, stacklevel=3)
