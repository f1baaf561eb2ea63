"""`dynsim export FOLDER [--to DIR] [--csv] [--parquet] [--force]`: a dynsim output folder as tidy
tables (docs/cli.md §8, docs/data.md), written next to its files (or into --to):

- trajectories.npz (compare) -> tidy-trajectories: `Trajectories.to_dataframe`, one row per (run,
  observable, step, coordinate tuple);
- report.json (compare) -> tidy-report: one row per compared observable and per residual;
- table.csv with sweep.json (sweep) -> tidy-sweep: `dynsim.sweeps.frames.to_pandas`;
- theorems.json (check-theorems) -> tidy-theorems: one row per claim and measurement, their nested
  details left in the JSON.

Refused with one line (exit 2) before anything is written: a missing folder, a folder holding none
of these, an unreadable one of them, a target that cannot be written, an existing export file
(unless --force), --parquet without pyarrow. The verb's options are declared in `dynsim.cli`."""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import zipfile

from dynsim import inputs, schemas, tempfiles
from dynsim.setting import load
from dynsim.trajectory import MAX_FILE_BYTES, Trajectory

from .options import EXIT_AGREE, UsageError
from .outdir import validate_out_dir
from .output import MAX_RECORD_BYTES, REPORT, THEOREMS, log, wrote

PREFIX = "tidy-"
EXTENSIONS = {"csv": ".csv", "parquet": ".parquet"}
EXPECTED = (
    "trajectories.npz or report.json (compare), table.csv with sweep.json (sweep), "
    "theorems.json (check-theorems)"
)


def sources(folder: str) -> dict:
    """What `folder` holds that export reads: {export name: reader of its table}. A name there that
    is not a regular file (a FIFO, a link, a folder) is read as one, and refused in one line."""
    found = {}
    names = ("trajectories.npz", "report.json", "theorems.json", "table.csv", "sweep.json")
    has = {n for n in names if os.path.lexists(os.path.join(folder, n))}
    if "trajectories.npz" in has:
        found["trajectories"] = trajectories
    if "report.json" in has:
        found["report"] = report
    if {"table.csv", "sweep.json"} <= has:
        found["sweep"] = sweep
    if "theorems.json" in has:
        found["theorems"] = theorems
    return found


def needed(names) -> None:
    """Refuse when pandas (or, for trajectories, xarray) is missing: one line naming the extra."""
    wanted = ["pandas"] + (["xarray"] if "trajectories" in names else [])
    missing = [m for m in wanted if importlib.util.find_spec(m) is None]
    if missing:
        raise UsageError(
            f"export needs {' and '.join(missing)}, an optional dependency of dynsim: pip install "
            "'dynsim[xarray]'"
        )


def trajectories(folder: str):
    """trajectories.npz (a regular file inside `folder`, `Trajectory.load`) as one tidy table."""
    path = os.path.join(folder, "trajectories.npz")
    try:
        runs = Trajectory.load(inputs.regular_file(path, MAX_FILE_BYTES, "file", inside=folder))
    except inputs.InputError as exc:  # names the file and what is wrong with it
        raise UsageError(str(exc)) from None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
        raise UsageError(f"{path!r} is invalid: not dynsim trajectories ({exc})") from None
    if not isinstance(runs, Trajectory):
        return runs.to_dataframe()
    df = runs.to_dataframe()  # one run (Trajectory.save): named by its level
    df.insert(0, "run", runs.level)
    return df


def read_json(path: str, wanted: str, schema: dict) -> dict:
    """The JSON object at `path` (a regular file inside its folder, at most MAX_RECORD_BYTES), which
    must hold the key `wanted` and `schema` (`dynsim.schemas`)."""
    try:
        data = inputs.read_json(path, MAX_RECORD_BYTES, "file", inside=os.path.dirname(path))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if not isinstance(data, dict) or not isinstance(data.get(wanted), (dict, list)):
        raise UsageError(f'{path!r} is invalid: not a dynsim output (no "{wanted}" in it)')
    return schemas.check(data, schema, "file", path)


def scalar(value) -> bool:
    return value is None or isinstance(value, (str, int, float, bool))


def report(folder: str):
    """report.json's table: one row per compared observable (section "compared": max_abs,
    max_rel, tolerance, worst_step, passed, reason, ...) and per residual (section "residual")."""
    data = read_json(os.path.join(folder, "report.json"), "errors", REPORT)
    rows = [
        {"section": section, "observable": name, **{k: v for k, v in entry.items() if scalar(v)}}
        for section, key in (("compared", "errors"), ("residual", "residuals"))
        if isinstance(data.get(key), dict)
        for name, entry in data[key].items()
        if isinstance(entry, dict)
    ]
    return load("dynsim.sweeps.frames").from_rows(rows)


def theorems(folder: str):
    """theorems.json as one row per claim and measurement: kind, name, then its flat fields
    (verdict, measured, relation, threshold, ..., a measurement's value, as JSON when nested)."""
    data = read_json(os.path.join(folder, "theorems.json"), "claims", THEOREMS)
    rows = []
    for item in [*data.get("claims", []), *data.get("measurements", [])]:
        if not isinstance(item, dict):
            continue
        row = {"kind": item.get("kind"), "name": item.get("claim", item.get("name"))}
        for k, v in item.items():
            if k not in ("kind", "claim", "name") and (scalar(v) or k == "value"):
                row[k] = v if scalar(v) else json.dumps(v)
        rows.append(row)
    return load("dynsim.sweeps.frames").from_rows(rows)


def sweep(folder: str):
    frames = load("dynsim.sweeps.frames")
    try:
        return frames.to_pandas(frames.read_table(folder))
    except inputs.InputError as exc:  # names the file and what is wrong with it
        raise UsageError(str(exc)) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{os.path.join(folder, 'table.csv')!r} is invalid: {exc}") from None


def write(df, path: str, kind: str) -> None:
    """`df` as CSV or Parquet at `path`, atomically."""
    if kind == "csv":
        text = df.to_csv(index=False).encode()
        tempfiles.atomic_write(path, ".csv.tmp", lambda fh: fh.write(text))
    else:
        tempfiles.atomic_write(path, ".parquet.tmp", lambda fh: df.to_parquet(fh, index=False))


def run(args: argparse.Namespace) -> int:
    """Check everything, then read and write every table (the module's docstring)."""
    folder = args.folder
    if not os.path.isdir(folder):
        why = "it is a file" if os.path.lexists(folder) else "no such folder"
        raise UsageError(f"FOLDER = {folder!r} is invalid: {why}; give a dynsim output folder")
    found = sources(folder)
    if not found:
        raise UsageError(
            f"FOLDER = {folder!r} is invalid: it holds none of the outputs export reads "
            f"(expected {EXPECTED})"
        )
    kinds = [k for k in EXTENSIONS if getattr(args, k)] or ["csv"]
    if "parquet" in kinds and importlib.util.find_spec("pyarrow") is None:
        raise UsageError(
            "--parquet needs pyarrow, which is not installed: pip install pyarrow (or give --csv)"
        )
    needed(found)
    if args.to is not None and not args.to.strip():
        raise UsageError(f"--to = {args.to!r} is invalid: an empty path; give a folder")
    target = folder if args.to is None else os.path.expanduser(args.to)
    option = "--to" if args.to is not None else "FOLDER"
    validate_out_dir(argparse.Namespace(out=target, command="export"), option)
    names = [PREFIX + n + EXTENSIONS[k] for n in found for k in kinds]
    there = [n for n in names if os.path.lexists(os.path.join(target, n))]
    if there and not args.force:
        raise UsageError(
            f"{os.path.join(target, there[0])!r} exists: give --force to overwrite it "
            f"({len(there)} of the {len(names)} export files exist; nothing was written)"
        )
    tables = {name: read(folder) for name, read in found.items()}  # all read before any write
    os.makedirs(target, exist_ok=True)
    for name, df in tables.items():
        for k in kinds:
            write(df, os.path.join(target, PREFIX + name + EXTENSIONS[k]), k)
        log(f"{name}: {len(df)} rows x {len(df.columns)} columns")
    print(wrote(target, names))
    return EXIT_AGREE
