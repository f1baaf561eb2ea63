"""The `dynsim` command line."""

import json
import subprocess
import sys

import pytest

from dynsim import cli
from dynsim.trajectory import load_many

SMALL = ["--D", "8", "--C", "2", "--steps", "60", "--record-every", "20"]


def test_compare_agrees_and_writes_outputs(tmp_path, capsys):
    code = cli.main(["compare", "jsl", *SMALL, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "verdict: AGREE" in out and "max abs error" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] is True and set(report["errors"]) >= {"alpha", "gamma", "rho", "loss"}
    assert report["reduced_meta"]["level"] == "reduced" and report["full_meta"]["level"] == "full"
    assert report["full_meta"]["dtype"] == "float64" and "jax" in report["full_meta"]["versions"]
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"
    trajs = load_many(tmp_path / "trajectories.npz")
    assert trajs["reduced"].steps.tolist() == [0, 20, 40, 60]
    assert trajs["full"].meta["config"]["D"] == 8


def test_json_output(tmp_path, capsys):
    code = cli.main(["compare", "jsl", *SMALL, "--out", str(tmp_path), "--json", "--no-plot"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["passed"] is True and not (tmp_path / "compare.png").exists()


def test_disagreement_exits_1(tmp_path, monkeypatch, capsys):
    import full.jsl

    real = full.jsl.simulate

    def perturbed(cfg, **kw):
        t = real(cfg, **kw)
        t.observables["gamma"] = t.observables["gamma"] + 1e-6
        return t

    monkeypatch.setattr(full.jsl, "simulate", perturbed)
    code = cli.main(["compare", "jsl", *SMALL, "--out", str(tmp_path), "--no-plot"])
    assert code == 1 and "DISAGREE" in capsys.readouterr().out


BAD_ARGS = [
    (["--D", "10"], "JSLConfig.D = 10"),
    (["--C", "1"], "JSLConfig.C = 1"),
    (["--p", "4"], "JSLConfig.p = 4"),
    (["--q", "2"], "JSLConfig.q = 2.0"),
    (["--q", "abc"], "--q"),
    (["--nu", "-1"], "JSLConfig.nu"),
    (["--sigma-A", "0"], "never leave uniform"),
    (["--eta", "0"], "JSLConfig.eta"),
    (["--steps", "-5"], "JSLConfig.steps"),
    (["--record-every", "0"], "JSLConfig.record_every"),
    (["--temperature", "hot"], "--temperature"),
    (["--partition", "grid"], "JSLConfig.partition"),
    (["--d", "0"], "JSLConfig.d"),
    (["--N", "0"], "JSLConfig.N"),
    (["--dtype", "float16"], "--dtype"),
    (["--mode", "fancy"], "--mode"),
    (["--mode", "sampled", "--replicates", "1"], "replicates"),
    (["--D", "36", "--C", "4"], "mode='sampled'"),
    (["--confidence", "1"], "--confidence"),
    (["--bogus"], "unrecognized"),
]


@pytest.mark.parametrize("args,needle", BAD_ARGS)
def test_invalid_input_exits_2_with_one_line(args, needle, tmp_path, capsys):
    code = cli.main(["compare", "jsl", *args, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "o").exists()  # nothing was run


def test_console_script_exit_code_and_help():
    """Through the installed entry point: exit code 2 and one line on stderr, no traceback."""
    proc = subprocess.run([sys.executable, "-c", "from dynsim.cli import main_entry; main_entry()",
                           "compare", "jsl", "--q", "7"], capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "JSLConfig.q = 7.0" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "dynsim.cli", "compare", "jsl", "--help"],
                          capture_output=True, text=True)
    assert proc.returncode == 0
    for opt in ("--D", "--C", "--p", "--q", "--nu", "--sigma-A", "--eta", "--steps", "--record-every",
                "--temperature", "--d", "--N", "--omega", "--sigma", "--partition", "--seed", "--dtype",
                "--mode", "--out", "--json"):
        assert f"{opt} " in proc.stdout, opt


def test_derive_prints_gradients(capsys):
    assert cli.main(["derive", "jsl", "--C", "2"]) == 0
    out = capsys.readouterr().out
    assert "d loss / d gamma" in out and "Lambda" in out
    assert cli.main(["derive", "jsl", "--p", "4"]) == 2
    assert cli.main(["derive", "jsl", "--C", "2", "--latex"]) == 0
    assert "\\alpha" in capsys.readouterr().out
