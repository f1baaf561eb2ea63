"""What a user's environment can do to the command line before any work: a JAX_PLATFORMS naming no
backend this machine has, and a file named like one of dynsim's level packages (full.py,
reduced/) first on the import path. Each is refused in one line naming the cause, exit 2."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import assert_refused

ROOT = Path(__file__).resolve().parent.parent


def dynsim(*argv, cwd, env=None):
    """The console script's code path in a fresh process (signals, exit code, stderr)."""
    script = "from dynsim.cli import main_entry; main_entry()"
    environ = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-c", script, *argv], cwd=cwd, env=environ, capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip


@pytest.mark.parametrize("platform", ["bogus", "cuda"])
def test_a_platform_jax_cannot_start_is_refused(platform, tmp_path):
    """bogus: unknown to JAX; cuda: known, absent on a machine without a GPU (CI has none)."""
    proc = dynsim("compare", "jsl", "--out", str(tmp_path / "o"), cwd=tmp_path,
                  env={"JAX_PLATFORMS": platform})  # fmt: skip
    err = assert_refused(proc.returncode, proc.stderr, f"JAX_PLATFORMS={platform!r}")
    assert "JAX_PLATFORMS=cpu" in err and not (tmp_path / "o").exists()


@pytest.mark.parametrize("shadow", ["full.py", "reduced/__init__.py"])
def test_a_module_hiding_a_level_package_is_named(shadow, tmp_path):
    """A user's full.py (or reduced/) on PYTHONPATH comes before dynsim's own package: every
    setting would fail to load and argparse would say "invalid choice: 'compare'"."""
    path = tmp_path / "mine" / shadow
    path.parent.mkdir(parents=True)
    path.write_text("x = 1\n")
    env = {"PYTHONPATH": os.pathsep.join([str(tmp_path / "mine"), str(ROOT)])}
    proc = dynsim("compare", "jsl", "--steps", "1", cwd=tmp_path, env=env)
    name = shadow.split("/")[0].removesuffix(".py")
    err = assert_refused(proc.returncode, proc.stderr, f"the module {name!r} is imported from")
    assert str(path) in err and "invalid choice" not in err
    assert not (tmp_path / "dynsim-out").exists()


def test_the_tree_through_a_link_is_not_taken_for_a_shadow(tmp_path):
    """dynsim and its levels reached through a symbolic link to the tree are dynsim's own: the
    check compares real paths."""
    (tmp_path / "link").symlink_to(ROOT, target_is_directory=True)
    code = "import dynsim; print(sorted(dynsim.settings()))"
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "link")}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0 and "'jsl'" in proc.stdout, proc.stderr
