"""The detection matrix: a setting's planted defects (`dynsim.mutation.Catalogue`) against the runs
that should notice them, `dynsim compare` (the levels disagree) and each claim of `dynsim
check-theorems` (the claim fails). Each run is the command line itself, in this process, with the
defect applied (`dynsim.mutation.applied`: caches cleared before and after), so a defect is seen
exactly as a user's run would see it.

A cell is "caught" (the claim fails, or compare says DISAGREE), "missed" (the claim holds, the
levels agree), "not applicable" or "not evaluated" with the claim's own reason (the defect's
symptom: the premise it broke), or "error" (the command ended in an error: its message). Only
"caught" counts as detection. The healthy simulator is run first and last (`baseline`, `after`):
a matrix whose baseline does not hold everywhere, or whose two baselines differ (a defect leaked
out of its block), is refused by `check`.

`python -m dynsim.detection SETTING [--mutations a,b] [--declared] [--json FILE] [--markdown]`
runs it (docs/claims.md, "Detection matrix")."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import time
from typing import Any, Optional, Sequence

from dynsim import cli, inputs
from dynsim import setting as settings_mod
from dynsim.cli.output import MAX_RECORD_BYTES
from dynsim.mutation import Catalogue, Mutation, applied

COMPARE = "compare"
CAUGHT, MISSED, ERROR = "caught", "missed", "error"
OUTCOMES = {"fails": CAUGHT, "holds": MISSED}


def catalogue(name: str) -> Catalogue:
    """The setting's catalogue; a ValueError when the setting declares none."""
    found = getattr(settings_mod.get(name), "mutations", None)
    if found is None:
        raise ValueError(f"setting {name!r} declares no mutation catalogue (Setting.mutations)")
    return found


def _cli(argv: list[str]) -> tuple[int, str]:
    """Run `dynsim ARGV` in this process: (exit code, stderr's last line)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(argv)
        except Exception as exc:  # a crash of the command is the cell's outcome, not the matrix's
            return -1, f"{type(exc).__name__}: {exc}"
    lines = [line for line in err.getvalue().splitlines() if line.strip()]
    return code, (lines[-1] if lines else "")


def check_cells(setting: str, args: Sequence[str], only: Optional[Sequence[str]]) -> dict:
    """{claim: cell} of one `check-theorems` run (`only`: the claims it judges)."""
    with tempfile.TemporaryDirectory(prefix="dynsim-detect-") as out:
        argv = ["check-theorems", setting, *args, "--json", "--out", out]
        if only:
            argv += ["--only", ",".join(only)]
        code, last = _cli(argv)
        path = os.path.join(out, "theorems.json")
        if not os.path.exists(path):
            return {"*": {"outcome": ERROR, "why": f"exit {code}: {last}"}}
        found = inputs.read_json(path, MAX_RECORD_BYTES, "theorems.json", inside=out)
    cells = {}
    for c in found["claims"]:
        outcome = OUTCOMES.get(c["verdict"], c["verdict"])
        cells[c["claim"]] = {"outcome": outcome, "why": c.get("why", ""), "measured": c["measured"]}
    return cells


def compare_cell(setting: str, args: Sequence[str]) -> dict:
    """The compare column's cell: caught when the levels disagree (exit 1)."""
    with tempfile.TemporaryDirectory(prefix="dynsim-detect-") as out:
        argv = ["compare", setting, *args, "--no-plot", "--json", "--out", out]
        code, last = _cli(argv)
        path = os.path.join(out, "report.json")
        if code not in (0, 1) or not os.path.exists(path):
            return {"outcome": ERROR, "why": f"exit {code}: {last}"}
        report = inputs.read_json(path, MAX_RECORD_BYTES, "report.json", inside=out)
    worst = [e["name"] for e in report.get("entries", []) if e.get("passed") is False]
    residuals = report.get("residuals")
    if isinstance(residuals, dict):
        worst += [
            k for k, r in residuals.items() if isinstance(r, dict) and r.get("passed") is False
        ]
    if report.get("passed") is False:
        return {"outcome": CAUGHT, "why": "DISAGREE: " + ", ".join(worst)}
    return {"outcome": MISSED, "why": ""}


def cover(mutations: Sequence[Mutation]) -> dict[str, tuple[str, ...]]:
    """Few columns to run per declared defect so that each defect is run in one column said to
    catch it and each column said to catch something is run at least once: a claim not yet
    covered first, else compare (one compare is cheaper than a check-theorems run), else the
    first claim said to catch it."""
    out: dict[str, list[str]] = {}
    covered: set[str] = set()
    for m in mutations:
        if not m.caught_by:
            continue
        claims = [c for c in m.caught_by if c != COMPARE]
        fresh_ = [c for c in claims if c not in covered]
        pick = (fresh_ or ([COMPARE] if COMPARE in m.caught_by else claims))[:1]
        out[m.name] = pick
        covered.update(pick)
    for m in mutations:  # a column no pick reached: run it where it is said to catch
        for c in m.caught_by:
            if c not in covered:
                out[m.name].append(c)
                covered.add(c)
    return {k: tuple(v) for k, v in out.items()}


def row(
    setting: str,
    cat: Catalogue,
    mutation: Optional[Mutation],
    columns_: Optional[Sequence[str]] = None,
) -> dict:
    """One row: the cells of compare and of every claim under `mutation` (None: the healthy
    simulator); `columns_`: only these columns."""
    wanted = None if columns_ is None else set(columns_)
    started = time.perf_counter()
    with applied(mutation) as record:
        cells: dict[str, Any] = {}
        for name, args in ((COMPARE, cat.compare), *cat.compares):
            if wanted is None or name in wanted:
                cells[name] = compare_cell(setting, args)
        probes = {COMPARE, *(name for name, _ in cat.compares)}
        claims = None if wanted is None else sorted(wanted - probes)
        if claims is None or claims:
            cells.update(check_cells(setting, cat.check, claims))
    return {
        "mutation": None if mutation is None else mutation.name,
        "kind": None if mutation is None else mutation.kind,
        "level": None if mutation is None else mutation.level,
        "description": "" if mutation is None else mutation.description,
        "cells": cells,
        "silent": record.silent(),
        "patches": len(record.calls),
        "seconds": round(time.perf_counter() - started, 1),
    }


def matrix(
    setting: str,
    names: Optional[Sequence[str]] = None,
    declared: bool = False,
    log=lambda s: None,
) -> dict:
    """The detection matrix of `setting` (`names`: these mutations only; `declared`: each defect
    only in the columns `cover` picks from those its catalogue entry says catch it), between two
    healthy baselines."""
    cat = catalogue(setting)
    chosen = [cat.get(n) for n in names] if names else list(cat)
    plan = cover(chosen) if declared else {}
    if declared:  # a defect no column is said to catch has nothing to run
        chosen = [m for m in chosen if m.name in plan]
    log(f"{setting}: baseline ...")
    base = row(setting, cat, None)
    rows = []
    for i, m in enumerate(chosen, 1):
        log(f"{setting}: {i}/{len(chosen)} {m.name} ...")
        rows.append(row(setting, cat, m, plan.get(m.name)))
        log(f"  {summary(rows[-1])}")
    # the full matrix runs the healthy simulator again last: a defect that leaked out of its block
    # would change it (the declared cover, a test's budget, trusts the full matrix for that)
    after = None if declared else row(setting, cat, None)
    return {
        "setting": setting,
        "check": list(cat.check),
        "compare": list(cat.compare),
        "compares": {name: list(args) for name, args in cat.compares},
        "sizes": cat.sizes,
        "declared": declared,
        "baseline": base,
        "after": after,
        "rows": rows,
    }


def summary(r: dict) -> str:
    caught = [k for k, c in r["cells"].items() if c["outcome"] == CAUGHT]
    return f"{r['mutation']}: caught by {', '.join(caught) or 'nothing'} ({r['seconds']} s)"


def columns(result: dict) -> list[str]:
    """compare (each compare column), then the claims in the order the baseline lists them."""
    return list(result["baseline"]["cells"])


def caught(r: dict) -> list[str]:
    return [k for k, c in r["cells"].items() if c["outcome"] == CAUGHT]


def problems(result: dict) -> list[str]:
    """What makes a matrix unusable or incomplete: a baseline cell that is not "missed" (the healthy
    simulator must hold everywhere), baselines that differ, a silent patch (in the declared cover:
    a defect none of whose patches ran), a mutation caught by nothing, and (a full matrix) a column
    that catches nothing."""
    out = []
    for which in ("baseline", "after"):
        if result.get(which) is None:
            continue
        bad = [k for k, c in result[which]["cells"].items() if c["outcome"] != MISSED]
        out += [f"{which}: {k} is {result[which]['cells'][k]['outcome']}" for k in bad]
    if result.get("after") is not None:
        a, b = result["baseline"]["cells"], result["after"]["cells"]
        out += [f"the baselines differ in {k}" for k in a if a[k] != b.get(k)]
    for r in result["rows"]:
        # a declared row runs only the columns that catch it: a patch on a path none of them
        # takes is silent there; one that ran none of its patches planted nothing
        silent = r["silent"]
        if result["declared"] and len(silent) < r["patches"]:
            silent = []
        if silent:
            out.append(f"{r['mutation']}: patch never ran: {silent}")
        if not caught(r):
            out.append(f"{r['mutation']}: caught by nothing")
    if not result["declared"]:
        for col in columns(result):
            if not any(r["cells"].get(col, {}).get("outcome") == CAUGHT for r in result["rows"]):
                out.append(f"{col} catches no mutation")
    return out


def _short(cell: Optional[dict]) -> str:
    if cell is None:
        return "·"
    outcome = cell["outcome"]
    if outcome == CAUGHT:
        return "**caught**"
    if outcome == MISSED:
        return "missed"
    why = cell.get("why", "").split(": ", 1)[-1][:60].replace("|", "\\|")
    return f"{outcome}: {why}" if why else outcome


def markdown(result: dict) -> str:
    """The matrix as a Markdown table: one row per mutation, one column per probe."""
    cols = columns(result)
    head = "| defect | kind | level | " + " | ".join(cols) + " |"
    lines = [head, "|" + "---|" * (3 + len(cols))]
    for r in result["rows"]:
        cells = [_short(r["cells"].get(c)) for c in cols]
        lines.append(
            f"| `{r['mutation']}` | {r['kind']} | {r['level']} | " + " | ".join(cells) + " |"
        )
    n = len(result["rows"])
    hit = sum(1 for r in result["rows"] if caught(r))
    per = {
        c: sum(1 for r in result["rows"] if r["cells"].get(c, {}).get("outcome") == CAUGHT)
        for c in cols
    }
    lines.append("")
    lines.append(
        f"{hit} of {n} defects caught; per column: " + ", ".join(f"{c} {k}" for c, k in per.items())
    )
    return "\n".join(lines)


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dynsim.detection", description=__doc__)
    parser.add_argument("setting")
    parser.add_argument("--mutations", help="comma-separated names (default: every one)")
    parser.add_argument(
        "--declared",
        action="store_true",
        help="each defect only in a column said to catch it (every such column run once)",
    )
    parser.add_argument("--json", metavar="FILE", help="write the matrix as JSON")
    parser.add_argument("--markdown", action="store_true", help="print the matrix as Markdown")
    args = parser.parse_args(argv)
    names = args.mutations.split(",") if args.mutations else None
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    result = matrix(args.setting, names, args.declared, log)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(result, fh, indent=1)
    if args.markdown:
        print(markdown(result))
    bad = problems(result)
    for p in bad:
        print(f"problem: {p}", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
