"""The unit of work of a sweep, a chunk of points of one group: a plain top-level function of plain
data, so it runs the same in-process or on a Dask worker (`executors`). It returns results; only the
caller writes them."""

from __future__ import annotations

import json
import math
import warnings

import jax

from dynsim import checker, verbs
from dynsim import setting as registry
from dynsim.runoptions import CONFIDENCE
from dynsim.trajectory import jsonable


def balanced_batch(points: int, batch_size: int) -> int:
    """The vmapped batch for `points` points at most `batch_size` wide: as many batches as
    `batch_size` needs, each as narrow as they allow, so the points pad (every batch runs the same
    compiled vmap) by fewer than the number of batches: 2 points at --batch-size 8 run as one batch
    of 2, 10 as two of 5, 17 as three of 6 (1 padded)."""
    batches = math.ceil(points / batch_size)
    return math.ceil(points / batches)


def compute_chunk(setting: str, level: str, options: dict, points: list, batch_size: int) -> list:
    """[(key, summary, {"reduced": Trajectory, "full": Trajectory})] for `points` = [(key, config
    dict)] of one group, run in vmapped batches of `balanced_batch(len(points), batch_size)`."""
    batch_size = balanced_batch(len(points), batch_size)
    # importing dynsim (this module's package) enabled float64 on a fresh worker
    found = registry.get(setting)
    spec = found.sweep
    cfgs = [found.config(**c) for _, c in points]
    # float32 on an accelerator would otherwise multiply in TF32/bfloat16 passes and fake mismatches
    # between the levels: every sweep computes its matmuls at "highest" precision (on the CPU this
    # changes nothing)
    with warnings.catch_warnings(), jax.default_matmul_precision("highest"):
        warnings.simplefilter("ignore", RuntimeWarning)  # a diverged run is recorded in its summary
        reds = (
            spec.reduced(cfgs, options, batch_size)
            if level in ("reduced", "both")
            else [None] * len(cfgs)
        )
        fulls = (
            spec.full(cfgs, options, batch_size)
            if level in ("full", "both")
            else [None] * len(cfgs)
        )
    out = []
    for (key, _), cfg, red, ful in zip(points, cfgs, reds, fulls):
        report = None
        if red is not None and ful is not None:
            report = checker.compare(
                red,
                ful,
                confidence=options.get("confidence") or CONFIDENCE,
                **{
                    o.dest: options[o.dest]
                    for o in verbs.sweep_options(found)
                    if o.checker and options.get(o.dest) is not None
                },
            )
        # plain JSON types (no numpy scalars): a fresh summary must equal the one read back from the
        # store
        summary = json.loads(json.dumps(spec.summary(cfg, red, ful, report), default=jsonable))
        out.append(
            (key, summary, {k: t for k, t in (("reduced", red), ("full", ful)) if t is not None})
        )
    return out
