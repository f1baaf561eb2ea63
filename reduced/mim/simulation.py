"""`simulate`: reduced MIM by GD (`dynamics.run`) or by the gradient flow (`flow`)."""

from __future__ import annotations

import numpy as np

from dynsim import divergence, environment, recording
from dynsim.mim import MIMConfig
from dynsim.trajectory import Trajectory

from . import dynamics
from .dynamics import Approximation
from .flow import simulate_flow


def simulate_gd(cfg: MIMConfig, approximation: Approximation = None) -> Trajectory:
    """Reduced GD from Q = 0 (`dynamics.run`), its class states expanded per patch."""
    approx = dynamics.check(cfg, approximation)
    cls, tab, idx, arrays, idx_arrays, class_weight = dynamics.setup(cfg, approx)
    state, rec = dynamics.run_jit(cfg, approx, arrays, idx_arrays, class_weight)
    observables = {k: np.asarray(v) for k, v in rec.items()}
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    expanded = steps.size * cfg.P**2 <= dynamics.PP_BUDGET
    if expanded:
        observables["pp_corr"] = dynamics.pp_corr(idx, observables["pp_class"], observables["pp_self"])
    meta = environment.meta("reduced", "population", cfg, approximation=dynamics.label(approx),
                            configurations=int(np.count_nonzero(tab.w)), classes=[list(s) for s in cls.sizes],
                            areas=[[list(a) for a in cl] for cl in cfg.areas], delta=cfg.delta,
                            pp_corr=("expanded per patch pair" if expanded else
                                     f"not expanded ({steps.size} records x P^2 > {dynamics.PP_BUDGET:,} entries): "
                                     "pp_class (per class and area) and pp_self hold it; reduced.mim.pp_corr expands "
                                     "a slice"))
    divergence.flag(divergence.nonfinite({"loss": observables["loss"]}, steps), steps, meta, "reduced", cfg.eta, 3)
    traj = Trajectory(steps, observables, meta)
    traj.final_state = tuple(np.asarray(x) for x in state)
    return traj


def simulate(cfg: MIMConfig, approximation: Approximation = None, method: str = "gd", t_max=None,
             **flow_options) -> Trajectory:
    """Run reduced GD from Q = 0 and record fp_corr, pp_corr, area_attention, loss and pp_max, expanded per patch.

    approximation: None (exact: every count vector of the multivariate hypergeometric law and every latent
    vector enumerated; needs K = 1), "pp_frozen" (B = 0), "mean_field" (counts at their means) or both
    ("pp_frozen+mean_field"). The observables have the full level's shapes, so `dynsim.compare` reads both.
    method="flow": the gradient flow of the same per-class state instead, solved to t_max (default eta * steps) by
    `reduced.mim.flow.simulate_flow` with `flow_options` (saves, t_min, times, rtol, atol, solver, max_steps).
    """
    if method != "gd" or t_max is not None or flow_options:
        return simulate_flow(cfg, approximation, method, t_max, **flow_options)
    return simulate_gd(cfg, approximation)
