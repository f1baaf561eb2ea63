"""Several reduced runs of one config from different starts, as one vmapped program."""

from __future__ import annotations

import jax
import numpy as np

from dynsim import environment, recording
from dynsim.jsl import JSLConfig
from dynsim.trajectory import Trajectory, seed_statistics

from . import configurations, dynamics


def _run_many(cfg: JSLConfig, table, states0):
    return jax.vmap(lambda s: dynamics._run(cfg, table, s))(states0)


_run_many_jit = jax.jit(_run_many, static_argnums=0)


def simulate_many(cfg: JSLConfig, inits) -> Trajectory:
    """Reduced GD on (P) from each start in `inits` (R x 3: alpha, gamma, rho), vmapped.

    The observables are the mean over starts; `<name>_seeds` (steps, R) holds each run. The full
    configuration sum is used; a config whose sum exceeds `dynamics.MAX_CONFIGURATIONS` is refused.
    """
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    states = np.asarray(inits, dtype=float)
    if states.ndim != 2 or states.shape[1] != 3 or states.shape[0] < 1:
        raise ValueError(f"inits has shape {states.shape}: expected (R, 3) rows of (alpha, gamma, rho), R >= 1")
    if not np.all(np.isfinite(states)):
        raise ValueError("inits must be finite")
    dynamics._check_size(cfg, None)
    table = dynamics._table(cfg, None)
    rec, seen = _run_many_jit(cfg, table.weights, jax.numpy.asarray(states, cfg.dtype))
    observables = seed_statistics(rec, standard_error=False)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "reduced", "population", cfg,
        starts=states.tolist(),
        truncation={"configurations": table.size, "configurations_total": configurations.count(cfg.D, cfg.C),
                    "max_nonzero": None, "dropped_probability": 0.0},
        max_abs_alpha=float(np.max(np.asarray(seen)[:, 0])),
    )
    dynamics._flag_nonfinite(observables, steps, meta)
    return Trajectory(steps, observables, meta)
