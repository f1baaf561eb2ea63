"""`dynsim rerun` of an edited or hostile report refuses before it runs anything: no scheduler a
report names is reached, no unbounded read, no traceback."""

import json
import os
import socket

import pytest

import dynsim
from dynsim import cli
from tests.helpers import assert_refused
from tests.toy_setting.setting import SETTING as TOY


def report(tmp_path, invocation) -> str:
    path = tmp_path / "report.json"
    path.write_text(json.dumps({"passed": True, "invocation": invocation}))
    return str(path)


def listener():
    """A TCP socket on 127.0.0.1 listening; a connection to it would show in `accepted`."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    return server


def test_a_report_naming_a_scheduler_is_refused_without_connecting(tmp_path, capsys):
    server = listener()
    address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
    for argv in (
        ["sweep", "jsl", "--q", "0.2,0.3", "--scheduler", address],
        ["sweep", "jsl", "--q", "0.2,0.3", f"--scheduler={address}"],
        ["check-theorems", "jsl", "--security", "creds.toml"],
    ):
        code = cli.main(["rerun", report(tmp_path, {"effective_argv": argv})])
        assert_refused(code, capsys.readouterr().err, "rerun never connects to a Dask scheduler")
    with pytest.raises(BlockingIOError):  # nobody connected
        server.accept()
    server.close()


@pytest.mark.parametrize(
    "invocation, why",
    [
        ({"effective_argv": ["compare", "jsl", 3]}, "not a dynsim command line"),
        ({"effective_argv": [["compare"], "jsl"]}, "not a dynsim command line"),
        ({"effective_argv": []}, "not a dynsim command line"),
        ({"effective_argv": ["--D", "9"]}, "not a dynsim command line"),
        ({"effective_argv": ["rerun", "other.json"]}, "records a rerun"),
        ({"effective_argv": ["compare", "mim"], "versions": "1.0"}, "versions are not a mapping"),
        # a report reruns only the verb that writes its kind
        ({"effective_argv": ["sweep", "jsl", "--q", "0.2"]}, "written by `dynsim compare`"),
        ({"effective_argv": ["derive", "mim"]}, "but it records `dynsim derive`"),
        ({"argv": ["compare", "jsl"]}, "records no command line"),
        # answers and exits 0: a rerun would "pass" without running anything
        ({"effective_argv": ["compare", "jsl", "--help"]}, "holds --help, which prints"),
        ({"effective_argv": ["derive", "mim", "--print-config"]}, "holds --print-config"),
    ],
)
def test_an_edited_invocation_is_refused_in_one_line(tmp_path, capsys, invocation, why):
    code = cli.main(["rerun", report(tmp_path, invocation)])
    assert_refused(code, capsys.readouterr().err, why)


def test_a_report_that_is_not_a_small_regular_json_file_is_refused(tmp_path, capsys):
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)  # reading it would block forever
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    for path, why in ((fifo, "not a regular file"), (deep, "nested more than 64 deep")):
        code = cli.main(["rerun", str(path)])
        assert_refused(code, capsys.readouterr().err, why)
    code = cli.main(["rerun", "/dev/zero"])
    assert_refused(code, capsys.readouterr().err, "not a regular file")


def test_files_that_are_not_digests_do_not_break_the_rerun(tmp_path, capsys):
    """A report whose "files" is a string reruns its command: here one its config refuses (D = 10
    is not a multiple of C = 3), so the rerun ends in that command's one-line refusal, not in a
    traceback about the report."""
    path = tmp_path / "report.json"
    argv = ["compare", "jsl", "--D", "10"]
    path.write_text(json.dumps({"files": "x", "invocation": {"effective_argv": argv}}))
    code = cli.main(["rerun", str(path), "--out", str(tmp_path / "again")])
    out, err = capsys.readouterr()
    assert "dynsim rerun: dynsim compare jsl --D 10 --out" in out
    assert_refused(code, err, "JSLConfig.D = 10")


def test_an_out_that_links_to_the_reports_folder_is_refused(tmp_path, capsys):
    (tmp_path / "run").mkdir()
    path = report(tmp_path / "run", {"effective_argv": ["compare", "mim"]})
    os.symlink(tmp_path / "run", tmp_path / "link")
    code = cli.main(["rerun", path, "--out", str(tmp_path / "link")])
    assert_refused(code, capsys.readouterr().err, "the report's own folder")


def test_execution_options_are_not_taken_from_a_report(tmp_path, capsys):
    """A report's --workers would start a local Dask cluster from the report's word, and its --out
    and --config name places: the rerun prints the command it runs, without them."""
    dynsim.register(TOY)  # a check that runs in a second
    argv = ["check-theorems", "toy", "--eta", "0.5", "--workers", "2", "--config", "x.toml"]
    path = tmp_path / "theorems.json"
    path.write_text(json.dumps({"claims": [], "invocation": {"effective_argv": argv}}))
    assert cli.main(["rerun", str(path), "--out", str(tmp_path / "again")]) == 0
    ran = [line for line in capsys.readouterr().out.splitlines() if "dynsim rerun: dynsim" in line]
    assert ran == [f"dynsim rerun: dynsim check-theorems toy --eta 0.5 --out {tmp_path / 'again'}"]
