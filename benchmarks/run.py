"""Run the benchmarks side by side and write docs/benchmarks.md.

python benchmarks/run.py [--quick] [--only a,c] [--out docs/benchmarks.md]

Modules, in order: a reduced_numpy, b flow, c full_frameworks, d sweep, e roofline, f classes, g
full_large.
--device gpu runs the modules that take a device (c, e, g) on the GPU, when one is present. Each
  exposes
run(quick) -> {"id", "title", "goal", "rows", "met", "notes"}; a module that does not exist (or
fails to import) is listed as "not available". Speed is reported as ratios measured side by side in
one run, never in tests.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import machine  # noqa: E402

MODULES = (
    ("a", "reduced_numpy"),
    ("b", "flow"),
    ("c", "full_frameworks"),
    ("d", "sweep"),
    ("e", "roofline"),
    ("f", "classes"),
    ("g", "full_large"),
    ("h", "mim_levels"),
)


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def _cell(v) -> str:
    return machine.fmt(v).replace("|", "\\|")


def _rows_table(rows: list[dict]) -> list[str]:
    if not rows:
        return ["(no rows)"]
    keys: list[str] = []
    for r in rows:
        keys += [k for k in r if k not in keys]
    out = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    for r in rows:
        out.append("| " + " | ".join(_cell(r[k]) if k in r else "" for k in keys) + " |")
    return out


def _met(m) -> str:
    return {True: "yes", False: "**no**", None: "n/a"}.get(m, str(m))


def render(results: list[dict], desc: dict, quick: bool, wall: float, load: tuple[str, str]) -> str:
    lines = [
        "# Benchmarks",
        "",
        "Written by `python benchmarks/run.py"
        + (" --quick" if quick else "")
        + "`. Every number below was measured in that one run: both sides of a comparison are "
        "compiled/warmed up first, then timed in interleaved rounds; times are medians and "
        "ratios are medians of the per-round ratios. Speed lives here, as ratios, never in "
        "timed tests.",
        "",
    ]
    if quick:
        lines += [
            "**Quick mode**: much smaller problems, for a smoke check only; goals are not judged.",
            "",
        ]
    lines += ["## Machine", "", "| | |", "|---|---|"]
    for k, v in desc.items():
        lines.append(f"| {k} | {v} |")
    lines.append(f"| load average (1, 5, 15 min) at start / end | {load[0]} / {load[1]} |")
    lines.append(f"| total wall time of this run | {wall / 60:.1f} min |")
    lines += [
        "",
        "## Summary",
        "",
        "| id | what | goal | measured | met? |",
        "|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['id']} | {r['title']} | {r.get('goal', '')} | {r.get('measured', '')} | "
            f"{_met(r.get('met'))} |"
        )
    for r in results:
        lines += ["", f"## {r['id']}. {r['title']}", ""]
        if r.get("unavailable"):
            lines += [r["notes"]]
            continue
        lines += [f"Goal: {r.get('goal', '')}. Met: {_met(r.get('met'))}.", ""]
        lines += _rows_table(r.get("rows", []))
        lines += ["", str(r.get("notes", "")), ""]
        if r.get("wall") is not None:
            lines += [f"(benchmark wall time {r['wall']:.0f} s)"]
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small versions, for a smoke check")
    ap.add_argument("--only", default=None, help="comma-separated ids, e.g. a,c")
    ap.add_argument("--out", default=str(ROOT / "docs" / "benchmarks.md"))
    ap.add_argument(
        "--device",
        default="cpu",
        choices=("cpu", "gpu"),
        help="where the full-level benchmarks (c, e, g) run; the others run on JAX's default "
        "device",
    )
    a = ap.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    t_start = time.perf_counter()
    load_start = _loadavg()
    desc = machine.describe()
    results = []
    for bid, name in MODULES:
        if only and bid not in only:
            continue
        try:
            mod = importlib.import_module(f"benchmarks.{name}")
        except ImportError as e:
            print(f"[{bid}] benchmarks/{name}.py: not available ({e})", flush=True)
            results.append(
                {
                    "id": bid,
                    "title": f"benchmarks/{name}.py",
                    "goal": "",
                    "measured": "not available",
                    "met": None,
                    "unavailable": True,
                    "notes": f"benchmarks/{name}.py: not available ({type(e).__name__}: {e}).",
                }
            )
            continue
        print(f"[{bid}] running benchmarks/{name}.py ...", flush=True)
        t0 = time.perf_counter()
        try:
            takes_device = "device" in inspect.signature(mod.run).parameters
            res = dict(
                mod.run(quick=a.quick, device=a.device) if takes_device else mod.run(quick=a.quick)
            )
        except Exception as e:  # a failing benchmark is reported, the others still run
            traceback.print_exc()
            res = {
                "id": bid,
                "title": f"benchmarks/{name}.py",
                "goal": "",
                "measured": "failed",
                "met": None,
                "unavailable": True,
                "notes": f"benchmarks/{name}.py failed: {type(e).__name__}: {e}",
            }
        res["wall"] = time.perf_counter() - t0
        res.setdefault(
            "measured",
            "; ".join(f"{k}={machine.fmt(v)}" for k, v in (res.get("rows") or [{}])[-1].items()),
        )
        print(
            f"[{bid}] done in {res['wall']:.0f} s: {res.get('measured', '')}; met: "
            f"{res.get('met')}",
            flush=True,
        )
        results.append(res)
    wall = time.perf_counter() - t_start
    text = render(results, desc, a.quick, wall, (load_start, _loadavg()))
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    print(f"wrote {out} ({wall / 60:.1f} min)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
