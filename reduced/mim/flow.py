"""Gradient flow of the reduced MIM dynamics: the eta -> 0 limit of the per-query-class GD in `dynamics`.

With c = (|M|/P)/K and the per-entry factor 1/C'_j of the shared B_j (as in `dynamics._run`):

    dA/dt = -c E[dl/dA],   dB_j/dt = -c E[dl/dB_j] / C'_j,   dB_self/dt = -c E[dl/dB_self]

(B and B_self frozen at 0 under "pp_frozen"), time in units of eta * steps. The expectations are
`dynamics._expectations`, the sympy-derived partials the recurrence steps with. The solver, the options and the
step mapping are the generic part of `reduced.jsl.flow`.
"""

from __future__ import annotations

from typing import Optional, Sequence

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment
from dynsim.mim import MIMConfig
from dynsim.trajectory import Trajectory
from reduced.jsl import flow as generic

from . import dynamics
from .symbolic import derive


def _rates(cfg: MIMConfig, pop):
    c = (cfg.masked / cfg.P) / cfg.K
    per_entry = jnp.where(pop > 0, 1.0 / jnp.where(pop > 0, pop, 1.0), 0.0)
    return c, per_entry


def _rhs(cfg: MIMConfig, approx: tuple, tab, state):
    """-(the GD increment of `dynamics._run`) / eta."""
    A, B, Bs = state
    c, per_entry = _rates(cfg, tab[3])
    _, gA, gB, gBs, _ = dynamics._expectations(derive(), A, B, Bs, tab)
    if "pp_frozen" in approx:
        return -c * gA, jnp.zeros_like(B), jnp.zeros_like(Bs)
    return -c * gA, -c * gB * per_entry, -c * gBs


_rhs_jit = jax.jit(_rhs, static_argnums=(0, 1))
_jvp_jit = jax.jit(lambda cfg, approx, tab, y, v: jax.jvp(lambda x: _rhs(cfg, approx, tab, x), (y,), (v,))[1],
                   static_argnums=(0, 1))


def _observe(cfg: MIMConfig, tab, idx_arrays, class_weight, state) -> dict:
    """The observables `dynamics._run` records, at one class state."""
    A, B, Bs = state
    pop = tab[3]
    c, _ = _rates(cfg, pop)
    cls_idx, pos, valid = idx_arrays
    loss, _, _, _, att = dynamics._expectations(derive(), A, B, Bs, tab)
    safe = jnp.where(valid, pos, 0)
    pp_max = jnp.maximum(jnp.max(jnp.where(pop > 0, jnp.abs(B), 0.0)), jnp.max(jnp.abs(Bs)))
    return {"fp_corr": jnp.where(valid, A[cls_idx[..., None], safe], jnp.nan), "pp_class": B, "pp_self": Bs,
            "pp_max": pp_max, "area_attention": jnp.where(valid, att[cls_idx[..., None], safe], jnp.nan),
            "loss": c * jnp.sum(class_weight * loss)}


def _solve(cfg, approx, solver, max_steps, tab, idx_arrays, class_weight, ts, t_max, rtol, atol):
    n_cls, N = tab[3].shape
    zeros = jnp.zeros((n_cls, N), tab[3].dtype)
    y0 = (zeros, zeros, jnp.zeros((n_cls,), zeros.dtype))
    key = _key(cfg, approx)
    f = generic.isolated(lambda y: _rhs_jit(cfg, approx, _arrays[key], y),
                         lambda y, v: _jvp_jit(cfg, approx, _arrays[key], y, v), y0)
    ys, stats, result = generic.integrate(f, y0, None, ts, t_max, rtol, atol, solver, max_steps)
    reached = jnp.all(jnp.isfinite(ys[0].reshape(ys[0].shape[0], -1)), axis=1)
    safe = jax.tree.map(lambda y, y0: jnp.where(reached.reshape((-1,) + (1,) * y0.ndim), y, y0), ys, y0)
    rec = generic.observe_saves(lambda s: _observe(cfg, tab, idx_arrays, class_weight, s), safe, ts, t_max, reached)
    return rec, reached, jax.tree.map(lambda y: y[-1], safe), stats, result


# cfg (normalized: eta, steps, record_every do not matter), approximation, solver, step budget static; the save
# times, t_max, rtol and atol traced (no recompilation when they change)
_solve_jit = jax.jit(_solve, static_argnums=(0, 1, 2, 3))
_arrays: dict = {}  # the expectation table of a static key, on the device, for the vector field's callbacks


def _key(cfg: MIMConfig, approx: tuple):
    return cfg, approx


def simulate_flow(cfg: MIMConfig, approximation: dynamics.Approximation = None, method: str = "flow",
                  t_max: Optional[float] = None, *, saves: int = generic.SAVES, t_min: Optional[float] = None,
                  times: Optional[Sequence[float]] = None, rtol: float = generic.RTOL, atol: float = generic.ATOL,
                  solver: str = generic.SOLVER, max_steps: int = generic.MAX_STEPS) -> Trajectory:
    """Solve the MIM gradient flow from Q = 0 to t_max (default eta * steps) and record what GD records.

    Options as `reduced.jsl.flow.simulate_flow`: saves log-spaced from t_min (default min(eta, t_max)), or at
    `times`; steps = round(t / eta) (deduplicated; exact times in "t"); rtol, atol traced; solver, max_steps.
    meta["approximation"] is the reduction's label joined with "gradient_flow" (e.g. "gradient_flow",
    "pp_frozen+gradient_flow"), so `dynsim.compare` judges it against GD as an approximation.
    """
    if generic.check_method(method) == "gd":
        raise ValueError(f"t_max = {t_max!r} and the flow options (saves, t_min, times, rtol, atol, solver, max_steps) "
                         "are invalid with method = 'gd': they belong to method = 'flow'")
    approx = dynamics.check(cfg, approximation)
    opts = generic.options(cfg.eta, t_max, saves=saves, t_min=t_min, times=times, rtol=rtol, atol=atol,
                           solver=solver, max_steps=max_steps, default_t_max=cfg.eta * cfg.steps)
    cls, tab, idx, arrays, idx_arrays, class_weight = dynamics.setup(cfg, approx)
    dtype = jnp.dtype(cfg.dtype)
    static = cfg.replace(eta=1.0, steps=0, record_every=1)
    _arrays[_key(static, approx)] = arrays
    rec, reached, final, stats, result = _solve_jit(static, approx, opts["solver"], opts["max_steps"], arrays,
                                                    idx_arrays, class_weight,
                                                    *generic.traced_options(opts, dtype))
    steps, observables, flow_meta = generic.finish(rec, reached, opts, stats, result, cfg.eta)
    flow_meta["approximation"] = "+".join(approx + (generic.LABEL,))
    expanded = steps.size * cfg.P**2 <= dynamics.PP_BUDGET
    if expanded:
        observables["pp_corr"] = dynamics.pp_corr(idx, observables["pp_class"], observables["pp_self"])
    meta = environment.meta("reduced", "flow", cfg, configurations=int(np.count_nonzero(tab.w)),
                            classes=[list(s) for s in cls.sizes], areas=[[list(a) for a in cl] for cl in cfg.areas],
                            delta=cfg.delta, pp_corr="expanded per patch pair" if expanded else
                            "not expanded: pp_class and pp_self hold it; reduced.mim.pp_corr expands a slice",
                            reduction=dynamics.label(approx), **flow_meta)
    traj = Trajectory(steps, observables, meta)
    traj.final_state = tuple(np.asarray(x) for x in final)
    return traj
