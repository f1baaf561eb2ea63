"""Trajectory save/load."""

import numpy as np
import pytest

from dynsim import Trajectory
from dynsim.trajectory import load_many, save_many


def test_roundtrip(tmp_path):
    t = Trajectory(np.array([0, 5]), {"alpha": np.array([0.1, 0.2]), "pp": np.ones((2, 3, 3))},
                   {"level": "reduced", "config": {"D": 9}, "x": np.float64(1.5)})
    path = tmp_path / "t.npz"
    t.save(path)
    u = Trajectory.load(path)
    assert u.steps.tolist() == [0, 5] and u.meta["config"]["D"] == 9 and u.meta["x"] == 1.5
    assert np.array_equal(u["pp"], t["pp"]) and u.level == "reduced"
    save_many(tmp_path / "m.npz", {"reduced": t, "full": u})
    both = load_many(tmp_path / "m.npz")
    assert set(both) == {"reduced", "full"} and np.array_equal(both["full"]["alpha"], t["alpha"])
    assert not list(tmp_path.glob("*.tmp"))


def test_leading_axis_must_match_steps():
    with pytest.raises(ValueError, match="one row per step"):
        Trajectory(np.array([0, 1, 2]), {"alpha": np.zeros(2)}, {})


def test_progress_bar_reports_every_record():
    import io

    import reduced.jsl
    from dynsim import JSLConfig, progress

    out = io.StringIO()
    with progress.bar(100, "reduced", stream=out, enabled=True):
        reduced.jsl.simulate(JSLConfig(D=8, C=2, steps=100, record_every=25))
    text = out.getvalue()
    assert "reduced: [" in text and "100/100 steps" in text
    silent = io.StringIO()
    with progress.bar(100, "reduced", stream=silent, enabled=False):
        reduced.jsl.simulate(JSLConfig(D=8, C=2, steps=100, record_every=25))
    assert silent.getvalue() == ""
