"""The terminal table of `dynsim sweep` prints every column a --heatmap draws."""

from types import SimpleNamespace

from dynsim.cli.sweep_run import summary_text
from dynsim.setting import SweepTable
from dynsim.sweeps import SweepResult

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
