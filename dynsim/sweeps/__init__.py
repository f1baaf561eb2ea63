"""Sweeps: many points of one setting, grouped into compiled programs, stored, resumable, in-process
or on Dask.

`sweep("jsl", {"D": [16, 36], "q": [0.2, 0.3]}, seeds=4, out="sweep-out")` runs every point of the
grid (times the seeds), keeps each finished point in a results store keyed by a versioned hash of
its config (`dynsim.store`), skips the points already there, and writes the table (table.csv), the
manifest (sweep.json) and phase diagrams (heatmaps of any summary over two swept axes).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import html
import itertools
import math
import os
import time
from typing import Any, Callable, Mapping, Optional, Sequence

from dynsim import progress as bars  # `progress` is sweep's keyword
from dynsim import setting as registry
from dynsim.store import Store, point_key, row as stored_row
from dynsim.validation import Short, check_bools, check_int, did_you_mean, text_count

from . import arguments, choices, executors, locks, outputs, plots
from .outputs import table_csv  # noqa: F401  (dynsim.sweeps.table_csv)

LEVELS = arguments.LEVELS
# a store keeps one file per point and the grid's configs are built at once: past this, split it
MAX_POINTS = 100_000
CHUNK_SIZE = 16  # points per unit of work: the most a Ctrl-C or a lost worker can cost
BATCH_SIZE = 8  # points per vmapped batch inside a chunk (lax.map batch_size): bounds memory
WAIT_SECONDS = 1.0  # how often a sweep looks again at the points another process computes


def spec_of(setting: str):
    """The setting's SweepSpec; a ValueError when the setting is unknown or declares no sweep."""
    found = registry.get(setting)
    if found.sweep is None:
        _fail("setting", setting, "declares no sweep (its Setting.sweep is None)")
    return found.sweep


@dataclasses.dataclass
class SweepResult:
    """The outcome of `sweep`: one row per point in grid order, and what this call computed or
    reused."""

    rows: list[dict]
    columns: list[str]
    computed: list[str]  # keys computed by this call
    reused: list[str]  # keys found finished in the store
    out: Optional[str]
    files: dict[str, str]

    def column(self, name: str) -> list:
        return [r.get(name) for r in self.rows]

    def __repr__(self) -> str:
        return (
            f"SweepResult({len(self.rows)} rows x {len(self.columns)} columns, "
            f"{len(self.computed)} computed, {len(self.reused)} reused, out={self.out!r})"
        )

    def to_pandas(self):
        """One row per point as a pandas.DataFrame: only the columns some row fills, each event one
        float column (+inf: not reached by the horizon, which <level>_horizon gives)
        (`dynsim.sweeps.frames.to_pandas`; docs/data.md §3)."""
        return registry.load("dynsim.sweeps.frames:to_pandas")(self)

    def _repr_html_(self, limit: int = 20) -> str:
        """The first `limit` rows as an HTML table (Jupyter), without the store keys and without
        the columns no row fills."""
        cols = [
            c for c in self.columns if c != "key" and any(r.get(c) is not None for r in self.rows)
        ]

        def cell(v) -> str:
            return html.escape(f"{v:.4g}" if isinstance(v, float) else str(v))

        head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{cell(r.get(c))}</td>" for c in cols) + "</tr>"
            for r in self.rows[:limit]
        )
        more = len(self.rows) - limit
        tail = f"<br>... {more} more rows (table.csv has all)" if more > 0 else ""
        return f"<b>{html.escape(repr(self))}</b><table><tr>{head}</tr>{body}</table>{tail}"


def _fail(name: str, value: Any, allowed: str) -> None:
    # a bounded repr (an axis of a million values prints its first few)
    raise ValueError(f"{name} = {Short().repr(value)} is invalid: {allowed}")


def points(
    setting: str, axes: Mapping[str, Sequence], base: Optional[Mapping] = None, seeds: int = 1
) -> list:
    """The configs of the grid, in order: the product of the axes (first axis slowest), seeds
    innermost (seed = base seed + 0, 1, ..., seeds - 1). Every config is validated here, before any
    work."""
    config = registry.get(setting).config
    fields = {f.name for f in dataclasses.fields(config)}
    arguments.check_axes(axes)
    base = dict(base or {})
    for name in list(base) + list(axes):
        if name not in fields:
            _fail(
                "axis" if name in axes else "base",
                name,
                f"must be a field of {config.__name__}: {', '.join(sorted(fields))}"
                + did_you_mean(fields, name),
            )
    if "seed" in axes:
        _fail("axis", "seed", "seeds are given by seeds=N (seed = base seed + 0..N-1)")
    for name in set(base) & set(axes):
        _fail("base", name, "is also a swept axis: give it in one of base and axes")
    for name, values in axes.items():
        if len(values) == 0:
            _fail(f"axes[{name!r}]", values, "must be a non-empty list of values")
    check_int("seeds", seeds, 1)
    total = math.prod(len(v) for v in axes.values()) * seeds
    if total > MAX_POINTS:  # counted before any config is built: range(10**9) is never listed
        _fail(
            "axes",
            {n: f"{len(v):,} values" for n, v in axes.items()},
            f"{text_count(total)} points (x {text_count(seeds)} seeds) is more than the "
            f"{MAX_POINTS:,} a sweep takes: sweep fewer values, or split the grid over several "
            "sweeps, each into its own out",
        )
    seed0 = base.pop("seed", config().seed)
    names = list(axes)
    out = []
    for values in itertools.product(*(axes[n] for n in names)):
        for s in range(seeds):
            out.append(config(**base, **dict(zip(names, values)), seed=seed0 + s))
    return out


def seeded(spec, cfg, options: dict, level: str) -> bool:
    """Whether the seed changes the point's numbers at `level` (the setting's SweepSpec.seeded;
    default: yes)."""
    return True if spec.seeded is None else bool(spec.seeded(cfg, options, level))


def _description(setting: str, level: str, cfg, options: dict) -> dict:
    """What a point's key hashes: without the seed where the seed does not change the point (one
    run, every seed)."""
    spec = spec_of(setting)
    wanted = (spec.reduced_options if level != "full" else ()) + (
        spec.full_options if level != "reduced" else ()
    )
    config = cfg.to_dict()
    if not seeded(spec, cfg, options, level):
        config.pop("seed")
    return {
        "setting": setting,
        "level": level,
        "config": config,
        "options": {**{k: options.get(k) for k in wanted}, **choices.flow_key(options)},
    }


def _check_options(setting: str, level: str, options: Mapping) -> dict:
    spec = spec_of(setting)
    if level not in LEVELS:
        _fail("level", level, f"must be one of {', '.join(LEVELS)}")
    options, flow = choices.flow_options(setting, level, options)
    known = set(spec.reduced_options) | set(spec.full_options)
    unknown = set(options) - known
    if unknown:
        _fail("options", sorted(unknown), f"{setting} sweeps take {', '.join(sorted(known))}")
    return {**spec.defaults, **options, **flow}


def sweep(
    setting: str,
    axes: Mapping[str, Sequence],
    *,
    base: Optional[Mapping] = None,
    seeds: int = 1,
    level: str = "reduced",
    options: Optional[Mapping] = None,
    out: Optional[str] = None,
    force: bool = False,
    chunk_size: int = CHUNK_SIZE,
    batch_size: int = BATCH_SIZE,
    scheduler: Optional[str] = None,
    workers: Optional[int] = None,
    security: Any = None,
    dashboard: bool = False,
    heatmaps: Optional[Sequence[str]] = None,
    heatmap_axes: Optional[Sequence[str]] = None,
    heatmap_unit: Optional[str] = None,
    progress: Optional[bool] = None,
    insecure_scheduler: bool = False,
    log: Optional[Callable[[str], None]] = None,
    invocation: Optional[Mapping] = None,
) -> SweepResult:
    """Run every point of `axes` (x seeds) at `level` ("reduced", "full" or "both": both levels and
    the checker).

    base: config fields shared by every point; options: the run options the setting's SweepSpec
    declares (reduced_options and full_options, e.g. mode, replicates, confidence) and, where the
    setting's reduced Level declares a flow, method ("gd" or "flow": the gradient flow, point by
    point, saved as `dynsim compare --method flow` saves it) and t_max (the flow's end time, default
    eta * steps; at level "reduced" an axis the flow does not read, eta, steps or record_every, is
    refused). heatmaps: summaries drawn over two swept axes (`heatmap_axes`; asked for without
    two, refused), event times in `heatmap_unit` ("steps", or "time" = eta * steps; default time
    for the flow). With `out`, finished points are stored there and reused on the next call
    (force=True recomputes them), and table.csv, sweep.json and heatmap PNGs are written. Work is
    cut into chunks of at most `chunk_size` points of one compiled group, each run as vmapped
    batches of `batch_size`; a chunk is written as soon as it finishes, so an interruption loses at
    most the chunks in flight.
    scheduler="tls://host:port" runs the chunks on an existing Dask cluster (security: a TOML file
    of its TLS credentials, `executors.load_security`, or a distributed Security), workers=N on a
    private local one (dashboard=True: with a dashboard); a scheduler without credentials (tcp://)
    is refused unless insecure_scheduler=True (its workers' results are unpickled here: that trusts
    them to run code in this process). progress: None (a bar on a terminal or in a notebook, one
    plain line at most every `dynsim.progress.INTERVAL` seconds elsewhere), True or False. Several
    processes may share one `out`: each locks the points it computes (`locks`), and after its own
    waits for those another live process holds, so each returns the whole table. log: called with
    one line once the inputs are validated (what will run). invocation: what ran it (the CLI's
    command line and options), recorded in sweep.json.
    """
    arguments.check_types(
        setting,
        level,
        axes,
        out,
        log,
        {"base": base, "options": options, "invocation": invocation},
        {"heatmaps": heatmaps, "heatmap_axes": heatmap_axes},
    )
    spec = spec_of(setting)
    options = _check_options(setting, level, dict(options or {}))
    check_int("chunk_size", chunk_size, 1)
    check_int("batch_size", batch_size, 1)
    check_bools(
        ("progress",),
        force=force,
        dashboard=dashboard,
        insecure_scheduler=insecure_scheduler,
        progress=progress,
    )
    executors.validate_executor(scheduler, workers, security, dashboard, insecure_scheduler)
    unit = choices.unit_of(heatmap_unit, options)
    asked = [choices.in_unit(spec, n, unit) for n in heatmaps or ()]
    choices.check_grid(setting, spec, level, options, axes, asked, heatmap_axes)  # before any work
    cfgs = points(setting, axes, base, seeds)
    for cfg in cfgs:
        spec.check(cfg, options, level)
    keys = [point_key(_description(setting, level, c, options)) for c in cfgs]
    if out is not None:
        out = os.fspath(out)
        arguments.check_out(out, setting, level, keys)  # before anything is created
    store = Store(out) if out is not None else None
    if store is not None:
        locks.remove_leftovers(out)
    results: dict[str, dict] = {}
    reused: list[str] = []
    if store is not None and not force:
        for k in dict.fromkeys(keys):
            got = store.load(k, check=stored_row)
            if got is not None:
                results[k] = got["summary"]
                reused.append(k)
    todo: dict[str, Any] = {}
    for k, c in zip(keys, cfgs):  # a key shared by seeds runs once, with its first seed's config
        if k not in results:
            todo.setdefault(k, c)
    run = functools.partial(
        _compute,
        spec,
        setting,
        level,
        options,
        chunk_size,
        batch_size,
        functools.partial(
            executors.run,
            scheduler=scheduler,
            workers=workers,
            security=security,
            dashboard=dashboard,
            log=log,
        ),
    )
    if log is not None:  # after validation: an invalid input prints only its error
        distinct = len(set(keys))
        shared = (
            f" ({distinct} distinct runs: the seed does not change {len(cfgs) - distinct} of "
            f"them at level {level}, each run once and reported for every seed)"
            if distinct < len(cfgs)
            else ""
        )
        log(
            f"{len(cfgs)} points "
            f"({' x '.join(f'{k}[{len(v)}]' for k, v in axes.items()) or '1'} x "
            f"seeds[{seeds}]) at level {level}{shared}: {len(todo)} to compute, {len(reused)} "
            f"already in the store"
        )
    computed: list[str] = []
    started = time.time()
    with (
        bars.bar(len(todo), f"sweep {setting} ({level})", enabled=progress, unit="runs"),
        locks.Locks(out) if store is not None else contextlib.nullcontext() as held,
    ):
        pending, recheck, said = todo, not force, False
        # claim chunk by chunk what is free, compute it; then look again at what others held
        while pending:
            waiting: dict[str, Any] = {}
            before = len(computed) + len(reused)
            take = functools.partial(
                _take, held, store if recheck else None, results, reused, waiting
            )
            for key, summary, trajectories in run(pending, take):
                if store is not None:
                    store.save(key, summary, trajectories)
                    held.release(key)
                results[key] = summary
                computed.append(key)
            # nothing was free: the others are computing
            if waiting and len(computed) + len(reused) == before:
                if log is not None and not said:
                    log(
                        f"{len(waiting)} points are claimed by another live process (see "
                        f"{out}/locks): waiting for "
                        "them"
                    )
                    said = True
                bars.pulse()
                time.sleep(WAIT_SECONDS)
            pending, recheck = waiting, True
    rows, columns = _table(
        setting, cfgs, keys, results, list(axes), [seeded(spec, c, options, level) for c in cfgs]
    )
    unknown = [n for n in asked if n not in columns and level_prefix(level) + n not in columns]
    # an error, not a warning; the points are stored, so the corrected command reuses them
    if unknown:
        given = {"setting", "key", *(f.name for f in dataclasses.fields(cfgs[0]))}
        raise ValueError(
            f"heatmap = {','.join(unknown)} is invalid: must be summaries of this sweep: "
            f"{', '.join(c for c in columns if c not in given)} "
            "(every point is stored: the corrected command recomputes nothing)"
            + did_you_mean(columns, *unknown)
        )
    files = {}
    if out is not None:
        # a sweep that wrote its outputs here meanwhile is checked again: never replaced unseen;
        # the heatmaps the folder holds are drawn again over this table, so none is lost
        old = arguments.check_out(out, setting, level, keys)
        default = [choices.in_unit(spec, n, unit) for n in choices.defaults(spec, level)]
        ran = outputs.Ran(setting, level, axes, base, seeds, options, invocation)
        work = outputs.Work(keys, len(computed), len(reused), time.time() - started)
        drawn = outputs.Drawn(
            plots.with_kept(asked or default, old, columns, level_prefix(level)),
            heatmap_axes,
            unit,
            level_prefix(level),
        )
        files = outputs.write(out, ran, rows, columns, work, drawn)
    return SweepResult(rows, columns, computed, reused, out, files)


def _take(held, store, results: dict, reused: list, waiting: dict, key: str, cfg) -> bool:
    """Whether this process computes `key` now: it claimed it (in `held`) and `store` lacks it. A
    point another live process holds goes to `waiting`; one claimed and found in `store` (stored by
    another process since we looked) to `results` and `reused`. Without a store (held None) every
    point is this process's."""
    if held is not None and not held.claim(key):
        waiting[key] = cfg
        return False
    got = store.load(key, check=stored_row) if store is not None else None
    if got is None:
        return True
    results[key] = got["summary"]
    reused.append(key)
    held.release(key)
    bars.advance(1)
    return False


def _compute(spec, setting, level, options, chunk_size, batch_size, run, todo: dict, take):
    """Each computed point (key, summary, trajectories) of `todo` (key -> config): grouped into
    compiled programs, cut into chunks, run by `run` (the executor), which asks for each chunk when
    it can start it; a chunk holds the points of its cut that `take` grants then (claimed chunk by
    chunk: concurrent sweeps split the work)."""
    groups: dict[Any, list] = {}
    for k, c in todo.items():
        groups.setdefault(spec.group(c, options, level), []).append((k, c))
    tasks = (
        (setting, level, options, [(k, c.to_dict()) for k, c in chunk if take(k, c)], batch_size)
        for members in groups.values()
        for chunk in _chunks(members, chunk_size)
    )
    # closing: a Dask cluster stops
    with contextlib.closing(run(task for task in tasks if task[3])) as finished:
        for batch in finished:
            yield from batch
            bars.advance(len(batch))  # per chunk


def level_prefix(level: str) -> str:
    """The prefix of the summaries the default heatmaps draw: the reduced level's unless only full
    ran."""
    return "full_" if level == "full" else "reduced_"


def _chunks(members: list, size: int):
    for i in range(0, len(members), size):
        yield members[i : i + size]


def _table(setting, cfgs, keys, results, axes, seed_used) -> tuple[list[dict], list[str]]:
    """One row per point: the setting, the swept axes, the point's other config fields, its seed,
    whether the seed entered its run, its summary, its dtype and its store key."""
    rows = []
    for cfg, key, used in zip(cfgs, keys, seed_used):
        config = {f.name: getattr(cfg, f.name) for f in dataclasses.fields(cfg)}
        row = {"setting": setting, **{name: config[name] for name in axes}}
        row.update({k: v for k, v in config.items() if k not in ("seed", "dtype")})
        row["seed"] = cfg.seed
        # False: the seed does not enter this point's run; every seed's row is the same run
        row["seeded"] = used
        row.update(results[key])
        row["dtype"] = cfg.dtype
        row["key"] = key
        rows.append(row)
    columns = list(dict.fromkeys(name for r in rows for name in r))
    return rows, columns
