"""Executable claims: a `Claim` is one lemma or theorem judged on runs; a `Measurement` is a
reported quantity.

A claim carries the paper's statement (quoted), the reading dynsim tests, the regime it is judged
in, the measured quantity, a threshold with its derivation, the negative control that makes it fail,
and a verdict in VERDICTS:

- "holds" / "fails": the one verdict rule (`dynsim.statistic.decide`) on an in-regime run: the
  claim's statistic (a value with its interval, exact where there is no sampling error) holds when
  its interval lies wholly on the statement's side of the threshold, fails only when it lies wholly
  on the other side; every extra condition is read the same way and joined with "and";
- "not applicable": a premise of the statement is measured false (`Premise`, or `regime_violations`,
  names which);
- "not evaluated": the measurement, or a premise's measurement, could not be made (a NaN is never a
  pass), or the interval lies on both sides ("inconclusive", with what would decide it).

The reading discipline (docs/claims.md): every claim has a `reading_class`. "literal": a statement
with the paper's own constants, judged as written. "order": an order statement (asymptotic
equivalence, o(1), poly, "small") judged as an order: a bounded ratio band derived from the
statement, or a trend with its interval where the statement is a limit; never an exact coefficient.
A comparison the paper does not make is a `Measurement`, not a claim. Every premise (an event
happened, a sign, a regime) is a `Premise`: a measurement that can come out false.

A claim declares its statistic, side (relation and threshold) and premises; it writes no verdict
logic of its own. `exit_code` says what happened: EXIT_HOLDS (0) when every claim holds,
EXIT_FAILS (1) when some claim fails, EXIT_DYNAMICS (4) when none fails but the run's dynamics broke
a premise (no takeoff, divergence), EXIT_UNJUDGED (3) when none fails but some could not be
judged (not applicable or not evaluated). A quantity that no setting can make fail
is not a claim: report it as a `Measurement`. Setting-free: the settings build their claims with
`judge`.
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any, Callable, Iterable, Optional, Sequence, Union


from dynsim import interrupt
from dynsim import statistic as stats
from dynsim.premises import (  # noqa: F401 (the claims' API: a claim declares its premises)
    HORIZON,
    RESOLUTION,
    Premise,
    fmt,
    compare,
    flag,
    on_interval,
    reached_horizon,
    resolved,
)
from dynsim.statistic import Statistic
from dynsim.trajectory import strict_json
from dynsim.validation import did_you_mean

LOG = Callable[[str], None]

HOLDS, FAILS, NOT_APPLICABLE, NOT_EVALUATED = "holds", "fails", "not applicable", "not evaluated"
VERDICTS = (HOLDS, FAILS, NOT_APPLICABLE, NOT_EVALUATED)
RELATIONS = stats.RELATIONS
# check-theorems and the experiments: every claim holds / some claim fails / none fails, some could
# not be judged (2 stays bad input, 130 and 143 an interrupt)
EXIT_HOLDS, EXIT_FAILS, EXIT_UNJUDGED, EXIT_DYNAMICS = 0, 1, 3, 4
EXIT_TEXT = (
    "Exit 0 when every claim holds, 1 when some claim fails, 4 when none fails but the dynamics "
    "broke a premise of some claim (no takeoff, no convergence by the theory's horizon, GD past "
    "its stability edge), 3 when none fails but some could not be judged otherwise (outside the "
    "statement's regime, or not evaluated), 2 on invalid input."
)
LITERAL, ORDER = "literal", "order"
READING_CLASSES = (LITERAL, ORDER)


@dataclasses.dataclass
class Claim:
    """One judged statement. The first nine fields are the `--json` contract (docs/claims.md)."""

    claim: str  # short name, e.g. "Theorem 4.1"
    statement: str  # the paper's statement, quoted
    reading: str  # what dynsim tests: the quantity, the label, the function class, the dynamics
    regime: str  # the regime conditions and whether the run meets them
    threshold: float  # NaN when not evaluated
    derivation: str  # where the threshold comes from (the paper, or a stated statistical argument)
    measured: float  # NaN when not evaluated
    verdict: str  # one of VERDICTS
    negative_control: str  # what makes the claim fail, and the test that shows it
    relation: str = "<="  # measured <relation> threshold is the claim
    assumptions: list[str] = dataclasses.field(default_factory=list)
    details: dict[str, Any] = dataclasses.field(default_factory=dict)
    reading_class: str = LITERAL  # "literal" (the paper's constants) or "order" (a band or a trend)
    premises: list[Premise] = dataclasses.field(default_factory=list)
    # where the measured value sits (the failing step, size or class), shown in the table
    at: str = ""
    # the measured value's interval and where it comes from ("exact": low = measured = high)
    interval: list[float] = dataclasses.field(default_factory=list)
    uncertainty: str = stats.EXACT

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(
                f"Claim.verdict = {self.verdict!r} is invalid: must be one of {VERDICTS}"
            )
        if self.relation not in RELATIONS:
            raise ValueError(
                f"Claim.relation = {self.relation!r} is invalid: must be one of {RELATIONS}"
            )
        if self.reading_class not in READING_CLASSES:
            raise ValueError(
                f"Claim.reading_class = {self.reading_class!r} is invalid: must be one of "
                f"{READING_CLASSES} (a comparison the paper does not make is a Measurement)"
            )

    @property
    def holds(self) -> bool:
        """True only for the verdict "holds" (not applicable and not evaluated are not holds)."""
        return self.verdict == HOLDS

    @property
    def statistic(self) -> Statistic:
        """The measured value with its interval (exact when the claim recorded none)."""
        if len(self.interval) != 2 or self.uncertainty == stats.EXACT:
            return stats.exact(self.measured)
        return Statistic(self.measured, *self.interval, how=self.uncertainty)

    def why(self) -> str:
        """One line: why the claim does not hold (empty when it holds): the violated regime
        condition, what stopped its evaluation, or which part failed (the main comparison and/or
        named sub-conditions)."""
        if self.verdict == HOLDS:
            return ""
        if self.verdict == NOT_APPLICABLE:
            return "premise not met: " + self.regime.split("NOT MET: ", 1)[-1]
        if self.verdict == NOT_EVALUATED:
            missing = [p for p in self.premises if p.missing]
            label = "undecided" if any(p.undecided for p in missing) else "not measured"
            return "not evaluated: " + str(
                self.details.get("why")
                or (
                    f"premise {label}: " + "; ".join(p.describe() for p in missing)
                    if missing
                    else "the measurement or threshold is NaN"
                )
            )
        parts = []
        stat = self.statistic
        main = stats.decide(stat, self.relation, self.threshold)
        if main == stats.FAILS:
            parts.append(
                f"measured {fmt(self.measured)} is not {self.relation} {fmt(self.threshold)}"
                if stat.exact
                else f"measured {stat.describe()} lies wholly outside {self.relation} "
                f"{fmt(self.threshold)}"
            )
        failed = [k for k, v in self.details.get("conditions", {}).items() if not v]
        if failed:
            parts.append(
                "condition"
                + ("s" if len(failed) > 1 else "")
                + " not met: "
                + ", ".join(failed)
                + (
                    ""
                    if parts
                    else f" (the main comparison {fmt(self.measured)} {self.relation} "
                    f"{fmt(self.threshold)} holds)"
                    if main == stats.HOLDS
                    else " (the main comparison is undecided: "
                    + stats.undecided(stat, self.relation, self.threshold)
                    + ")"
                )
            )
        return "; ".join(parts) or "fails"

    def __repr__(self) -> str:
        return (
            f"Claim({self.claim!r}: {self.verdict}; measured {self.statistic.describe()} "
            f"{self.relation} {fmt(self.threshold)}, {self.reading_class} reading)"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "claim",
            **dataclasses.asdict(self),
            "premises": [p.to_dict() for p in self.premises],
            "why": self.why(),
        }


@dataclasses.dataclass
class Measurement:
    """A reported quantity that is not judged (no setting could make a threshold on it fail)."""

    name: str
    description: str
    value: Any
    details: dict[str, Any] = dataclasses.field(default_factory=dict)

    def short_value(self) -> str:
        """The value as the repr and the HTML table show it: at most 60 characters."""
        value = fmt(self.value)
        return value if len(value) <= 60 else value[:57] + "..."

    def __repr__(self) -> str:
        return f"Measurement({self.name!r} = {self.short_value()})"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "measurement", **dataclasses.asdict(self)}


Item = Union[Claim, Measurement]


@dataclasses.dataclass(frozen=True)
class Condition:
    """An extra part of a claim judged by the one rule: `statistic relation threshold`."""

    statistic: Statistic
    relation: str
    threshold: float

    def outcome(self) -> str:
        return stats.decide(self.statistic, self.relation, self.threshold)


def judge(
    claim: str,
    *,
    statement: str,
    reading: str,
    reading_class: str,
    regime: str,
    measured: Union[float, Statistic],
    relation: str,
    threshold: float,
    derivation: str,
    negative_control: str,
    premises: Sequence[Premise] = (),
    regime_violations: Sequence[str] = (),
    conditions: Optional[dict[str, Union[bool, Condition]]] = None,
    assumptions: Iterable[str] = (),
    details: Optional[dict[str, Any]] = None,
    at: str = "",
) -> Claim:
    """A claim with its verdict, by the one rule. "not applicable" when a premise is measured false
    or `regime_violations` is non-empty (each named in the regime); "not evaluated" when a premise
    could not be measured, or the statistic or threshold is NaN; else the statement `measured
    relation threshold` and every entry of `conditions` (a yes/no, or a `Condition` read by the
    same rule) joined with "and" (`dynsim.statistic.decide`, `combine`): "holds" when every part's
    interval lies on its side, "fails" when some part's lies wholly on the other side, "not
    evaluated: inconclusive" otherwise, with each undecided interval and what would decide it.
    `measured` is a `Statistic` or a number (exact)."""
    if relation not in RELATIONS:
        raise ValueError(f"relation = {relation!r} is invalid: must be one of {RELATIONS}")
    stat = stats.of(measured)
    details = dict(details or {})
    premises = list(premises)
    parts = {
        name: c if isinstance(c, Condition) else Condition(stats.exact(bool(c)), ">=", 1.0)
        for name, c in (conditions or {}).items()
    }
    outcomes = {name: c.outcome() for name, c in parts.items()}
    if parts:
        details["conditions"] = {
            k: o == stats.HOLDS for k, o in outcomes.items() if o in (stats.HOLDS, stats.FAILS)
        }
    violated = [p.describe() for p in premises if not p.met and not p.missing] + list(
        regime_violations
    )
    if premises:
        regime = f"{regime}; premises: " + "; ".join(
            p.describe() + (" met" if p.met else "") for p in premises
        )
    main = stats.decide(stat, relation, threshold)
    outcome = stats.combine([main, *outcomes.values()])
    if violated:
        verdict = NOT_APPLICABLE
        regime = f"{regime}; NOT MET: " + "; ".join(violated)
    elif any(p.missing for p in premises) or main == stats.MISSING:
        verdict = NOT_EVALUATED
    elif outcome == stats.MISSING:
        verdict = NOT_EVALUATED
        details.setdefault(
            "why",
            "a condition could not be measured: "
            + ", ".join(k for k, o in outcomes.items() if o == stats.MISSING),
        )
    elif outcome == stats.INCONCLUSIVE:
        verdict = NOT_EVALUATED
        open_ = [stats.undecided(stat, relation, threshold)] if main == stats.INCONCLUSIVE else []
        open_ += [
            f"{k}: " + stats.undecided(c.statistic, c.relation, c.threshold)
            for k, c in parts.items()
            if outcomes[k] == stats.INCONCLUSIVE
        ]
        details.setdefault("why", "inconclusive: " + "; ".join(open_))
    else:
        verdict = HOLDS if outcome == stats.HOLDS else FAILS
    return Claim(
        claim,
        statement,
        reading,
        regime,
        float(threshold),
        derivation,
        stat.value,
        verdict,
        negative_control,
        relation,
        list(assumptions),
        details,
        reading_class,
        premises,
        at,
        [stat.low, stat.high],
        stat.how,
    )


def not_evaluated(
    claim: str,
    why: str,
    *,
    reading_class: str,
    statement: str = "",
    reading: str = "",
    regime: str = "",
    derivation: str = "",
    negative_control: str = "",
    relation: str = "<=",
) -> Claim:
    """A claim that could not be measured; `why` says what stopped it."""
    return Claim(
        claim,
        statement,
        reading,
        regime,
        math.nan,
        derivation,
        math.nan,
        NOT_EVALUATED,
        negative_control,
        relation,
        [why],
        {"why": why},
        reading_class,
    )


def guarded(claim: str, reading_class: str, make: Callable[..., Claim], *args, **kwargs) -> Claim:
    """`make(*args, **kwargs)`, or, when that raises, the claim `claim` "not evaluated" with the
    exception named: a crash inside one claim ends that claim, never the command nor the other
    claims. A Ctrl-C or SIGTERM (also when JAX carries it inside its own error) is raised on."""
    try:
        return make(*args, **kwargs)
    except Exception as exc:
        from dynsim.progress import interrupted  # JAX: loaded by the run that raised

        if interrupt.received() is not None or interrupted(exc):
            raise
        first = (str(exc).strip().splitlines() or [""])[0]
        return not_evaluated(
            claim,
            f"its evaluation raised {type(exc).__name__}: {first[:300]}",
            reading_class=reading_class,
        )


def parse_only(text: Optional[str], known: Sequence[str]) -> Optional[frozenset[str]]:
    """`--only "NAME[,NAME...]"`: the claims asked for (None when `text` is None: every claim).
    Names match `known` case-insensitively; a ValueError names an unknown one and lists the allowed
    names."""
    if text is None:
        return None
    lookup = {k.lower(): k for k in known}
    # commas inside (...) stay
    names = [n.strip() for n in re.split(r",(?![^()]*\))", str(text)) if n.strip()]
    if not names:
        raise ValueError(
            f"--only = {text!r} is invalid: name at least one claim of: {', '.join(known)}"
        )
    unknown = [n for n in names if n.lower() not in lookup]
    if unknown:
        raise ValueError(
            f"--only = {text!r} is invalid: {', '.join(map(repr, unknown))} is not a claim here"
            f"{did_you_mean(known, *unknown)}; the claims are: {', '.join(known)}"
        )
    return frozenset(lookup[n.lower()] for n in names)


def wanted(only: Optional[frozenset[str]], *names: str) -> bool:
    """True when any of `names` is asked for (every claim when `only` is None)."""
    return only is None or any(n in only for n in names)


def claims_of(items: Iterable[Item]) -> list[Claim]:
    return [c for c in items if isinstance(c, Claim)]


def exit_code(items: Iterable[Item]) -> int:
    """EXIT_HOLDS (0) when there is a claim and every claim holds; EXIT_FAILS (1) when some claim
    fails (the paper is contradicted); EXIT_DYNAMICS (4) when none fails but some claim is not
    applicable because the run's dynamics broke a premise (`Premise.dynamics`: no takeoff, no
    convergence by the theory's horizon, GD unstable); EXIT_UNJUDGED (3) otherwise (none fails,
    but some claim is outside its regime or not evaluated, or there is no claim)."""
    cs = claims_of(items)
    if any(c.verdict == FAILS for c in cs):
        return EXIT_FAILS
    if cs and all(c.holds for c in cs):
        return EXIT_HOLDS
    broke = any(c.verdict == NOT_APPLICABLE and dynamics_broken(c) for c in cs)
    return EXIT_DYNAMICS if broke else EXIT_UNJUDGED


def dynamics_broken(claim: Claim) -> bool:
    """Some premise on the dynamics (`Premise.dynamics`) of `claim` was measured false."""
    return any(p.broke_dynamics for p in claim.premises)


def to_dict(items: Iterable[Item], config: Optional[dict] = None) -> dict[str, Any]:
    """{"config": config, "claims": [...], "measurements": [...]} (the `--json` contract)."""
    items = list(items)
    return {
        "config": config or {},
        "claims": [c.to_dict() for c in items if isinstance(c, Claim)],
        "measurements": [m.to_dict() for m in items if isinstance(m, Measurement)],
    }


def to_json(items: Iterable[Item], config: Optional[dict] = None) -> str:
    return strict_json(to_dict(items, config))
