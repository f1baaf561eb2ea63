"""`simulate`: full JSL in mode exact or sampled (`training`) or realistic (`realistic`); its option
checks, `validate_run_options`, are the level's spec's (`full.jsl.spec`)."""

from __future__ import annotations

from typing import Mapping, Optional

import jax.numpy as jnp

from dynsim import environment, progress
from dynsim.jsl import JSLConfig, data
from dynsim.trajectory import Trajectory

from . import realistic, selfcheck, training
from .spec import validate_run_options


@environment.guarded
@progress.tracked("full JSL", lambda cfg, *a, **k: getattr(cfg, "steps", None))
def simulate(
    cfg: JSLConfig,
    mode: str = "exact",
    init: Optional[Mapping] = None,
    replicates: Optional[int] = None,
    seeds: Optional[int] = None,
) -> Trajectory:
    """Train the full-matrix model by GD and record the observables every `record_every` steps.

    mode="exact": GD on the population loss (P), every (signal set, delta) configuration enumerated.
    mode="sampled": GD on a fresh batch of N samples of Assumption 1 (noise included) every step;
    `replicates` independent runs (default 8, vmapped) give each observable's mean and its standard
    error `<name>_se`, from which the checker builds its Monte Carlo band. mode="realistic": problem
    (E), `full.jsl.realistic.run(cfg, seeds)` (default 8 seeds, random start of Parametrization 3.1,
    so `init` is refused); returns its Trajectory, with meta["self_check"] (`full.jsl.selfcheck`).
    progress: None (a bar once the run has taken a few seconds), True or False
    (`dynsim.progress.tracked`).
    """
    R = validate_run_options(cfg, mode, replicates, seeds)
    if mode == "realistic":
        if init is not None:
            raise ValueError(
                f"init = {init!r} is invalid in mode 'realistic': the start is random "
                f"(Parametrization 3.1, "
                "realistic case, std cfg.omega); use mode 'exact' or 'sampled' for a given start"
            )
        traj = realistic.run(cfg, R)[0]
        # the data law and the gradient identity of every seed (`selfcheck`), judged by compare
        traj.meta["self_check"] = selfcheck.run(cfg, R)
        return traj
    w_star = data.feature(cfg, jnp.dtype(cfg.dtype))
    params0 = training.initial_params(cfg, w_star, init)
    if mode == "exact":
        training.check_start(cfg, params0, w_star)
    return training.run(cfg, mode, params0, w_star, R)
