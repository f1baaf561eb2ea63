"""Short reprs and HTML views of what a notebook user holds: a Report, a SweepResult, the claims
of a check."""

import math

import numpy as np

from dynsim.checker import compare
from dynsim.claims import FAILS, HOLDS, NOT_APPLICABLE, Claim, Measurement
from dynsim.results import Results, table
from dynsim.sweeps import SweepResult
from dynsim.trajectory import Trajectories, Trajectory


def pair(gap: float):
    """Two three-step runs whose "loss" agrees exactly and whose "a<b" differs by `gap` at the
    end (a name that needs escaping in HTML)."""
    steps = np.arange(3)
    red = Trajectory(steps, {"loss": np.array([1.0, 0.5, 0.25]), "a<b": np.zeros(3)}, {})
    ful = Trajectory(steps, {"loss": np.array([1.0, 0.5, 0.25]), "a<b": np.array([0, 0, gap])}, {})
    return red, ful


def test_report_repr_is_one_short_line_naming_the_verdict_and_the_worst_observable():
    report = compare(*pair(1e-3))
    text = repr(report)
    # a gap of 1e-3 on values of order 1 is far beyond rounding (about 1e-15)
    assert report.verdict == "DISAGREE"
    assert text.startswith("Report(DISAGREE") and "worst a<b 0.001 against" in text
    assert "\n" not in text and len(text) < 200  # the dataclass dump was 2,700 characters


def test_report_html_escapes_names_and_marks_the_disagreement():
    page = compare(*pair(1e-3))._repr_html_()
    assert "a&lt;b" in page and "a<b" not in page
    assert "<b>DISAGREE</b>" in page and page.count("<tr>") == 3  # header and two observables


def test_sweep_result_repr_and_html_leave_out_keys_and_empty_columns():
    rows = [
        {"key": "f" * 64, "q": 0.1 * i, "final_loss": 1.0 / (i + 1), "verdict": None}
        for i in range(25)
    ]
    result = SweepResult(rows, ["key", "q", "final_loss", "verdict"], ["f" * 64] * 25, [], None, {})
    assert repr(result) == "SweepResult(25 rows x 4 columns, 25 computed, 0 reused, out=None)"
    page = result._repr_html_()
    assert "f" * 64 not in page and "verdict" not in page  # the store key; a column never filled
    assert page.count("<tr>") == 1 + 20 and "5 more rows" in page  # header, the first 20 rows
    assert "<td>0.5</td>" in page  # 1 / 2, shown with 4 significant digits


def claim(name: str, measured: float, verdict: str, **kw):
    """A judged claim "measured <= 1" (the fields a notebook user reads)."""
    fields = {"regime": "in regime", "threshold": 1.0, "derivation": "the paper", **kw}
    return Claim(name, "s", "r", measured=measured, verdict=verdict, negative_control="n", **fields)


def test_claims_results_repr_names_what_does_not_hold_and_html_escapes():
    results = Results(
        [
            claim("Lemma <4.3>", 0.5, HOLDS),
            claim("Theorem 4.1", 2.0, FAILS, at="D = 40"),
            claim("Theorem 4.2", math.nan, NOT_APPLICABLE, regime="NOT MET: eta lambda < 2"),
            Measurement("seconds", "wall seconds", 12.5),
        ]
    )
    text = repr(results)
    assert text == (
        "Results(1 of 3 claims hold; fails: Theorem 4.1; not applicable: Theorem 4.2; "
        "1 measurements)"
    )
    assert repr(results[1]) == "Claim('Theorem 4.1': fails; measured 2 <= 1, literal reading)"
    assert repr(results[3]) == "Measurement('seconds' = 12.5)"
    page = results._repr_html_()
    assert "Lemma &lt;4.3&gt;" in page and "<4.3>" not in page
    # header + three claims, then the one measurement
    assert page.count("<tr>") == 5 and "measured 2 is not &lt;= 1" in page
    assert page.count("<td>exact</td>") == 3  # the interval column, as in the text table
    assert results.exit_code == 1 and [c.claim for c in results.claims][1] == "Theorem 4.1"
    assert results.table() == table(list(results))  # the module's table, as a method


def test_trajectory_html_names_who_produced_it_and_each_observable():
    red, ful = pair(0.0)
    red.meta.update(level="reduced", mode="population", dtype="float64")
    page = red._repr_html_()
    assert "level reduced, mode population, dtype float64; 3 records at steps 0..2" in page
    assert "<td>a&lt;b</td><td>scalar</td>" in page and "a<b" not in page
    assert "<td>1</td><td>0.25</td>" in page  # loss: first and last record
    both = Trajectories({"reduced": red, "full": ful})._repr_html_()
    assert both.count("<table>") == 2 and "<b>full</b>" in both
