"""The terminal table of `dynsim sweep` prints every column a --heatmap draws, names each censored
event with its count and what ran; the heatmaps' titles name the level's method."""

from types import SimpleNamespace

from dynsim import setting as registry
from dynsim.cli.sweep_run import summary_text
from dynsim.setting import SweepTable
from dynsim.sweeps import SweepResult, plots

SPEC = SimpleNamespace(table=SweepTable(columns=("final_loss",), extra_columns=()))
COLUMNS = ["key", "q", "seed", "reduced_final_loss", "reduced_patch_association", "verdict"]


def result() -> SweepResult:
    rows = [
        {"key": str(i), "q": q, "seed": 0, "reduced_final_loss": 0.5, "verdict": "AGREE"}
        | {"reduced_patch_association": 1.0}
        for i, q in enumerate((0.2, 0.3))
    ]
    return SweepResult(rows, COLUMNS, [], [], None, {})


def header(text: str) -> list[str]:
    return text.splitlines()[0].split()


def test_a_heatmap_column_is_printed_and_no_column_twice():
    assert "reduced_patch_association" not in header(summary_text(result(), ["q"], SPEC))
    shown = header(summary_text(result(), ["q"], SPEC, ["patch_association", "final_loss"]))
    assert "reduced_patch_association" in shown
    assert shown.count("reduced_final_loss") == 1
    shown = header(summary_text(result(), ["q"], SPEC, ["verdict"]))
    assert shown.count("verdict") == 1


def test_the_summary_names_each_censored_event_and_what_ran():
    """Two points: T1_attention reached in both, T3 censored in both, T0 in one (their time twins
    likewise): the events are named in the unit shown, each with its count; none reached is not."""
    rows = []
    for i, t0 in enumerate((None, 40)):
        row = {"key": str(i), "q": 0.2 + i / 10, "seed": 0}
        for e, value in (("T0", t0), ("T1_attention", 30), ("T3", None)):
            t = e[0].lower() + e[1:]
            row |= {f"reduced_{e}": value, f"reduced_{t}": None if value is None else value / 10}
            row[f"reduced_{e}_censored"] = 100 if value is None else None
            row[f"reduced_{t}_censored"] = 10.0 if value is None else None
        rows.append(row)
    res = SweepResult(rows, list(rows[0]), [], [], None, {})
    spec = registry.get("jsl").sweep
    lines = summary_text(res, ["q"], spec, unit="steps", ran="reduced level (GD)").splitlines()
    assert "reduced_T0 in 1 point, reduced_T3 in 2 points; raise --steps" in lines[-3], lines
    assert "reduced_T1_attention in" not in lines[-3] and "reduced_t3" not in lines[-3]
    assert lines[-2] == "reduced level (GD); event times in recorded steps"
    text = summary_text(res, ["q"], spec, unit="time", ran="reduced level (gradient flow)")
    assert "reduced_t0 in 1 point, reduced_t3 in 2 points; raise" in text
    assert "reduced_T3 in" not in text and "event times in time t = eta * steps" in text


def test_the_heatmap_titles_name_the_method():
    rows = [{"seed": 0}, {"seed": 1}]
    assert plots.title_of("jsl", "reduced", "reduced_T1_attention", rows, {}, True, "flow") == (
        "JSL sweep, reduced level (gradient flow): T1_attention, mean over 2 seeds"
    )
    assert plots.title_of("jsl", "both", "full_final_loss", rows[:1], {}, True, "flow") == (
        "JSL sweep, full level (GD): final_loss"
    )
    assert plots.title_of("mim", "both", "verdict", rows[:1], {}, False, "flow") == (
        "MIM sweep, both levels (reduced: gradient flow, full: GD): verdict"
    )
