"""The work of `dynsim sweep NAME` (`dynsim.cli.sweep` declares its options): what the grid would
need, the run through `dynsim.sweeps.sweep` and the compact table it prints."""

from __future__ import annotations

import dataclasses
import itertools
import logging
import sys

from dynsim import interrupt, resources, sweeps
from dynsim.setting import Setting
from dynsim.sweeps import choices, plots

from . import options, output
from .sweep import chosen_options, run_options


def estimate(args) -> list:
    """The sweep's needs: each point's at its levels (the setting's resources hook), the
    largest held --batch-size times at once on each of --workers processes, every point's work once
    per seed."""
    setting: Setting = args.setting_record
    base_seed = max(getattr(args, "seed", [0]))
    if base_seed + max(args.seeds, 1) - 1 > resources.INT_MAX:
        raise ValueError(
            f"--seed = {base_seed} with --seeds = {args.seeds} is invalid: the last seed, seed + "
            f"seeds - 1,"
            f" must be at most 2^63 - 1 = {resources.INT_MAX} (what jax.random.key takes)"
        )
    if setting.resources is None:
        return []
    values = options.values(args)
    lists = {k: (v if isinstance(v, list) else [v]) for k, v in values.items()}
    opts = run_options(args, setting)
    levels = ("reduced", "full") if args.level == "both" else (args.level,)
    points = list(
        itertools.islice(itertools.product(*lists.values()), 100_000)
    )  # the formulas are cheap
    per_point = [
        [n for lv in levels for n in setting.resources(dict(zip(lists, p)), lv, opts)]
        for p in points
    ]
    largest = max(per_point, key=lambda ns: sum(n.bytes for n in ns))
    batched = (
        len(points) if setting.sweep.traced else 1
    )  # points of one group share a vmapped batch
    held = min(max(args.batch_size, 1), batched) * max(args.workers or 1, 1)
    work = max(args.seeds, 1)
    at_once = (
        {"--batch-size": args.batch_size, **({"--workers": args.workers} if args.workers else {})}
        if held > 1
        else {}
    )
    out = [
        n.scaled(
            memory=held, work=0, what=f" (x {held} points at once)" if held > 1 else "", by=at_once
        )
        for n in largest
    ]
    out += [
        n.scaled(memory=0, work=work, by={"--seeds": args.seeds} if work > 1 else {})
        for ns in per_point
        for n in ns
    ]
    return out


def run(args) -> int:
    """Run the sweep of the command line; print the compact table."""
    setting: Setting = args.setting_record
    spec = setting.sweep
    cls = args.config_class
    given = {
        f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)
    }
    axes = {k: v for k, v in given.items() if len(v) > 1 and k != "seed"}
    base = {k: v[0] for k, v in given.items() if len(v) == 1}
    if "seed" in given and len(given["seed"]) > 1:
        raise ValueError(
            f"--seed = {given['seed']} is invalid: give one base seed and --seeds N for N seeds"
        )
    chosen = chosen_options(args)
    if args.workers or args.scheduler:
        _dask_warnings_only()
    try:
        result = sweeps.sweep(
            setting.name,
            axes,
            base=base,
            seeds=args.seeds,
            level=args.level,
            options=chosen,
            out=args.out,
            force=args.force,
            chunk_size=args.chunk_size,
            batch_size=args.batch_size,
            scheduler=args.scheduler,
            insecure_scheduler=args.insecure_scheduler,
            workers=args.workers,
            security=args.security,
            dashboard=args.dashboard,
            heatmaps=args.heatmap,
            heatmap_axes=args.heatmap_axes,
            heatmap_unit=args.heatmap_unit,
            invocation=output.invocation(args),
            log=lambda line: (
                resources.say_pending(),  # the inputs are checked: the estimate, if long, first
                print(f"dynsim sweep {setting.name}: {line}; store {args.out}", file=sys.stderr),
            ),
        )
    except KeyboardInterrupt:
        print(
            f"dynsim: interrupted; every finished chunk is stored in {args.out}/points: run the "
            f"same command again "
            "to resume",
            file=sys.stderr,
        )
        return interrupt.exit_code()
    unit = choices.unit_of(args.heatmap_unit, chosen)
    ran = plots.levels_text(args.level, chosen.get("method", "gd"))
    print(summary_text(result, list(axes), spec, args.heatmap or (), unit, ran))
    disagree = [r for r in result.rows if r.get("verdict") == "DISAGREE"]
    return options.EXIT_DISAGREE if disagree else options.EXIT_AGREE


def flags(row: dict, columns: list[str]) -> str:
    """The row's stability flags per level: "nan@50" (not finite from step 50), "unstable", or
    "non-monotone" (an unstable loss is non-monotone too: said once); with several levels each says
    its own ("full:unstable")."""
    prefixes = [c[: -len("unstable")] for c in columns if c.endswith("unstable")] or [""]
    out = []
    for p in prefixes:
        label = p.rstrip("_") + ":" if len(prefixes) > 1 else ""
        if row.get(p + "nonfinite_from_step") is not None:
            out.append(f"{label}nan@{row[p + 'nonfinite_from_step']}")
        if row.get(p + "unstable"):
            out.append(label + "unstable")
        elif row.get(p + "non_monotone"):
            out.append(label + "non-monotone")
    return ",".join(out) or "-"


def cell(row: dict, name: str) -> str:
    """A printed value: ">= N" for an event censored by the horizon (its *_censored column holds
    N)."""
    value = row.get(name)
    if value is None and row.get(name + "_censored") is not None:
        return f">= {row[name + '_censored']}"
    return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)


def summary_text(
    result, axes: list[str], spec, heatmaps=(), unit: str = "steps", ran: str = ""
) -> str:
    """A compact table of the sweep (the full one is table.csv): the axes, the seed, the summaries
    whose names end in one of spec.table.columns or in a --heatmap name (what a heatmap draws is
    printed too; event times in `unit`, `choices.in_unit`), spec.table.extra_columns, the stability
    flags, the verdict and the largest error; then how many points diverged, are unstable or
    non-monotone, each event censored in some point and in how many (`censored`), what `ran` (the
    levels and their methods, `plots.levels_text`) with the unit, and what was computed."""
    named = [choices.in_unit(spec, n, unit) for n in (*spec.table.columns, *heatmaps)]
    endings = tuple(dict.fromkeys(named))
    level_cols = [c for c in result.columns if c.endswith(endings)]
    cols = (
        axes
        + ["seed"]
        + level_cols
        + [c for c in (*spec.table.extra_columns, "verdict", "max_error") if c in result.columns]
    )
    cols = list(dict.fromkeys(cols))  # a --heatmap of a column shown anyway: once
    table = [[cell(r, c) for c in cols] + [flags(r, result.columns)] for r in result.rows]
    cols = cols + ["flags"]
    widths = [max(len(c), *(len(row[i]) for row in table)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.rjust(w) for c, w in zip(cols, widths))]
    lines += ["  ".join(v.rjust(w) for v, w in zip(row, widths)) for row in table]

    def count(suffix):
        return sum(
            any(r.get(c) not in (None, False) for c in result.columns if c.endswith(suffix))
            for r in result.rows
        )

    notes = [
        (
            count("nonfinite_from_step"),
            "diverged (a *_nonfinite_from_step column in table.csv says from which "
            "step): lower eta there",
        ),
        (
            count("unstable"),
            "unstable: the loss oscillates (>= 3 sign changes of its increments beyond "
            "rounding), so their numbers depend on rounding, e.g. on --batch-size: lower eta",
        ),
        (
            count("non_monotone"),
            "with a non-monotone loss (a rise beyond rounding: eta past the local 2/L)",
        ),
    ]
    lines += [f"{n} points {text}" for n, text in notes if n] + censored(result, spec, unit)
    if ran:
        timed = "time t = eta * steps" if unit == "time" else "recorded steps"
        lines.append(f"{ran}; event times in {timed}")
    distinct = len({r["key"] for r in result.rows})
    runs = (
        f" ({distinct} distinct runs: the seed does not change the others)"
        if distinct < len(result.rows)
        else ""
    )
    lines.append(
        f"{len(result.rows)} points{runs}: {len(result.computed)} computed now, "
        f"{len(result.reused)} reused "
        f"from the store; wrote " + ", ".join(sorted(result.files.values()))
    )
    return "\n".join(lines)


def censored(result, spec, unit: str) -> list[str]:
    """The line naming each event censored by the horizon in some point (in `unit`: an event's time
    twin or its steps, `choices.in_unit`) and in how many points; none when no event is."""
    events = [c[: -len("_censored")] for c in result.columns if c.endswith("_censored")]
    twins = {t for e in events if (t := choices.in_unit(spec, e, "time")) != e}
    named = dict.fromkeys(choices.in_unit(spec, e, unit) for e in events if e not in twins)
    counts = {e: sum(r.get(e + "_censored") is not None for r in result.rows) for e in named}
    found = [f"{e} in {n} point{'s' if n > 1 else ''}" for e, n in counts.items() if n]
    if not found:
        return []
    return [
        "censored by the horizon ('>= N': not established by step or time N): "
        + ", ".join(found)
        + "; raise --steps (the flow: --t-max)"
    ]


def _dask_warnings_only() -> None:
    """Dask's own messages on this command's stderr: warnings and errors, not its INFO chatter,
    which a cluster silences only while it is open (a broken link to a worker killed at Ctrl-C was
    logged with its traceback after the close, seen once in CI). Imported first: importing
    distributed sets its loggers' levels."""
    import distributed  # noqa: F401

    logging.getLogger("distributed").setLevel(logging.WARNING)
