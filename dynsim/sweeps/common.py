"""What every setting's point summary shares: the checker's verdict and its largest error."""

from __future__ import annotations

from typing import Optional


def verdict(report) -> dict:
    """{"verdict": AGREE/DISAGREE, "max_error": largest max |a - b| over the compared observables, "worst_observable",
    "check_kind"}; all None when only one level ran."""
    if report is None:
        return {"verdict": None, "max_error": None, "worst_observable": None, "check_kind": None}
    worst: Optional[str] = max(report.errors, key=lambda k: report.errors[k].max_abs, default=None)
    return {"verdict": "AGREE" if report.passed else "DISAGREE",
            "max_error": None if worst is None else report.errors[worst].max_abs,
            "worst_observable": worst, "check_kind": report.kind}
