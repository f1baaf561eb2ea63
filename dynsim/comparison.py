"""The outcome of comparing two trajectories (`dynsim.checker.compare`): each observable's error
against its tolerance, the reduction residuals, the verdict, and how a report is shown (table,
repr, HTML)."""

from __future__ import annotations

import dataclasses
import html
from typing import Any, Optional

import numpy as np

from dynsim.trajectory import strict_json

__all__ = ["ObservableError", "Residual", "Report", "residual_verdict"]


@dataclasses.dataclass
class ObservableError:
    """How far two trajectories are apart on one observable, and whether that is within
    tolerance."""

    max_abs: float
    max_rel: float
    tolerance: float  # at the step where |error| / tolerance is largest
    worst_step: int
    passed: bool
    reason: str
    # statistical mode: max over steps of |a - b| / standard error (None otherwise)
    max_z: float | None = None


@dataclasses.dataclass
class Residual:
    """A quantity the reduction says is zero, measured on the full trajectory (max over the run)."""

    value: float
    tolerance: float | None  # None: reported, not judged
    passed: bool | None
    reason: str


def residual_verdict(r: Residual) -> str:
    """A residual's verdict: reported (not judged), ok or VIOLATED."""
    return "reported" if r.passed is None else ("ok" if r.passed else "VIOLATED")


@dataclasses.dataclass
class Report:
    """Outcome of `compare`: per-observable errors, reduction residuals and the overall verdict."""

    passed: bool
    errors: dict[str, ObservableError]
    residuals: dict[str, Residual]
    kind: str  # "rounding", "statistical" or "approximation"
    levels: tuple[str, str]
    common_steps: int
    notes: list[str]
    # Not written to report.json (the figure's): per observable, max over entries of |a - b| /
    # tolerance at each common step `steps` (inf where a value is not finite)
    steps: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, np.int64))
    ratios: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "verdict": self.verdict,
            "kind": self.kind,
            "levels": list(self.levels),
            "common_steps": self.common_steps,
            "errors": {k: dataclasses.asdict(v) for k, v in self.errors.items()},
            "residuals": {k: dataclasses.asdict(v) for k, v in self.residuals.items()},
            "notes": self.notes,
        }

    def to_json(self) -> str:
        return strict_json(self.to_dict())

    def table(self) -> str:
        """A plain-text table: observable, max abs error, max rel error, tolerance, verdict."""
        stat = any(e.max_z is not None for e in self.errors.values())
        head = (
            f"{'observable':<18} {'max abs error':>14} {'max rel error':>14} "
            f"{'tolerance':>11}  verdict"
        )
        if stat:
            head = head.replace("  verdict", f" {'max |dev|/se':>12}  verdict")
        title = (
            f"{self.levels[0]} vs {self.levels[1]} ({self.kind} tolerance, "
            f"{self.common_steps} common steps)"
        )
        lines = [title, head, "-" * len(head)]
        for name, e in self.errors.items():
            z = "" if not stat else (f" {e.max_z:>12.2f}" if e.max_z is not None else f" {'':>12}")
            lines.append(
                f"{name:<18} {e.max_abs:>14.3e} {e.max_rel:>14.3e} {e.tolerance:>11.2e}{z}"
                f"  {'agree' if e.passed else 'DISAGREE'}"
            )
        if self.residuals:
            lines.append("reduction residuals of the full trajectory (max over the run):")
            for name, r in self.residuals.items():
                tol = "" if r.tolerance is None else f"{r.tolerance:.2e}"
                lines.append(
                    f"  {name:<16} {r.value:>14.3e} {'':>14} {tol:>11}  {residual_verdict(r)}"
                )
        lines.extend(f"note: {n}" for n in self.notes)
        lines.append(f"verdict: {self.verdict}")
        return "\n".join(lines)

    def worst(self) -> Optional[str]:
        """The compared observable nearest to (or furthest past) its tolerance, or None."""
        ratios = {k: e.max_abs / e.tolerance for k, e in self.errors.items() if e.tolerance > 0}
        return max(ratios, key=ratios.get) if ratios else None

    def __repr__(self) -> str:
        worst = self.worst()
        detail = ""
        if worst is not None:
            e = self.errors[worst]
            detail = f", worst {worst} {e.max_abs:.3g} against {e.tolerance:.3g}"
        return (
            f"Report({self.verdict}: {self.levels[0]} vs {self.levels[1]}, {self.kind} tolerance, "
            f"{len(self.errors)} observable{'s' if len(self.errors) != 1 else ''} over "
            f"{self.common_steps} steps{detail})"
        )

    def _repr_html_(self) -> str:
        """The table as HTML (Jupyter shows it for a Report left at the end of a cell)."""
        rows = "".join(
            f"<tr><td>{html.escape(k)}</td><td>{e.max_abs:.3e}</td><td>{e.max_rel:.3e}</td>"
            f"<td>{e.tolerance:.2e}</td><td>{'agree' if e.passed else '<b>DISAGREE</b>'}</td></tr>"
            for k, e in self.errors.items()
        )
        rows += "".join(
            f"<tr><td>{html.escape(k)} (residual)</td><td>{r.value:.3e}</td><td></td>"
            f"<td>{'' if r.tolerance is None else f'{r.tolerance:.2e}'}</td>"
            f"<td>{residual_verdict(r)}</td></tr>"
            for k, r in self.residuals.items()
        )
        head = "<tr><th>observable</th><th>max abs</th><th>max rel</th><th>tolerance</th>"
        head += "<th>verdict</th></tr>"
        title = html.escape(
            f"{self.levels[0]} vs {self.levels[1]}: {self.verdict} ({self.kind} tolerance, "
            f"{self.common_steps} common steps)"
        )
        notes = "".join(f"<br>note: {html.escape(n)}" for n in self.notes)
        return f"<b>{title}</b><table>{head}{rows}</table>{notes}"

    @property
    def verdict(self) -> str:
        """AGREE, DISAGREE, or for a named approximation that misses its stated tolerance
        "APPROXIMATION GAP" (what the approximation costs, an expected finding: `dynsim compare`
        exits 0 on it unless --strict)."""
        if self.passed:
            return "AGREE"
        return "APPROXIMATION GAP" if self.kind == "approximation" else "DISAGREE"
