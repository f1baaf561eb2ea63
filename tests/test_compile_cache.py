"""JAX's persistent compilation cache for every dynsim process (`dynsim.compile_cache`): a command
line run writes its programs to the per-user folder, the opt-outs and a user's own JAX setting
leave it alone, and a folder that cannot be written leaves the run as it was, without the cache.

Each test runs a fresh process with an environment of its own: the suite's JAX_COMPILATION_CACHE_DIR
(tests/conftest.py) is removed from it, and HOME and XDG_CACHE_HOME point into tmp_path, so nothing
is written to the user's own cache."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from dynsim import compile_cache

SMALL_RUN = ["compare", "jsl", "--steps", "20"]
# a library process: import dynsim, compile one program, say where JAX's cache points
LIBRARY = (
    "import dynsim, jax, jax.numpy as jnp\n"
    "print(float(jax.jit(lambda x: jnp.sin(x) @ x)(jnp.ones((3, 3))).sum()))\n"
    "print(jax.config.jax_compilation_cache_dir)\n"
)
CLEARED = (
    compile_cache.JAX_DIR,
    compile_cache.JAX_MIN_TIME,
    compile_cache.JAX_SWITCH,
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
    compile_cache.SWITCH,
    compile_cache.DIR,
)


def environment(tmp_path, **changes) -> dict:
    """os.environ without any cache setting, HOME and XDG_CACHE_HOME in tmp_path, then `changes`."""
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env.update(HOME=str(tmp_path / "home"), XDG_CACHE_HOME=str(tmp_path / "xdg"))
    env.update(changes)
    return env


def entries(folder) -> list[str]:
    """The cache entries JAX wrote in `folder` (none when it does not exist)."""
    return [n for n in os.listdir(folder) if n.endswith("-cache")] if os.path.isdir(folder) else []


def library(tmp_path, code: str = LIBRARY, **changes) -> subprocess.CompletedProcess:
    # every program written, however fast it compiled: a library test compiles little
    env = environment(tmp_path, **{compile_cache.JAX_MIN_TIME: "0", **changes})
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )


def command(tmp_path, **changes) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "dynsim.cli", *SMALL_RUN, "--out", str(tmp_path / "out")]
    return subprocess.run(
        argv, env=environment(tmp_path, **changes), capture_output=True, text=True, timeout=300
    )


def test_a_command_line_run_writes_its_programs_to_the_users_cache_folder(tmp_path):
    # the default folder ($XDG_CACHE_HOME/dynsim/jax) and dynsim's own minimum compile time: at
    # JAX's default (1 s) this short run's programs would not be written
    proc = command(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert entries(tmp_path / "xdg" / "dynsim" / "jax")
    assert "cache" not in proc.stderr


def test_a_folder_that_cannot_be_written_leaves_the_run_as_it_was(tmp_path):
    # a file where the folder would be: not writable even by root; the run's outputs are complete
    (tmp_path / "file").write_text("")
    proc = command(tmp_path, DYNSIM_CACHE_DIR=str(tmp_path / "file" / "jax"))
    assert proc.returncode == 0, proc.stderr
    assert "verdict: AGREE" in proc.stdout
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {"report.json", "compare.png"}
    # one warning, naming the folder, and no traceback (JAX was never pointed at it)
    assert proc.stderr.count("compilation cache folder") == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "Error reading" not in proc.stderr


@pytest.mark.parametrize(
    "changes,silent",
    [
        ({}, True),  # the default folder: silently off
        ({"DYNSIM_CACHE_DIR": "{tmp}/file/jax"}, False),  # a folder the user named: one warning
    ],
)
def test_an_unwritable_folder_turns_the_cache_off_in_a_library_process(tmp_path, changes, silent):
    (tmp_path / "file").write_text("")
    (tmp_path / "xdg").write_text("")  # $XDG_CACHE_HOME/dynsim/jax cannot be made either
    proc = library(tmp_path, **{k: v.format(tmp=tmp_path) for k, v in changes.items()})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "None"  # JAX's cache left off
    assert proc.stderr.count("compilation cache folder") == (0 if silent else 1), proc.stderr


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder")
def test_a_read_only_folder_turns_the_cache_off(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        proc = library(tmp_path, DYNSIM_CACHE_DIR=str(folder))
    finally:
        folder.chmod(0o700)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "None" and not entries(folder)


@pytest.mark.parametrize("changes", [{"DYNSIM_CACHE": "0"}, {"DYNSIM_CACHE": "off"}])
def test_the_opt_out_leaves_the_folder_empty(tmp_path, changes):
    proc = library(tmp_path, **changes)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "None"
    assert not (tmp_path / "xdg").exists() and not (tmp_path / "home").exists()


def test_an_empty_DYNSIM_CACHE_DIR_is_the_opt_out_too(tmp_path):
    proc = library(tmp_path, DYNSIM_CACHE_DIR="")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "None" and not (tmp_path / "xdg").exists()


def test_a_library_process_uses_the_folder_DYNSIM_CACHE_DIR_names(tmp_path):
    proc = library(tmp_path, DYNSIM_CACHE_DIR=str(tmp_path / "mine"))
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == str(tmp_path / "mine")
    assert entries(tmp_path / "mine") and not (tmp_path / "xdg").exists()


def test_a_users_JAX_COMPILATION_CACHE_DIR_wins(tmp_path):
    proc = library(tmp_path, JAX_COMPILATION_CACHE_DIR=str(tmp_path / "theirs"))
    assert proc.returncode == 0, proc.stderr
    assert entries(tmp_path / "theirs") and not (tmp_path / "xdg").exists()


def test_JAX_imported_first_is_configured_unless_the_user_set_its_folder(tmp_path):
    first = "import jax\n" + LIBRARY
    proc = library(tmp_path, code=first)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == str(tmp_path / "xdg" / "dynsim" / "jax")
    assert entries(tmp_path / "xdg" / "dynsim" / "jax")
    theirs = tmp_path / "theirs"
    own = f"import jax\njax.config.update('jax_compilation_cache_dir', {str(theirs)!r})\n" + LIBRARY
    proc = library(tmp_path / "again", code=own)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == str(theirs) and entries(theirs)
    assert not (tmp_path / "again" / "xdg").exists()


def test_the_folder_follows_the_environment(tmp_path):
    home = os.path.expanduser("~")
    assert compile_cache.folder({}) == os.path.join(home, ".cache", "dynsim", "jax")
    assert compile_cache.folder({"XDG_CACHE_HOME": "/x"}) == os.path.join("/x", "dynsim", "jax")
    # a relative XDG_CACHE_HOME is ignored, as the XDG specification says
    assert compile_cache.folder({"XDG_CACHE_HOME": "rel"}) == compile_cache.folder({})
    assert compile_cache.folder({"DYNSIM_CACHE_DIR": "/y", "XDG_CACHE_HOME": "/x"}) == "/y"
    for off in ({"DYNSIM_CACHE": "0"}, {"DYNSIM_CACHE": "False"}, {"DYNSIM_CACHE_DIR": " "}):
        assert compile_cache.folder(off) is None, off
    assert compile_cache.folder({"DYNSIM_CACHE": "1"}) == compile_cache.folder({})
