"""Trajectory save/load."""

import os

import numpy as np
import pytest

from dynsim import Trajectory
from dynsim.trajectory import load_many, save_many


def test_roundtrip(tmp_path):
    t = Trajectory(
        np.array([0, 5]),
        {"alpha": np.array([0.1, 0.2]), "pp": np.ones((2, 3, 3))},
        {"level": "reduced", "config": {"D": 9}, "x": np.float64(1.5)},
    )
    path = tmp_path / "t.npz"
    t.save(path)
    u = Trajectory.load(path)
    assert u.steps.tolist() == [0, 5] and u.meta["config"]["D"] == 9 and u.meta["x"] == 1.5
    assert np.array_equal(u["pp"], t["pp"]) and u.level == "reduced"
    save_many(tmp_path / "m.npz", {"reduced": t, "full": u})
    both = load_many(tmp_path / "m.npz")
    assert set(both) == {"reduced", "full"} and np.array_equal(both["full"]["alpha"], t["alpha"])
    # no temporary file (.dynsim-tmp-*) left
    assert sorted(os.listdir(tmp_path)) == ["m.npz", "t.npz"]


def _traj(**meta):
    return Trajectory(
        np.array([0, 5]),
        {"alpha": np.array([0.1, np.nan]), "pp": np.ones((2, 3, 3))},
        {"level": "reduced", "mode": "gd", **meta},
    )


def test_membership_equality_and_repr():
    """Issue 14: `'alpha' in traj` raised KeyError 0, `traj1 == traj2` raised, repr was the whole
    arrays."""
    t = _traj()
    assert "alpha" in t and "beta" not in t and 0 not in t
    assert t == _traj() and not (t != _traj())  # NaN in the same place counts as equal
    assert t != _traj(config={"D": 9}) and t != "alpha"
    u = _traj()
    u.observables["alpha"] = np.array([0.1, 0.2])
    assert t != u
    r = repr(
        Trajectory(
            np.arange(1000), {f"o{i}": np.zeros((1000, 50)) for i in range(12)}, {"level": "full"}
        )
    )
    assert len(r) < 300 and "1000 records" in r and "4 more" in r and "\n" not in r


def test_load_reads_one_trajectory_of_a_many_file(tmp_path):
    """The CLI's trajectories.npz (save_many) is readable with Trajectory.load(path, name)."""
    save_many(tmp_path / "m.npz", {"reduced": _traj(), "full": _traj(level2="x")})
    assert Trajectory.load(tmp_path / "m.npz", "full") == _traj(level2="x")
    with pytest.raises(ValueError, match=r"\['reduced', 'full'\]"):
        Trajectory.load(tmp_path / "m.npz", "fulll")
    # several: a list in the saved order, indexable by name
    both = Trajectory.load(tmp_path / "m.npz")
    assert isinstance(both, list) and both.names == ["reduced", "full"] and len(both) == 2
    assert both[0] == _traj() and both["full"] == both[1] == _traj(level2="x") and "full" in both
    assert all(isinstance(t, Trajectory) for t in both) and both.as_dict()["reduced"] == _traj()
    with pytest.raises(KeyError, match="reduced"):
        both["exact"]
    save_many(tmp_path / "one.npz", {"reduced": _traj()})
    assert Trajectory.load(tmp_path / "one.npz") == _traj()
    _traj().save(tmp_path / "single.npz")
    with pytest.raises(ValueError, match="holds one trajectory"):
        Trajectory.load(tmp_path / "single.npz", "reduced")


def test_outputs_respect_the_umask(tmp_path):
    """Files are written through mkstemp (mode 0600) and renamed: they must end with 0666 less the
    umask."""
    import os

    from dynsim.trajectory import atomic_write_text

    import matplotlib.pyplot as plt

    from dynsim import plotting

    old = os.umask(0o022)
    try:
        _traj().save(tmp_path / "a.npz")
        atomic_write_text(str(tmp_path / "b.json"), "{}")
        plotting.save(plt.figure(), str(tmp_path / "d.png"))
        os.umask(0o077)
        atomic_write_text(str(tmp_path / "c.json"), "{}")
    finally:
        os.umask(old)
    modes = [os.stat(tmp_path / n).st_mode & 0o777 for n in ("a.npz", "b.json", "d.png", "c.json")]
    assert modes == [0o644, 0o644, 0o644, 0o600]


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


def test_mapping_api():
    """Issue 14: a Trajectory behaves as a read-only mapping of its observables."""
    t = _traj()
    assert list(t) == ["alpha", "pp"] == list(t.keys()) and len(t) == 2
    assert (
        dict(t.items())["pp"].shape == (2, 3, 3) and t.get("beta") is None and t.get("beta", 7) == 7
    )
    assert np.array_equal(t.get("pp"), np.ones((2, 3, 3))) and len(list(t.values())) == 2
    with pytest.raises(KeyError):
        t["beta"]
    with pytest.raises(KeyError, match=r"'alpah' \(did you mean alpha\?\); recorded: alpha, pp"):
        t["alpah"]


def test_to_xarray():
    """The Dataset holds every observable over "step" with the recorded steps as coordinate, and the
    meta."""
    import json

    t = _traj(dtype="float64")
    ds = t.to_xarray()
    assert ds["step"].values.tolist() == [0, 5] and ds["pp"].dims == ("step", "pp_dim1", "pp_dim2")
    assert np.array_equal(ds["pp"].values, t["pp"]) and np.isnan(ds["alpha"].values[1])
    assert ds.attrs["level"] == "reduced" and json.loads(ds.attrs["meta_json"])["mode"] == "gd"


def test_to_xarray_without_xarray_names_the_extra(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "xarray", None)  # import xarray now raises ImportError
    with pytest.raises(ImportError, match=r"dynsim\[xarray\]"):
        _traj().to_xarray()


def test_npz_bytes_are_deterministic(tmp_path, monkeypatch):
    """The same trajectories give the same file bytes (a zip entry can carry the time it was
    written; `dynsim rerun` compares bytes), and np.load reads them (plain and compressed)."""
    import time

    save_many(tmp_path / "a.npz", {"reduced": _traj(), "full": _traj(level2="x")})
    # the clock 10 s on (zip time stamps have a 2 s resolution: a stamped time would now differ),
    # for zipfile's time.time() and for a writer's time.localtime()
    now, localtime = time.time, time.localtime
    monkeypatch.setattr(time, "time", lambda: now() + 10.0)
    monkeypatch.setattr(
        time, "localtime", lambda secs=None: localtime(time.time() if secs is None else secs)
    )
    save_many(tmp_path / "b.npz", {"reduced": _traj(), "full": _traj(level2="x")})
    monkeypatch.undo()
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    from dynsim.trajectory import atomic_savez

    atomic_savez(str(tmp_path / "c.npz"), {"x": np.zeros(10000)}, compressed=True)
    with np.load(tmp_path / "c.npz") as f:
        assert np.array_equal(f["x"], np.zeros(10000))
    # 80,000 bytes of zeros deflate to a few hundred
    assert (tmp_path / "c.npz").stat().st_size < 10000


def test_x64_opt_out_by_environment_and_function():
    """Issue 14: importing dynsim turned float64 on for the whole process with no way out.
    DYNSIM_X64=0 keeps JAX's setting; a float64 run is then refused (never silently float32);
    dynsim.enable_x64() turns it on explicitly."""
    import os
    import subprocess
    import sys

    code = (
        "import jax, dynsim, reduced.jsl\nprint(jax.config.jax_enable_x64)\ntry:\n    "
        "reduced.jsl.simulate(dynsim.JSLConfig(steps=2))\nexcept ValueError as e:\n    "
        "print('refused', 'jax_enable_x64' in "
        "str(e))\ndynsim.enable_x64()\nprint(jax.config.jax_enable_x64, "
        "reduced.jsl.simulate(dynsim.JSLConfig(steps=2))['alpha'].dtype)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "DYNSIM_X64": "0"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert out == ["False", "refused", "True", "True", "float64"]
    default = subprocess.run(
        [sys.executable, "-c", "import jax, dynsim; print(jax.config.jax_enable_x64)"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert default == "True"


def test_saving_into_a_missing_folder_names_the_path_not_a_temporary_file(tmp_path):
    traj = Trajectory(np.arange(2), {"loss": np.ones(2)}, {"level": "reduced"})
    path = str(tmp_path / "no" / "such" / "x.npz")
    with pytest.raises(FileNotFoundError) as err:
        traj.save(path)
    assert err.value.filename == path and ".dynsim-tmp" not in str(err.value)
    assert not (tmp_path / "no").exists()
