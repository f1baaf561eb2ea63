"""A sweep's outputs in its folder: table.csv (`table_csv`), the heatmaps and sweep.json, written
from three records: what ran (`Ran`), the work it did (`Work`) and what to draw (`Drawn`)."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
from typing import Any, Mapping, Optional, Sequence

from dynsim import environment
from dynsim import setting as registry
from dynsim.store import STORE_VERSION
from dynsim.trajectory import atomic_write_text, strict_json

from . import choices, plots


@dataclasses.dataclass(frozen=True)
class Ran:
    """What a sweep ran: its setting, level, swept axes, base config, seeds, the levels' options
    and what ran it (the CLI's command line, or None)."""

    setting: str
    level: str
    axes: Mapping[str, Any]
    base: Optional[Mapping[str, Any]]
    seeds: int
    options: Mapping[str, Any]
    invocation: Optional[Mapping[str, Any]] = None


@dataclasses.dataclass(frozen=True)
class Work:
    """The work of one sweep command: every point's store key, how many points it computed and
    how many it read back from the store, and its seconds."""

    keys: list
    computed: int
    reused: int
    seconds: float


@dataclasses.dataclass(frozen=True)
class Drawn:
    """The heatmaps to draw: the summaries' names, the two swept axes (None: the first two with
    several values), the unit of event times ("steps" or "time") and the level's column prefix."""

    names: list
    axes: Optional[Sequence]
    unit: str
    prefix: str


def table_csv(rows: list[dict], columns: list[str]) -> str:
    """The table as CSV text: full float precision (repr), empty cells for None."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(columns)
    for r in rows:
        w.writerow(
            [
                "" if r.get(c) is None else repr(r[c]) if isinstance(r[c], float) else r[c]
                for c in columns
            ]
        )
    return buf.getvalue()


def write(out: str, ran: Ran, rows: list[dict], columns: list[str], work: Work, drawn: Drawn):
    """table.csv, the heatmaps `drawn` asks for and sweep.json (what ran, the work, the files) in
    `out`, each atomically; an earlier sweep's heatmaps this one did not draw are removed with its
    table. Returns {what: path}."""
    setting, level, axes, options = ran.setting, ran.level, ran.axes, ran.options
    heatmaps, heatmap_axes, prefix, unit = drawn.names, drawn.axes, drawn.prefix, drawn.unit
    files = {"table": os.path.join(out, "table.csv"), "manifest": os.path.join(out, "sweep.json")}
    atomic_write_text(files["table"], table_csv(rows, columns))
    names = [n if n in columns else prefix + n for n in heatmaps]
    images = plots.heatmaps(
        out,
        setting,
        level,
        rows,
        axes,
        names,
        heatmap_axes,
        labels=choices.labels(registry.get(setting).sweep, names),
        method=options.get("method") or "gd",
    )
    manifest = {
        "setting": setting,
        "level": level,
        "axes": {k: list(v) for k, v in axes.items()},
        "base": dict(ran.base or {}),
        "seeds": ran.seeds,
        "options": options,
        "store_version": STORE_VERSION,
        "points": work.keys,
        "distinct_runs": len(set(work.keys)),
        "computed_this_run": work.computed,
        "reused_from_store": work.reused,
        "seconds_this_run": work.seconds,
        "environment": {
            k: v
            for k, v in environment.meta(level, "sweep", registry.get(setting).config()).items()
            if k not in ("config", "setting", "mode", "level", "dtype")
        },
        "dtypes": sorted({r["dtype"] for r in rows}),
        # only what was drawn is listed (asked for, a heatmap needs two swept axes and its summary)
        "heatmaps": [h for h, n in zip(heatmaps, names) if f"heatmap-{n}" in images],
        "heatmap_files": [os.path.basename(p) for p in images.values()],
        "heatmap_axes": None if heatmap_axes is None else list(heatmap_axes),
        "heatmap_unit": unit,
        "units": choices.UNIT_NOTES,
        "invocation": dict(ran.invocation) if ran.invocation is not None else None,
    }
    # what an earlier sweep into this folder drew and this one did not goes with its table
    plots.remove_stale(out, manifest["heatmap_files"])
    atomic_write_text(files["manifest"], strict_json(manifest))
    files.update(images)
    return files
