"""What messages spell: a count of any size (scientific notation past 15 digits, never Python's
4300-digit error), the closest known name for an unknown one, and no XLA C++ log line on a command's
terminal unless the user asks for them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from decimal import Decimal

import pytest

import dynsim
from dynsim import cli, sweeps
from dynsim.trajectory import strict_json
from dynsim.validation import text_count
from tests.helpers import assert_refused

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HUGE = 250 * 3**9996  # L * 3^(D-C) at D = 10000, C = 4: 4,773 digits, more than str() converts


def test_a_count_too_long_to_read_is_in_scientific_notation():
    assert text_count(2_125_764) == "2,125,764"
    assert text_count(999_999_999_999_999) == "999,999,999,999,999"
    assert text_count(10**15) == "1.00e+15"
    assert text_count(9995 * 10**20) == "1.00e+24"  # rounded up into the next power of ten
    assert text_count(-(10**5000)) == "-1.00e+5000"
    assert text_count(HUGE) == f"{Decimal(HUGE):.2e}"  # decimal: no digit limit
    assert text_count(log10=477.6107) == "4.08e+477"


@pytest.mark.parametrize("D", [20000, 1000])
def test_an_exact_sum_too_large_is_refused_naming_its_size(tmp_path, capsys, D):
    count = Decimal(D // 4 * 3 ** (D - 4))  # L * 3^(D-C) at C = 4
    code = cli.main(["compare", "jsl", "--D", str(D), "--C", "4", "--out", str(tmp_path / "o")])
    assert_refused(code, capsys.readouterr().err, f"L * 3^(D-C) = {count:.2e} configurations")


def test_an_integer_option_of_any_length_is_refused_by_its_size(capsys):
    """5,000 digits: more than Python converts to an int; named by its leading digits."""
    code = cli.main(["compare", "jsl", "--steps", "98" * 2500])
    assert_refused(code, capsys.readouterr().err, "--steps: 9.90e+4999 is out of range")
    code = cli.main(["sweep", "jsl", "--steps", "10," + "1" * 5000])
    assert_refused(code, capsys.readouterr().err, "1.11e+4999 is out of range")


def test_json_and_config_messages_take_any_integer():
    """A count past a float's range is written as text; a config field past int64 is refused with
    its value in scientific notation, as is any message naming it."""
    assert json.loads(strict_json({"n": HUGE, "m": 2**1024 - 1})) == {
        "n": f"{Decimal(HUGE):.2e}",
        "m": 2**1024 - 1,
    }
    for config, field in ((dynsim.JSLConfig, "C"), (dynsim.MIMConfig, "steps")):
        with pytest.raises(ValueError, match=rf"\.{field} = 1\.00e\+5000 is invalid: .* \(int64\)"):
            config(**{field: 10**5000})
    with pytest.raises(ValueError, match=r"1\.00e\+5000 points \(x 1\.00e\+5000 seeds\)"):
        sweeps.points("jsl", {"q": [0.2]}, seeds=10**5000)


@pytest.mark.parametrize(
    "argv, hint",
    [
        (
            ["compare", "jsl", "--step", "5"],
            "unrecognized arguments: --step 5 (did you mean --steps?)",
        ),
        (["compare", "jsl", "--temprature=unit"], "(did you mean --temperature?)"),
        (["compare", "jsl", "--temperature", "sqrtd"], "(did you mean sqrt_d?)"),
        (["compare", "jls"], "(did you mean jsl?)"),
        (["compre", "jsl"], "(did you mean compare?)"),
        (["sweep", "jsl", "--lvel", "both"], "(did you mean --level?)"),
        (["check-theorems", "jsl", "--only", "lema 4.3"], "(did you mean Lemma 4.3?)"),
        (["rerun", "report.json", "--outt", "x"], "(did you mean --out?)"),
    ],
)
def test_an_unknown_name_gets_the_closest_known_one(tmp_path, capsys, argv, hint):
    assert_refused(cli.main(argv + ["--out", str(tmp_path / "o")]), capsys.readouterr().err, hint)


def test_no_close_name_no_suggestion(capsys):
    err = assert_refused(cli.main(["compare", "jsl", "--zzzzzz"]), capsys.readouterr().err)
    assert "did you mean" not in err
    with pytest.raises(ValueError, match=r"\(did you mean jsl\?\)"):
        dynsim.sweep("jls", {"q": [0.2]})
    with pytest.raises(ValueError, match=r"\(did you mean eta\?\)"):
        sweeps.points("jsl", {"etta": [0.1]})


def test_the_command_line_quiets_xla_unless_the_user_set_its_level(monkeypatch, capsys):
    monkeypatch.delenv(cli.XLA_LOG_LEVEL, raising=False)
    cli.main(["compare", "jsl", "--zzzzzz"])
    assert os.environ[cli.XLA_LOG_LEVEL] == "3"
    monkeypatch.setenv(cli.XLA_LOG_LEVEL, "0")
    cli.main(["compare", "jsl", "--zzzzzz"])
    assert os.environ[cli.XLA_LOG_LEVEL] == "0"


def test_the_installed_jaxlib_prints_no_error_line_at_the_level_set():
    """XLA logs an E line ("Couldn't interpret value") then an F line (fatal) for an XLA_FLAGS value
    it cannot parse; after the command line set its level (the variable unset), JAX started in the
    same process prints only the F line. Without the variable the E line is printed (measured)."""
    env = {k: v for k, v in os.environ.items() if k != cli.XLA_LOG_LEVEL}
    env |= {"XLA_FLAGS": "--xla_cpu_enable_fast_math=maybe", "JAX_PLATFORMS": "cpu"}
    code = "from dynsim import cli; cli.main(['compare', 'jsl', '--zzzzzz']); import jax"
    code += "; jax.devices()"
    err = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    ).stderr
    assert "unrecognized arguments: --zzzzzz" in err and "Flag parsing failed" in err, err
    assert "Couldn't interpret value" not in err, err
