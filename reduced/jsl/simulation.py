"""`simulate`: reduced JSL by GD (`dynamics.run` on the sum `sums.choose` picks) or by the flow
(`flow`)."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment, progress
from dynsim.jsl import JSLConfig
from dynsim.trajectory import Trajectory

from . import configurations, dynamics, sums, tables
from .dynamics import Init
from .flow import simulate_flow
from .tables import BOUND_TARGET


def run_monte_carlo(cfg: JSLConfig, key, q, state0, samples: int):
    """GD on a fixed Monte Carlo sample of the sum (`sums.monte_carlo_table`), with the sample's
    standard errors. The key and q (= cfg.q) are arguments, not constants of the program: XLA would
    otherwise fold the sampling's (types x samples) arrays at compile time (minutes at 1e6 samples).
    cfg's numbers may be traced, as in `dynamics.run`."""
    table = sums.monte_carlo_table(cfg, key, q, samples)
    rec, seen = dynamics.run(cfg, table, state0)
    states = jnp.stack([rec["alpha"], rec["gamma"], rec["rho"]], axis=1)
    return {**rec, **sums.standard_errors(cfg, states, table)}, seen


run_monte_carlo_jit = jax.jit(run_monte_carlo, static_argnums=4)


def simulate_gd(
    cfg: JSLConfig,
    init: Init = None,
    max_nonzero: Optional[int] = None,
    enumeration: str = "classes",
) -> Trajectory:
    """GD on the exact population loss (P): every moment class if they fit, else truncated with the
    cut tightened until every bound along the run is below BOUND_TARGET (unless `max_nonzero` fixes
    it), else Monte Carlo."""
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    if max_nonzero is not None and (not isinstance(max_nonzero, int) or not 0 <= max_nonzero):
        raise ValueError(
            f"max_nonzero = {max_nonzero!r} must be an integer >= 0 (or None for the full sum)"
        )
    tables.check_enumeration(enumeration)
    theta0 = jnp.asarray(dynamics.initial_state(cfg, init), cfg.dtype)
    auto = max_nonzero is None
    if auto and enumeration == "classes":
        choice = sums.choose(cfg)
        if choice.method == "monte_carlo":
            rec, seen = run_monte_carlo_jit(
                cfg, sums.mc_key(cfg), jnp.asarray(cfg.q, cfg.dtype), theta0, choice.size
            )
            meta = tables.truncation_meta(cfg, choice.size, None, float("nan"), {}, "monte_carlo")
            return dynamics.trajectory(
                cfg,
                rec,
                np.asarray(seen),
                {**meta, "method": "monte_carlo"},
                sum_method="monte_carlo",
                approximation="monte_carlo_sum",
                monte_carlo_samples=choice.size,
                sum_choice=choice.to_dict(),
            )
        chosen = choice.max_nonzero
    else:
        chosen = max_nonzero
    scale = 1.0
    while True:
        tables.check_size(cfg, chosen, enumeration)
        table = tables.table(cfg, chosen, enumeration)
        rec, seen = dynamics.run_jit(cfg, table.weights, theta0)
        seen = np.asarray(seen)
        bounds = configurations.truncation_bounds(
            cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, table.dropped, *seen
        )
        worst = max(bounds.values())
        if not auto or worst <= BOUND_TARGET or chosen is None or chosen >= cfg.D - cfg.C:
            break
        # Tighten: the bound factor along this run tells how small the dropped mass must be.
        scale = worst / max(table.dropped, 1e-300) * 2
        nxt = next(
            (
                k
                for k in range(chosen + 1, cfg.D - cfg.C + 1)
                if configurations.tail_probability(cfg.D, cfg.C, cfg.q, k) * scale <= BOUND_TARGET
            ),
            None,
        )
        chosen = cfg.D - cfg.C if nxt is None else nxt
    meta = tables.truncation_meta(
        cfg, table.size, table.max_nonzero, table.dropped, bounds, enumeration
    )
    return dynamics.trajectory(
        cfg,
        rec,
        seen,
        meta,
        sum_method="full" if table.max_nonzero is None else "truncated",
        weight_total=float(np.sum(np.asarray(table.w))),
    )


def gd_steps(cfg, init=None, max_nonzero=None, method="gd", t_max=None, *_, **flow_options):
    """The steps a progress bar counts for `simulate`'s arguments (None for the flow: no scan)."""
    plain = method == "gd" and t_max is None and not flow_options
    return getattr(cfg, "steps", None) if plain else None


@environment.guarded
@progress.tracked("reduced JSL", gd_steps)
def simulate(
    cfg: JSLConfig,
    init: Init = None,
    max_nonzero: Optional[int] = None,
    method: str = "gd",
    t_max: Optional[float] = None,
    enumeration: str = "classes",
    **flow_options,
) -> Trajectory:
    """Run GD on the exact population loss (P) in (alpha, gamma, rho) and record observables.

    Updates (same units as full-matrix GD, docs/derivations/jsl.md §3c): alpha -= eta dL/dalpha,
    gamma -= eta/(D(C-1)) dL/dgamma, rho -= eta/(D(D-C)) dL/drho; beta = sigma_A is fixed. The
    population sum runs over moment classes (`reduced.jsl.classes`; enumeration="multisets" sums
    every multiset of set types instead, the reference they are tested against). It is complete
    unless `max_nonzero` truncates it or it has more than MAX_CLASSES terms; then the truncation is
    chosen so that every bound stays below 1e-12 along the run, and if no truncation fits, a fixed
    Monte Carlo sample of 1e6 configurations is used, with its standard errors. The method, the
    terms summed, the dropped probability and the bounds are in meta["truncation"].

    method="flow": the gradient flow d theta/dt = -(orbit_step_sizes/eta) dL/dtheta instead, solved
    to t_max (default eta * steps) by `reduced.jsl.flow.simulate_flow`, which takes `flow_options`
    (saves, t_min, times, rtol, atol, solver, max_steps).

    progress: None (a bar once the run has taken a few seconds), True or False
    (`dynsim.progress.tracked`).
    """
    if method != "gd" or t_max is not None or flow_options:
        return simulate_flow(
            cfg, init, max_nonzero, method, t_max, enumeration=enumeration, **flow_options
        )
    return simulate_gd(cfg, init, max_nonzero, enumeration)
