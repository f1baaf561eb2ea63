"""`simulate`: reduced JSL by GD (`dynamics.run`, truncation chosen along the run) or by the flow (`flow`)."""

from __future__ import annotations

from typing import Optional

import numpy as np

from dynsim.jsl import JSLConfig
from dynsim.trajectory import Trajectory

from . import configurations, dynamics, tables
from .dynamics import Init
from .flow import simulate_flow
from .tables import BOUND_TARGET


def simulate_gd(cfg: JSLConfig, init: Init = None, max_nonzero: Optional[int] = None) -> Trajectory:
    """GD on the exact population loss (P), with the truncation of the configuration sum tightened until every bound
    along the run is below BOUND_TARGET (unless `max_nonzero` fixes it)."""
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    if max_nonzero is not None and (not isinstance(max_nonzero, int) or not 0 <= max_nonzero):
        raise ValueError(f"max_nonzero = {max_nonzero!r} must be an integer >= 0 (or None for the full sum)")
    theta0 = dynamics.initial_state(cfg, init)
    auto = max_nonzero is None
    scale = 1.0
    chosen = tables.choose_max_nonzero(cfg, scale) if auto else max_nonzero
    while True:
        tables.check_size(cfg, chosen)
        table = tables.table(cfg, chosen)
        rec, seen = dynamics.run_jit(cfg, table.weights, theta0)
        seen = np.asarray(seen)
        bounds = configurations.truncation_bounds(cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, table.dropped, *seen)
        worst = max(bounds.values())
        if not auto or worst <= BOUND_TARGET or chosen is None or chosen >= cfg.D - cfg.C:
            break
        # Tighten: the bound factor along this run tells how small the dropped mass must be.
        scale = worst / max(table.dropped, 1e-300) * 2
        nxt = tables.choose_max_nonzero(cfg, scale)
        chosen = cfg.D - cfg.C if nxt is None or nxt <= chosen else nxt
    return dynamics.trajectory(cfg, rec, seen,
                               tables.truncation_meta(cfg, table.size, table.max_nonzero, table.dropped, bounds))


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
        return simulate_flow(cfg, init, max_nonzero, method, t_max, **flow_options)
    return simulate_gd(cfg, init, max_nonzero)
