"""The checker: compare two trajectories observable by observable, give a verdict with reasons.

Each observable's tolerance is a sum of terms (`dynsim.tolerances`), each a small function returning
a `Term` (the per-step or per-entry tolerance and its one-line reason): `rounding` (deterministic
runs), `monte_carlo_band` (runs carrying standard errors), `approximation` (a named approximation's
stated tolerance) and `allowance` (a truncated sum's bound, declared by the setting). `combine` sums
the terms that apply and joins their reasons; `compare` aligns the runs, chooses the observables and
builds the `Report`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from dynsim import setting as settings_registry
from dynsim.runoptions import CONFIDENCE
from dynsim.setting import Checks
from dynsim.trajectory import Trajectory
from dynsim.validation import check_between, check_positive, check_type

from .comparison import ObservableError, Report, Residual
from .tolerances import (
    APPROXIMATION_TOLERANCE,
    allowance,
    approximation,
    combine,
    monte_carlo_band,
    rounding,
    rounding_tolerance,
    t_quantile,
    term_count,
)


def config_differences(a, b) -> dict:
    """{field: (value in a, value in b)} for the config fields (meta["config"]) on which two runs
    differ."""
    ca, cb = a.meta.get("config"), b.meta.get("config")
    if not isinstance(ca, dict) or not isinstance(cb, dict):
        return {}
    return {k: (ca.get(k), cb.get(k)) for k in sorted(set(ca) | set(cb)) if ca.get(k) != cb.get(k)}


@dataclasses.dataclass(frozen=True)
class _Pair:
    """What holds for every observable of one comparison."""

    a: Any
    b: Any
    common: np.ndarray  # the common recorded steps, and their indices in a and in b
    ia: np.ndarray
    ib: np.ndarray
    dtype: str  # the rounding model's: float32 if either run is
    terms: int  # the rounding model's M: the larger term count
    stat: Any  # the first run carrying standard errors, or None
    approx: str | None  # the named approximation, or None
    extra: dict  # the setting's allowance per observable
    entries: int  # compared entries with a standard error (Bonferroni count per step)
    confidence: float
    approximation_tolerance: float


def compare(
    a,
    b,
    observables: Sequence[str] | None = None,
    confidence: float = CONFIDENCE,
    approximation_tolerance: float = APPROXIMATION_TOLERANCE,
) -> Report:
    """Compare trajectories `a` and `b` on their common recorded steps.

    Deterministic runs are held to a float rounding tolerance (`rounding`). When a trajectory
    carries Monte Carlo standard errors (`<name>_se`, from R replicate runs), each step gets the
    band t_{R-1} * se (`monte_carlo_band`), with the quantile at family-wise `confidence` over all
    recorded steps and observables (Bonferroni), plus the rounding tolerance. The band covers
    Monte Carlo noise only: sampled GD's O(1/N) bias shows up as disagreement once R is large
    against N. A setting's allowance (a truncated sum's bound, `allowance`) widens the tolerance.
    What is compared, which residuals are judged and what is reported come from the checks of the
    setting that produced the runs (`dynsim.setting.Checks`, found by meta["setting"]);
    `observables` overrides the compared names. A full trajectory's reduction residuals are
    reported, and judged against the rounding tolerance when exact.

    Array observables are compared entry by entry; NaN marks padding and must sit at the same
    entries in both. When a trajectory comes from a named approximation (meta["approximation"]),
    rounding says nothing: the report's kind is "approximation" and each observable is held to
    `approximation_tolerance` times its largest magnitude (`approximation`: a stated choice, not
    a derived bound). `combine` sums the terms that apply.
    """
    check_type("a", a, Trajectory, "a Trajectory (from a level's simulate or Trajectory.load)")
    check_type("b", b, Trajectory, "a Trajectory (from a level's simulate or Trajectory.load)")
    check_between("confidence", confidence, 0, 1)
    check_positive("approximation_tolerance", approximation_tolerance)
    made = [str(t.meta.get("setting", "")) for t in (a, b)]
    if all(made) and made[0] != made[1]:
        raise ValueError(
            f"a is a run of {made[0]}, b of {made[1]}: compare the two levels of one setting"
        )
    common, ia, ib = np.intersect1d(a.steps, b.steps, return_indices=True)
    if common.size == 0:
        raise ValueError("the trajectories share no recorded step: align steps and record_every")
    checks = _checks(a, b)
    names, lacking = _chosen(a, b, observables, checks)
    pair = _pair(a, b, common, ia, ib, checks, names, confidence, approximation_tolerance)
    notes = _pair_notes(a, b, lacking)
    judged = {name: _observable_error(pair, name, notes) for name in names}
    errors = {name: error for name, (error, _) in judged.items()}
    residuals = _residuals(checks, a, b, common, pair.terms, pair.dtype, exact=pair.stat is None)
    if checks.reported is not None:
        residuals.update(checks.reported(a, b, pair.approx))
    if pair.approx is not None:
        notes.append(
            f"approximation {pair.approx!r}: a deviation here measures the approximation, not a bug"
        )
    if pair.stat is not None:
        notes.append(
            "statistical comparison: a failure at this confidence is itself evidence, not a crash"
        )
    passed = all(e.passed for e in errors.values()) and all(
        r.passed is not False for r in residuals.values()
    )
    kind = (
        "approximation"
        if pair.approx is not None
        else "statistical"
        if pair.stat is not None
        else "rounding"
    )
    levels, ratios = (_level(a), _level(b)), {name: ratio for name, (_, ratio) in judged.items()}
    return Report(passed, errors, residuals, kind, levels, int(common.size), notes, common, ratios)


def _chosen(a, b, observables: Sequence[str] | None, checks: Checks):
    """(names, lacking): the observables to compare (asked for, else the setting's, less those it
    skips for this pair), and those asked for or declared that a run lacks."""
    wanted = list(observables or checks.compared)
    names = [n for n in wanted if n in a.observables and n in b.observables]
    lacking = [n for n in wanted if n not in names]
    if observables is not None and lacking:
        raise ValueError(
            f"observables {lacking} are not recorded by both runs: a has "
            f"{sorted(a.observables)}, b has {sorted(b.observables)}"
        )
    if observables is None and checks.skip is not None:  # reported, not judged, for this pair
        skipped = checks.skip(a, b)
        names = [n for n in names if n not in skipped]
    if not names:
        raise ValueError(
            f"no observable to compare: asked for {wanted}, a has "
            f"{sorted(a.observables)}, b has {sorted(b.observables)}"
        )
    return names, lacking


def _pair(
    a, b, common, ia, ib, checks: Checks, names, confidence: float, approximation_tolerance: float
) -> _Pair:
    """What the comparison of `a` and `b` on `names` holds for every observable."""
    stat = next((t for t in (a, b) if any(k.endswith("_se") for k in t.observables)), None)
    approx = next(
        (
            t.meta["approximation"]
            for t in (a, b)
            if t.meta.get("approximation", "exact") != "exact"
        ),
        None,
    )
    dtype = "float32" if "float32" in (a.meta.get("dtype"), b.meta.get("dtype")) else "float64"
    extra = checks.allowance(a, b, common) if checks.allowance is not None else {}
    # Bonferroni: one comparison per recorded step and per compared entry (an array observable
    # counts every entry but its padding)
    entries = sum(
        int(np.count_nonzero(~np.isnan(np.asarray(a[n], float)[ia][0])))
        for n in names
        if stat is not None and f"{n}_se" in stat.observables
    )
    return _Pair(
        a,
        b,
        common,
        ia,
        ib,
        dtype,
        max(term_count(a), term_count(b)),
        stat,
        approx,
        extra,
        entries,
        confidence,
        approximation_tolerance,
    )


def _pair_notes(a, b, lacking: list[str]) -> list[str]:
    """What the report says before any observable: what was not compared, how the configs
    differ."""
    notes: list[str] = []
    if lacking:  # never dropped silently: the verdict covers only what both runs recorded
        notes.append(f"not compared (recorded by one run only): {', '.join(lacking)}")
    differ = config_differences(a, b)
    if differ:  # said, not judged: a user may compare two configurations on purpose
        notes.append(
            "the runs' configurations differ: "
            + ", ".join(f"{k} = {va!r} vs {vb!r}" for k, (va, vb) in differ.items())
        )
    return notes


def _standard_error(pair: _Pair, name: str) -> tuple[np.ndarray, int]:
    """(se, R): the standard error of a - b on `name`, and the replicates whose t quantile
    applies. Both runs Monte Carlo (e.g. a sampled reduced level against the sampled full level):
    the difference of two independent means has se^2 = se_a^2 + se_b^2; the smaller R sets the
    quantile's dof."""
    carriers = [
        (t, i) for t, i in ((pair.a, pair.ia), (pair.b, pair.ib)) if f"{name}_se" in t.observables
    ]
    replicates = min(int(t.meta.get("replicates", 2)) for t, _ in carriers)
    se = np.sqrt(
        sum(np.nan_to_num(np.asarray(t[f"{name}_se"], float)[i], nan=0.0) ** 2 for t, i in carriers)
    )
    return se, replicates


def _observable_error(pair: _Pair, name: str, notes: list[str]) -> tuple[ObservableError, Any]:
    """`name` compared on the common steps, entry by entry, and its largest |a - b| / tolerance at
    each step; `notes` gets a line when its Monte Carlo band is as wide as the observable."""
    x, y = np.asarray(pair.a[name], float)[pair.ia], np.asarray(pair.b[name], float)[pair.ib]
    if x.shape != y.shape:
        raise ValueError(
            f"observable {name!r} has shape {x.shape[1:]} in one trajectory and "
            f"{y.shape[1:]} in the other: compare runs of the same configuration"
        )
    # padding: entries NaN in both runs at every step (structural, e.g. j >= N_k); a NaN
    # anywhere else is a failure
    padding = (
        np.broadcast_to(np.isnan(x).all(axis=0) & np.isnan(y).all(axis=0), x.shape)
        if x.ndim > 1
        else np.zeros(x.shape, bool)
    )
    x0, y0 = np.where(padding, 0.0, x), np.where(padding, 0.0, y)
    diff = np.abs(x0 - y0)
    denom = np.maximum(np.abs(x0), np.abs(y0))
    rel = np.divide(diff, denom, out=np.zeros_like(diff), where=denom > 0)
    scale = float(np.nanmax(denom)) if np.isfinite(denom).any() else 1.0
    base = rounding(pair.common.astype(float), scale, pair.terms, pair.dtype)
    extra = allowance(pair.extra[name]) if name in pair.extra else None
    se, regime = None, None
    if pair.approx is not None:
        regime = approximation(name, scale, pair.approx, pair.approximation_tolerance)
    elif pair.stat is not None and f"{name}_se" in pair.stat.observables:
        se, replicates = _standard_error(pair, name)
        regime = monte_carlo_band(se, replicates, pair.confidence, pair.common.size, pair.entries)
    tol, reason = combine(x.shape, base, regime, extra)
    max_z = None
    if se is not None:
        with np.errstate(divide="ignore", invalid="ignore"):
            zs = np.where(se > 0, diff / se, np.where(diff > 0, np.inf, 0.0))
        max_z = float(np.nanmax(zs)) if zs.size else None
        if float(np.max(tol)) >= scale > 0:  # a band as wide as the observable: it cannot fail
            z = t_quantile(pair.confidence, pair.common.size * pair.entries, replicates - 1)
            notes.append(
                f"{name}: the Monte Carlo band ({float(np.max(tol)):.3g}, t quantile "
                f"{z:.3g} with {replicates - 1} dof) is as wide as max |{name}| = "
                f"{scale:.3g}: this comparison cannot fail, its 'agree' says nothing; "
                "use more replicates"
            )
    finite = bool(np.all(np.isfinite(x0)) and np.all(np.isfinite(y0)))
    ratio = np.where(np.isfinite(diff), diff / tol, np.inf)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    if not finite:
        reason = "non-finite values (a run diverged, or padding differs: lower eta); " + reason
    error = ObservableError(
        float(np.nanmax(diff)) if finite else math.inf,
        float(np.nanmax(rel)) if finite else math.inf,
        float(tol[worst]),
        int(pair.common[worst[0]]),
        finite and bool(np.all(diff <= tol)),
        reason,
        max_z,
    )
    return error, ratio.reshape(ratio.shape[0], -1).max(axis=1)


def _checks(a, b) -> Checks:
    """The checks of the setting that produced `a` (by meta["setting"], its config class); for a
    trajectory of no known setting, every observable both runs record (not a `_se`) is compared,
    those only one records are named in the notes, and no residual is judged."""
    for t in (a, b):
        found = settings_registry.for_config(str(t.meta.get("setting", "")))
        if found is not None:
            return found.checks
    recorded = [
        n
        for n in (*a.observables, *(k for k in b.observables if k not in a.observables))
        if not n.endswith("_se")
    ]
    # those only one run records are named in the report's notes
    return Checks(compared=tuple(recorded))


def _residuals(checks: Checks, a, b, common, terms, dtype, exact: bool) -> dict[str, Residual]:
    """The reduction residuals of the full trajectory: judged by rounding when deterministic,
    reported otherwise."""
    out: dict[str, Residual] = {}
    for t in (a, b):
        if t.level != "full":
            continue
        for name, what in checks.residuals.items():
            if name not in t.observables:
                continue
            value = float(np.max(np.abs(t[name])))
            if not exact:
                out[name] = Residual(
                    value, None, None, what + "; nonzero by O(1/sqrt(N)) sampling noise, not judged"
                )
                continue
            what += checks.exact_notes.get(name, "")
            scale = max(
                [float(np.max(np.abs(t[n]))) for n in checks.residual_scale if n in t.observables]
                + [1.0]
            )
            last = np.array([float(common.max())])
            tol = float(rounding_tolerance(last, scale, terms, dtype)[0])
            out[name] = Residual(value, tol, bool(value <= tol), what + "; rounding tolerance")
    return out


def _level(t) -> str:
    """The level, with the approximation of a reduced run when it has one (e.g.
    "reduced[mean_field]")."""
    approx = t.meta.get("approximation")
    return f"{t.level}[{approx}]" if approx and approx != "exact" else t.level
