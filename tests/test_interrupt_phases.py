"""A signal at any moment of a command, in process: while parsing (no work starts), and after the
work's last safe point (the run is complete, the exit still says it was interrupted). The
subprocess tests over random moments are in tests/test_interrupt.py."""

import os
import signal

import pytest

import dynsim
from dynsim import cli, interrupt
from tests.toy_setting.setting import SETTING

ARGV = ["compare", "toy", "--d", "5", "--eta", "0.2", "--steps", "40"]


@pytest.fixture(autouse=True)
def registered():
    dynsim.register(SETTING)


def _signalled(parse):
    """`cli.parse`, with a SIGINT to this process on the way (what a Ctrl-C while parsing does)."""

    def wrapped(argv):
        args = parse(argv)
        os.kill(os.getpid(), signal.SIGINT)
        return args

    return wrapped


def test_a_signal_while_parsing_stops_before_any_work(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    monkeypatch.setattr(cli, "parse", _signalled(cli.parse))
    assert cli.main(ARGV + ["--out", str(out)]) == 130
    assert interrupt.MESSAGE in capsys.readouterr().err
    assert not (out / "report.json").exists()
    # negative control: the same command, not signalled, runs and writes its report
    monkeypatch.undo()
    dynsim.register(SETTING)
    assert cli.main(ARGV + ["--out", str(out)]) == 0 and (out / "report.json").exists()


def test_a_signal_after_the_last_safe_point_still_exits_130(tmp_path, monkeypatch, capsys):
    """The run returned 0, but a Ctrl-C came after its last check: the exit says interrupted (it
    used to be 0), and the files written are complete."""
    parse = cli.parse

    def late(argv):
        args = parse(argv)
        run = args.run

        def run_then_signal(a):
            code = run(a)
            os.kill(os.getpid(), signal.SIGTERM)
            return code

        args.run = run_then_signal
        return args

    monkeypatch.setattr(cli, "parse", late)
    assert cli.main(ARGV + ["--out", str(tmp_path)]) == 143
    assert interrupt.MESSAGE in capsys.readouterr().err
    assert (tmp_path / "report.json").exists()


def test_a_folder_where_an_output_goes_moves_nothing(tmp_path, capsys):
    """compare's outputs go in as one set: a folder named trajectories.npz in --out (the second of
    three moves) used to leave the new compare.png beside the old report.json and the message said
    nothing was half-written. Now every target is checked first and nothing moves."""
    assert cli.main(ARGV + ["--out", str(tmp_path)]) == 0
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert {"report.json", "compare.png", "trajectories.npz"} <= set(before)
    (tmp_path / "trajectories.npz").unlink()
    (tmp_path / "trajectories.npz").mkdir()
    del before["trajectories.npz"]
    capsys.readouterr()
    code = cli.main(ARGV + ["--eta", "0.3", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip().splitlines()[-1]  # after the levels' progress lines
    assert code == 2 and err.startswith("dynsim: error: is a directory") and "npz" in err, err
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    assert after == before  # the old report.json and compare.png, byte for byte
