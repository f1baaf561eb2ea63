"""Every JSON the CLI writes is strict JSON (RFC 8259): a diverged run's NaN and infinities are
written as null, so a strict parser reads report.json (issue 16: Python's `NaN` / `Infinity` tokens
were written)."""

from __future__ import annotations

import json
import math
import re

import numpy as np

from dynsim.cli import main
from dynsim.trajectory import strict_json


def _refuse(token: str):
    raise ValueError(f"non-standard JSON constant {token}")


def test_a_diverged_reports_json_parses_strictly(tmp_path):
    # eta = 1000 on D = 9: both levels overflow within the first 100 steps
    main(
        [
            "compare",
            "jsl",
            "--eta",
            "1000",
            "--steps",
            "300",
            "--record-every",
            "100",
            "--no-plot",
            "--out",
            str(tmp_path),
        ]
    )
    with open(tmp_path / "report.json") as fh:
        text = fh.read()
    report = json.loads(text, parse_constant=_refuse)
    assert "null" in text
    steps = re.findall(r'"nonfinite_from_step": (\d+)', text)  # one per level
    # the step it happened, not the next record (100)
    assert len(steps) == 2 and all(0 < int(s) < 100 for s in steps)
    assert report["invocation"]["command_line"][:3] == ["dynsim", "compare", "jsl"]


def test_strict_json_writes_null_and_refuses_what_slips_through():
    data = {
        "nan": math.nan,
        "inf": [np.float32(np.inf), -math.inf],
        "ok": np.arange(2),
        "x": np.float64(0.5),
    }
    assert json.loads(strict_json(data), parse_constant=_refuse) == {
        "nan": None,
        "inf": [None, None],
        "ok": [0, 1],
        "x": 0.5,
    }
