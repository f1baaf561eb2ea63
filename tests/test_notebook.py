"""docs/notebooks/researcher.ipynb runs headless (nbclient, the python3 kernel of this
environment): a compare, a sweep and a claim check with their reprs, and a pandas plot of MIM's FP
curves by area; no cell errs, no output is longer than a screen (40 lines of text, 40 table rows),
and each progress bar is one output of its cell, updated in place (not one output per update)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")  # the test extra installs both
nbclient = pytest.importorskip("nbclient")

NOTEBOOK = Path(__file__).resolve().parent.parent / "docs" / "notebooks" / "researcher.ipynb"
SCREEN = 40  # lines of a terminal or a notebook's output area without scrolling
# a progress bar's line (`dynsim.progress`), its label captured
BAR = re.compile(r"(?:^|\r)([^:\r\n]+): \[[# ]*\] ", re.MULTILINE)


def shown(text: str) -> list[str]:
    """The lines a notebook displays: each line's text after its last carriage return."""
    return [line.rsplit("\r", 1)[-1] for line in text.splitlines()]


def text_plain(output) -> str:
    return output.get("data", {}).get("text/plain", "")


def test_the_notebook_runs_headless_with_short_outputs(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    )
    client.execute()  # raises CellExecutionError on the first cell that errs
    cells = [cell.outputs for cell in nb.cells if cell.cell_type == "code"]
    outputs = [o for cell in cells for o in cell]
    for cell in cells:
        bars = [b for o in cell for b in BAR.findall(o.get("text", "") or text_plain(o))]
        assert len(bars) == len(set(bars)), bars  # one output per bar
    kinds = {k for o in outputs for k in o.get("data", {})}
    assert {"text/html", "image/png"} <= kinds  # the reprs' tables and the pandas plot
    for o in outputs:
        text = o.get("text", "") or text_plain(o)
        assert len(shown(text)) <= SCREEN, text[:2000]
        page = o.get("data", {}).get("text/html", "")
        assert len(re.findall(r"<tr", page)) <= SCREEN + 1, page[:2000]  # rows and a header
    reprs = [o["data"]["text/plain"] for o in outputs if "text/plain" in o.get("data", {})]
    assert any(r.startswith("Report(AGREE") for r in reprs), reprs
    assert any(r.startswith("SweepResult(2 rows") for r in reprs), reprs
    assert any(r.startswith("Results(") for r in reprs), reprs


def test_the_notebook_extra_installs_what_the_readme_runs_it_with():
    """The README runs the notebook with `jupyter nbconvert --execute` after `pip install
    '.[notebook]'`: that extra must bring nbconvert, Jupyter and a kernel."""
    import tomllib

    root = NOTEBOOK.parents[2]
    extra = tomllib.loads((root / "pyproject.toml").read_text())["project"]
    names = {re.split(r"[<>=]", r)[0] for r in extra["optional-dependencies"]["notebook"]}
    readme = (root / "README.md").read_text()
    assert {"nbconvert", "notebook", "ipykernel"} <= names
    assert (
        "pip install '.[notebook]'" in readme
        and "jupyter nbconvert --to notebook --execute" in readme
    )
