"""Range syntax of a swept axis: START:STOP:STEP and START:STOP:logN (dynsim/cli/ranges.py)."""

import argparse

import pytest

from dynsim import cli, resources
from dynsim.cli import options

FLOATS, INTS = options.list_of(float), options.list_of(resources.integer)


def test_a_linear_range_gives_the_values_typed_by_hand():
    # Decimal steps: 0.1 + 2 * 0.1 is the float nearest 0.3 (typed), not 0.30000000000000004
    assert FLOATS("0.1:0.5:0.1") == [0.1, 0.2, 0.3, 0.4, 0.5]
    assert FLOATS("0.5:0.1:-0.2") == [0.5, 0.3, 0.1]
    assert FLOATS("0.1:0.45:0.1") == [0.1, 0.2, 0.3, 0.4]  # STOP off the grid: not reached
    assert FLOATS("0.2,0.25:0.35:0.05,0.9") == [0.2, 0.25, 0.3, 0.35, 0.9]  # ranges in a list
    assert INTS("16:64:16") == [16, 32, 48, 64]
    assert all(type(v) is int for v in INTS("16:64:16"))


def test_a_log_range_has_exact_ends_and_even_ratios():
    assert FLOATS("1e-3:1e-1:log3") == [1e-3, 1e-2, 1e-1]
    values = FLOATS("1:1000:log4")
    assert values == [1.0, 10.0, 100.0, 1000.0]


@pytest.mark.parametrize(
    "parse, text, why",
    [
        (FLOATS, "0.1:0.5:0", "STEP must be nonzero"),
        (FLOATS, "0.1:0.5:-0.1", "towards STOP"),
        (FLOATS, "a:1:0.1", "'a' is not a number"),
        (FLOATS, "0:1:1e-9", "1000000001 values; at most 10000"),
        (FLOATS, "0:1:nan", "not finite"),
        (FLOATS, "1:2:log1", "logN takes a count N between 2"),
        (FLOATS, "0:2:log3", "START > 0"),
        (FLOATS, "1:2", "START:STOP:STEP or START:STOP:logN"),
        (INTS, "1:2:0.5", "must be integers"),
        (INTS, "1:100:log3", "a log range is for a float field"),
    ],
)
def test_a_bad_range_is_refused_naming_why(parse, text, why):
    with pytest.raises(argparse.ArgumentTypeError, match=why):
        parse(text)


def test_a_sweep_takes_ranges_and_prints_them_expanded(capsys):
    argv = ["sweep", "jsl", "--q", "0.1:0.3:0.1", "--eta", "1e-3:1e-1:log3", "--print-config"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "q = [0.1, 0.2, 0.3]" in out and "eta = [0.001, 0.01, 0.1]" in out


def test_a_bad_range_on_the_command_line_is_one_line_exit_2(capsys):
    code = cli.main(["sweep", "jsl", "--q", "0.1:0.5:0", "--print-config"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--q" in err and "STEP must be nonzero" in err and "\n" not in err
