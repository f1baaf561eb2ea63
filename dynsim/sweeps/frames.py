"""A sweep's table as a `pandas.DataFrame` (`SweepResult.to_pandas`, `dynsim export`; docs/data.md
§3). Needs pandas (`pip install 'dynsim[xarray]'` brings it).

One row per point, in grid order; a column no row fills is left out (at level reduced: the checker's
verdict, max_error, ...). An event time with its censoring (`dynsim.sweeps.common.censored`: `T1`
and `T1_censored`) becomes ONE float column: the recorded step where the event was reached, +inf
where it was not reached by the horizon, NaN where it is unknown (the run diverged or lacks what the
event needs). The horizon of a level's censored events, the last recorded step, is its column
`<level>_horizon` (`horizon` for unprefixed events), set in the rows where that level has a censored
event; events of one level censored at another bound in the same row (the same events in time t =
eta * steps) get their own column after them, named by the common start of their names
(`reduced_t_horizon` for reduced_t1_attention, ..., reduced_t3). +inf sorts after every
reached time, is not drawn by matplotlib, and makes `describe()`'s mean and max infinite rather than
a horizon-biased number: a censored event is never read as a reached one. Reached-only statistics:
`df[col].replace(np.inf, np.nan)`."""

from __future__ import annotations

import csv
import io
import os

import numpy as np
import pandas as pd

from dynsim import inputs, schemas
from dynsim.store import SUMMARY, summary_schema

from . import SweepResult

CENSORED = "_censored"
LEVEL_PREFIXES = ("reduced_", "full_")  # the level summaries' prefixes in a sweep's row
# a sweep's table.csv: about a kilobyte a point, so a million points
MAX_TABLE_BYTES = 1 << 30
TEXT_COLUMNS = ("key",)  # hashes: text even when a hash happens to be all digits
# a table's row (dynsim.schemas): its point's summary (dynsim.store.SUMMARY, with its event times)
# and the point's seed, whether the seed entered its run, its dtype and its store key
ROW = {
    **SUMMARY,
    "seed": schemas.kind("integer", low=0),
    "seeded": schemas.kind("bool"),
    "dtype": schemas.kind("text"),
    "key": schemas.kind("text"),
}


def to_pandas(result) -> pd.DataFrame:
    """`result`'s rows (a `SweepResult`, or any object with `rows` and `columns`) as a DataFrame
    (the module's docstring)."""
    rows, columns = result.rows, list(result.columns)
    events = [c for c in columns if c + CENSORED in columns]
    horizons = horizon_columns(rows, events)
    data: dict = {}
    for c in columns:
        if c in events:
            data[c] = event(rows, c)
            data.update(horizons.get(c, {}))  # after the last event it bounds
        elif not (c.endswith(CENSORED) and c[: -len(CENSORED)] in events):
            values = [r.get(c) for r in rows]
            if any(v is not None for v in values):
                data[c] = typed(values)
    return pd.DataFrame(data, index=pd.RangeIndex(len(rows)))


def from_rows(rows: list[dict]) -> pd.DataFrame:
    """Rows of Python values as a DataFrame, a column per key (first seen first, `typed`), the
    columns no row fills left out."""
    columns = list(dict.fromkeys(k for r in rows for k in r))
    values = {c: [r.get(c) for r in rows] for c in columns}
    return pd.DataFrame(
        {c: typed(v) for c, v in values.items() if any(x is not None for x in v)},
        index=pd.RangeIndex(len(rows)),
    )


def prefix(name: str) -> str:
    """The level prefix of a summary's name ("reduced_", "full_"), "" for a point's own."""
    return next((p for p in LEVEL_PREFIXES if name.startswith(p)), "")


def event(rows: list[dict], name: str) -> np.ndarray:
    """An event's times: the step reached, +inf when censored by the horizon, NaN when unknown."""
    return np.array(
        [
            float(r[name])
            if r.get(name) is not None
            else np.inf
            if r.get(name + CENSORED) is not None
            else np.nan
            for r in rows
        ]
    )


def bounds(row: dict, events: list[str]) -> set:
    """The bounds of the events censored in `row`."""
    return {row[e + CENSORED] for e in events if row.get(e + CENSORED) is not None}


def horizon_columns(rows: list[dict], events: list[str]) -> dict:
    """{last event of a group: {horizon column: per row the bound of the group's censored events}}.
    A group is one level's censored events whose bounds agree in every row (its events in
    recorded steps; the same events in another unit form a second group). Its column is
    "<level>_horizon"; a level's further group's is "<level>_<the common start of its events'
    names>_horizon" (reduced_t1_attention, reduced_t3: reduced_t_horizon)."""
    groups: list[list[str]] = []
    for e in events:
        if all(r.get(e + CENSORED) is None for r in rows):
            continue  # never censored: bounded by nothing
        same = (g for g in groups if prefix(g[0]) == prefix(e))
        fit = next((g for g in same if all(len(bounds(r, [*g, e])) <= 1 for r in rows)), None)
        if fit is None:
            groups.append([e])
        else:
            fit.append(e)
    out: dict = {}
    used: set = set()
    for g in groups:
        p = prefix(g[0])
        stem = os.path.commonprefix([e[len(p) :] for e in g]).rstrip("_") or g[0][len(p) :]
        name = next(
            n for n in (p + "horizon", f"{p}{stem}_horizon", g[0] + "_horizon") if n not in used
        )
        used.add(name)
        out[g[-1]] = {name: typed([min(bounds(r, g), default=None) for r in rows])}
    return out


def typed(values: list):
    """A column of Python values with the type they share: bool, int, float (None: NA / NaN),
    else as pandas infers (text)."""
    known = [v for v in values if v is not None]
    missing = len(known) < len(values)
    if all(isinstance(v, (bool, np.bool_)) for v in known):
        return pd.array(values, "boolean") if missing else np.array(values, bool)
    if all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in known):
        return pd.array(values, "Int64") if missing else np.array(values, np.int64)
    if all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in known):
        return np.array([np.nan if v is None else float(v) for v in values])
    return pd.Series(values, dtype=object if any(not isinstance(v, str) for v in known) else None)


def read_table(folder: str) -> SweepResult:
    """The sweep a folder holds (its table.csv, as `sweep` wrote it) as a `SweepResult`, each
    column's cells read back as the values they were written from: empty None, True / False,
    integers, floats (written in full precision), else text; every row must hold ROW."""
    path = os.path.join(folder, "table.csv")
    raw = inputs.read_bytes(path, MAX_TABLE_BYTES, "table", inside=folder)
    try:
        reader = csv.reader(io.StringIO(raw.decode("utf-8"), newline=""))
        columns = next(reader, None)
        cells = list(reader)
    except (UnicodeDecodeError, csv.Error) as exc:  # a cell past csv's field limit (128 KiB)
        raise ValueError(f"{path} is not a sweep's table: {exc}") from None
    if not columns or any(len(r) != len(columns) for r in cells):
        raise ValueError(f"{path} is not a sweep's table: no header or rows of another length")
    parsed = {c: parse([r[i] for r in cells], c in TEXT_COLUMNS) for i, c in enumerate(columns)}
    # checked column by column: a field is "column[row]", the rows counted from 0 after the header
    by_column = {f"{c}[]": k for c, k in summary_schema(columns, ROW).items()}
    schemas.check(parsed, by_column, "table", path)
    rows = [{c: parsed[c][i] for c in columns} for i in range(len(cells))]
    keys = [r.get("key") for r in rows]
    return SweepResult(rows, columns, [], keys, folder, {"table": path})


def parse(cells: list[str], text: bool) -> list:
    """One column's cells as values: the first reading every non-empty cell takes (bool, int,
    float), else the text."""
    readers = [] if text else [boolean, int, float]
    for read in readers:
        try:
            return [None if c == "" else read(c) for c in cells]
        except ValueError:
            continue
    return [None if c == "" else c for c in cells]


def boolean(cell: str) -> bool:
    if cell not in ("True", "False"):
        raise ValueError(cell)
    return cell == "True"
