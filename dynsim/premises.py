"""A claim's premises: each a measurement that can come out false (`Premise`; `on_interval` reads
one on a statistic's interval by the one verdict rule), and the premises every trained-model claim
passes, declared once: the run reached its horizon (`reached_horizon`) and a leading-order
prediction resolves the comparison it is used for (`resolved`). A violated premise makes a claim
"not applicable", naming it; a missing or undecided one "not evaluated" (`dynsim.claims.judge`,
docs/claims.md)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional

import numpy as np

from dynsim.statistic import FAILS, HOLDS, RELATIONS, Statistic, decide, exact, undecided


@dataclasses.dataclass
class Premise:
    """One premise of a statement, checked by a measurement that can come out false: met iff
    `measured relation threshold`. A missing quantity (NaN) is never met: `judge` then says "not
    evaluated", naming it."""

    name: str  # what the statement assumes, e.g. "Event I happened (alpha rose from t = 0)"
    measured: float
    relation: str
    threshold: float
    how: str = ""  # the measurement, in a few words
    # a premise read on an interval (`on_interval`) that lies on both sides of its threshold: why
    # it is neither met nor false (its measured value is then NaN: "not evaluated")
    undecided: str = ""
    # a premise on what the dynamics did (took off, converged by the theory's horizon, stayed
    # within GD's stability edge), not on where the run was set: measured false, the run did not
    # do what the theory needs (`dynsim.claims.exit_code` tells it apart: EXIT_DYNAMICS)
    dynamics: bool = False

    def __post_init__(self) -> None:
        if self.relation not in RELATIONS:
            raise ValueError(
                f"Premise.relation = {self.relation!r} is invalid: must be one of {RELATIONS}"
            )
        self.measured = math.nan if self.measured is None else float(self.measured)
        self.threshold = float(self.threshold)

    @property
    def met(self) -> bool:
        """`measured relation threshold` (False when measured is NaN)."""
        return compare(self.measured, self.relation, self.threshold)

    @property
    def missing(self) -> bool:
        return bool(np.isnan(self.measured))

    def describe(self) -> str:
        value = (
            (self.undecided or "not measured")
            if self.missing
            else f"{fmt(self.measured)} {self.relation} {fmt(self.threshold)}"
            if self.met
            else f"{fmt(self.measured)}, needs {self.relation} {fmt(self.threshold)}"
        )
        return f"{self.name} ({value}{', ' + self.how if self.how else ''})"

    def to_dict(self) -> dict[str, Any]:
        out = {**dataclasses.asdict(self), "met": self.met}
        for key in ("undecided", "dynamics"):  # said only where it applies
            if not out[key]:
                del out[key]
        return out

    @property
    def broke_dynamics(self) -> bool:
        """A dynamics premise measured false (not merely missing)."""
        return self.dynamics and not self.met and not self.missing


def on_interval(
    name: str, stat: Statistic, relation: str, threshold: float, how: str = ""
) -> Premise:
    """A premise read by the one rule (`dynsim.statistic.decide`) on `stat`'s interval: met when
    the whole interval lies on the side `relation threshold` states (measured: its end nearest
    the threshold), measured false when it lies wholly on the other side (then the claim is "not
    applicable"), undecided when it straddles the threshold or is missing (NaN: "not
    evaluated", saying why)."""
    if relation == "==":
        raise ValueError("on_interval reads a side: relation must be one of <=, <, >=, >")
    outcome = decide(stat, relation, threshold)
    above = relation.startswith(">")
    end = stat.low if above == (outcome == HOLDS) else stat.high  # the end nearest the threshold
    decided = outcome in (HOLDS, FAILS)
    why = "" if decided or stat.missing else "undecided: " + undecided(stat, relation, threshold)
    how = f"{how}; {stat.describe()}" if decided else how
    return Premise(name, end if decided else math.nan, relation, threshold, how, why)


def flag(name: str, value: Optional[bool], how: str = "") -> Premise:
    """A yes/no premise: met iff `value` is True; None (not measured) is never met."""
    return Premise(name, math.nan if value is None else float(bool(value)), ">=", 1.0, how)


# the premises every trained-model claim passes, declared once: the run reached its horizon, and a
# leading-order prediction resolves the comparison it is used for

HORIZON = "the run reached its horizon"
RESOLUTION = "the leading order resolves the comparison"


def reached_horizon(late_move: float, bound: float, how: str, what: str = "") -> Premise:
    """The run reached its horizon: a measured convergence or event criterion, `late_move <=
    bound` (e.g. the fraction of the quantity's total move made in the run's last stretch), never
    "the steps ran". Violated: "not applicable" (under-training is never a verdict), and the run
    did not do what the theory needs by the theory's horizon (a dynamics premise)."""
    name = HORIZON + (f" ({what})" if what else "")
    return Premise(name, late_move, "<=", bound, how, dynamics=True)


def resolved(prediction: float, threshold: float, correction: float, how: str) -> Premise:
    """A leading-order `prediction` judged against `threshold` decides only outside its own error:
    met iff |prediction - threshold| > `correction` (the measured or derived size of the next
    order), read as the ratio |prediction - threshold| / correction > 1. Inside the band the claim
    is "not applicable: at the leading order's resolution"."""
    gap = abs(float(prediction) - float(threshold))
    if correction == 0:  # no correction: any gap resolves it, none does not
        ratio = math.inf if gap > 0 else 0.0
    else:
        ratio = gap / float(correction)
    return Premise(
        f"{RESOLUTION} (|{fmt(prediction)} - {fmt(threshold)}| against the leading order's "
        f"correction {fmt(correction)})",
        ratio,
        ">",
        1.0,
        how,
    )


def compare(measured: float, relation: str, threshold: float) -> bool:
    """`measured relation threshold` (False when either is NaN): the one rule on an exact value."""
    return decide(exact(measured), relation, threshold) == HOLDS


def fmt(v: Any) -> str:
    """A number as claims and premises print it (4 significant digits), inside dicts, lists and
    arrays too (never a repr such as np.float64(...)); anything else as str."""
    if isinstance(v, (float, np.floating)):
        return f"{v:.4g}"
    if isinstance(v, (bool, np.bool_)):
        return str(bool(v))
    if isinstance(v, np.integer):
        return str(int(v))
    if isinstance(v, np.ndarray):
        return fmt(v.tolist())
    if isinstance(v, dict):
        return "{" + ", ".join(f"{fmt(k)}: {fmt(x)}" for k, x in v.items()) + "}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)
