"""Issue 16, items 2 and 7: --out is checked before any work (a file, an unwritable folder, too
little disk: one line, exit 2), a failed write (ENOSPC) leaves no part and no temporary file, a
killed run's temporary files are removed by the next run, and a command's files stay one set (the
record's digests flag a folder that mixes two runs)."""

from __future__ import annotations

import errno
import json
import os
import socket
import subprocess
import sys
import time

import pytest

import dynsim
from dynsim import cli, tempfiles
from dynsim.cli import outdir, output
from tests.helpers import cli_commands
from tests.toy_setting.setting import SETTING

TOY = ["compare", "toy", "--d", "4", "--steps", "20", "--record-every", "5"]
SET = {"report.json", "trajectories.npz", "compare.png"}


@pytest.fixture(autouse=True)
def registered():
    dynsim.register(SETTING)


def _one_line_error(capsys, *words) -> str:
    """The one error line, last on stderr (after any progress lines), with `words` in it; no
    traceback."""
    lines = capsys.readouterr().err.strip().splitlines()
    assert [ln for ln in lines if "error" in ln] == lines[-1:] and "Traceback" not in "".join(
        lines
    ), lines
    err = lines[-1]
    assert err.startswith("dynsim: error:"), err
    for w in words:
        assert w in err, (w, err)
    return err


def _snapshot(folder) -> dict:
    return {n: (folder / n).read_bytes() for n in sorted(os.listdir(folder))}


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


WRITERS = [
    prefix for prefix, p in cli_commands() if any("--out" in a.option_strings for a in p._actions)
]


def test_every_writing_command_is_covered():
    """The table below walks the parser: compare, sweep, check-theorems of every setting, the
    figures, transfer."""
    assert {
        ("compare", "jsl"),
        ("sweep", "mim"),
        ("check-theorems", "jsl"),
        ("figure", "jsl-fig4"),
        ("figure", "mim-phases"),
        ("transfer", "jsl"),
    } <= set(WRITERS)


@pytest.mark.parametrize("prefix", WRITERS + [("rerun", "report.json")], ids=" ".join)
def test_out_that_is_a_file_is_refused_before_any_work(prefix, tmp_path, capsys):
    """An existing file as --out, or a file where a parent folder must go: exit 2, one line naming
    --out and the path (before: FileExistsError / NotADirectoryError tracebacks, after the whole
    run)."""
    afile = tmp_path / "afile"
    afile.write_text("mine")
    t0 = time.perf_counter()
    assert cli.main([*prefix, "--out", str(afile)]) == 2
    _one_line_error(capsys, "--out", str(afile), "existing file")
    assert cli.main([*prefix, "--out", str(afile / "sub" / "x")]) == 2
    _one_line_error(capsys, "--out", str(afile / "sub" / "x"), "is a file")
    # refused at the start: parsing only, no run (a run takes seconds)
    assert time.perf_counter() - t0 < 5
    assert afile.read_text() == "mine"


def test_unwritable_folder_is_refused(tmp_path, capsys, monkeypatch):
    """A folder without write permission (or on a read-only file system, where access(2) says
    EROFS): exit 2 naming it. As root chmod does not deny writes, so access(2) is also made to deny
    them for that folder."""
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    real = os.access
    monkeypatch.setattr(
        os, "access", lambda p, mode: False if os.fspath(p) == str(locked) else real(p, mode)
    )
    try:
        assert cli.main([*TOY, "--out", str(locked / "new" / "deeper")]) == 2
        _one_line_error(capsys, "--out", str(locked), "not writable")
        assert cli.main([*TOY, "--out", str(locked)]) == 2
        _one_line_error(capsys, "not writable")
        assert os.listdir(locked) == []
    finally:
        locked.chmod(0o755)


def test_too_little_disk_is_refused_with_the_estimate(tmp_path, capsys, monkeypatch):
    """The estimate: (steps // record_every + 2) records x runs x 2 levels x 64 values x 8 B + 4
    MiB; here (20 // 5 + 2) = 6 records, 1 run: 6 * 2 * 64 * 8 = 6144 B + 4194304 B = 4200448 B."""
    args = cli.parse([*TOY, "--out", str(tmp_path)])
    assert outdir.estimated_bytes(args)[0] == 4200448
    sweep = cli.parse(
        ["sweep", "toy", "--steps", "20,40", "--record-every", "5", "--d", "3,4,5", "--seeds", "2"]
    )
    assert outdir.estimated_bytes(sweep)[0] == 4194304 + (40 // 5 + 2) * (2 * 3 * 2) * 2 * 64 * 8
    usage = type("Usage", (), {"free": 4200447})
    monkeypatch.setattr(outdir.shutil, "disk_usage", lambda p: usage)
    assert cli.main([*TOY, "--out", str(tmp_path / "o")]) == 2
    _one_line_error(
        capsys, "--out", str(tmp_path / "o"), "4.2 MB free", "need about 4.2 MB", "--steps"
    )
    assert not (tmp_path / "o").exists()
    usage.free = 4200448
    assert cli.main([*TOY, "--out", str(tmp_path / "o"), "--no-plot"]) == 0


def _failing(after: int, exc: BaseException):
    """tempfiles.atomic_write that lets `after` writes through, then writes half a file and raises
    `exc` (a full disk: OSError(ENOSPC) from write())."""
    real, calls = tempfiles.atomic_write, []

    def atomic_write(path, suffix, write):
        calls.append(path)
        if len(calls) <= after:
            return real(path, suffix, write)

        def half(fh):
            fh.write(b"x" * 1000)
            raise exc

        return real(path, suffix, half)

    return atomic_write


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "a.npz"
    dynsim.trajectory.atomic_savez(str(target), {"x": [1.0]})
    before = target.read_bytes()
    with pytest.raises(OSError) as info:
        _failing(0, OSError(errno.ENOSPC, "No space left on device"))(str(target), ".npz.tmp", None)
    assert info.value.errno == errno.ENOSPC and info.value.filename == str(target)
    assert os.listdir(tmp_path) == ["a.npz"] and target.read_bytes() == before


@pytest.mark.parametrize("after", [0, 1, 2])
def test_compare_on_a_full_disk_keeps_the_old_set(after, tmp_path, capsys, monkeypatch):
    """ENOSPC in the 1st, 2nd or 3rd write of a compare over an earlier one: exit 2, one line naming
    the file in
    --out, and the folder holds the earlier complete set, byte for byte, and no temporary file."""
    out = tmp_path / "o"
    assert cli.main([*TOY, "--out", str(out)]) == 0
    before = _snapshot(out)
    monkeypatch.setattr(
        tempfiles, "atomic_write", _failing(after, OSError(errno.ENOSPC, "No space left on device"))
    )
    capsys.readouterr()
    assert cli.main([*TOY, "--seed", "3", "--out", str(out)]) == 2
    err = _one_line_error(capsys, "no space left on device: " + str(out) + os.sep)
    assert ".dynsim-tmp" not in err
    assert _snapshot(out) == before and set(before) == SET
    assert output.mismatched(str(out / "report.json")) == []


def test_kill_between_the_moves_is_flagged_and_rerun_uses_the_digests(
    tmp_path, capsys, monkeypatch
):
    """Killed after the first file of a new set went into place: the record left there (the old one)
    no longer matches; `mismatched` names the file, and `dynsim rerun` says so and compares with the
    recorded digest."""
    out = tmp_path / "o"
    assert cli.main([*TOY, "--out", str(out)]) == 0
    real, moved = os.replace, []

    def replace(src, dst):
        # a move from the stage into place (not a write into the stage)
        if ".dynsim-tmp-" not in os.fspath(dst):
            if moved:
                raise KeyboardInterrupt  # the kill: after one file of the set moved
            moved.append(dst)
        return real(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    assert cli.main([*TOY, "--seed", "3", "--out", str(out)]) == 130
    monkeypatch.setattr(os, "replace", real)
    # sorted: the png first, report.json last
    assert [os.path.basename(m) for m in moved] == ["compare.png"]
    assert output.mismatched(str(out / "report.json")) == ["compare.png"]
    # Ctrl-C: the stage is removed
    assert not [n for n in os.listdir(out) if n.startswith(".dynsim-tmp")]
    capsys.readouterr()
    assert cli.main(["rerun", str(out / "report.json"), "--out", str(tmp_path / "again")]) == 0
    captured = capsys.readouterr()
    assert "compare.png beside" in captured.err and "identical to" in captured.out


def test_rerun_compares_with_the_recorded_digest(tmp_path, capsys):
    """A trajectories.npz of another run beside the report: flagged, and the rerun still finds
    itself identical to what the report recorded (before: DIFFERENT, from a byte comparison with the
    wrong file)."""
    a, b = tmp_path / "a", tmp_path / "b"
    assert cli.main([*TOY, "--out", str(a), "--no-plot"]) == 0
    assert cli.main([*TOY, "--seed", "5", "--out", str(b), "--no-plot"]) == 0
    (a / "trajectories.npz").write_bytes((b / "trajectories.npz").read_bytes())
    assert output.mismatched(str(a / "report.json")) == ["trajectories.npz"]
    capsys.readouterr()
    assert cli.main(["rerun", str(a / "report.json"), "--out", str(tmp_path / "again")]) == 0
    assert "identical to" in capsys.readouterr().out


def test_no_plot_removes_an_older_figure_of_the_set(tmp_path):
    out = tmp_path / "o"
    assert cli.main([*TOY, "--out", str(out)]) == 0
    assert cli.main([*TOY, "--seed", "3", "--out", str(out), "--no-plot"]) == 0
    assert set(os.listdir(out)) == {"report.json", "trajectories.npz"}
    assert list(json.loads((out / "report.json").read_text())["files"]) == ["trajectories.npz"]
    assert output.mismatched(str(out / "report.json")) == []


def _leftover(folder, host, pid, suffix=".npz.tmp", age=0.0, directory=False) -> str:
    """A temporary file (or folder) named as dynsim names them, by `host` and `pid`, last changed
    `age` s ago."""
    path = folder / f"{tempfiles.PREFIX}{host}-{pid}-ab12_cd{int(age)}{suffix}"
    path.mkdir() if directory else path.write_bytes(b"partial")
    if age:
        os.utime(path, (time.time() - age, time.time() - age))
    return path.name


def test_leftovers_of_a_killed_run_are_removed_and_nothing_else(tmp_path):
    host, dead, live = socket.gethostname(), _dead_pid(), os.getppid()
    # a sweep's store: points/<first hex digits of the key>/<key>.npz
    points = tmp_path / "points" / "ab"
    points.mkdir(parents=True)
    gone = {
        _leftover(tmp_path, host, dead),
        _leftover(tmp_path, host, dead, "", directory=True),
        _leftover(tmp_path, host, live, ".png.tmp", age=2 * tempfiles.STALE_SECONDS),
        _leftover(tmp_path, "other-host-1", 77, ".tmp", age=2 * tempfiles.STALE_SECONDS),
        "points/ab/" + _leftover(points, host, dead),
    }
    kept = {
        _leftover(tmp_path, host, live, ".png.tmp"),
        _leftover(tmp_path, host, os.getpid()),
        _leftover(tmp_path, "other-host-1", 77, ".tmp"),
        "tmpab12cd9.npz.tmp",
        "mine.txt",
        "points/ab/p.npz",
    }
    for name in {"tmpab12cd9.npz.tmp", "mine.txt", "points/ab/p.npz"}:
        (tmp_path / name).write_bytes(b"user")
    removed = tempfiles.remove_leftovers(str(tmp_path))
    assert {os.path.relpath(p, tmp_path) for p in removed} == gone
    assert {
        os.path.relpath(os.path.join(d, n), tmp_path)
        for d, ds, fs in os.walk(tmp_path)
        for n in fs + ds
    } == kept | {"points", "points/ab"}


def test_the_next_run_into_the_folder_removes_leftovers(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    name = _leftover(out, socket.gethostname(), _dead_pid())
    assert cli.main([*TOY, "--out", str(out), "--no-plot"]) == 0
    assert not (out / name).exists() and set(os.listdir(out)) == {"report.json", "trajectories.npz"}
    assert "removed 1 temporary file(s)" in capsys.readouterr().err
