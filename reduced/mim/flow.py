"""Gradient flow of the reduced MIM dynamics: the eta -> 0 limit of the per-query-class GD of
`dynamics.run`.

With c = (|M|/P)/K and the per-entry factor 1/C'_j of the shared B_j (`dynamics.rates`):

    dA/dt = -c E[dl/dA],   dB_j/dt = -c E[dl/dB_j] / C'_j,   dB_self/dt = -c E[dl/dB_self]

(B and B_self frozen at 0 under "pp_frozen"), time in units of eta * steps. The expectations are
`dynamics.gradient`, the sympy-derived partials the recurrence steps with; the solver, the options
and the step mapping are `reduced.flow`.
"""

from __future__ import annotations

import threading
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment
from dynsim.mim import MIMConfig
from dynsim.trajectory import Trajectory
from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: its numbers traced)

from .. import flow as generic
from . import dynamics, spec


def rhs(cfg: MIMConfig, approx: tuple, tab, state):
    """-(the GD increment of `dynamics.run`) / eta."""
    A, B, Bs = state
    c, per_entry = dynamics.rates(cfg, tab[3])
    gA, gB, gBs = dynamics.gradient(approx, tab, state)
    if "pp_frozen" in approx:
        return -c * gA, jnp.zeros_like(B), jnp.zeros_like(Bs)
    return -c * gA, -c * gB * per_entry, -c * gBs


rhs_jit = jax.jit(rhs, static_argnums=(0, 1))
jvp_jit = jax.jit(
    lambda cfg, approx, tab, y, v: jax.jvp(lambda x: rhs(cfg, approx, tab, x), (y,), (v,))[1],
    static_argnums=(0, 1),
)
# The expectation table of the call in progress, on the device: the host callbacks of the vector
# field (`generic.isolated`) need it concrete, so `solve` reads it here when it is traced, and the
# compiled solve keeps the one it was traced with (in jax's cache). Set for the call only
# (`simulate_flow`): the module holds no table after it.
tracing = threading.local()


def solve(cfg, approx, solver, max_steps, tab, valid, class_weight, ts, t_max, rtol, atol):
    """The flow from Q = 0, observed at ts: (records, reached, final class state, stats, result)."""
    y0 = dynamics.initial_state(tab)
    table = tracing.table
    rec, reached, safe, stats, result = generic.solve(
        lambda y: rhs_jit(cfg, approx, table, y),
        lambda y, v: jvp_jit(cfg, approx, table, y, v),
        y0,
        lambda s: dynamics.observe(cfg, tab, valid, class_weight, s),
        ts,
        t_max,
        rtol,
        atol,
        solver,
        max_steps,
    )
    return rec, reached, jax.tree.map(lambda y: y[-1], safe), stats, result


# cfg (normalized: eta, steps, record_every do not matter), approximation, solver, step budget
# static; the save times, t_max, rtol and atol traced (no recompilation when they change)
solve_jit = jax.jit(solve, static_argnums=(0, 1, 2, 3))


def simulate_flow(
    cfg: MIMConfig,
    approximation: spec.Approximation = None,
    method: str = "flow",
    t_max: Optional[float] = None,
    **flow_options,
) -> Trajectory:
    """Solve the MIM gradient flow from Q = 0 to t_max (default eta * steps) and record what GD
    records.

    Options (`reduced.flow.Flow`'s fields) as `reduced.jsl.flow.simulate_flow`: saves log-spaced
    from t_min (default min(eta, t_max)), or at `times`; steps = round(t / eta) (deduplicated; exact
    times in "t"); rtol, atol traced; solver, max_steps. meta["approximation"] is the reduction's
    label joined with "gradient_flow" (e.g. "gradient_flow", "pp_frozen+gradient_flow"), so
    `dynsim.compare` judges it against GD as an approximation.
    """
    generic.check_flow(method, t_max)
    approx = dynamics.validate_run_options(cfg, approximation, method="flow")
    opts = generic.Flow(t_max=t_max, **flow_options).resolved(cfg.eta, cfg.eta * cfg.steps)
    if opts["solver"] in generic.HOST_SOLVERS:
        raise ValueError(
            f"solver = {opts['solver']!r} is invalid for MIM: its flow runs on diffrax, one of "
            f"{', '.join(map(repr, generic.SOLVERS))} (the host solvers serve reduced JSL)"
        )
    cls, tab, idx, tab_arrays, valid, class_weight = dynamics.setup(cfg, approx)
    dtype = jnp.dtype(cfg.dtype)
    static = generic.static(cfg)
    tracing.table = tab_arrays
    try:
        rec, reached, final, stats, result = solve_jit(
            static,
            approx,
            opts["solver"],
            opts["max_steps"],
            tab_arrays,
            valid,
            class_weight,
            *generic.traced_options(opts, dtype),
        )
    finally:
        del tracing.table
    steps, observables, flow_meta = generic.finish(rec, reached, opts, stats, result, cfg.eta)
    flow_meta["approximation"] = "+".join(approx + (generic.LABEL,))
    meta = environment.meta(
        "reduced",
        "flow",
        cfg,
        configurations=int(np.count_nonzero(tab.w)),
        **dynamics.class_meta(cfg, cls),
        records=dynamics.attach_per_patch(cfg, idx, observables),
        reduction=spec.label(approx),
        **flow_meta,
    )
    return Trajectory(steps, observables, meta, dynamics.final_state(final))
