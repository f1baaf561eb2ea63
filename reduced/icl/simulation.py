"""The reduced ICL level: (u, a) with u = w22^PV and W11^KQ = diag(a), by GD (`reduced.gd.descend`
in one `lax.scan`) or as the gradient flow (diffrax, `reduced.flow`), the gradients those of
`symbolic.derive` (sympy), from the paper's initialization u = sigma, a = sigma / sqrt(d)
(docs/icl.md §4)."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment, recording, validation
from dynsim.icl import traced
from dynsim.icl.config import ICLConfig
from dynsim.trajectory import Trajectory

from .. import flow as generic
from .. import gd
from . import symbolic

SOLVER = "tsit5"  # the flow is not stiff at the sizes run here: an explicit method


def terms(cfg: ICLConfig, y):
    """(L, dL/du, dL/da) at y = (u, a): the sympy-derived summand and its partials, summed."""
    u, a = y
    lam = traced.spectrum(cfg)
    loss, d_u, d_a = symbolic.derive()(u, a, lam, jnp.sum(lam), jnp.asarray(cfg.N, cfg.dtype))
    return jnp.sum(loss), jnp.sum(d_u), d_a


def start(cfg: ICLConfig):
    """u(0) = sigma, a(0) = sigma / sqrt(d): W11^KQ(0) = sigma Theta Theta^T = sigma I /
    sqrt(d)."""
    sigma = jnp.asarray(cfg.sigma, cfg.dtype)
    return sigma, jnp.full(cfg.d, 1.0, cfg.dtype) * sigma / jnp.sqrt(jnp.asarray(cfg.d, cfg.dtype))


def observe(cfg: ICLConfig):
    """The recorded quantities of (u, a): u, the product u a, the loss, the relative distance of
    u diag(a) to Gamma^{-1} and the balance u^2 - |a|^2 (GD also records `amplification`,
    sqrt(lambda_max(Q_t) / (t + 1)) and at least 1: how much more than a random walk the errors made
    at each step have grown by, docs/icl.md §9)."""

    def seen(y):
        u, a = y
        target = 1 / traced.gamma(cfg)
        return {
            "u": u,
            "product": u * a,
            "loss": terms(cfg, y)[0],
            "gap": jnp.linalg.norm(u * a - target) / jnp.linalg.norm(target),
            "balance": u**2 - jnp.sum(a**2),
        }

    return seen


def flat_gradient(cfg: ICLConfig):
    """z = (u, a_1, ..., a_d) -> dL/dz (the sympy-derived partials)."""

    def grad(z):
        d_u, d_a = terms(cfg, (z[0], z[1:]))[1:]
        return jnp.concatenate([d_u[None], d_a])

    return grad


@jax.jit
def _gd(cfg: ICLConfig):
    """GD on (u, a) with `reduced.gd.descend`; beside it Q_t = J_t Q_{t-1} J_t^T + I, J = I - eta
    H the GD map's Jacobian: the covariance an error of unit covariance made at every step has
    grown to (Q_t = (t + 1) I where the map stretches nothing), for `amplification`."""
    eta = jnp.asarray(cfg.eta, cfg.dtype)
    hessian, eye = jax.jacfwd(flat_gradient(cfg)), jnp.eye(cfg.d + 1)

    def step(carry, t):
        y, Q = carry
        J = eye - eta * hessian(jnp.concatenate([y[0][None], y[1]]))
        return gd.descend(y, (eta, eta), terms(cfg, y)[1:]), J @ Q @ J.T + eye

    def seen(carry, t):
        y, Q = carry
        stretch = jnp.sqrt(jnp.linalg.eigvalsh(Q)[-1] / (t + 1))
        return {**observe(cfg)(y), "amplification": jnp.maximum(stretch, 1.0)}

    (y, _), rec = recording.run(step, seen, (start(cfg), eye), cfg.steps, cfg.record_every)
    return y, rec


def _solve(cfg: ICLConfig, solver: str, max_steps: int, ts, t_max, rtol, atol):
    """The flow dy/dt = -grad L(y) from `start`, observed at ts (traceable)."""
    field = lambda t, y, args: jax.tree.map(jnp.negative, terms(cfg, y)[1:])  # noqa: E731
    ys, stats, result = generic.integrate(
        field, start(cfg), None, ts, t_max, rtol, atol, solver, max_steps
    )
    reached = jnp.isfinite(ys[0])
    safe = jax.tree.map(
        lambda y, y0: jnp.where(reached.reshape((-1,) + (1,) * jnp.ndim(y0)), y, y0), ys, start(cfg)
    )
    records = generic.observe_saves(observe(cfg), safe, ts, t_max, reached)
    return records, reached, jax.tree.map(lambda y: y[-1], safe), stats, result


_solve_jit = jax.jit(_solve, static_argnums=(1, 2))


def simulate(
    cfg: ICLConfig, method: str = "gd", t_max: Optional[float] = None, **flow_options
) -> Trajectory:
    """The reduced level by GD (`method="gd"`) or as the gradient flow (`method="flow"`, to t_max,
    default eta * steps; `reduced.flow.Flow`'s options), meta["approximation"] "gradient_flow" for
    the flow (compared with GD as an approximation, O(eta))."""
    validation.check_type("cfg", cfg, ICLConfig, "an ICLConfig")
    generic.check_method(method)
    if method == "gd":
        if t_max is not None or flow_options:
            generic.check_flow(method, t_max)
        with environment.precision(cfg.dtype):
            (u, a), rec = _gd(cfg)
        steps = recording.recorded_steps(cfg.steps, cfg.record_every)
        observables = {k: np.asarray(v) for k, v in rec.items()}
        final = {"u": np.asarray(u), "a": np.asarray(a)}
        return Trajectory(steps, observables, environment.meta("reduced", "exact", cfg), final)
    opts = generic.Flow(t_max=t_max, **flow_options).resolved(cfg.eta, cfg.eta * cfg.steps, SOLVER)
    if opts["solver"] in generic.HOST_SOLVERS:
        raise ValueError(
            f"solver = {opts['solver']!r} is invalid for ICL: its flow runs on diffrax, one of "
            f"{', '.join(map(repr, generic.SOLVERS))}"
        )
    with environment.precision(cfg.dtype):
        rec, reached, (u, a), stats, result = _solve_jit(
            generic.static(cfg),
            opts["solver"],
            opts["max_steps"],
            *generic.traced_options(opts, jnp.dtype(cfg.dtype)),
        )
    steps, observables, flow_meta = generic.finish(rec, reached, opts, stats, result, cfg.eta)
    meta = environment.meta("reduced", "flow", cfg, **flow_meta)
    return Trajectory(steps, observables, meta, {"u": np.asarray(u), "a": np.asarray(a)})
