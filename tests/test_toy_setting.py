"""A setting is a plugin: a third, tiny setting defined only inside tests/ (tests/toy_setting,
linear teacher-student) gets `dynsim compare`, `dynsim sweep` and `dynsim check-theorems` from its
`Setting` record, through the registration function and through a real entry point, with no edit to
dynsim."""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import dynsim
from dynsim import cli
from tests.toy_setting import levels
from tests.toy_setting.config import ToyConfig
from tests.toy_setting.setting import BROKEN, SETTING
from tests.helpers import assert_refused

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def registered():
    dynsim.register(SETTING)
    dynsim.register(BROKEN)


def test_reduction_is_exact_against_independent_arithmetic():
    """The toy's reduced recurrence equals GD on w done by hand in NumPy (float64; 50 steps of O(1)
    numbers, each a few roundings of relative 2^-53: 1e-13 leaves a factor ~100 over the accumulated
    ~50 * 4 ulp)."""
    cfg = ToyConfig(d=6, eta=0.3, steps=50, record_every=1)
    w_star, w = np.asarray(levels.teacher(cfg)), np.asarray(levels.start(cfg))
    m = [w @ w_star]
    for _ in range(cfg.steps):
        w = w - cfg.eta * (w - w_star)
        m.append(w @ w_star)
    np.testing.assert_allclose(levels.reduced(cfg)["overlap"], m, rtol=0, atol=1e-13)


def test_compare_from_the_cli_agrees(tmp_path):
    assert (
        cli.main(
            ["compare", "toy", "--d", "5", "--eta", "0.2", "--steps", "40", "--out", str(tmp_path)]
        )
        == 0
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] and report["kind"] == "rounding"
    # the setting's Checks.compared, not JSL's or MIM's
    assert set(report["errors"]) == {"overlap", "norm2", "loss"}
    assert (
        report["reduced_meta"]["setting"] == "ToyConfig" and report["full_meta"]["level"] == "full"
    )
    assert (tmp_path / "compare.png").stat().st_size > 0 and (
        tmp_path / "trajectories.npz"
    ).exists()


def test_compare_negative_control_disagrees(tmp_path, capsys):
    """A reduced level off by 1e-6 a step must be caught: exit 1 and DISAGREE on the overlap."""
    assert (
        cli.main(["compare", "toy-broken", "--steps", "40", "--out", str(tmp_path), "--no-plot"])
        == 1
    )
    report = json.loads((tmp_path / "report.json").read_text())
    assert not report["errors"]["overlap"]["passed"]
    assert "DISAGREE" in capsys.readouterr().out


def test_invalid_option_is_one_line_exit_2(tmp_path, capsys):
    code = cli.main(["compare", "toy", "--d", "1", "--out", str(tmp_path)])
    assert_refused(code, capsys.readouterr().err, "ToyConfig.d = 1 is invalid")


def test_two_point_sweep_from_the_cli(tmp_path, capsys):
    out = tmp_path / "sw"
    args = [
        "sweep",
        "toy",
        "--eta",
        "0.1,0.2",
        "--steps",
        "30",
        "--level",
        "both",
        "--out",
        str(out),
    ]
    assert cli.main(args) == 0
    rows = list(csv.DictReader((out / "table.csv").open()))
    assert [float(r["eta"]) for r in rows] == [0.1, 0.2]
    assert [r["verdict"] for r in rows] == ["AGREE", "AGREE"]
    # the final loss is (1 - eta)^(2T) L(0) in exact arithmetic
    L0 = float(levels.reduced(ToyConfig(steps=1))["loss"][0])
    for r in rows:
        assert float(r["reduced_final_loss"]) == pytest.approx(
            (1 - float(r["eta"])) ** 60 * L0, rel=1e-10
        )
    assert cli.main(args) == 0  # resumed: nothing recomputed
    assert "0 computed now, 2 reused" in capsys.readouterr().out


def test_check_theorems_holds_and_its_negative_control_fails(tmp_path):
    assert cli.main(["check-theorems", "toy", "--eta", "0.5", "--out", str(tmp_path / "a")]) == 0
    assert (
        cli.main(["check-theorems", "toy", "--eta", "2.5", "--out", str(tmp_path / "b"), "--json"])
        == 1
    )
    saved = json.loads((tmp_path / "b" / "theorems.json").read_text())
    claims = saved["claims"]
    assert (
        claims[0]["verdict"] == "fails"
        and claims[0]["measured"] > 0
        and saved["config"]["eta"] == 2.5
    )
    contract = {
        "claim",
        "statement",
        "reading",
        "regime",
        "threshold",
        "derivation",
        "measured",
        "verdict",
        "negative_control",
    }
    assert contract <= set(claims[0])


def test_library_api_and_help_name_the_setting():
    assert "toy" in dynsim.settings()
    assert dynsim.compare(levels.reduced(ToyConfig()), levels.full(ToyConfig())).passed
    help_text = cli.build_parser().format_help()
    assert "compare" in help_text and "sweep" in help_text


def test_entry_point_discovery_in_a_fresh_process(tmp_path):
    """A package that declares an entry point in the group dynsim.settings is found by a fresh
    `dynsim` process: the toy's distribution metadata (what pip writes for
    `[project.entry-points."dynsim.settings"]`) is put on PYTHONPATH, and nothing registers it by
    hand."""
    dist = tmp_path / "site" / "dynsim_toy-0.1.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: dynsim-toy\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(
        "[dynsim.settings]\ntoy = tests.toy_setting.setting:SETTING\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path / "site"), str(ROOT)])}
    out = tmp_path / "o"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dynsim.cli",
            "compare",
            "toy",
            "--steps",
            "20",
            "--no-plot",
            "--out",
            str(out),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "verdict: AGREE" in proc.stdout
    listed = subprocess.run(
        [sys.executable, "-m", "dynsim.cli", "sweep", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "toy" in listed.stdout and "jsl" in listed.stdout and "mim" in listed.stdout


def test_a_sweep_lists_the_heatmaps_it_draws_and_removes_its_stale_ones(tmp_path, capsys):
    """Two sweeps into one --out: another grid (without the first's points) is refused and changes
    nothing; the same grid again draws the folder's heatmaps again, so none is lost, and removes
    only a heatmap its manifest listed that it cannot draw; its manifest lists what it drew."""
    out = tmp_path / "sw"
    base = ["sweep", "toy", "--steps", "10", "--out", str(out)]
    grid = ["--eta", "0.1,0.2", "--d", "4,6"]
    assert cli.main(base + grid + ["--heatmap", "final_overlap"]) == 0
    first = json.loads((out / "sweep.json").read_text())
    assert first["heatmap_files"] == ["heatmap-reduced_final_overlap.png"]
    assert (out / "heatmap-reduced_final_overlap.png").is_file()
    (out / "heatmap-mine.png").write_bytes(b"not the sweep's")  # a file the sweeps never drew
    files = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    code = cli.main(base + ["--eta", "0.1,0.3"])
    assert_refused(code, capsys.readouterr().err, f"out = {str(out)!r} is invalid", "another")
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == files
    # a heatmap the manifest lists that the table cannot give: removed with the table replaced
    (out / "heatmap-reduced_gone.png").write_bytes(b"png")
    first["heatmaps"].append("gone")
    first["heatmap_files"].append("heatmap-reduced_gone.png")
    (out / "sweep.json").write_text(json.dumps(first))
    assert cli.main(base + grid) == 0
    second = json.loads((out / "sweep.json").read_text())
    assert "final_overlap" in second["heatmaps"] and "gone" not in second["heatmaps"]
    assert "heatmap-reduced_final_overlap.png" in second["heatmap_files"]
    drawn = sorted(p.name for p in out.glob("heatmap-*.png"))
    assert "heatmap-reduced_gone.png" not in drawn
    assert sorted(second["heatmap_files"]) == sorted(set(drawn) - {"heatmap-mine.png"})
    assert (out / "heatmap-mine.png").read_bytes() == b"not the sweep's"
