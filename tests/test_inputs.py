"""One input layer (`dynsim.inputs`): every file dynsim reads is a regular file of bounded size,
parsed with bounded nesting; special files (a FIFO, /dev/zero, a folder) are refused at once, never
read; each refusal one line naming the option or field. Then the command line's probes: --config,
--partitions, --p, a store's points."""

from __future__ import annotations

import os
import warnings

import pytest

from dynsim import cli, inputs
from dynsim.store import Store
from tests.helpers import assert_refused

DEEP = "[" * 1000 + "]" * 1000  # Python's parsers recurse once per level and fail near 1,000


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def refused(fn, *needles: str) -> inputs.InputError:
    with pytest.raises(inputs.InputError) as info:
        fn()
    for needle in needles:
        assert needle in str(info.value), (needle, str(info.value))
    assert "\n" not in str(info.value)
    return info.value


def test_special_files_are_refused_without_reading(tmp_path, fifo):
    # a FIFO with no writer would block an open() for reading forever: refused at once
    refused(lambda: inputs.read_bytes(fifo, 10, "--config"), "--config", "not a regular file")
    refused(lambda: inputs.read_bytes("/dev/zero", 10, "--config"), "not a regular file")
    refused(lambda: inputs.read_bytes(tmp_path, 10, "--config"), "a folder, not a file")
    refused(lambda: inputs.read_bytes("", 10, "--config"), "an empty path")
    missing = refused(lambda: inputs.read_bytes(tmp_path / "no", 10, "REPORT"), "no such file")
    assert missing.missing
    refused(lambda: inputs.regular_file(fifo, 10, "stored point"), "not a regular file")


def test_size_is_capped_and_links_may_not_leave_their_folder(tmp_path):
    (tmp_path / "ten").write_bytes(b"0123456789")
    assert inputs.read_bytes(tmp_path / "ten", 10, "x") == b"0123456789"  # exactly the cap
    refused(lambda: inputs.read_bytes(tmp_path / "ten", 9, "x"), "10 bytes, more than the 9")
    store = tmp_path / "store"
    store.mkdir()
    (store / "link").symlink_to(tmp_path / "ten")
    refused(
        lambda: inputs.read_bytes(store / "link", 10, "stored point", inside=store),
        "resolves to",
        "outside",
    )
    assert inputs.read_bytes(store / "link", 10, "x") == b"0123456789"  # no folder: followed


def test_nesting_is_bounded_and_counted_outside_strings_and_comments(tmp_path):
    assert inputs.depth('[[1], {"a": "[[[["}]') == 2
    assert inputs.depth("a = [1] # it's [[[\nb = [[2]]") == 2
    ok = "[" * inputs.MAX_DEPTH + "]" * inputs.MAX_DEPTH
    assert inputs.json_text(ok, "--partitions") is not None
    refused(lambda: inputs.json_text("[" + ok + "]", "--partitions"), "nested more than 64 deep")
    (tmp_path / "deep.toml").write_text(f"a = {DEEP}\n")
    refused(lambda: inputs.read_toml(tmp_path / "deep.toml", 1 << 20, "--config"), "nested")
    (tmp_path / "ok.toml").write_text('q = 0.3  # a [comment\nname = "x]"\n')
    assert inputs.read_toml(tmp_path / "ok.toml", 1 << 20, "--config") == {"q": 0.3, "name": "x]"}


@pytest.mark.parametrize(
    "argv, needles",
    [
        (["--config", ""], ["--config = '' is invalid: an empty path"]),
        (["--config", "/dev/zero"], ["--config = '/dev/zero'", "not a regular file"]),
        (["--config", "FIFO"], ["--config", "not a regular file"]),
        (["--config", "DEEP"], ["--config", "nested more than 64 deep"]),
        (["--p", "1023"], ["JSLConfig.p = 1023", "p <= 19 fits"]),  # 9^19 < 2^63 < 9^21
    ],
)
def test_compare_jsl_refuses_in_one_line(argv, needles, tmp_path, fifo, capsys):
    (tmp_path / "deep.toml").write_text(f"a = {DEEP}\n")
    names = {"FIFO": str(fifo), "DEEP": str(tmp_path / "deep.toml")}
    argv = [names.get(a, a) for a in argv]
    code = cli.main(["compare", "jsl", *argv, "--steps", "1", "--out", str(tmp_path / "o")])
    assert_refused(code, capsys.readouterr().err, *needles)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "partitions, needle",
    [
        (DEEP, "nested more than 64 deep"),
        ("[[[0, 1], [2, 3.5]]]", "3.5 is not an integer"),
        ("[[[0, 1], [2, true]]]", "True is not an integer"),
        ('[[[0, 1], ["2", 3]]]', "'2' is not an integer"),
        ('[[[0, 1], "23"]]', "each area a list of integer patch indices"),
    ],
)
def test_partitions_take_integer_indices_only(partitions, needle, tmp_path, capsys):
    argv = ["compare", "mim", "--P", "4", "--partitions", partitions, "--out", str(tmp_path)]
    assert_refused(cli.main(argv), capsys.readouterr().err, needle)


@pytest.mark.parametrize("kind", ["fifo", "dev_zero", "int_summary"])
def test_a_bad_stored_point_is_set_aside_and_recomputed_not_read(kind, tmp_path):
    store, key = Store(tmp_path), "cd" * 32
    path = store.path(key)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        os.symlink("/dev/zero", path)
    else:
        store.save(key, 7, {})  # a valid point (digest and all) whose summary is not a mapping
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert store.load(key) is None  # returns at once: a FIFO is never opened for reading
    assert "corrupt" in str(caught[0].message) and os.path.lexists(path + ".corrupt")


def test_out_is_never_empty_and_its_tilde_is_expanded(tmp_path, monkeypatch, capsys):
    for argv in (["compare", "jsl"], ["rerun", str(tmp_path / "report.json")]):
        code = cli.main([*argv, "--out", ""])
        assert_refused(code, capsys.readouterr().err, "--out = '' is invalid: an empty path")
    monkeypatch.setenv("HOME", str(tmp_path))
    # as a TOML file gives it: no shell expands it
    (tmp_path / "c.toml").write_text('out = "~/run"\nsteps = 1\n')
    assert cli.main(["compare", "jsl", "--config", str(tmp_path / "c.toml"), "--no-plot"]) == 0
    assert (tmp_path / "run" / "report.json").is_file() and not os.path.exists("~")


def test_library_reads_and_axes_are_bounded_before_any_work(tmp_path, fifo):
    from dynsim.trajectory import Trajectory

    # np.load of a FIFO would wait for a writer forever: refused at once
    refused(lambda: Trajectory.load(fifo), "path = ", "not a regular file")
    refused(lambda: Trajectory.load(tmp_path / "none.npz"), "no such file")
    import dynsim

    # the grid is counted before a config is built: a billion-value axis is never listed
    with pytest.raises(ValueError, match=r"1,000,000,000 points .* more than the 100,000"):
        dynsim.sweep("jsl", {"q": range(10**9)})
