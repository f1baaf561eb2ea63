"""The checker: compare two trajectories observable by observable and give a verdict with reasons."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Optional, Sequence

import numpy as np
from scipy.stats import t as student_t

from dynsim import setting as settings_registry
from dynsim.setting import Checks
from dynsim.trajectory import strict_json

APPROXIMATION_TOLERANCE = 0.05  # default for a named approximation: relative to the observable's largest magnitude
SAFETY = 10.0  # constant of the rounding model: covers the few roundings per term (exp, powers, softplus)


@dataclasses.dataclass
class ObservableError:
    """How far two trajectories are apart on one observable, and whether that is within tolerance."""

    max_abs: float
    max_rel: float
    tolerance: float  # at the step where |error| / tolerance is largest
    worst_step: int
    passed: bool
    reason: str
    max_z: Optional[float] = None  # statistical mode: max over steps of |a - b| / standard error (None otherwise)


@dataclasses.dataclass
class Residual:
    """A quantity the reduction says is zero, measured on the full trajectory (max over the run)."""

    value: float
    tolerance: Optional[float]  # None: reported, not judged
    passed: Optional[bool]
    reason: str


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
        head = f"{'observable':<18} {'max abs error':>14} {'max rel error':>14} {'tolerance':>11}  verdict"
        if stat:
            head = head.replace("  verdict", f" {'max |dev|/se':>12}  verdict")
        lines = [f"{self.levels[0]} vs {self.levels[1]} ({self.kind} tolerance, {self.common_steps} common steps)",
                 head, "-" * len(head)]
        for name, e in self.errors.items():
            z = "" if not stat else (f" {e.max_z:>12.2f}" if e.max_z is not None else f" {'':>12}")
            lines.append(f"{name:<18} {e.max_abs:>14.3e} {e.max_rel:>14.3e} {e.tolerance:>11.2e}{z}  "
                         f"{'agree' if e.passed else 'DISAGREE'}")
        if self.residuals:
            lines.append("reduction residuals of the full trajectory (max over the run):")
            for name, r in self.residuals.items():
                verdict = "reported" if r.passed is None else ("ok" if r.passed else "VIOLATED")
                tol = "" if r.tolerance is None else f"{r.tolerance:.2e}"
                lines.append(f"  {name:<16} {r.value:>14.3e} {'':>14} {tol:>11}  {verdict}")
        lines.extend(f"note: {n}" for n in self.notes)
        lines.append(f"verdict: {self.verdict}")
        return "\n".join(lines)

    @property
    def verdict(self) -> str:
        """AGREE, DISAGREE, or for a named approximation that misses its stated tolerance "APPROXIMATION GAP" (what
        the approximation costs, an expected finding: `dynsim compare` exits 0 on it unless --strict)."""
        if self.passed:
            return "AGREE"
        return "APPROXIMATION GAP" if self.kind == "approximation" else "DISAGREE"


def unit_roundoff(dtype: str) -> float:
    """u = 2^-53 for float64, 2^-24 for float32."""
    return float(np.finfo(np.dtype(dtype)).eps) / 2


def term_count(t) -> int:
    """Number of terms the run sums per step (configurations, or the batch): what rounding grows with."""
    m = t.meta
    for value in (m.get("configurations"), (m.get("truncation") or {}).get("configurations"), m.get("batch_size")):
        if value:
            return int(value)
    return 1


def rounding_tolerance(steps: np.ndarray, scale: float, terms: int, dtype: str) -> np.ndarray:
    """Per-step float rounding tolerance: SAFETY (t+1) sqrt(M) u max(1, scale).

    Each step each level sums its own expectation (M = the larger of the two term counts); the
    probabilistic rounding model (Higham and Mary 2019) puts a sum's relative error at about
    sqrt(M) u, and while GD is stable each step's error is at most carried forward, so t steps add
    up to t times that. A model of typical rounding, not a worst-case bound: an unstable run
    (amplified errors) fails it, and the report says so.
    """
    return SAFETY * (steps + 1.0) * math.sqrt(terms) * unit_roundoff(dtype) * max(1.0, scale)


def _quantile(confidence: float, comparisons: int, dof: int) -> float:
    """Two-sided Student-t quantile at family-wise `confidence` over `comparisons` (Bonferroni)."""
    tail = (1.0 - confidence) / (2.0 * comparisons)
    return float(student_t.ppf(1.0 - tail, dof))


def config_differences(a, b) -> dict:
    """{field: (value in a, value in b)} for the config fields (meta["config"]) on which two runs differ."""
    ca, cb = a.meta.get("config"), b.meta.get("config")
    if not isinstance(ca, dict) or not isinstance(cb, dict):
        return {}
    return {k: (ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)}


def compare(a, b, observables: Optional[Sequence[str]] = None, confidence: float = 0.999,
            approximation_tolerance: float = APPROXIMATION_TOLERANCE) -> "Report":
    """Compare trajectories `a` and `b` on their common recorded steps.

    Deterministic runs are held to a float rounding tolerance (`rounding_tolerance`). When a
    trajectory carries Monte Carlo standard errors (`<name>_se`, from R replicate runs), each step
    gets the band t_{R-1} * se, with the quantile at family-wise `confidence` over all recorded
    steps and observables (Bonferroni), plus the rounding tolerance. The band covers Monte Carlo
    noise only: sampled GD's O(1/N) bias shows up as disagreement once R is large against N.
    What is compared, which residuals are judged and what is reported come from the checks of the setting that
    produced the runs (`dynsim.setting.Checks`, found by meta["setting"]); `observables` overrides the compared
    names. A full trajectory's reduction residuals are reported, and judged against the rounding tolerance when
    exact.

    Array observables are compared entry by entry; NaN marks padding and must sit at the same entries in both.
    When a trajectory comes from a named approximation (meta["approximation"]), rounding says nothing: the report's
    kind is "approximation" and each observable is held to `approximation_tolerance` times its largest magnitude
    (a stated choice, not a derived bound).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence = {confidence!r} is invalid: must lie strictly between 0 and 1")
    if not 0.0 < approximation_tolerance:
        raise ValueError(f"approximation_tolerance = {approximation_tolerance!r} is invalid: must be > 0")
    common, ia, ib = np.intersect1d(a.steps, b.steps, return_indices=True)
    if common.size == 0:
        raise ValueError("the trajectories share no recorded step: align steps and record_every")
    checks = _checks(a, b)
    names = [n for n in (observables or checks.compared) if n in a.observables and n in b.observables]
    lacking = [n for n in (observables or checks.compared) if n not in names]
    if observables is not None and lacking:
        raise ValueError(f"observables {lacking} are not recorded by both runs: a has {sorted(a.observables)}, "
                         f"b has {sorted(b.observables)}")
    if observables is None and checks.skip is not None:  # observables the setting reports, not judges, here
        skipped = checks.skip(a, b)
        names = [n for n in names if n not in skipped]
    if not names:
        raise ValueError(f"no observable to compare: asked for {list(observables or checks.compared)}, "
                         f"a has {sorted(a.observables)}, b has {sorted(b.observables)}")
    dtype = "float32" if "float32" in (a.meta.get("dtype"), b.meta.get("dtype")) else "float64"
    terms = max(term_count(a), term_count(b))
    stat = next((t for t in (a, b) if any(k.endswith("_se") for k in t.observables)), None)
    approx = next((t.meta["approximation"] for t in (a, b) if t.meta.get("approximation", "exact") != "exact"), None)
    notes: list[str] = []
    if lacking:  # never dropped silently: the verdict covers only what both runs recorded
        notes.append(f"not compared (recorded by one run only): {', '.join(lacking)}")
    differ = config_differences(a, b)
    if differ:  # said, not judged: a user may compare two configurations on purpose
        notes.append("the runs' configurations differ: " + ", ".join(f"{k} = {va!r} vs {vb!r}"
                                                                     for k, (va, vb) in differ.items()))
    extra = checks.allowance(a, b, common) if checks.allowance is not None else {}
    # Bonferroni: one comparison per recorded step and per compared entry (array observables count every entry)
    n_stat = sum(int(np.count_nonzero(~np.isnan(np.asarray(a[n], float)[ia][0]))) for n in names
                 if stat is not None and f"{n}_se" in stat.observables)
    errors: dict[str, ObservableError] = {}
    for name in names:
        x, y = np.asarray(a[name], float)[ia], np.asarray(b[name], float)[ib]
        if x.shape != y.shape:
            raise ValueError(f"observable {name!r} has shape {x.shape[1:]} in one trajectory and {y.shape[1:]} in the "
                             "other: compare runs of the same configuration")
        # padding: entries NaN in both runs at every step (structural, e.g. j >= N_k); a NaN anywhere else is a failure
        padding = np.broadcast_to(np.isnan(x).all(axis=0) & np.isnan(y).all(axis=0), x.shape) if x.ndim > 1 \
            else np.zeros(x.shape, bool)
        x0, y0 = np.where(padding, 0.0, x), np.where(padding, 0.0, y)
        diff = np.abs(x0 - y0)
        denom = np.maximum(np.abs(x0), np.abs(y0))
        rel = np.divide(diff, denom, out=np.zeros_like(diff), where=denom > 0)
        scale = float(np.nanmax(denom)) if np.isfinite(denom).any() else 1.0
        per_step = (slice(None),) + (None,) * (x.ndim - 1)  # broadcast a per-step tolerance over the entries
        tol = rounding_tolerance(common.astype(float), scale, terms, dtype)[per_step] + extra.get(name, 0.0)
        tol = np.broadcast_to(tol, x.shape)
        max_z = None
        if approx is not None:
            tol = tol + approximation_tolerance * max(scale, 1e-300)
            reason = (f"approximation {approx!r}: |difference| <= {approximation_tolerance:g} x max |{name}| "
                      f"= {approximation_tolerance * scale:.3g} (a stated tolerance, not a rounding bound)")
        elif stat is not None and f"{name}_se" in stat.observables:
            # both runs Monte Carlo (e.g. a sampled reduced level against the sampled full level): the difference of
            # two independent means has se^2 = se_a^2 + se_b^2; the smaller R sets the t quantile's dof
            carriers = [(t, i) for t, i in ((a, ia), (b, ib)) if f"{name}_se" in t.observables]
            R = min(int(t.meta.get("replicates", 2)) for t, _ in carriers)
            z = _quantile(confidence, common.size * n_stat, R - 1)
            se = np.sqrt(sum(np.nan_to_num(np.asarray(t[f"{name}_se"], float)[i], nan=0.0) ** 2 for t, i in carriers))
            tol = tol + z * se
            with np.errstate(divide="ignore", invalid="ignore"):
                zs = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, 0.0))
            max_z = float(np.nanmax(zs)) if zs.size else None
            reason = (f"Monte Carlo band: t quantile {z:.2f} ({R - 1} dof, {confidence:.1%} family-wise over "
                      f"{common.size} steps x {n_stat} compared entries, Bonferroni) x standard error of the mean "
                      f"of {R} runs, plus rounding")
            if float(np.max(tol)) >= scale > 0:  # a band as wide as the observable itself: no run could fail it
                notes.append(f"{name}: the Monte Carlo band ({float(np.max(tol)):.3g}, t quantile {z:.3g} with "
                             f"{R - 1} dof) is as wide as max |{name}| = {scale:.3g}: this comparison cannot fail, "
                             "its 'agree' says nothing; use more replicates")
        else:
            reason = (f"{dtype} rounding: {SAFETY:g} (t+1) sqrt(M) u max(1, scale), M = {terms} terms per step, "
                      f"u = {unit_roundoff(dtype):.2e}")
        if name in extra:
            reason += "; plus the truncation bound of the reduced sum accumulated over the steps"
        finite = bool(np.all(np.isfinite(x0)) and np.all(np.isfinite(y0)))
        ratio = np.where(np.isfinite(diff), diff / tol, np.inf)
        worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
        ok = finite and bool(np.all(diff <= tol))
        if not finite:
            reason = "non-finite values (a run diverged, or padding differs: lower eta); " + reason
        errors[name] = ObservableError(float(np.nanmax(diff)) if finite else math.inf,
                                       float(np.nanmax(rel)) if finite else math.inf,
                                       float(tol[worst]), int(common[worst[0]]), ok, reason, max_z)
    residuals = _residuals(checks, a, b, common, terms, dtype, exact=stat is None)
    if checks.reported is not None:
        residuals.update(checks.reported(a, b, approx))
    if approx is not None:
        notes.append(f"approximation {approx!r}: a deviation here measures the approximation, not a bug")
    if stat is not None:
        notes.append("statistical comparison: a failure at this confidence is itself evidence, not a crash")
    passed = all(e.passed for e in errors.values()) and all(r.passed is not False for r in residuals.values())
    kind = "approximation" if approx is not None else "statistical" if stat is not None else "rounding"
    return Report(passed, errors, residuals, kind,
                  (_level(a), _level(b)), int(common.size), notes)


def _checks(a, b) -> Checks:
    """The checks of the setting that produced `a` (by meta["setting"], its config class); for a trajectory of no
    known setting, every observable both runs record (not a `_se`) is compared, those only one records are named in
    the notes, and no residual is judged."""
    for t in (a, b):
        found = settings_registry.for_config(str(t.meta.get("setting", "")))
        if found is not None:
            return found.checks
    recorded = [n for n in (*a.observables, *(k for k in b.observables if k not in a.observables))
                if not n.endswith("_se")]
    return Checks(compared=tuple(recorded))  # those only one run records are named in the report's notes


def _residuals(checks: Checks, a, b, common, terms, dtype, exact: bool) -> dict[str, Residual]:
    """The reduction residuals of the full trajectory: judged by rounding when deterministic, reported otherwise."""
    out: dict[str, Residual] = {}
    for t in (a, b):
        if t.level != "full":
            continue
        for name, what in checks.residuals.items():
            if name not in t.observables:
                continue
            value = float(np.max(np.abs(t[name])))
            if exact:
                what += checks.exact_notes.get(name, "")
                scale = max([float(np.max(np.abs(t[n]))) for n in checks.residual_scale if n in t.observables] + [1.0])
                tol = float(rounding_tolerance(np.array([float(common.max())]), scale, terms, dtype)[0])
                out[name] = Residual(value, tol, bool(value <= tol), what + "; rounding tolerance")
            else:
                out[name] = Residual(value, None, None, what + "; nonzero by O(1/sqrt(N)) sampling noise, not judged")
    return out


def _level(t) -> str:
    """The level, with the approximation of a reduced run when it has one (e.g. "reduced[mean_field]")."""
    approx = t.meta.get("approximation")
    return f"{t.level}[{approx}]" if approx and approx != "exact" else t.level
