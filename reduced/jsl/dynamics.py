"""Idealized population dynamics (P) of JSL in the reduced variables (alpha, gamma, rho): gradient,
observables, GD."""

from __future__ import annotations

from typing import Mapping, Sequence, Union

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import divergence, environment, recording
from dynsim.jsl import JSLConfig, error
from dynsim.jsl import traced  # noqa: F401 (JSLConfig as a pytree: its numbers traced)
from dynsim.trajectory import Trajectory

from .. import gd
from . import class_sums, configurations
from .class_sums import ClassWeights
from .state import Theta, named
from .symbolic import derive
from .tables import BOUND_TARGET, MAX_CLASSES, MAX_CONFIGURATIONS, Table, Weights, truncation_meta

__all__ = [
    "Weights",
    "ClassWeights",
    "Table",
    "BOUND_TARGET",
    "MAX_CLASSES",
    "MAX_CONFIGURATIONS",
    "truncation_meta",
    "loss_and_gradients",
    "tie_tolerance",
    "population_error",
    "orbit_step_sizes",
    "attention_weights",
    "initial_state",
    "Theta",
    "named",
    "derived_observables",
    "observe",
    "gradient",
    "run",
    "trajectory",
]

Init = Union[None, Mapping[str, float], Sequence[float]]
# a sum over moment classes (the default) or over multisets (the reference)
Sum = Union[ClassWeights, Weights]


def loss_and_gradients(cfg: JSLConfig, state, table: Sum):
    """Population loss (P) and its partial derivatives in (alpha, gamma, rho): the weighted sum over
    moment classes (`class_sums`) or, for the multiset reference, over configurations."""
    if isinstance(table, ClassWeights):
        return class_sums.loss_and_gradients(cfg, state, table)
    der = derive(cfg.C, cfg.p)
    s = named(state)
    values = der.compiled(
        s.alpha, s.gamma, s.rho, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n)
    )
    return jnp.stack([jnp.sum(table.w * jnp.broadcast_to(v, table.w.shape)) for v in values])


def gradient(cfg: JSLConfig, table: Sum, theta):
    """dL/d(alpha, gamma, rho) of (P) (Lemma 4.3)."""
    return loss_and_gradients(cfg, theta, table)[1:]


def tie_tolerance(cfg: JSLConfig, state, n=None):
    """Bound on the rounding error of the computed F of each configuration n of the multiset sum (a
    uniform bound over all configurations when n is None): |F| below it counts as F = 0.

    Rounding model (u = unit roundoff of cfg.dtype, l = max(|gamma - beta|, |rho - beta|)/tau): exp
    of a rounded logit errs by relative (2 l + 2) u, so Lambda, Gamma, Xi err by relative <= (2 l +
    6) u; patch i's m_i = Lambda s_i + Gamma (T_m - s_i) + Xi (T - T_m) has integer coefficients, so
    with mu_i = Lambda |s_i| + Gamma |T_m - s_i| + Xi |T - T_m| (<= 1) it errs by <= (2 l + 9) u
    mu_i absolutely, and u_i = D alpha m_i by <= c y_i, c = (2 l + 11) u, y_i = D |alpha| mu_i. By
    the mean value theorem sigma(u_i) errs by <= sigma'(x_i) c y_i with x_i = |u_i| + 2 c y_i
    (computed |u_i| plus twice its error bounds the point in between; sigma' increasing in |x|), its
    evaluation adds 4 u sigma(x_i), and summing the D terms in <= K + 4 groups adds (K + 4) u sum_i
    sigma(x_i). A factor 4 covers the order in which the lambdified CSE code evaluates these (powers
    as products, common subexpressions). With n given the sums are the configuration's own
    (`symbolic.Derivation.compiled_scales`); without, every patch is taken at |u_i| = y_i = x = D
    |alpha| (looser: it called a genuine F = 1.8e-10 a tie, tests/test_reduced_observables.py). F is
    exactly 0 in exact arithmetic for configurations mapped to their negation by a set permutation
    (docs/derivations/jsl.md §2.4) and for T = 0 whenever gamma = rho (docs/derivations/jsl.md §3e,
    e.g. the idealized start).
    """
    u = float(jnp.finfo(jnp.dtype(cfg.dtype)).eps) / 2
    K = len(configurations.set_types(cfg.C))
    s = named(state)
    ell = jnp.maximum(jnp.abs(s.gamma - cfg.sigma_A), jnp.abs(s.rho - cfg.sigma_A)) / cfg.tau
    c = (2 * ell + 11) * u
    if n is None:
        x = cfg.D * jnp.abs(s.alpha)
        spread, sig = cfg.D * (cfg.p * x**cfg.p + cfg.nu * x) * c, cfg.D * (x**cfg.p + cfg.nu * x)
    else:
        spread, sig = derive(cfg.C, cfg.p).compiled_scales(
            s.alpha, s.gamma, s.rho, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(n), c
        )
    return 4 * (spread + (K + 8) * u * sig)


def population_error(cfg: JSLConfig, state, table: Sum):
    """Exact population 0-1 error P(F < 0) + 1/2 P(F = 0), y = +1 WLOG (docs/derivations/jsl.md
    §2.3), ties by `tie_tolerance` (by `class_sums.tie_tolerance` over moment classes)."""
    if isinstance(table, ClassWeights):
        return class_sums.population_error(cfg, state, table)
    der = derive(cfg.C, cfg.p)
    s = named(state)
    F = der.compiled_F(s.alpha, s.gamma, s.rho, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n))
    F = jnp.broadcast_to(F, table.w.shape)
    tol = jnp.broadcast_to(tie_tolerance(cfg, state, table.n), table.w.shape)
    return jnp.sum(table.w * error.wrong(F, tol).astype(table.w.dtype))


def orbit_step_sizes(cfg: JSLConfig) -> jnp.ndarray:
    """eta, eta/(D(C-1)), eta/(D(D-C)): GD on every A_ij of an orbit, in units of one entry
    (docs/derivations/jsl.md §3c)."""
    D, C = cfg.D, cfg.C
    return jnp.array([cfg.eta, cfg.eta / (D * (C - 1)), cfg.eta / (D * (D - C))], dtype=cfg.dtype)


def attention_weights(cfg: JSLConfig, state):
    """(Lambda, Gamma, Xi): diagonal, within-set and between-set scores of a row of S (Section
    4.1)."""
    s = named(state)
    logits = jnp.stack([jnp.asarray(cfg.sigma_A, state.dtype), s.gamma, s.rho]) / cfg.tau
    mult = jnp.array([1.0, cfg.C - 1, cfg.D - cfg.C], state.dtype)
    z = jax.nn.logsumexp(logits, b=mult)
    return jnp.exp(logits - z)


def extent(cfg: JSLConfig, theta):
    """(|alpha|, Gamma, Xi) of a state: the truncation bounds take their largest values along a
    run."""
    _, Gam, Xi = attention_weights(cfg, theta)
    return jnp.stack([jnp.abs(named(theta).alpha), Gam, Xi])


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


def association(cfg: JSLConfig, theta):
    """Definition 2.2 at the state: 1.0 iff min(beta, gamma) > rho (every row alike, Lemma 4.1);
    NaN where gamma or rho is NaN (a diverged run ranks nothing, and is not 'not associated')."""
    s = named(theta)
    value = jnp.where(jnp.minimum(cfg.sigma_A, s.gamma) > s.rho, 1.0, 0.0).astype(theta.dtype)
    return jnp.where(jnp.isnan(s.gamma) | jnp.isnan(s.rho), jnp.nan, value)


def derived_observables(cfg: JSLConfig, theta, table: Sum) -> dict:
    """within/between attention, patch association and the exact 0-1 error of the state (alpha,
    gamma, rho).

    within = (C-1) Gamma, between = (D-C) Xi (Section 4.1); by Lemma 4.1 every row is alike, so
    Top_C = S_l(i) (Definition 2.2, strict: ties fail) holds on all rows or none: 1.0 iff min(beta,
    gamma) > rho.
    """
    _, Gam, Xi = attention_weights(cfg, theta)
    return {
        "within_attention": (cfg.C - 1) * Gam,
        "between_attention": (cfg.D - cfg.C) * Xi,
        "patch_association": association(cfg, theta),
        "error": population_error(cfg, theta, table),
    }


def observe(cfg: JSLConfig, table: Sum, theta) -> dict:
    """The observables GD and the flow record at one state (alpha, gamma, rho)."""
    Lam, Gam, _ = attention_weights(cfg, theta)
    return {
        **named(theta)._asdict(),
        "loss": loss_and_gradients(cfg, theta, table)[0],
        "own_set_attention": Lam + (cfg.C - 1) * Gam,
        # The barrier keeps XLA from fusing these with the five above, which moved own_set_attention
        # by 1 ulp.
        **derived_observables(cfg, jax.lax.optimization_barrier(theta), table),
    }


def run(cfg: JSLConfig, table: Sum, state0):
    """GD theta -= orbit_step_sizes * dL/dtheta from state0, recorded; returns (records, largest
    (|alpha|, Gamma, Xi)).

    cfg's numbers may be traced (`JSLConfig.NUMBERS`): one compiled run serves every value of
    them."""
    theta0 = jnp.asarray(state0, cfg.dtype)
    theta, seen, rec = gd.run(
        lambda th: gradient(cfg, table, th),
        orbit_step_sizes(cfg),
        lambda th: observe(cfg, table, th),
        theta0,
        cfg.steps,
        cfg.record_every,
        track=lambda seen, th: jnp.maximum(seen, extent(cfg, th)),
        aux0=extent(cfg, theta0),
        nonfinite=True,
    )
    # The last state's alpha, Gamma, Xi count too (the loss is evaluated there).
    return rec, jnp.maximum(seen, extent(cfg, theta))


run_jit = jax.jit(run)


def trajectory(cfg: JSLConfig, rec: dict, seen, truncation: dict, **extra) -> Trajectory:
    """The reduced Trajectory of one run from its records and the largest (|alpha|, Gamma, Xi)
    met."""
    records = {k: np.asarray(v) for k, v in rec.items()}
    exact = divergence.take(records)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "reduced", "population", cfg, truncation=truncation, max_abs_alpha=float(seen[0]), **extra
    )
    divergence.flag(
        divergence.nonfinite(records, steps),
        steps,
        meta,
        meta["level"],
        meta["config"]["eta"],
        2,
        exact,
    )
    return Trajectory(steps, records, meta)
