"""The JSL claims driver: `check_theorems(cfg)` = the idealized claims (`claims_idealized`: Lemmas
4.1, 4.3, Theorems 4.1, 3.1) and the realistic ones (`claims_realistic`: Lemma 4.2, Theorems 4.2,
5.1, Figure 2). cfg sets the judged point (D, C, q, steps, ...); Theorem 4.1's ladder of D is
`sizes` (at least 3), by default `setting.LADDER` (or `setting.QUICK_LADDER` with
quick=True), with q(D - C) kept at the judged point's value; it is printed with the claim.
"""

from __future__ import annotations

from dynsim.claims import LOG
from dynsim.results import Results

from . import claims_idealized, claims_realistic, realistic_plan
from .config import JSLConfig


# every claim's name (`--only` takes these)
CLAIMS = claims_idealized.CLAIMS + claims_realistic.CLAIMS


def runs(cfg: JSLConfig, *, quick: bool, seeds: int, sizes=None, only=None, plan=None) -> int:
    """Runs `check_theorems` makes (the progress bar's total)."""
    return claims_idealized.runs(cfg, quick, sizes, only) + claims_realistic.total_runs(
        quick, only, plan, cfg
    )


def check_theorems(
    cfg: JSLConfig,
    *,
    quick: bool = False,
    seeds: int = realistic_plan.CHECK_SEEDS,
    log: LOG = lambda s: None,
    sizes=None,
    only=None,
    store=None,
    executor=None,
    plan=None,
) -> Results:
    """The JSL claims and measurements on cfg: idealized (Theorem 4.1's ladder of D: `sizes`,
    default `claims_idealized.ladder_sizes(quick)`), then realistic. `only`: a set of names from
    CLAIMS (None: every claim); only the runs those claims need are made. `store`: a
    `dynsim.store.Store` keeping each seed of the realistic runs, read back by a rerun; `executor`:
    where those seeds run (a dict of `dynsim.sweeps.executors.run`'s scheduler, workers, security;
    None: here). `plan`: the realistic runs' sizes (`realistic_plan.Plan`, e.g. from
    `realistic_plan.with_sizes`; None: by quick). A `dynsim.results.Results` (a list)."""
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    unknown = sorted(set(only or ()) - set(CLAIMS))
    if unknown:
        raise ValueError(f"only = {unknown} is invalid: the JSL claims are {', '.join(CLAIMS)}")
    items = claims_idealized.idealized_items(
        cfg, quick=quick, seeds=seeds, log=log, sizes=sizes, only=only
    )
    return Results(
        items
        + claims_realistic.realistic_items(
            cfg,
            quick=quick,
            seeds=seeds,
            log=log,
            only=only,
            store=store,
            executor=executor,
            plan=plan,
        )
    )
