"""Settings are light records: importing dynsim and building the command line for `--help` import no
level and not JAX (each in a fresh process, reading sys.modules: nothing is timed), the x64 contract
holds without importing JAX, and a record's "module:attr" references load on first use only."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dynsim import cli
from dynsim.setting import Ref, Setting

# what --help and a refusal must not import: the layering test's heavy libraries, read there from
# the sources, checked here in a running process
from tests.helpers import register_for_the_test
from tests.test_layering import HEAVY

ROOT = Path(__file__).resolve().parent.parent
# runs every `dynsim ARGS` of a JSON list in this one process; after each: its exit code, what it
# wrote to stderr, and which HEAVY modules are imported by then
PROBE_ALL = """
import contextlib, io, json, sys
from dynsim import cli
found = []
for argv in json.loads(sys.argv[1]):
    err, out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
        try:
            code = cli.main(argv)
        except SystemExit as stop:
            code = stop.code
    heavy = [m for m in {heavy!r} if m in sys.modules]
    found.append({{"code": code, "stdout": out.getvalue(), "stderr": err.getvalue(),
                  "heavy": heavy}})
print(json.dumps(found))
"""


def probe_all(argvs) -> dict:
    """`dynsim ARGV` for every ARGV in one fresh process: {tuple(ARGV): {"code", "stdout",
    "stderr", "heavy"}}. Modules stay imported from one command to the next, so the first command
    that imports a heavy module fails its test and every later one's too: the first failure names
    it."""
    out = fresh(PROBE_ALL.format(heavy=HEAVY), json.dumps([list(a) for a in argvs]))
    assert out.returncode == 0, out.stderr
    return dict(zip(map(tuple, argvs), json.loads(out.stdout)))


def fresh(code: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if k != "JAX_ENABLE_X64"}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**base, **env},
        timeout=300,
    )


def test_import_dynsim_imports_no_level_and_not_jax():
    out = fresh(f"import sys, dynsim\nprint([m for m in {HEAVY!r} if m in sys.modules])")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


HELP = [
    ["--help"],
    ["--version"],
    ["compare", "jsl", "--help"],
    ["compare", "--help"],
    ["check-theorems", "jsl", "--help"],
    ["check-theorems", "mim", "--help"],
    ["figure", "--help"],
    ["figure", "jsl-fig4", "--help"],
    ["figure", "jsl-fig2", "--help"],
    ["figure", "mim-phases", "--help"],
    ["figure", "mim-attention", "--help"],
    ["transfer", "jsl", "--help"],
    ["sweep", "jsl", "--help"],
    ["sweep", "mim", "--help"],
    ["derive", "jsl", "--help"],
    ["derive", "mim", "--help"],
    ["experiment", "jsl-images", "--help"],
    ["experiment", "mim-images", "--help"],
]


@pytest.fixture(scope="module")
def helped():
    return probe_all(HELP)


@pytest.mark.parametrize("argv", HELP)
def test_the_parser_for_help_imports_no_level_and_not_jax(argv, helped):
    out = helped[tuple(argv)]
    assert out["code"] == 0, out["stderr"]
    assert "usage: dynsim" in out["stdout"] or out["stdout"].startswith("dynsim ")
    assert out["heavy"] == []


BAD_VALUES = [
    (["compare", "jsl", "--C", "0"], "JSLConfig.C = 0"),
    (["compare", "mim", "--P", "15"], "P = 15"),
    (["check-theorems", "jsl", "--C", "0"], "JSLConfig.C = 0"),
    (["check-theorems", "mim", "--eps", "2"], "argument --eps: 2.0 is invalid"),
    (["figure", "jsl-fig4", "--C", "0"], "JSLConfig.C = 0"),
    (["figure", "jsl-fig2", "--seeds", "1"], "--seeds = 1 is invalid for jsl-fig2"),
    (["figure", "mim-phases", "--P", "15"], "P = 15"),
    (["figure", "mim-phases", "--kappa-neg", "2,0.4"], "--kappa-neg = '2,0.4' is invalid"),
    (
        ["figure", "mim-phases", "--P", "4", "--partitions", "[[[0], [1], [2, 3]]]"],
        "--partitions",
    ),
    (["figure", "mim-attention", "--top-k", "0"], "--top-k = 0 is invalid"),
    (["transfer", "jsl", "--C", "0"], "JSLConfig.C = 0"),
    # a grid's configs: the second value of an axis
    (["sweep", "jsl", "--D", "16,0", "--C", "4"], "JSLConfig.D = 0"),
    (["sweep", "mim", "--P", "16,15"], "P = 15"),
    # the levels' point checks (the settings' `validate_point`), on the grid's configs
    # (the library's and the command line's sweep share the check: the config's names)
    (["sweep", "mim", "--z", "uniform:0.5:1.5"], "MIMConfig.z = ('uniform', 0.5, 1.5)"),
    (["sweep", "mim", "--P", "16,64", "--level", "full"], "mode 'exact' would enumerate"),
    (["sweep", "jsl", "--level", "full", "--D", "16", "--C", "2"], "(D = 16, C = 2)"),
    (["sweep", "jsl", "--D", "16", "--C", "4", "--p", "17"], "JSLConfig.p = 17"),
    (["sweep", "jsl", "--max-configurations", "0"], "max_configurations = 0"),
    # the sweep's own options before its points' checks (an exact sum too large here)
    (
        ["sweep", "jsl", "--D", "36", "--C", "4", "--level", "full", "--confidence", "2"],
        "--confidence = 2.0 is invalid",
    ),
    (
        ["sweep", "jsl", "--level", "full", "--mode", "sampled", "--replicates", "1"],
        "replicates = 1",
    ),
    (["derive", "jsl", "--C", "1"], "argument --C: 1 is invalid"),
    (["derive", "jsl", "--p", "4"], "argument --p: 4 is invalid: must be an odd integer"),
    (["experiment", "jsl-images", "--steps", "0"], "argument --steps: 0 is invalid"),
    (["experiment", "mim-images", "--steps", "0"], "argument --steps: 0 is invalid"),
    # checks of several options together, in the estimate (a given --out: the default's module
    # is not light)
    (["experiment", "jsl-images", "--seeds", "1", "--out", "/nonexistent"], "--seeds = 1"),
    (["experiment", "mim-images", "--top-k", "99", "--out", "/nonexistent"], "--top-k = 99"),
]


@pytest.fixture(scope="module")
def refused():
    return probe_all([argv for argv, _ in BAD_VALUES])


@pytest.mark.parametrize("argv, field", BAD_VALUES)
def test_a_bad_config_value_is_refused_before_the_heavy_imports(argv, field, refused):
    out = refused[tuple(argv)]
    lines = out["stderr"].strip().splitlines()
    assert out["code"] == 2 and lines[0].startswith("dynsim: error: ") and field in lines[0]
    assert out["heavy"] == []


def test_float64_after_import_without_importing_jax():
    """The documented contract: after `import dynsim`, JAX computes in float64 (JAX imported after
    dynsim, before it, or in a subprocess started after the import); DYNSIM_X64=0 leaves it off."""
    child = "import jax; print(jax.config.jax_enable_x64)"
    code = (
        "import subprocess, sys\nimport dynsim\nimport jax.numpy as jnp\nprint(jnp.ones(2).dtype)\n"
        f"print(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, "
        f"text=True).stdout)"
    )
    out = fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["float64", "True"]
    assert fresh("import jax, dynsim\nprint(jax.numpy.ones(2).dtype)").stdout.strip() == "float64"
    assert (
        fresh("import dynsim, jax\nprint(jax.numpy.ones(2).dtype)", DYNSIM_X64="0").stdout.strip()
        == "float32"
    )


TOY = "tests.toy_setting"


def toy_by_reference(**fields) -> Setting:
    """The toy setting with its config, levels and checks given as "module:attr" references."""
    return Setting(
        name="toy-lazy",
        description="the toy, by reference",
        config=f"{TOY}.config:ToyConfig",
        reduced=f"{TOY}.levels:reduced",
        full=f"{TOY}.levels:full",
        checks=f"{TOY}.setting:SETTING.checks",
        **fields,
    )


def test_references_load_on_first_use():
    record = toy_by_reference(claims=f"{TOY}.setting:monotone_loss")
    assert isinstance(record.ref("reduced"), Ref)
    assert record.declares("claims") and not record.declares("derive")
    from tests.toy_setting import levels, setting

    assert record.reduced is levels.reduced and record.checks is setting.SETTING.checks
    assert record.config.__name__ == "ToyConfig"
    broken = Setting(
        name="toy-missing",
        description="",
        config=f"{TOY}.config:NoSuchConfig",
        reduced=len,
        full=len,
        checks=f"{TOY}.setting:SETTING.checks",
    )
    with pytest.raises(ImportError, match="Setting.config = 'tests.toy_setting.config:NoSuch"):
        broken.config
    with pytest.raises(ValueError, match="module:attribute"):
        Ref("no colon")


def test_a_registered_setting_by_reference_gets_the_generated_commands(tmp_path, monkeypatch):
    register_for_the_test(monkeypatch, toy_by_reference(modes=("exact", "sampled")))
    assert cli.parse(["compare", "toy-lazy"]).setting_record.name == "toy-lazy"
    out = tmp_path / "out"
    argv = ["compare", "toy-lazy", "--d", "4", "--steps", "20", "--out", str(out), "--no-plot"]
    assert cli.main(argv) == 0
    assert json.loads((out / "report.json").read_text())["passed"]


def test_the_light_image_options_spell_the_experiments_names():
    """dynsim.images.mim_options spells the sizes' defaults and the objectives that modules
    importing JAX give: they agree."""
    import dataclasses

    from dynsim.images import mim_experiment, mim_model, mim_options

    assert mim_options.OBJECTIVES == mim_model.OBJECTIVES
    assert dataclasses.asdict(mim_options.Sizes()) == dataclasses.asdict(mim_experiment.Config())
    assert [f.name for f in dataclasses.fields(mim_options.Sizes)] == [
        f.name for f in dataclasses.fields(mim_experiment.Config)
    ]
    assert mim_options.Sizes(patch=1).P == mim_experiment.Config(patch=1).P == 64


def test_the_built_in_table_is_pyprojects_entry_points():
    """A source tree that is not installed finds the settings `BUILTIN` names: exactly the entry
    points pyproject.toml declares, so a setting added there is found (and probed, tested) the same
    way installed or not."""
    import tomllib
    from pathlib import Path

    from dynsim import setting as registry

    root = Path(__file__).resolve().parents[1]
    project = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    assert project["entry-points"][registry.GROUP] == registry.BUILTIN
