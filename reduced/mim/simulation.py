"""`simulate`: reduced MIM by GD (`dynamics.run`) or by the gradient flow (`flow`)."""

from __future__ import annotations

from typing import Callable, Optional

import jax.numpy as jnp
import numpy as np

from dynsim import divergence, environment, progress, recording
from dynsim.mim import MIMConfig, records
from dynsim.trajectory import Trajectory, seed_statistics
from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: its numbers traced)

from . import cells, dynamics, joint, spec
from .classes import SAMPLES_TAG
from .spec import Approximation
from .flow import simulate_flow


def assemble(cfg: MIMConfig, state, rec: dict, sampled: bool, meta: Callable) -> Trajectory:
    """The reduced Trajectory of a run's final state and records: per-replicate records (`sampled`)
    become each observable's mean and standard error; `meta(observables)` -> the run's meta entries
    (evaluated once the observables are final); a loss that stops being finite is flagged at its
    step."""
    observables = {k: np.asarray(v) for k, v in rec.items()}
    if sampled:
        observables = seed_statistics(observables, keep_seeds=False)
    exact = divergence.take(observables)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    mode = "sampled" if sampled else "population"
    info = environment.meta("reduced", mode, cfg, **meta(observables))
    loss = divergence.nonfinite({"loss": observables["loss"]}, steps)
    divergence.flag(loss, steps, info, "reduced", cfg.eta, 3, exact)
    final = {} if state is None else dynamics.final_state(state)
    return Trajectory(steps, observables, info, final)


def assemble_runs(cfg: MIMConfig, state, rec: dict, meta: Callable, first: bool):
    """`assemble` of a population run; `first` (recorded at `recording.with_first_step`): the pair
    (the run, its first step), the second as `simulate(cfg.replace(steps=1, record_every=1))`
    records it (pp_cluster_max_steps: the step-1 slot of each row) with no final state."""
    if not first:
        return assemble(cfg, state, rec, False, meta)
    rows, one = recording.first_step_rows(cfg.steps, cfg.record_every)
    rec = {k: np.asarray(v) for k, v in rec.items()}
    cut = {k: v[one] for k, v in rec.items()}
    if "pp_cluster_max_steps" in cut:
        cut["pp_cluster_max_steps"] = cut["pp_cluster_max_steps"][:, :1]
    return (
        assemble(cfg, state, {k: v[rows] for k, v in rec.items()}, False, meta),
        assemble(cfg.replace(steps=1, record_every=1), None, cut, False, meta),
    )


def simulate_gd(
    cfg: MIMConfig,
    approximation: Approximation = None,
    samples: Optional[int] = None,
    replicates: int = 1,
    every_step: bool = False,
    first: bool = False,
):
    """Reduced GD from Q = 0 (`dynamics.run`), recorded per class; the per-patch views are added
    where they fit (`dynamics.attach_per_patch`). With `samples` (checked by the caller):
    `replicates` Monte Carlo tables of the class counts, each observable's mean and `<name>_se`
    (mode "sampled"), still per class and without any P x P array. `every_step` (population runs):
    the largest |B| after every step too, pp_cluster_max_steps (`simulate`); `first` (population
    runs): the pair (the run, its first step), `assemble_runs`."""
    approx = (
        dynamics.validate_run_options(cfg, approximation)
        if samples is None
        else spec.approximations(approximation)
    )
    if (every_step or first) and samples is not None:
        raise ValueError("every_step and first need a population run (samples = None)")
    if spec.joint(cfg, approx):
        return simulate_joint(cfg, approx, every_step=every_step, first=first)
    cls, tab, idx, arrays, valid, class_weight = dynamics.setup(cfg, approx, samples, replicates)
    if samples is None:
        state, rec = dynamics.run_jit(cfg, approx, arrays, valid, class_weight, every_step, first)
    else:
        state, rec = dynamics.run_replicates_jit(cfg, approx, arrays, valid, class_weight)

    def meta(observables):
        return dict(
            approximation=spec.label(approx),
            replicates=replicates,
            samples=samples,
            configurations=int(np.count_nonzero(tab.w)),
            **dynamics.class_meta(cfg, cls),
            records=dynamics.attach_per_patch(cfg, idx, observables),
        )

    if samples is None:
        return assemble_runs(cfg, state, rec, meta, first)
    return assemble(cfg, state, rec, True, meta)


def simulate_joint(
    cfg: MIMConfig,
    approx: tuple,
    samples: Optional[int] = None,
    replicates: int = 1,
    every_step: bool = False,
    first: bool = False,
):
    """K > 1 with B free (or any K with `samples`): reduced GD per query and joint type
    (`joint.run`), recorded per patch (fp_corr, area_attention, pp_corr, pp_max, loss: the full
    level's shapes). With `samples`, the expectation over the counts is a Monte Carlo mean of that
    many count vectors per query, and `replicates` independent draws give each observable's mean and
    standard error `<name>_se` (mode "sampled"). `first` (population runs): the pair (the run, its
    first step), `assemble_runs`."""
    if samples is None and "mean_field" in approx:
        return simulate_cells(cfg, approx, every_step, first)
    types, ex, tables = joint.setup(cfg, "mean_field" in approx, samples, replicates)
    if samples is None:
        state, rec = joint.run_jit(cfg, tables, jnp.asarray(types.of_key), every_step, first)
    else:
        state, rec = joint.run_replicates_jit(cfg, tables, jnp.asarray(types.of_key))

    def meta(observables):
        return dict(
            approximation=spec.label(approx),
            replicates=replicates,
            samples=samples,
            count_draws=None
            if samples is None
            else f"numpy default_rng([seed, {SAMPLES_TAG}, r]), r = 0..{replicates - 1}",
            configurations=int(np.count_nonzero(ex.w)) * int(np.count_nonzero(ex.wz)),
            joint_types=[int(np.count_nonzero(c)) for c in types.population],
            areas=[[list(a) for a in cl] for cl in cfg.areas],
            delta=cfg.delta,
            records="per patch (joint types: B per query and joint type of the key)",
        )

    if samples is None:
        return assemble_runs(cfg, state, rec, meta, first)
    return assemble(cfg, state, rec, True, meta)


def simulate_cells(cfg: MIMConfig, approx: tuple, every_step: bool = False, first: bool = False):
    """K > 1, B free, mean field: one state per joint cell (`reduced.mim.cells`, the same
    trajectory as `simulate_joint`'s per query), recorded per cell, per patch where it fits
    `dynamics.PATCH_BUDGET`; `every_step`: pp_cluster_max after every step too; `first`: the pair
    (the run, its first step), `assemble_runs`."""
    index = records.cell_index(cfg)
    tab = cells.tables(cfg)
    # the run's own records decide (an extra record of its first step does not change the run)
    n = recording.recorded_steps(cfg.steps, cfg.record_every).size
    with_pp = cells.pp_recorded(cfg, n, dynamics.PATCH_BUDGET)
    sizes = jnp.asarray(index.size, jnp.dtype(cfg.dtype))
    state, rec = cells.run_jit(cfg, tab, sizes, with_pp, every_step, first)
    per_query = np.count_nonzero(np.asarray(tab[2]), axis=1)[index.cell]

    def meta(observables):
        return dict(
            approximation=spec.label(approx),
            replicates=1,
            samples=None,
            configurations=int(index.size.size),
            joint_types=[int(x) for x in per_query],
            joint_cells=int(index.size.size),
            areas=[[list(a) for a in cl] for cl in cfg.areas],
            delta=cfg.delta,
            records=cells.attach_per_patch(cfg, observables, dynamics.PATCH_BUDGET),
        )

    return assemble_runs(cfg, state, rec, meta, first)


def gd_steps(cfg, approximation=None, method="gd", t_max=None, *_, **flow_options):
    """The steps a progress bar counts for `simulate`'s arguments (None for the flow: no scan)."""
    flow_options.pop("samples", None), flow_options.pop("replicates", None)
    flow_options.pop("every_step", None)
    plain = method == "gd" and t_max is None and not flow_options
    return getattr(cfg, "steps", None) if plain else None


@environment.guarded
@progress.tracked("reduced MIM", gd_steps)
def simulate(
    cfg: MIMConfig,
    approximation: Approximation = None,
    method: str = "gd",
    t_max=None,
    samples: Optional[int] = None,
    replicates: Optional[int] = None,
    every_step: bool = False,
    **flow_options,
) -> Trajectory:
    """Run reduced GD from Q = 0 and record per query class: fp_class, area_attention_class,
    pp_class, pp_self, loss and pp_max; fp_corr, area_attention and pp_corr per patch where they fit
    `dynamics.PATCH_BUDGET` entries.

    approximation: None (exact: every count vector of the multivariate hypergeometric law and every
    latent vector enumerated; K > 1 with B free runs per query and joint type, `reduced.mim.joint`),
    "pp_frozen" (B = 0), "mean_field" (counts at their means) or both ("pp_frozen+mean_field"). The
    per-patch observables have the full level's shapes, so `dynsim.compare` reads both;
    meta["records"] says which were expanded, and `dynsim.mim.records` reads either form (any P:
    memory O(records x classes x N + K P), no P x P index; docs/mim.md §3). samples, replicates: a
    Monte Carlo expectation over the counts instead (any K, B free, GD only): `samples` count
    vectors per query drawn from the multivariate hypergeometric law, `replicates` (default 4, at
    least 2) independent draws; each observable gets its mean and `<name>_se`, which the checker
    turns into a statistical band (for the P where the exact enumeration does not fit and mean field
    is too coarse: docs/mim.md §3b). method="flow": the gradient flow of the same per-class state
    instead, solved to t_max (default eta * steps) by `reduced.mim.flow.simulate_flow` with
    `flow_options` (saves, t_min, times, rtol, atol, solver, max_steps). every_step (GD,
    population): also the largest |B| after every step, pp_cluster_max_steps (records, record_every,
    K'): per cluster's projection B_k at K > 1 under mean field with B free (K' = K), else of B
    itself (K' = 1); `reduced.gd.step_series` gives one value per step (Lemma 5.3's Phase I read to
    its switch, not to the last record before it). progress: None (a bar once the run has taken a
    few seconds; K > 1 with B free: one pass of the bar per joint type), True or False
    (`dynsim.progress.tracked`).
    """
    if every_step and (
        samples is not None
        or replicates is not None
        or method != "gd"
        or t_max is not None
        or flow_options
    ):
        raise ValueError("every_step is read by GD population runs only (method 'gd', no samples)")
    if samples is not None or replicates is not None:
        approx = dynamics.validate_run_options(
            cfg, approximation, method, samples=samples, replicates=replicates
        )
        R = 4 if replicates is None else replicates
        return (
            simulate_joint(cfg, approx, samples, R)
            if cfg.K > 1
            else simulate_gd(cfg, approximation, samples, R)
        )
    if method != "gd" or t_max is not None or flow_options:
        return simulate_flow(cfg, approximation, method, t_max, **flow_options)
    return simulate_gd(cfg, approximation, every_step=every_step)


@environment.guarded
@progress.tracked("reduced MIM", gd_steps)
def simulate_with_first_step(
    cfg: MIMConfig, approximation: Approximation = None, every_step: bool = False
) -> tuple[Trajectory, Trajectory]:
    """`simulate`'s GD population run and its first GD step from one compiled program: (the run, the
    records of `simulate(cfg.replace(steps=1, record_every=1), approximation)` at steps 0 and 1,
    without a final state, and with the run's choice of records: K > 1 under mean field leaves out
    the per-cell B where the whole run's would not fit the budget). cfg.steps >= 1."""
    return simulate_gd(cfg, approximation, every_step=every_step, first=True)
