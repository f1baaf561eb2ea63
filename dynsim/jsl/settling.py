"""Theorem 4.2's association over a run's records: which seeds are associated on every row, when
each settles, the overfitting horizon per N, and the settled-verdict premise (docs/jsl.md §13)."""

from __future__ import annotations

import numpy as np

from dynsim import recording
from dynsim import statistic as stats
from dynsim.claims import Measurement, Premise, reached_horizon

from .config import JSLConfig

# two-sided, every seed interval of the realistic claims (Theorems 4.2 and 5.1: the core's
# Student-t default); claims_realistic reads it from here
CONFIDENCE = 0.95


def associated(obs: dict) -> np.ndarray:
    """(steps, seeds) booleans: every row of A associated (patch_association == 1)."""
    return np.asarray(obs["patch_association_seeds"]) == 1.0


def horizon_measurement(rc: JSLConfig, ladder: dict, marks: np.ndarray) -> Measurement:
    """Per N: the first recorded step at which every seed is associated, the first later step at
    which one is not, and each seed's settling time (`settled_from`)."""
    out = {}
    for N, (obs, _) in ladder.items():
        seeds = associated(obs)
        every = np.all(seeds, axis=1)
        reached = np.flatnonzero(every)
        lost = (
            np.flatnonzero(~every[reached[0] :]) + reached[0] if reached.size else np.array([], int)
        )
        out[N] = {
            "all_seeds_associated_from": int(marks[reached[0]]) if reached.size else None,
            "settled_from_per_seed": settled_from(seeds, marks),
            "association_lost_at": int(marks[lost[0]]) if lost.size else None,
            "fraction_associated_by_step": np.mean(seeds, axis=1).tolist(),
            "train_loss_T": float(obs["loss"][-1]),
            "test_loss_T": float(obs["test_loss"][-1]),
            "min_test_loss_step": int(marks[int(np.argmin(obs["test_loss"]))]),
        }
    return Measurement(
        "Theorem 4.2 overfitting horizon",
        f"per N, the first recorded step with every seed associated "
        f"and the first later step at which a seed loses association (T = {rc.steps})",
        {str(k): v["association_lost_at"] for k, v in out.items()},
        {"per_N": out, "steps": marks.tolist()},
    )


# the last part of a run over which Theorem 4.2's verdict must stay as it is at T
SETTLED_PART = 0.25


def settled_from(associated: np.ndarray, marks: np.ndarray) -> list:
    """Per seed, the first recorded step from which its every-row association stays as it is at T
    (its settling time; the start when it never changed)."""
    out = []
    for column in associated.T:
        changed = np.flatnonzero(column != column[-1])
        out.append(int(marks[changed[-1] + 1]) if changed.size else int(marks[0]))
    return out


def association_settled(rc: JSLConfig, obs: dict) -> Premise:
    """`dynsim.claims.reached_horizon`: the judged runs' association has settled, read as the number
    of changes of the w.h.p. reading's verdict (`stats.decide` on the Clopper-Pearson interval of
    the seeds associated against 1/2) over the records of the last SETTLED_PART of the run (at most
    0). Where it changes there, the verdict at T would depend on where the run stops. Each seed's
    own settling time is `settled_from` (reported by `horizon_measurement`); a seed that gains or
    loses a row late changes the reading only where it moves the interval across 1/2."""
    marks = np.asarray(recording.recorded_steps(rc.steps, rc.record_every))
    in_part = marks >= (1 - SETTLED_PART) * rc.steps
    late = associated(obs)[in_part]
    verdicts = [stats.decide(stats.proportion(row, CONFIDENCE), ">", 0.5) for row in late]
    changes = int(np.sum([a != b for a, b in zip(verdicts, verdicts[1:])]))
    counts = sorted({int(np.sum(row)) for row in late})
    return reached_horizon(
        changes,
        0,
        f"{int(in_part.sum())} records, steps {int(marks[in_part][0])} to {int(marks[-1])}: "
        f"seeds associated {', '.join(map(str, counts))} of {late.shape[1]}, verdicts "
        f"{', '.join(sorted(set(verdicts)))}",
        f"the association settled: changes of the w.h.p. reading's verdict over the last "
        f"{SETTLED_PART:g} of the run",
    )
