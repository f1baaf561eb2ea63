"""Executable claims: a `Claim` is one lemma or theorem evaluated on runs, with its assumptions declared and a
verdict (holds, fails, or not evaluated). A claim that fails is a measured result, not an error."""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Callable, Optional

import numpy as np

LOG = Callable[[str], None]


@dataclasses.dataclass
class Claim:
    """One checked statement: what was measured, against which threshold, and whether it holds (None: not evaluated)."""

    claim: str
    statement: str
    assumptions: list[str]
    measured: float
    relation: str  # how measured is compared with threshold: "<=", "<", ">=", ">", "=="
    threshold: float
    holds: Optional[bool]
    details: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def holds(measured: float, relation: str, threshold: float) -> bool:
    ops = {"<=": np.less_equal, "<": np.less, ">=": np.greater_equal, ">": np.greater, "==": np.equal}
    return bool(ops[relation](measured, threshold))


def to_json(claims: list[Claim]) -> str:
    return json.dumps({"claims": [c.to_dict() for c in claims]}, indent=2, allow_nan=True, default=float)


def table(claims: list[Claim]) -> str:
    """Plain text: claim, measured, relation and threshold, verdict; then each claim's statement and assumptions."""
    head = f"{'claim':<13} {'measured':>12} {'':>2} {'threshold':>12}  verdict"
    out = [head, "-" * len(head)]
    for c in claims:
        verdict = "not evaluated" if c.holds is None else ("holds" if c.holds else "FAILS")
        out.append(f"{c.claim:<13} {c.measured:>12.4g} {c.relation:>2} {c.threshold:>12.4g}  {verdict}")
    out.append("")
    for c in claims:
        out.append(f"{c.claim}: {c.statement}")
        out.extend(f"  - {a}" for a in c.assumptions)
        if c.details:
            out.append("  details: " + ", ".join(f"{k} = {_fmt(v)}" for k, v in c.details.items()))
    return "\n".join(out)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)
