"""A second test setting (tests/two_level_setting: GD on a two-block diagonal quadratic) declares
every per-level field of `dynsim.verbs` the toy leaves out, with new files only, and gets every verb
from the core: a reduced Level with its options, keywords hook, describe line, post step and report
hook; a full Level with two modes, an option of one mode, a validate hook and an unread field; a
checker option; Claims with a plan, options, defaults, exclusions and names; a Derivation with an
option; a SweepSpec.

Expected numbers are derived by hand from the problem, never read from the code under test. At
the defaults (d = 6: n_a = n_b = 3 coordinates; lam = 3, eta = 0.1; w0 = 0, w* = 1, so every block
error starts at e(0) = n = 3), each coordinate's error is multiplied by (1 - eta k) per step, so a
block error e = sum (w_i - 1)^2 by c = (1 - eta k)^2: c_a = 0.9^2 = 0.81, c_b = 0.7^2 = 0.49, and
e_k(t) = 3 c_k^t, L = (e_a + lam e_b) / 2 (L(0) = (3 + 9) / 2 = 6), dist2 = e_a + e_b.
"""

import csv
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import sympy as sp

import dynsim
from dynsim import cli
from tests.helpers import assert_refused, register_for_the_test, run
from tests.two_level_setting import levels
from tests.two_level_setting.config import TwoBlockConfig
from tests.two_level_setting.setting import SETTING

ROOT = Path(__file__).resolve().parent.parent
STEPS = np.arange(0, 41, 5)  # the recorded steps at the defaults (steps 40, record_every 5)


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    """The setting is known for each test only: the registry is restored afterwards."""
    register_for_the_test(monkeypatch, SETTING)


def report_of(out: Path) -> dict:
    return json.loads((out / "report.json").read_text())


def expected_error(t, c, n=3.0, q=0.0):
    """A block error by hand: e(t) = c^t n + q (1 - c^t) / (1 - c) (q = eta^2 sigma^2 n under
    gradient noise, in expectation)."""
    t = np.asarray(t, float)
    return c**t * n + q * (1 - c**t) / (1 - c)


def test_reduced_level_against_the_hand_recurrence():
    """Both exact forms of the reduced level give e_k(t) = 3 c_k^t (float64: 40 products of O(1)
    numbers, 1e-14 leaves a factor ~100 over the accumulated rounding); the level itself records no
    dist2: the post step adds it."""
    cfg = TwoBlockConfig()
    for form in ("recurrence", "closed"):
        red = levels.reduced(cfg, form=form)
        np.testing.assert_array_equal(red.steps, STEPS)
        np.testing.assert_allclose(red["err_a"], 3 * 0.81**STEPS, rtol=1e-14, atol=0)
        np.testing.assert_allclose(red["err_b"], 3 * 0.49**STEPS, rtol=1e-14, atol=0)
        assert "dist2" not in red
    noisy = levels.reduced(cfg, noisy=True)  # q = eta^2 sigma^2 n = 0.01 * 0.25 * 3
    np.testing.assert_allclose(
        noisy["err_b"], expected_error(STEPS, 0.49, q=0.0075), rtol=1e-13, atol=0
    )


def test_compare_exact_mode_runs_every_reduced_hook(tmp_path, capsys):
    out = tmp_path / "exact"
    code, stdout, stderr = run(capsys, "compare", "twoblock", "--out", out)
    assert code == 0, stderr
    report = report_of(out)
    assert report["passed"] and report["kind"] == "rounding"
    # Checks.compared, dist2 among them: the post step's observable reached the checker
    assert set(report["errors"]) == {"err_a", "err_b", "loss", "dist2"}
    assert all(e["passed"] for e in report["errors"].values())
    assert report["residuals"]["spread"]["passed"] is True  # judged by rounding in mode exact
    # the report hook: (1 - 0.1)^2 and (1 - 0.3)^2; final dist2 = 3 (0.81^40 + 0.49^40)
    assert report["contraction"] == pytest.approx({"a": 0.81, "b": 0.49}, rel=1e-14)
    final = 3 * (0.81**40 + 0.49**40)
    assert report["final_dist2"] == pytest.approx({"reduced": final, "full": final}, rel=1e-12)
    assert "contraction per step: block a 0.81, block b 0.49" in stdout
    assert "verdict: AGREE" in stdout
    # the describe lines, before the runs, on stderr
    assert "reduced level: recurrence, contraction factors 0.81 and 0.49" in stderr
    assert "full: exact GD on w in R^6" in stderr
    assert stderr.index("contraction factors") < stderr.index("reduced: done")
    runs = dynsim.Trajectory.load(out / "trajectories.npz")
    for name in ("reduced", "full"):
        np.testing.assert_allclose(
            runs[name]["dist2"], 3 * 0.81**STEPS + 3 * 0.49**STEPS, rtol=1e-13, atol=0
        )
    assert (out / "compare.png").stat().st_size > 0  # the default plot of the compared observables


def test_compare_keywords_hook_passes_the_reduced_form(tmp_path, capsys):
    out = tmp_path / "closed"
    code, _, stderr = run(
        capsys, "compare", "twoblock", "--form", "closed", "--no-plot", "--out", out
    )
    assert code == 0, stderr
    report = report_of(out)
    assert report["passed"] and report["reduced_meta"]["form"] == "closed"
    assert report["reduced_meta"]["mode"] == "exact" and report["full_meta"]["mode"] == "exact"
    assert "reduced level: closed" in stderr


def test_compare_noisy_mode(tmp_path, capsys):
    """Mode noisy: 16 replicate runs with gradient noise sigma = 0.3 against the reduced level's
    expected errors (the keywords hook tells it the mode), judged with a Student-t band, dist2's
    standard error from the post step's per-run sums."""
    out = tmp_path / "noisy"
    argv = ["--mode", "noisy", "--replicates", "16", "--sigma", "0.3", "--no-plot", "--out", out]
    code, stdout, stderr = run(capsys, "compare", "twoblock", *argv)
    assert code == 0, stderr
    report = report_of(out)
    assert report["passed"] and report["kind"] == "statistical"
    assert report["reduced_meta"]["mode"] == "noisy" and report["full_meta"]["replicates"] == 16
    assert report["errors"]["dist2"]["max_z"] is not None  # judged with dist2_se, not by rounding
    assert report["residuals"]["spread"]["passed"] is None  # reported, not judged, when noisy
    # E e_k(40) = 3 c^40 + q (1 - c^40) / (1 - c), q = 0.1^2 0.3^2 3 = 0.0027
    final = expected_error(40, 0.81, q=0.0027) + expected_error(40, 0.49, q=0.0027)
    assert report["final_dist2"]["reduced"] == pytest.approx(final, rel=1e-12)
    assert "16 replicates, gradient noise sigma = 0.3" in stderr
    assert "is not read here" not in stderr  # sigma is read in this mode
    assert "contraction per step: block a 0.81, block b 0.49" in stdout
    full = dynsim.Trajectory.load(out / "trajectories.npz", "full")
    np.testing.assert_allclose(full["dist2"], full["err_a"] + full["err_b"], rtol=1e-13)
    assert full["dist2_seeds"].shape == (STEPS.size, 16) and "dist2_se" in full


def test_mode_restricted_option_is_refused_in_the_other_mode(tmp_path, capsys):
    out = tmp_path / "o"
    code, _, err = run(capsys, "compare", "twoblock", "--replicates", "4", "--out", out)
    assert_refused(code, err, "--replicates", "--mode noisy", "not --mode exact")
    assert not (out / "report.json").exists()


def test_validate_hooks_refuse_before_any_work(tmp_path, capsys):
    """One line each (assert_refused): neither level's describe line was logged, nothing ran."""
    out = tmp_path / "o"
    code, _, err = run(
        capsys, "compare", "twoblock", "--mode", "noisy", "--replicates", "1", "--out", out
    )
    assert_refused(code, err, "--replicates = 1 is invalid", "--mode noisy")
    code, _, err = run(
        capsys, "compare", "twoblock", "--form", "first_order", "--approximation-tolerance", "0"
    )
    assert_refused(code, err, "--approximation-tolerance = 0.0 is invalid")
    assert not (out / "report.json").exists()


def test_unread_field_is_warned(tmp_path, capsys):
    code, _, err = run(
        capsys, "compare", "twoblock", "--sigma", "0.3", "--no-plot", "--out", tmp_path / "o"
    )
    assert code == 0
    assert "warning: --sigma = 0.3 is not read here: --mode exact runs noiseless GD" in err
    code, _, err = run(capsys, "compare", "twoblock", "--no-plot", "--out", tmp_path / "p")
    assert code == 0 and "is not read here" not in err  # only a field given is warned about


def test_checker_option_reaches_the_checker(tmp_path, capsys):
    """--form first_order is a named approximation (c = 1 - 2 eta k: 0.8 and 0.4), judged with
    --approximation-tolerance times each observable's largest magnitude (err_a: 3). Its largest
    gap on err_a over the recorded steps is 3 max_t |0.81^t - 0.8^t| (0.063 at t = 5): within 5%
    of 3 (0.15), beyond 1% (0.03)."""
    gap = float(np.max(3 * np.abs(0.81**STEPS - 0.8**STEPS)))
    assert 0.03 < gap < 0.15  # the two tolerances below straddle it
    common = ["compare", "twoblock", "--form", "first_order", "--no-plot"]
    code, _, _ = run(capsys, *common, "--approximation-tolerance", "0.05", "--out", tmp_path / "a")
    report = report_of(tmp_path / "a")
    assert code == 0 and report["verdict"] == "AGREE" and report["kind"] == "approximation"
    assert report["errors"]["err_a"]["max_abs"] == pytest.approx(gap, rel=1e-12)
    assert report["errors"]["err_a"]["tolerance"] == pytest.approx(0.05 * 3, rel=1e-9)
    assert report["contraction"] == pytest.approx({"a": 0.8, "b": 0.4}, rel=1e-14)
    code, stdout, _ = run(
        capsys, *common, "--approximation-tolerance", "0.01", "--out", tmp_path / "b"
    )
    report = report_of(tmp_path / "b")
    assert code == 0 and report["verdict"] == "APPROXIMATION GAP"
    assert report["errors"]["err_a"]["tolerance"] == pytest.approx(0.01 * 3, rel=1e-9)
    assert "verdict: APPROXIMATION GAP" in stdout
    code, _, _ = run(
        capsys, *common, "--approximation-tolerance", "0.01", "--strict", "--out", tmp_path / "c"
    )
    assert code == 1


def test_print_config_and_its_round_trip(tmp_path, capsys):
    code, text, _ = run(
        capsys, "compare", "twoblock", "--mode", "noisy", "--replicates", "4", "--eta", "0.2",
        "--print-config",
    )  # fmt: skip
    lines = set(text.splitlines())
    assert code == 0
    wanted = {'mode = "noisy"', "replicates = 4", "eta = 0.2", 'form = "recurrence"'}
    assert wanted | {"approximation_tolerance = 0.05", "d = 6", "sigma = 0.5"} <= lines
    path = tmp_path / "run.toml"
    path.write_text(text)
    out = tmp_path / "o"
    code, _, err = run(capsys, "compare", "twoblock", "--config", path, "--no-plot", "--out", out)
    assert code == 0, err
    report = report_of(out)
    assert report["full_meta"]["replicates"] == 4 and report["full_meta"]["mode"] == "noisy"
    assert report["full_meta"]["config"]["eta"] == 0.2
    # check-theorems prints its own defaults (steps 60) and not the fields it sets itself
    code, text, _ = run(capsys, "check-theorems", "twoblock", "--print-config")
    keys = {line.split(" = ")[0] for line in text.splitlines() if not line.startswith("#")}
    assert code == 0 and "steps = 60" in text.splitlines() and 'form = "recurrence"' in text
    assert "sigma" not in keys and "seed" not in keys and "d" in keys


def test_check_theorems_holds_at_the_defaults(tmp_path, capsys):
    out = tmp_path / "t"
    code, stdout, _ = run(capsys, "check-theorems", "twoblock", "--out", out)
    assert code == 0
    saved = json.loads((out / "theorems.json").read_text())
    assert [c["claim"] for c in saved["claims"]] == ["monotone loss", "exact reduction"]
    assert [c["verdict"] for c in saved["claims"]] == ["holds", "holds"]
    assert saved["config"]["steps"] == 60  # the claims' default, not the config's 40
    # the loss falls at every recorded step: its largest increment is the last, L(60) - L(55) < 0
    L = lambda t: (3 * 0.81**t + 9 * 0.49**t) / 2  # noqa: E731
    assert saved["claims"][0]["measured"] == pytest.approx(L(60) - L(55), rel=1e-9)
    assert "2 of 2 claims hold" in stdout
    # at a glance: the account of each claim only with --verbose, the count after it
    assert "reading (" not in stdout and "negative control:" not in stdout
    code, verbose, _ = run(capsys, "check-theorems", "twoblock", "--verbose", "--out", out)
    assert code == 0 and verbose.count("  negative control: ") == 2
    assert verbose.rstrip().splitlines()[-1].startswith("2 of 2 claims hold")


def test_check_theorems_negative_controls_only_and_json(tmp_path, capsys):
    """eta = 0.8 with lam = 3: c_a = 0.2^2 = 0.04, c_b = 1.4^2 = 1.96 > 1, the loss grows: the
    largest increment over the records (every 5 of 60 steps) is the last, L(60) - L(55) with
    L(t) = (3 0.04^t + 9 1.96^t) / 2. --only runs the reduced level alone."""
    code, stdout, err = run(
        capsys, "check-theorems", "twoblock", "--eta", "0.8", "--only", "monotone loss",
        "--json", "--out", tmp_path / "a",
    )  # fmt: skip
    assert code == 1
    claims = json.loads(stdout)["claims"]
    assert [(c["claim"], c["verdict"]) for c in claims] == [("monotone loss", "fails")]
    L = lambda t: (3 * 0.04**t + 9 * 1.96**t) / 2  # noqa: E731
    assert claims[0]["measured"] == pytest.approx(L(60) - L(55), rel=1e-9)
    assert "full: exact GD" not in err  # --only "monotone loss" needs no full run
    # the first-order form is not the exact reduction: its largest scaled gap over the records
    code, stdout, _ = run(
        capsys, "check-theorems", "twoblock", "--form", "first_order", "--only", "EXACT REDUCTION",
        "--json", "--out", tmp_path / "b",
    )  # fmt: skip
    assert code == 1
    claims = json.loads(stdout)["claims"]
    assert [(c["claim"], c["verdict"]) for c in claims] == [("exact reduction", "fails")]
    t = np.arange(0, 61, 5)
    da, db = 3 * np.abs(0.8**t - 0.81**t), 3 * np.abs(0.4**t - 0.49**t)
    # scaled by max(1, max |exact|): err_a 3, err_b 3, loss 6, dist2 6
    gap = max(da.max() / 3, db.max() / 3, ((da + 3 * db) / 2).max() / 6, (da + db).max() / 6)
    assert claims[0]["measured"] == pytest.approx(gap, rel=1e-9)
    code, _, err = run(capsys, "check-theorems", "twoblock", "--only", "nope")
    assert_refused(code, err, "--only = 'nope' is invalid", "monotone loss, exact reduction")
    code, _, err = run(capsys, "check-theorems", "twoblock", "--sigma", "1")
    assert_refused(code, err, "unrecognized arguments: --sigma")  # set by the command itself


def c_line(text: str, name: str) -> sp.Expr:
    """The expression printed on the line `name = ...` (sympy's lambda renamed: a Python
    keyword)."""
    line = next(x for x in text.splitlines() if x.startswith(f"{name} = "))
    return sp.sympify(line.split(" = ", 1)[1].replace("lambda", "lam"))


def test_derive_prints_the_reduced_loss(capsys):
    eta, lam = sp.symbols("eta lam")  # as sympify makes them
    code, text, _ = run(capsys, "derive", "twoblock")
    assert code == 0
    # by hand: one coordinate's GD step multiplies its error by (1 - eta k), its square by that^2
    assert sp.simplify(c_line(text, "c_a") - (1 - eta) ** 2) == 0
    assert sp.simplify(c_line(text, "c_b") - (1 - eta * lam) ** 2) == 0
    e_a, e_b = sp.symbols("e_a e_b")
    assert sp.simplify(c_line(text, "L") - (e_a + lam * e_b) / 2) == 0
    assert "c_a = 0.81, c_b = 0.49, L(0) = 6" in text
    code, text, _ = run(capsys, "derive", "twoblock", "--expand", "--eta", "0.2")
    line = next(x for x in text.splitlines() if x.startswith("c_b = "))
    assert code == 0 and "(" not in line  # expanded, not factored
    assert sp.expand(c_line(text, "c_b") - (1 - 2 * eta * lam + eta**2 * lam**2)) == 0
    assert "c_a = 0.64, c_b = 0.16, L(0) = 6" in text  # 0.8^2, (1 - 0.6)^2
    code, text, _ = run(capsys, "derive", "twoblock", "--latex")
    line = next(x for x in text.splitlines() if x.startswith("c_b = "))
    assert code == 0 and r"\eta" in line and r"\lambda" in line and "**" not in line


def test_sweep_both_levels(tmp_path, capsys):
    """Two etas x 2 seeds at --level both with the closed form: every row agrees, and the final
    loss after T = 20 steps is (3 (1 - eta)^40 + 9 (1 - 3 eta)^40) / 2. Neither level draws
    anything in mode exact (the spec's seeded hook): 4 rows, 2 distinct runs, each run once."""
    out = tmp_path / "sw"
    argv = ["sweep", "twoblock", "--eta", "0.1,0.2", "--steps", "20", "--level", "both"]
    argv += ["--form", "closed", "--seeds", "2", "--out", out]
    code, stdout, err = run(capsys, *argv)
    assert code == 0, err
    rows = list(csv.DictReader((out / "table.csv").open()))
    points = sorted((float(r["eta"]), int(r["seed"])) for r in rows)
    assert points == [(0.1, 0), (0.1, 1), (0.2, 0), (0.2, 1)]
    for r in rows:
        eta = float(r["eta"])
        loss = (3 * (1 - eta) ** 40 + 9 * (1 - 3 * eta) ** 40) / 2
        dist2 = 3 * (1 - eta) ** 40 + 3 * (1 - 3 * eta) ** 40
        assert r["verdict"] == "AGREE" and r["check_kind"] == "rounding"
        assert float(r["reduced_final_loss"]) == pytest.approx(loss, rel=1e-12)
        assert float(r["full_final_dist2"]) == pytest.approx(dist2, rel=1e-12)
    assert "4 points (2 distinct runs" in stdout and "2 computed now, 0 reused" in stdout
    code, stdout, _ = run(capsys, *argv)  # resumed: nothing recomputed
    assert code == 0 and "0 computed now, 2 reused" in stdout


def test_sweep_reads_the_declared_modes_of_an_option(tmp_path, capsys):
    """Option("--replicates", modes=("noisy",), verbs=("compare", "sweep")): a sweep in mode noisy
    takes it, and one in mode exact refuses it naming the mode that reads it."""
    code, _, err = run(capsys, "sweep", "twoblock", "--replicates", "4", "--out", tmp_path / "a")
    assert_refused(code, err, "--replicates", "--mode noisy")
    argv = ["--mode", "noisy", "--replicates", "4", "--level", "both", "--out", tmp_path / "b"]
    code, _, err = run(capsys, "sweep", "twoblock", "--eta", "0.1,0.2", *argv)
    assert code == 0, err


def help_of(capsys, monkeypatch, *argv) -> str:
    """`dynsim ARGV --help` (argparse exits 0 after printing it), on one line per option."""
    monkeypatch.setenv("COLUMNS", "250")
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        cli.main([*argv, "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


def options_in(text: str) -> set[str]:
    """The option flags the help lists (each option line starts with two spaces and --)."""
    return {line.split()[0].rstrip(",") for line in text.splitlines() if line.startswith("  --")}


def test_help_of_each_verb_shows_the_declared_options(capsys, monkeypatch):
    compare = help_of(capsys, monkeypatch, "compare", "twoblock")
    assert {"--form", "--approximation-tolerance", "--replicates", "--mode"} <= options_in(compare)
    assert "--mode {exact,noisy}" in compare and "--replicates R" in compare
    assert "independent noisy runs in --mode noisy" in compare
    sweep = help_of(capsys, monkeypatch, "sweep", "twoblock")
    assert {"--form", "--replicates", "--mode", "--eta"} <= options_in(sweep)
    assert "--approximation-tolerance" not in options_in(sweep)  # its verbs: compare only
    assert "--mode {exact,noisy}" in sweep
    check = help_of(capsys, monkeypatch, "check-theorems", "twoblock")
    assert {"--form", "--only", "--json", "--eta"} <= options_in(check)
    assert not {"--sigma", "--seed", "--replicates"} & options_in(check)
    assert "(default: 60 here; TwoBlockConfig's: 40)" in check
    assert "monotone loss, exact reduction" in check
    assert "Set by this command, not options: sigma" in check
    derive = help_of(capsys, monkeypatch, "derive", "twoblock")
    assert {"--expand", "--latex", "--eta"} <= options_in(derive)  # config=True: the fields too
    assert "--form" not in options_in(derive)


def test_the_record_loads_no_level_for_help(tmp_path):
    """The record names its code by "module:attr": `compare twoblock --help` in a fresh process
    imports neither the levels, the hooks nor JAX."""
    script = (
        "import sys, dynsim\n"
        "from dynsim import cli\n"
        "from tests.two_level_setting.setting import SETTING\n"
        "dynsim.register(SETTING)\n"
        "try:\n"
        "    cli.main(['compare', 'twoblock', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "loaded = [m for m in ('jax', 'tests.two_level_setting.levels',\n"
        "          'tests.two_level_setting.hooks') if m in sys.modules]\n"
        "print('LOADED', loaded)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "--approximation-tolerance" in proc.stdout
    assert "LOADED []" in proc.stdout
