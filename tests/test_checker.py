"""The checker on hand-made trajectories."""

import numpy as np
import pytest

from dynsim import Trajectory, compare
from dynsim.checker import SAFETY, rounding_tolerance
from tests.conftest import U64


def _traj(values, level="reduced", steps=None, **meta):
    steps = np.arange(len(next(iter(values.values())))) if steps is None else steps
    return Trajectory(steps, values, {"level": level, "dtype": "float64", **meta})


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
    near = _traj({"alpha": np.full(5, 0.03), "alpha_se": se}, level="full", steps=steps, replicates=8)
    far = _traj({"alpha": np.full(5, 0.5), "alpha_se": se}, level="full", steps=steps, replicates=8)
    assert compare(exact, near).passed  # 3 standard errors < t_7 quantile at 1 - 0.001/10 (about 6.4)
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
    """An observable only one run records is named in the notes (the verdict covers the others); asked for
    explicitly, it is an error. Negative control: with both runs recording it, no such note."""
    a = {"alpha": np.linspace(0.1, 0.5, 11), "loss": np.linspace(0.7, 0.1, 11)}
    b = {"alpha": a["alpha"]}
    r = compare(_traj(a), _traj(b, level="full"))
    assert r.passed and "not compared (recorded by one run only): loss" in r.notes
    assert not any("not compared" in n for n in compare(_traj(a), _traj(a, level="full")).notes)
    with pytest.raises(ValueError, match=r"observables \['loss'\] are not recorded by both runs"):
        compare(_traj(a), _traj(b, level="full"), observables=["alpha", "loss"])


def test_differing_configurations_are_named_in_the_notes():
    """Issue 14: compare said nothing when the two runs came from different configurations. Negative control: the
    same config gives no such note."""
    v = {"alpha": np.linspace(0.1, 0.5, 11)}
    same = compare(_traj(v, config={"D": 16, "q": 0.5}), _traj(v, level="full", config={"D": 16, "q": 0.5}))
    assert not any("configurations differ" in n for n in same.notes)
    r = compare(_traj(v, config={"D": 16, "q": 0.5}), _traj(v, level="full", config={"D": 16, "q": 0.3}))
    assert "the runs' configurations differ: q = 0.5 vs 0.3" in r.notes


def test_a_band_as_wide_as_the_observable_is_called_vacuous():
    """Issue 15 (P = 256): with R = 4 replicates and a Bonferroni quantile over ~1e5 entries the band exceeded the
    observables themselves; the report says that such an 'agree' cannot fail."""
    import numpy as np

    from dynsim import compare as cmp
    from dynsim.trajectory import Trajectory

    steps = np.array([0, 1])
    meta = {"level": "reduced", "setting": "JSLConfig", "config": {}, "dtype": "float64"}
    a = Trajectory(steps, {"loss": np.array([1.0, 0.9])}, {**meta, "replicates": 3})
    a.observables["loss_se"] = np.array([1.0, 1.0])  # se as large as the loss: t(2) quantile x se >> 1
    b = Trajectory(steps, {"loss": np.array([1.0, 0.5])}, dict(meta))
    report = cmp(a, b, observables=["loss"])
    assert report.passed and any("cannot fail" in n for n in report.notes)
    a.observables["loss_se"] = np.array([1e-3, 1e-3])  # a meaningful band: no such note, and it fails
    report = cmp(a, b, observables=["loss"])
    assert not report.passed and not any("cannot fail" in n for n in report.notes)
