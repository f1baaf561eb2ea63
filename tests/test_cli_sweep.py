"""`dynsim sweep`: the table and phase diagrams of a 3 x 3 grid with seeds, resume after Ctrl-C,
one-line errors."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest

from dynsim.cli import main
from tests.helpers import assert_refused

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GRID = [
    "sweep",
    "jsl",
    "--D",
    "9",
    "--C",
    "3",
    "--q",
    "0.2,0.3,0.4",
    "--eta",
    "0.05,0.1,0.2",
    "--seeds",
    "2",
    "--steps",
    "300",
    "--record-every",
    "100",
]


def test_grid_table_heatmaps_and_resume(tmp_path, capsys):
    out = str(tmp_path / "sw")
    assert main(GRID + ["--out", out, "--heatmap", "final_loss,final_attention_ratio"]) == 0
    text = capsys.readouterr().out
    # the reduced level does not depend on the seed: 9 distinct runs, each reported for both seeds
    assert (
        "18 points (9 distinct runs: the seed does not change the others): 9 computed now, 0 reused"
        in text
    )
    with open(os.path.join(out, "table.csv")) as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 18
    assert [(r["q"], r["eta"], r["seed"]) for r in rows[:3]] == [
        ("0.2", "0.05", "0"),
        ("0.2", "0.05", "1"),
        ("0.2", "0.1", "0"),
    ]
    for name in ("reduced_final_loss", "reduced_final_attention_ratio"):
        with open(os.path.join(out, f"heatmap-{name}.png"), "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    # sweep.json records what ran it: the command line, every option (--heatmap too), the heatmaps
    # drawn
    with open(os.path.join(out, "sweep.json")) as fh:
        manifest = json.load(fh)
    assert manifest["heatmaps"] == ["final_loss", "final_attention_ratio"]
    assert manifest["invocation"]["options"]["heatmap"] == ["final_loss", "final_attention_ratio"]
    assert manifest["invocation"]["command_line"][:3] == ["dynsim", "sweep", "jsl"]
    assert main(GRID + ["--out", out, "--resume"]) == 0
    assert "0 computed now, 9 reused" in capsys.readouterr().out


def test_ctrl_c_then_rerun_resumes(tmp_path, capsys):
    out = tmp_path / "sw"
    # 24 points: in the full suite (warm caches) 6 points could all finish between the poll and the
    # signal
    qs = ",".join(f"{0.1 + 0.0125 * i:g}" for i in range(24))
    args = [
        "sweep",
        "jsl",
        "--D",
        "9",
        "--C",
        "3",
        "--q",
        qs,
        "--steps",
        "40000",
        "--record-every",
        "1000",
        "--chunk-size",
        "1",
        "--batch-size",
        "1",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "dynsim.cli", *args], cwd=ROOT, stderr=subprocess.PIPE, text=True
    )
    deadline = time.time() + 300
    while (
        time.time() < deadline and proc.poll() is None and len(list(out.glob("points/*/*.npz"))) < 2
    ):
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    stored = len(list(out.glob("points/*/*.npz")))
    assert proc.returncode == 130 and "run the same command again to resume" in err, err
    assert 2 <= stored < 24
    # the rerun in this process: what it reuses is the store's, not the interrupted process's
    capsys.readouterr()
    assert main(args) == 0
    assert f"24 points: {24 - stored} computed now, {stored} reused" in capsys.readouterr().out


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--q", "0.2,abc"], "--q: '0.2,abc': every item must be float"),
        (["--q", "0.2,1.5"], "JSLConfig.q = 1.5 is invalid"),
        (["--workers", "0"], "workers = 0 is invalid"),
        (["--scheduler", "localhost"], "scheduler = 'localhost' is invalid"),
        (["--seed", "1,2"], "--seed = [1, 2] is invalid"),
        (["--q", "0.2,0.3", "--heatmap-axes", "q"], "heatmap_axes = ['q'] is invalid"),
        (["--replicates", "4"], "--replicates is for --mode sampled, not --mode exact"),
        (["--level", "all"], "invalid choice: 'all'"),
        (["--resume", "--force"], "--resume and --force are exclusive"),
    ],
)
def test_invalid_input_is_one_line_exit_2(tmp_path, capsys, extra, message):
    code = main(["sweep", "jsl", "--out", str(tmp_path), *extra])
    assert_refused(code, capsys.readouterr().err, message)
