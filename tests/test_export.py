"""`dynsim export FOLDER`: an output folder's files as tidy CSV tables next to them (or in --to),
and clean refusals (exit 2, one line) of what it cannot or must not do.

The folders are written by dynsim's own writers (`save_many`, `Report.to_json`, `table_csv`,
`claims.to_dict`) from values typed here, so every expected number is known without the code under
test, and no run is needed."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dynsim import Trajectory, cli
from dynsim.checker import ObservableError, Report, Residual
from dynsim.claims import Claim, Measurement, to_dict
from dynsim.sweeps import table_csv
from dynsim.trajectory import save_many

from .helpers import assert_refused

# one cluster of 4 patches in 3 areas (sizes 2, 1, 1) and one of 2 areas (sizes 3, 1): area 2 of the
# second cluster is padding
PARTS = [[[0, 1], [2], [3]], [[0, 1, 2], [3]]]
STEPS = [0, 4, 8]


def mim_run(level: str, shift: float) -> Trajectory:
    """MIM-shaped observables: fp_corr (steps, P, K, max N_k) = shift + index, NaN at padding."""
    fp = shift + np.arange(3 * 4 * 2 * 3, dtype=float).reshape(3, 4, 2, 3)
    fp[:, :, 1, 2] = np.nan
    meta = {"setting": "MIMConfig", "areas": PARTS, "level": level, "mode": "exact"}
    return Trajectory(STEPS, {"fp_corr": fp, "loss": np.array([3.0, 2.0, 1.0])}, meta)


@pytest.fixture()
def compare_out(tmp_path):
    out = tmp_path / "compare-mim"
    out.mkdir()
    save_many(
        out / "trajectories.npz", {"reduced": mim_run("reduced", 0), "full": mim_run("full", 1)}
    )
    report = Report(
        True,
        {"loss": ObservableError(1e-15, 2e-15, 1e-12, 4, True, "rounding")},
        {"pp_max": Residual(0.5, None, None, "reported")},
        "rounding",
        ("reduced", "full"),
        3,
        [],
    )
    (out / "report.json").write_text(report.to_json())
    return out


def run(*argv) -> int:
    return cli.main(["export", *map(str, argv)])


def test_compare_folder_gives_trajectories_and_report(compare_out, capsys):
    assert run(compare_out) == 0
    assert "tidy-trajectories.csv" in capsys.readouterr().out
    df = pd.read_csv(compare_out / "tidy-trajectories.csv")
    # per run and step: loss 1 row, fp_corr P * (N_1 + N_2) = 4 * (3 + 2) = 20 rows (padding out)
    assert len(df) == 2 * 3 * (1 + 20)
    fp = df[df.observable == "fp_corr"]
    assert not ((fp.cluster == 1) & (fp.area == 2)).any() and fp["value"].notna().all()
    row = fp[(fp.run == "full") & (fp.step == 8) & (fp.patch == 3) & (fp.cluster == 1)]
    # full: 1 + index of (2, 3, 1, area) in the 3 x 4 x 2 x 3 array; patch 3 is area 1 of cluster 1
    assert row["value"].tolist() == [1 + 2 * 24 + 3 * 6 + 1 * 3 + a for a in (0, 1)]
    assert row["own_area"].tolist() == [1, 1] and row["area_size"].tolist() == [3, 1]
    report = pd.read_csv(compare_out / "tidy-report.csv")
    assert report[["section", "observable"]].values.tolist() == [
        ["compared", "loss"],
        ["residual", "pp_max"],
    ]
    assert report["max_abs"].iloc[0] == 1e-15 and report["value"].iloc[1] == 0.5


def test_existing_files_are_kept_unless_forced(compare_out, capsys):
    assert run(compare_out) == 0
    path = compare_out / "tidy-report.csv"
    path.write_text("mine")
    capsys.readouterr()
    code = run(compare_out)
    assert_refused(code, capsys.readouterr().err, "tidy-trajectories.csv", "--force")
    assert path.read_text() == "mine"
    assert run(compare_out, "--force") == 0 and path.read_text().startswith("section,")


def test_to_another_folder_leaves_the_source_alone(compare_out, tmp_path):
    before = sorted(os.listdir(compare_out))
    assert run(compare_out, "--to", tmp_path / "tidy" / "here") == 0
    assert sorted(os.listdir(compare_out)) == before
    assert sorted(os.listdir(tmp_path / "tidy" / "here")) == [
        "tidy-report.csv",
        "tidy-trajectories.csv",
    ]


def test_sweep_folder_gives_one_row_per_point(tmp_path):
    rows = [
        {"q": 0.2, "seed": 0, "reduced_T1": 150, "reduced_T1_censored": None, "verdict": None},
        {"q": 0.5, "seed": 0, "reduced_T1": None, "reduced_T1_censored": 2000, "verdict": None},
    ]
    (tmp_path / "table.csv").write_text(table_csv(rows, list(rows[0])))
    (tmp_path / "sweep.json").write_text("{}")
    assert run(tmp_path) == 0
    df = pd.read_csv(tmp_path / "tidy-sweep.csv")
    assert list(df.columns) == ["q", "seed", "reduced_T1", "reduced_horizon"]
    assert df["reduced_T1"].tolist() == [150, np.inf]  # read_csv reads "inf" back as +inf
    assert df["reduced_horizon"].isna().tolist() == [True, False]


def test_theorems_folder_gives_one_row_per_claim_and_measurement(tmp_path):
    claim = Claim("Lemma 1", "s", "r", "g", 0.1, "d", 0.05, "holds", "n", details={"x": [1]})
    found = to_dict([claim, Measurement("diversity", "how varied", [0.5, 0.25])], {"P": 16})
    (tmp_path / "theorems.json").write_text(json.dumps(found))
    assert run(tmp_path) == 0
    df = pd.read_csv(tmp_path / "tidy-theorems.csv")
    assert df[["kind", "name"]].values.tolist() == [
        ["claim", "Lemma 1"],
        ["measurement", "diversity"],
    ]
    assert df["measured"].iloc[0] == 0.05 and df["verdict"].iloc[0] == "holds"
    assert json.loads(df["value"].iloc[1]) == [0.5, 0.25] and "details" not in df.columns


def test_what_is_not_a_dynsim_output_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("x")
    for target, needle in (
        (tmp_path / "missing", "no such folder"),
        (tmp_path / "notes.txt", "it is a file"),
        (tmp_path, "none of the outputs export reads"),
    ):
        assert_refused(run(target), capsys.readouterr().err, str(target), needle)
    (tmp_path / "report.json").write_text('{"something": 1}')
    assert_refused(run(tmp_path), capsys.readouterr().err, "report.json", "not a dynsim output")
    (tmp_path / "report.json").unlink()
    (tmp_path / "trajectories.npz").write_bytes(b"not a zip")
    assert_refused(run(tmp_path), capsys.readouterr().err, "trajectories.npz")
    assert sorted(os.listdir(tmp_path)) == ["notes.txt", "trajectories.npz"]


def test_unwritable_target_is_refused(compare_out, tmp_path, capsys, monkeypatch):
    """access(2) is made to deny the folder (as root chmod would not)."""
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if os.fspath(p) == str(locked) else real(p, mode)
    )
    code = run(compare_out, "--to", locked / "new")
    assert_refused(code, capsys.readouterr().err, "--to", str(locked), "not writable")
    assert os.listdir(locked) == []


def test_parquet_without_pyarrow_names_the_install(compare_out, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a)
    )
    code = run(compare_out, "--parquet")
    assert_refused(code, capsys.readouterr().err, "--parquet", "pip install pyarrow")
    assert sorted(os.listdir(compare_out)) == ["report.json", "trajectories.npz"]


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is None, reason="pyarrow not installed")
def test_parquet_reads_back_the_same_table(compare_out):
    assert run(compare_out, "--csv", "--parquet") == 0
    df = pd.read_parquet(compare_out / "tidy-trajectories.parquet")
    assert len(df) == len(pd.read_csv(compare_out / "tidy-trajectories.csv"))


def test_without_xarray_the_extra_is_named(compare_out, capsys, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "xarray" else real(name, *a)
    )
    assert_refused(run(compare_out), capsys.readouterr().err, "xarray", "dynsim[xarray]")


def test_export_help_stays_light():
    code = (
        "import sys\nfrom dynsim import cli\ntry:\n    cli.main(['export', '--help'])\n"
        "except SystemExit:\n    pass\n"
        "print([m for m in ('jax', 'pandas', 'xarray') if m in sys.modules], file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert "usage: dynsim export" in out.stdout and "--force" in out.stdout
    assert out.stderr.strip().splitlines()[-1] == "[]"
