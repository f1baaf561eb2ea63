"""Gradient flow of reduced JSL: the eta -> 0 limit of the GD recurrence of `dynamics`, solved by
`reduced.flow`.

With theta = (alpha, gamma, rho) and the per-entry step sizes of the recurrence
(`dynamics.orbit_step_sizes`: eta, eta/(D(C-1)), eta/(D(D-C))),

    d theta / dt = -(orbit_step_sizes(cfg) / eta) * dL/dtheta = -(1, 1/(D(C-1)), 1/(D(D-C))) *
      dL/dtheta,

with time in units of eta * steps. dL/dtheta is `dynamics.gradient`, the same sympy-derived
configuration sum the recurrence steps with; the observables are `dynamics.observe`, the ones GD
records.
"""

from __future__ import annotations

from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment
from dynsim.jsl import JSLConfig
from dynsim.trajectory import Trajectory
from dynsim.validation import is_int

from .. import flow as generic
from ..flow import Flow, finish, traced_options
from . import configurations, dynamics, tables
from .sums import choose

# By measurement (D = 36, C = 4, q = 0.3 to t = 1e6, docs/benchmarks.md b and l): LSODA needs far
# fewer evaluations and Jacobians than diffrax's Kvaerno4, whose JVPs per Newton solve and trace
# cost it several times the time, warm and cold
JSL_SOLVER = "lsoda"

__all__ = ["rates", "vector_field", "rhs", "simulate_flow"]


def rates(cfg) -> jnp.ndarray:
    """orbit_step_sizes / eta = (1, 1/(D(C-1)), 1/(D(D-C))): the per-entry rates of the flow."""
    return dynamics.orbit_step_sizes(cfg) / cfg.eta


def vector_field(cfg) -> Callable:
    """f(t, theta, table) = -rates(cfg) * dL/dtheta (the recurrence's increment divided by eta)."""
    r = rates(cfg)

    def f(t, theta, table):
        return -r * dynamics.loss_and_gradients(cfg, theta, table)[1:]

    return f


def rhs(cfg: JSLConfig, table, theta):
    """d theta/dt at theta (`vector_field` at any t)."""
    return vector_field(cfg)(0.0, theta, table)


# cfg is a pytree (`dynsim.jsl.traced`): its numbers are traced, one compiled field per shape
rhs_jit = jax.jit(rhs)
jacobian_jit = jax.jit(jax.jacfwd(rhs, argnums=2))  # 3 forward tangents through the class sum
jvp_jit = jax.jit(
    lambda cfg, table, theta, v: jax.jvp(lambda x: rhs(cfg, table, x), (theta,), (v,))[1]
)


@jax.jit
def largest_extent(cfg: JSLConfig, states):
    """The largest (|alpha|, Gamma, Xi) over saved states (R, 3) (`dynamics.extent`): what the
    truncation bounds use."""
    return jnp.max(jax.vmap(lambda th: dynamics.extent(cfg, th))(states), axis=0)


def solve(
    cfg: JSLConfig,
    max_nonzero,
    enumeration: str,
    solver: str,
    max_steps: int,
    table,
    theta0,
    ts,
    t_max,
    rtol,
    atol,
):
    """The flow from theta0, observed at ts: (records, reached, largest (|alpha|, Gamma, Xi) saved,
    stats, result)."""
    # the same arrays as `table`, kept on the device
    weights = tables.table(cfg, max_nonzero, enumeration).weights
    rec, reached, safe, stats, result = generic.solve(
        lambda th: rhs_jit(cfg, weights, th),
        lambda th, v: jvp_jit(cfg, weights, th, v),
        theta0,
        lambda th: dynamics.observe(cfg, table, th),
        ts,
        t_max,
        rtol,
        atol,
        solver,
        max_steps,
    )
    seen = largest_extent(cfg, safe)
    return rec, reached, seen, stats, result


def observe_all(cfg: JSLConfig, table, ys):
    """`dynamics.observe` at every saved state (lax.map: one state's temporaries at a time)."""
    return jax.lax.map(lambda th: dynamics.observe(cfg, table, th), ys)


observe_all_jit = jax.jit(observe_all)


def solve_on_host(cfg: JSLConfig, table, theta0, opts: dict):
    """The flow by a scipy solver stepped on the host (`reduced.flow.solve_host`) with the
    jit-compiled field and its Jacobian, then observed at the saves: (records, reached, largest
    (|alpha|, Gamma, Xi) saved, stats, result)."""
    dtype = jnp.dtype(cfg.dtype)
    ys, reached, stats, result = generic.solve_host(
        lambda th: rhs_jit(cfg, table, jnp.asarray(th, dtype)),
        lambda th: jacobian_jit(cfg, table, jnp.asarray(th, dtype)),
        np.asarray(theta0, float),
        opts["times"],
        opts["t_max"],
        opts["rtol"],
        opts["atol"],
        opts["solver"],
        opts["max_steps"],
    )
    safe = jnp.asarray(np.where(reached[:, None], ys, ys[:1]), dtype)
    rec = observe_all_jit(cfg, table, safe)
    return rec, reached, largest_extent(cfg, safe), stats, result


# cfg static (normalized by `generic.static`, so eta, steps and record_every do not recompile) with
# the table's truncation, solver and step budget; ts, t_max, rtol, atol traced
solve_jit = jax.jit(solve, static_argnums=(0, 1, 2, 3, 4))


def simulate_flow(
    cfg: JSLConfig,
    init: dynamics.Init = None,
    max_nonzero: Optional[int] = None,
    method: str = "flow",
    t_max: Optional[float] = None,
    *,
    enumeration: str = "classes",
    **flow_options,
) -> Trajectory:
    """Solve the gradient flow of (P) in (alpha, gamma, rho) from `init` to t_max and record GD's
    observables.

    t_max: end time in units of eta * steps (default cfg.eta * cfg.steps); flow_options: the other
    fields of `reduced.flow.Flow` (saves, t_min, times, rtol, atol, solver, max_steps). Saved at t =
    0 and `saves` log-spaced times from t_min (default min(eta, t_max)) to t_max, or at `times`. The
    Trajectory's steps are round(t / eta), deduplicated (nearest kept); the exact times are the
    observable "t" and meta["times"]. rtol, atol: the step-size tolerances. solver: "lsoda"
    (default: scipy's LSODA stepped from the host on the jit-compiled field and its jacfwd
    Jacobian), "bdf" (scipy), or diffrax's "kvaerno4", "kvaerno5", "kvaerno3" (implicit,
    stiff-capable) and "tsit5" (explicit), whose rtol/atol are traced (no recompilation). max_steps:
    solver step budget. The sum runs over every moment class unless there are more than MAX_CLASSES
    (then truncated as `reduced.jsl.sums.choose` says) or `max_nonzero` is given; the truncation
    bounds use the largest |alpha|, Gamma, Xi over the saved states.
    """
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    generic.check_flow(method, t_max)
    if max_nonzero is not None and (not is_int(max_nonzero) or max_nonzero < 0):
        raise ValueError(
            f"max_nonzero = {max_nonzero!r} is invalid: must be an integer >= 0 (or None for "
            f"the full sum)"
        )
    opts = Flow(t_max=t_max, **flow_options).resolved(cfg.eta, cfg.eta * cfg.steps, JSL_SOLVER)
    theta0 = dynamics.initial_state(cfg, init)
    tables.check_enumeration(enumeration)
    if max_nonzero is None and enumeration == "classes":
        choice = choose(cfg)
        if choice.method == "monte_carlo":
            raise ValueError(
                f"D = {cfg.D}, C = {cfg.C}: {choice.reason}; the flow needs the exact or "
                f"truncated sum: "
                "give max_nonzero"
            )
        max_nonzero = choice.max_nonzero
    tables.check_size(cfg, max_nonzero, enumeration)
    table = tables.table(cfg, max_nonzero, enumeration)
    dtype = jnp.dtype(cfg.dtype)
    if opts["solver"] in generic.HOST_SOLVERS:
        rec, reached, seen, stats, result = solve_on_host(
            generic.static(cfg), table.weights, theta0, opts
        )
    else:
        rec, reached, seen, stats, result = solve_jit(
            generic.static(cfg),
            max_nonzero,
            enumeration,
            opts["solver"],
            opts["max_steps"],
            table.weights,
            jnp.asarray(theta0, dtype),
            *traced_options(opts, dtype),
        )
    steps, records, flow_meta = finish(rec, reached, opts, stats, result, cfg.eta)
    seen = np.asarray(seen)
    bounds = configurations.truncation_bounds(
        cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, table.dropped, *seen
    )
    truncation = tables.truncation_meta(
        cfg, table.size, table.max_nonzero, table.dropped, bounds, enumeration
    )
    meta = environment.meta(
        "reduced", "flow", cfg, truncation=truncation, max_abs_alpha=float(seen[0]), **flow_meta
    )
    return Trajectory(steps, records, meta)
