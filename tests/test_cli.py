"""The `dynsim` command line."""

import json
import os
import subprocess
import sys

import pytest

from dynsim import cli
from dynsim.cli import options, output
from dynsim.trajectory import load_many
from tests.helpers import assert_refused

SMALL = ["--D", "8", "--C", "2", "--steps", "60", "--record-every", "20"]


@pytest.mark.smoke
def test_compare_agrees_and_writes_outputs(tmp_path, capsys):
    code = cli.main(["compare", "jsl", *SMALL, "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "verdict: AGREE" in out and "max abs error" in out
    # the events' definitions only with --explain (test_disagreement_exits_1 asks for them)
    assert "T0: end of Event I" not in out and "what each event is: --explain" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["passed"] is True and set(report["errors"]) >= {"alpha", "gamma", "rho", "loss"}
    assert report["reduced_meta"]["level"] == "reduced" and report["full_meta"]["level"] == "full"
    assert report["full_meta"]["dtype"] == "float64" and "jax" in report["full_meta"]["versions"]
    assert (tmp_path / "compare.png").read_bytes()[:4] == b"\x89PNG"
    trajs = load_many(tmp_path / "trajectories.npz")
    assert trajs["reduced"].steps.tolist() == [0, 20, 40, 60]
    assert trajs["full"].meta["config"]["D"] == 8


def test_zero_steps_compares_the_start_and_draws_it(tmp_path, capsys):
    """--steps 0 is allowed (>= 0): both levels' step 0 compared, the figure drawn without a log
    step axis to fill (a log axis of no positive step cannot be drawn)."""
    argv = ["compare", "jsl", "--D", "8", "--C", "2", "--steps", "0", "--out", str(tmp_path)]
    code = cli.main(argv)
    out = capsys.readouterr().out
    assert code == 0 and "verdict: AGREE" in out
    assert (tmp_path / "compare.png").stat().st_size > 0
    assert json.loads((tmp_path / "report.json").read_text())["common_steps"] == 1


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

    monkeypatch.setattr(full.jsl.simulation, "simulate", perturbed)
    code = cli.main(["compare", "jsl", *SMALL, "--out", str(tmp_path), "--no-plot", "--explain"])
    out = capsys.readouterr().out
    assert code == 1 and "DISAGREE" in out
    assert "T0: end of Event I" in out and "T3: end of Event III" in out


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
    # the exact enumeration's estimate (2,125,764 configurations) is past a day: refused first
    (["--D", "36", "--C", "4"], "--D = 36, --C = 4"),
    (["--confidence", "1"], "--confidence"),
    (["--bogus"], "unrecognized"),
]


@pytest.mark.parametrize("args,needle", BAD_ARGS)
def test_invalid_input_exits_2_with_one_line(args, needle, tmp_path, capsys):
    code = cli.main(["compare", "jsl", *args, "--out", str(tmp_path / "o")])
    assert_refused(code, capsys.readouterr().err, needle)
    assert not (tmp_path / "o").exists()  # nothing was run


@pytest.mark.smoke
def test_console_script_exit_code_and_help():
    """Through the installed entry point: exit code 2 and one line on stderr, no traceback."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from dynsim.cli import main_entry; main_entry()",
            "compare",
            "jsl",
            "--q",
            "7",
        ],
        capture_output=True,
        text=True,
    )
    assert (
        proc.returncode == 2 and proc.stderr.count("\n") == 1 and "JSLConfig.q = 7.0" in proc.stderr
    )
    proc = subprocess.run(
        [sys.executable, "-m", "dynsim.cli", "compare", "jsl", "--help"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0
    for opt in (
        "--D",
        "--C",
        "--p",
        "--q",
        "--nu",
        "--sigma-A",
        "--eta",
        "--steps",
        "--record-every",
        "--temperature",
        "--d",
        "--N",
        "--omega",
        "--n-test",
        "--sigma",
        "--partition",
        "--seed",
        "--dtype",
        "--mode",
        "--out",
        "--json",
    ):
        assert f"{opt} " in proc.stdout, opt


def test_derive_prints_gradients(capsys):
    assert cli.main(["derive", "jsl", "--C", "2"]) == 0
    out = capsys.readouterr().out
    assert "d loss / d gamma" in out and "Lambda" in out
    assert cli.main(["derive", "jsl", "--p", "4"]) == 2
    assert cli.main(["derive", "jsl", "--C", "2", "--latex"]) == 0
    assert "\\alpha" in capsys.readouterr().out


TINY = [
    "--D",
    "8",
    "--C",
    "2",
    "--steps",
    "40",
    "--record-every",
    "20",
    "--N",
    "64",
    "--n-test",
    "64",
]


def test_compare_realistic_prints_approach_and_events(tmp_path, capsys):
    code = cli.main(
        [
            "compare",
            "jsl",
            *TINY,
            "--mode",
            "realistic",
            "--seeds",
            "2",
            "--ladder",
            "16,64",
            "--out",
            str(tmp_path),
            "--no-plot",
        ]
    )
    out = capsys.readouterr().out
    assert code in (0, 1)  # a statistical verdict either way; the content is what this test checks
    assert "max |dev|/se" in out and "Theorem 4.2" in out and "N=16" in out and "N=64" in out
    assert "T1_attention" in out and "glm_error" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["approach"]["N"] == [16, 64] and report["full_meta"]["mode"] == "realistic"
    assert set(report["events"]) >= {"T0", "T1_attention", "T1_gamma_rho", "T3"}
    trajs = load_many(tmp_path / "trajectories.npz")
    assert set(trajs) == {"reduced_N16", "reduced_N64", "full_N16", "full_N64"}


def test_figure4_writes_png_and_data(tmp_path, capsys):
    code = cli.main(["figure", "jsl-fig4", *TINY, "--out", str(tmp_path)])
    assert code == 0 and "test_error_at_T" in capsys.readouterr().out
    assert (tmp_path / "jsl-fig4.png").read_bytes()[:4] == b"\x89PNG"
    traj = load_many(tmp_path / "jsl-fig4.npz")["realistic"]
    assert {"test_error", "cos_v", "patch_association"} <= set(traj.observables)
    import numpy as np

    with np.load(tmp_path / "jsl-fig4-final.npz") as f:
        assert f["mask"].shape == (8, 8) and f["A"].shape == (1, 8, 8)


def test_figure2_writes_png(tmp_path, capsys):
    code = cli.main(
        [
            "figure",
            "jsl-fig2",
            "--D",
            "16",
            "--C",
            "4",
            "--d",
            "4",
            "--steps",
            "20",
            "--record-every",
            "10",
            "--N",
            "64",
            "--n-test",
            "64",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0 and "patch_association_chance" in capsys.readouterr().out
    assert (tmp_path / "jsl-fig2.png").read_bytes()[:4] == b"\x89PNG"


def test_transfer_prints_table_and_plot(tmp_path, capsys):
    code = cli.main(
        [
            "transfer",
            "jsl",
            *TINY,
            "--n-tilde",
            "4,8",
            "--finetune-seeds",
            "2",
            "--finetune-steps",
            "20",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "pretrained" in out and "glm" in out
    assert (tmp_path / "transfer.png").read_bytes()[:4] == b"\x89PNG"
    data = json.loads((tmp_path / "transfer.json").read_text())
    assert data["n_tilde"] == [4, 8]


CHECK = [
    "--D",
    "12",
    "--C",
    "4",
    "--q",
    "0.5",
    "--record-every",
    "100",
    "--N",
    "500",
    "--n-test",
    "1024",
    "--quick",
    "--seeds",
    "2",
    "--json",
]
CONTRACT = {
    "claim",
    "statement",
    "reading",
    "regime",
    "threshold",
    "derivation",
    "measured",
    "verdict",
    "negative_control",
    "reading_class",
    "premises",
}


def _verdicts(*kinds):
    """Claims of the given verdicts (built by the core rule on constructed numbers) and a
    measurement: what a setting's evaluator returns."""
    from dynsim import claims

    measured = {"holds": 0.5, "fails": 1.5, "not applicable": 0.5}
    out = [
        claims.judge(
            f"claim {i}",
            statement="s",
            reading="r",
            reading_class="literal",
            regime="g",
            measured=measured[kind],
            relation="<=",
            threshold=1.0,
            derivation="d",
            negative_control="n",
            regime_violations=["outside"] if kind == "not applicable" else [],
        )
        for i, kind in enumerate(kinds)
    ]
    return out + [claims.Measurement("T0", "event time", 100)]


@pytest.mark.parametrize(
    "kinds, code",
    [
        (("holds", "holds"), 0),
        (("holds", "fails", "not applicable"), 1),
        (("holds", "not applicable"), 3),
    ],
)
def test_check_theorems_json_contract_and_exit_status(kinds, code, tmp_path, capsys, monkeypatch):
    """The --json contract end to end through the command line: the config the plan records (with
    quick, seeds, ladder), every claim's keys, theorems.json beside it, and the exit status (0 all
    hold, 1 some fails, 3 none fails but some not judged). The claims are constructed (their
    verdicts on real runs: tests/test_verdict_matrix.py, tests/test_jsl_claims*.py); only the
    evaluation is replaced, the options, plan and output are the command's own."""
    real = output.run_claims
    monkeypatch.setattr(
        output,
        "run_claims",
        lambda args, total, evaluate, config, **kw: real(
            args, total, lambda log: _verdicts(*kinds), config, **kw
        ),
    )
    argv = ["check-theorems", "jsl", *CHECK, "--steps", "1", "--sizes", "12,16,20"]
    assert cli.main([*argv, "--out", str(tmp_path)]) == code
    data = json.loads(capsys.readouterr().out)
    assert (
        data["config"]["D"] == 12
        and data["config"]["quick"] is True
        and data["config"]["ladder"] == [12, 16, 20]
    )
    assert [c["verdict"] for c in data["claims"]] == list(kinds)
    for c in data["claims"]:
        assert CONTRACT <= set(c) and c["interval"] == [c["measured"]] * 2
    assert data["measurements"][0]["value"] == 100
    assert json.loads((tmp_path / "theorems.json").read_text())["config"] == data["config"]


def test_check_theorems_quick_records_the_quick_ladder(tmp_path, monkeypatch):
    """--quick without --sizes: the config records the quick ladder (read without running)."""
    seen = {}
    monkeypatch.setattr(
        output, "run_claims", lambda args, total, evaluate, config, **kw: seen.update(config) or 0
    )
    assert (
        cli.main(["check-theorems", "jsl", *CHECK, "--steps", "1", "--out", str(tmp_path / "q")])
        == 0
    )
    assert seen["quick"] is True and seen["ladder"] == [32, 36, 40] and seen["plan"] == "quick"


NEW_BAD = [
    (["compare", "jsl", "--mode", "realistic", "--seeds", "1"], "--seeds = 1"),
    (["compare", "jsl", "--mode", "realistic", "--replicates", "3"], "--replicates"),
    (["compare", "jsl", "--seeds", "4"], "--mode realistic"),
    (["compare", "jsl", "--mode", "realistic", "--ladder", "x"], "--ladder"),
    (["compare", "jsl", "--mode", "realistic", "--ladder", "0,10"], "JSLConfig.N = 0"),
    (["figure", "jsl-fig5"], "invalid choice"),
    (["figure", "jsl-fig4", "--seeds", "0"], "seeds = 0"),
    (["transfer", "jsl", "--overlap", "2"], "overlap"),
    (["transfer", "jsl", "--n-tilde", "0,8"], "--n-tilde"),
    (["check-theorems", "jsl", "--n-test", "0"], "JSLConfig.n_test = 0"),
    # D = C: no random set (was a traceback)
    (["check-theorems", "jsl", "--sizes", "4,8,12"], "ladder size D = 4"),
    # q(D - C) = 16 needs q = 2 there
    (["check-theorems", "jsl", "--sizes", "12,16,20"], "ladder size D = 12"),
    # beyond the flow's exact class sum
    (["check-theorems", "jsl", "--D", "100"], "JSLConfig.D = 100"),
    (["check-theorems", "jsl", "--steps", "0"], "--steps = 0"),
]


@pytest.mark.parametrize("args,needle", NEW_BAD)
def test_new_commands_reject_bad_input(args, needle, tmp_path, capsys):
    code = cli.main(
        [*args, "--out", str(tmp_path / "o")]
        if args[0] != "figure" or args[1] != "jsl-fig5"
        else args
    )
    assert_refused(code, capsys.readouterr().err, needle)
    assert not (tmp_path / "o").exists()


def test_closed_stdout_is_not_an_error(monkeypatch, tmp_path):
    """The reader of stdout went away (`| head`): exit 0, no traceback. The BrokenPipe handler must
    come before the generic handler that recognises a Ctrl-C wrapped by JAX (which re-raises
    everything else)."""
    import sys

    class Closed:
        def __init__(self):
            self.fh = open(tmp_path / "sink", "w")

        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self):
            pass

        def fileno(self):
            return self.fh.fileno()

    monkeypatch.setattr(sys, "stdout", Closed())
    # C = 2: the derivation test_derive_prints_gradients made
    assert cli.main(["derive", "jsl", "--C", "2"]) == 0


def test_each_command_writes_its_own_default_folder(tmp_path, monkeypatch, capsys):
    """Issue 14: compare jsl, compare jsl --mode realistic and compare mim all wrote ./dynsim-out
    and replaced each other's files. Left out, --out is ./dynsim-out/<command>-<name>[-<mode>]."""
    monkeypatch.chdir(tmp_path)
    # SMALL: the programs compiled above
    assert cli.main(["compare", "jsl", *SMALL, "--no-plot"]) == 0
    assert cli.main(["compare", "mim", "--P", "9", "--steps", "5", "--no-plot"]) == 0
    capsys.readouterr()
    assert (tmp_path / "dynsim-out" / "compare-jsl" / "report.json").exists()
    assert (tmp_path / "dynsim-out" / "compare-mim" / "report.json").exists()
    assert not (tmp_path / "dynsim-out" / "report.json").exists()
    realistic = cli.build_parser().parse_args(["compare", "jsl", "--mode", "realistic"])
    assert realistic.out is None  # resolved in main:
    assert options.default_out(realistic) == os.path.join("dynsim-out", "compare-jsl-realistic")


def test_report_records_the_command_line_and_every_option(tmp_path, capsys):
    """Issue 14: report.json and theorems.json record the exact command line and every option
    (defaults included)."""
    # SMALL: the programs compiled above
    argv = ["compare", "jsl", *SMALL, "--no-plot", "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    capsys.readouterr()
    inv = json.loads((tmp_path / "report.json").read_text())["invocation"]
    assert inv["command_line"] == ["dynsim", *argv]
    assert (
        inv["options"]["D"] == 8
        and inv["options"]["mode"] == "exact"
        and inv["options"]["confidence"] == 0.999
    )
