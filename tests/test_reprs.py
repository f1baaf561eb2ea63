"""Short reprs and HTML views of what a notebook user holds: a Report, a SweepResult."""

import numpy as np

from dynsim.checker import compare
from dynsim.sweeps import SweepResult
from dynsim.trajectory import Trajectory


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
