"""The checker on hand-made trajectories."""

import numpy as np
import pytest

from dynsim import Trajectory, compare
from dynsim.tolerances import (
    SAFETY,
    Term,
    allowance,
    approximation,
    combine,
    monte_carlo_band,
    rounding,
    rounding_tolerance,
)
from tests.conftest import U64


def _traj(values, level="reduced", steps=None, **meta):
    steps = np.arange(len(next(iter(values.values())))) if steps is None else steps
    return Trajectory(steps, values, {"level": level, "dtype": "float64", **meta})


def test_runs_of_two_settings_are_refused():
    """A run of one setting against a run of another compares nothing the papers relate: refused,
    not a DISAGREE."""
    v = {"loss": np.linspace(0.7, 0.1, 11)}
    a, b = _traj(v, setting="ICLConfig"), _traj(v, level="full", setting="JSLConfig")
    with pytest.raises(ValueError, match="a is a run of ICLConfig, b of JSLConfig"):
        compare(a, b)


def test_identical_trajectories_agree():
    v = {"alpha": np.linspace(0.1, 0.5, 11), "loss": np.linspace(0.7, 0.1, 11)}
    r = compare(_traj(v), _traj(v, level="full"))
    assert r.passed and r.errors["alpha"].max_abs == 0 and r.levels == ("reduced", "full")


def test_error_beyond_rounding_tolerance_disagrees():
    v = {"alpha": np.linspace(0.1, 0.5, 11)}
    tol_last = rounding_tolerance(np.array([10.0]), 0.5, 1, "float64")[0]
    assert tol_last == pytest.approx(SAFETY * 11 * U64)
    w = {"alpha": v["alpha"] + np.r_[np.zeros(10), 2 * tol_last]}
    r = compare(_traj(v), _traj(w, level="full"))
    assert not r.passed and r.errors["alpha"].worst_step == 10
    w_ok = {"alpha": v["alpha"] + np.r_[np.zeros(10), 0.5 * tol_last]}
    assert compare(_traj(v), _traj(w_ok, level="full")).passed


def test_relative_error_and_zero_reference():
    v = {"gamma": np.array([0.0, 1.0])}
    w = {"gamma": np.array([0.0, 1.0 + 1e-3])}
    r = compare(_traj(v), _traj(w))
    assert r.errors["gamma"].max_rel == pytest.approx(1e-3 / 1.001)


def test_only_common_steps_are_compared():
    a = _traj({"alpha": np.array([0.0, 1.0, 2.0])}, steps=np.array([0, 10, 20]))
    b = _traj({"alpha": np.array([0.0, 99.0, 2.0])}, steps=np.array([0, 5, 20]))
    r = compare(a, b)
    assert r.passed and r.common_steps == 2
    with pytest.raises(ValueError, match="share no recorded step"):
        compare(a, _traj({"alpha": np.array([1.0])}, steps=np.array([3])))


def test_nonfinite_values_disagree():
    a = _traj({"alpha": np.array([0.1, 0.2])})
    b = _traj({"alpha": np.array([0.1, np.nan])})
    r = compare(a, b)
    assert not r.passed and "non-finite" in r.errors["alpha"].reason


def test_statistical_band_uses_standard_errors():
    steps = np.arange(5)
    exact = _traj({"alpha": np.zeros(5)}, steps=steps)
    se = np.full(5, 0.01)
    near = _traj(
        {"alpha": np.full(5, 0.03), "alpha_se": se}, level="full", steps=steps, replicates=8
    )
    far = _traj({"alpha": np.full(5, 0.5), "alpha_se": se}, level="full", steps=steps, replicates=8)
    # 3 standard errors < t_7 quantile at 1 - 0.001/10 (about 6.4)
    assert compare(exact, near).passed
    r = compare(exact, far)
    assert not r.passed and r.kind == "statistical" and "Bonferroni" in r.errors["alpha"].reason


def test_bad_confidence_is_rejected():
    t = _traj({"alpha": np.zeros(2)})
    with pytest.raises(ValueError, match="confidence"):
        compare(t, t, confidence=1.5)


def test_report_table_and_json():
    v = {"alpha": np.linspace(0.1, 0.5, 3)}
    r = compare(_traj(v), _traj(v, level="full"))
    assert "verdict: AGREE" in r.table() and '"passed": true' in r.to_json()


def test_observable_recorded_by_one_run_is_never_dropped_silently():
    """An observable only one run records is named in the notes (the verdict covers the others);
    asked for explicitly, it is an error. Negative control: with both runs recording it, no such
    note."""
    a = {"alpha": np.linspace(0.1, 0.5, 11), "loss": np.linspace(0.7, 0.1, 11)}
    b = {"alpha": a["alpha"]}
    r = compare(_traj(a), _traj(b, level="full"))
    assert r.passed and "not compared (recorded by one run only): loss" in r.notes
    assert not any("not compared" in n for n in compare(_traj(a), _traj(a, level="full")).notes)
    with pytest.raises(ValueError, match=r"observables \['loss'\] are not recorded by both runs"):
        compare(_traj(a), _traj(b, level="full"), observables=["alpha", "loss"])


def test_differing_configurations_are_named_in_the_notes():
    """Runs from different configurations are named in the notes (said, not judged). Negative
    control: the same config gives no such note."""
    v = {"alpha": np.linspace(0.1, 0.5, 11)}
    same = compare(
        _traj(v, config={"D": 16, "q": 0.5}), _traj(v, level="full", config={"D": 16, "q": 0.5})
    )
    assert not any("configurations differ" in n for n in same.notes)
    r = compare(
        _traj(v, config={"D": 16, "q": 0.5}), _traj(v, level="full", config={"D": 16, "q": 0.3})
    )
    assert "the runs' configurations differ: q = 0.5 vs 0.3" in r.notes


def test_a_band_as_wide_as_the_observable_is_called_vacuous():
    """With few replicates and a Bonferroni quantile over many entries the band can exceed the
    observables themselves (found at P = 256, R = 4); the report says such an 'agree' cannot
    fail."""
    import numpy as np

    from dynsim import compare as cmp
    from dynsim.trajectory import Trajectory

    steps = np.array([0, 1])
    meta = {"level": "reduced", "setting": "JSLConfig", "config": {}, "dtype": "float64"}
    a = Trajectory(steps, {"loss": np.array([1.0, 0.9])}, {**meta, "replicates": 3})
    # se as large as the loss: t(2) quantile x se >> 1
    a.observables["loss_se"] = np.array([1.0, 1.0])
    b = Trajectory(steps, {"loss": np.array([1.0, 0.5])}, dict(meta))
    report = cmp(a, b, observables=["loss"])
    assert report.passed and any("cannot fail" in n for n in report.notes)
    # a meaningful band: no such note, and it fails
    a.observables["loss_se"] = np.array([1e-3, 1e-3])
    report = cmp(a, b, observables=["loss"])
    assert not report.passed and not any("cannot fail" in n for n in report.notes)


# The tolerance terms on their own. u is a power of two, so products of u with small integers are
# exact in float64 and the rounding values below are asserted exactly.


def test_rounding_term_by_hand():
    """M = 4 terms, scale 3: SAFETY (t+1) sqrt(4) u 3 = 60 (t+1) u, so 60 u at t = 0, 600 u at
    t = 9; a scale below 1 counts as 1, and float32 has u = 2^-24."""
    tol, reason = rounding(np.array([0.0, 9.0]), 3.0, 4, "float64")
    assert list(tol) == [60 * U64, 600 * U64]
    assert reason == (
        "float64 rounding: 10 (t+1) sqrt(M) u max(1, scale), M = 4 terms per step, u = 1.11e-16"
    )
    tol32, reason32 = rounding(np.array([0.0]), 0.5, 1, "float32")
    assert list(tol32) == [10 * 2.0**-24] and "float32 rounding" in reason32


def test_monte_carlo_band_term_by_hand():
    """R = 2 gives 1 dof, the Cauchy law, whose quantile is tan(pi (p - 1/2)). Confidence 0.9 over
    2 steps x 5 entries (Bonferroni: 10 comparisons) puts the two-sided tail at 0.1 / 20, so
    p = 0.995 and the quantile is tan(0.495 pi) = 63.66; one comparison: tan(0.45 pi) = 6.31.
    rel = 1e-9: scipy's t quantile and the rounding of 1 - 0.9 agree with tan to far better."""
    se = np.array([0.1, 0.2])
    tol, reason = monte_carlo_band(se, 2, 0.9, 2, 5)
    assert tol == pytest.approx(np.tan(0.495 * np.pi) * se, rel=1e-9)
    assert reason == (
        "Monte Carlo band: t quantile 63.66 (1 dof, 90.0% family-wise over 2 steps "
        "x 5 compared entries, Bonferroni) x standard error of the mean of 2 runs, "
        "plus rounding"
    )
    one, _ = monte_carlo_band(se, 2, 0.9, 1, 1)
    assert one == pytest.approx(np.tan(0.45 * np.pi) * se, rel=1e-9)


def test_approximation_term_by_hand():
    """5% of max |loss| = 2 is 0.1 (0.05 x 2 is exact: a doubling); an observable that is 0
    throughout still gets a positive tolerance, so equal runs pass."""
    tol, reason = approximation("loss", 2.0, "mean_field", 0.05)
    assert tol == 0.1
    assert reason == (
        "approximation 'mean_field': |difference| <= 0.05 x max |loss| = 0.1 "
        "(a stated tolerance, not a rounding bound)"
    )
    zero, reason0 = approximation("rho", 0.0, "pp_frozen", 0.05)
    assert 0.0 < zero < 1e-300 and "max |rho| = 0 " in reason0


def test_allowance_term_passes_the_bound_through():
    bound = np.array([0.0, 1e-6, 2e-6])
    tol, reason = allowance(bound)
    assert tol is bound
    assert reason == "plus the truncation bound of the reduced sum accumulated over the steps"


def test_combine_sums_terms_over_entries_and_joins_reasons():
    """Per-step base [1, 2, 3] and extra [10, 20, 30] broadcast over 2 entries per step, plus a
    per-entry regime of 100: 111, 122, 133 in both columns (small integers: exact sums). The
    regime's reason stands in place of the base's, the extra's follows."""
    base = Term(np.array([1.0, 2.0, 3.0]), "base")
    extra = Term(np.array([10.0, 20.0, 30.0]), "extra")
    regime = Term(np.full((3, 2), 100.0), "regime")
    tol, reason = combine((3, 2), base, regime, extra)
    assert tol.tolist() == [[111.0, 111.0], [122.0, 122.0], [133.0, 133.0]]
    assert reason == "regime; extra"
    tol, reason = combine((3, 2), base, extra=extra)
    assert tol.tolist() == [[11.0, 11.0], [22.0, 22.0], [33.0, 33.0]] and reason == "base; extra"
    tol, reason = combine((3,), base, Term(0.5, "approx"))
    assert tol.tolist() == [1.5, 2.5, 3.5] and reason == "approx"
    tol, reason = combine((3,), base)
    assert tol.tolist() == [1.0, 2.0, 3.0] and reason == "base"


def test_truncation_allowance_widens_the_tolerance():
    """A JSL reduced run that truncated its sum earns eta t grad_alpha on alpha: at t = 20 with
    eta = 0.1 and bound 1e-6 that is 2e-6, against 10 x 21 u = 2.3e-14 of rounding. A deviation
    of 1e-6 at t = 20 passes with it; negative control: the same run without truncation fails."""
    steps = np.array([0, 10, 20])
    bounds = {
        "grad_alpha": 1e-6,
        "grad_gamma_per_entry": 0.0,
        "grad_rho_per_entry": 0.0,
        "loss": 0.0,
    }
    meta = {"setting": "JSLConfig", "config": {"eta": 0.1}}
    full = _traj({"alpha": np.array([0.5, 0.5, 0.5 + 1e-6])}, level="full", steps=steps, **meta)
    plain = _traj({"alpha": np.full(3, 0.5)}, steps=steps, **meta)
    truncated = _traj(
        {"alpha": np.full(3, 0.5)},
        steps=steps,
        **meta,
        truncation={"dropped_probability": 1e-9, "bounds": bounds},
    )
    r = compare(truncated, full)
    e = r.errors["alpha"]
    assert r.passed and e.worst_step == 20
    # rounding (scale 0.5 counts as 1, M = 1) plus the allowance; rel 1e-12: a few roundings apart
    assert e.tolerance == pytest.approx(2e-6 + SAFETY * 21 * U64, rel=1e-12)
    assert e.reason.endswith(
        "; plus the truncation bound of the reduced sum accumulated over the steps"
    )
    assert not compare(plain, full).passed


def test_compare_names_an_argument_that_is_not_a_trajectory():
    run = _traj({"loss": np.array([1.0, 0.5, 0.25])})
    report = compare(run, run)
    with pytest.raises(TypeError, match="^b must be a Trajectory .* got int$"):
        compare(run, 5)
    with pytest.raises(TypeError, match="^a must be a Trajectory .* got Report$"):
        compare(report, run)
    with pytest.raises(ValueError, match="^confidence = '0.9' is invalid"):
        compare(run, run, confidence="0.9")
