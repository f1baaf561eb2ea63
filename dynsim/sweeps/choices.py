"""What a sweep's own choices resolve to before any point runs: the reduced level's method (GD, or
the gradient flow where the setting's reduced `dynsim.verbs.Level` declares `flow`), the heatmaps'
columns in the unit picked (recorded steps, or time t = eta * steps), and what the grid asks for
that cannot be done (`check_grid`: refused in one line naming the option, the value and why)."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from dynsim import verbs
from dynsim import setting as registry
from dynsim.validation import check_positive, did_you_mean, shown

from . import common, plots

FLOW_OPTIONS = ("method", "t_max")  # the core's, offered where the reduced level declares flow
METHODS = ("gd", "flow")
UNITS = ("steps", "time")
PREFIXES = ("reduced_", "full_")
UNIT_NOTES = {
    "steps": "an event column (T...): the first recorded step meeting its criterion (a flow: "
    "round(t / eta), the GD step nearest in time); its *_censored: the last recorded step",
    "time": "its twin (t...): t = eta * steps (a flow: the exact save time); its *_censored: the "
    "last record's time (a flow: t_max)",
}


def _fail(name: str, value, allowed: str) -> None:
    raise ValueError(f"{name} = {shown(value)} is invalid: {allowed}")


def flow_options(setting: str, level: str, options: Mapping) -> tuple[dict, dict]:
    """(options without method and t_max, the flow's options {"method": "flow", "t_max": ...} or {}
    for GD). Refused: a method other than gd and flow; the flow where the setting's reduced level
    declares none, or at level full (the full level has no flow); t_max without the flow, or not a
    finite number > 0 (each point checks it against its own eta, `common.flow_keywords`)."""
    method = options.get("method") or "gd"
    t_max = options.get("t_max")
    if method not in METHODS:
        _fail("method", method, f"must be one of {', '.join(map(repr, METHODS))}")
    if method == "flow" and not verbs.level(registry.get(setting), "reduced").flow:
        _fail("method", method, f"{setting}'s reduced level declares no gradient flow")
    if method == "flow" and level == "full":
        _fail(
            "method",
            method,
            "with level = 'full': the gradient flow is the reduced level's (the full level has "
            "none): use level 'reduced', or 'both' to compare the flow with full GD",
        )
    if method == "gd" and t_max is not None:
        _fail("t_max", t_max, "with method = 'gd': it is the flow's end time (use method 'flow')")
    if t_max is not None:
        check_positive("t_max", t_max, " (the flow's end time; None: eta * steps)")
    rest = {k: v for k, v in options.items() if k not in FLOW_OPTIONS}
    return rest, ({"method": "flow", "t_max": t_max} if method == "flow" else {})


def flow_key(options: Mapping) -> dict:
    """What a point's key records of the method: the flow's options, nothing for GD (GD's keys stay
    those of a sweep without the option)."""
    return {k: options.get(k) for k in FLOW_OPTIONS} if options.get("method") == "flow" else {}


def unit_of(unit: Optional[str], options: Mapping) -> str:
    """The heatmaps' unit: `unit`, else time for a flow and steps for GD."""
    if unit is None:
        return "time" if options.get("method") == "flow" else "steps"
    if unit not in UNITS:
        _fail("heatmap_unit", unit, f"must be one of {', '.join(map(repr, UNITS))}")
    return unit


def in_unit(spec, name: str, unit: str) -> str:
    """The summary `name` draws in `unit`: in time, an event's twin (`common.time_name`, kept with
    its level prefix) where the setting declares one; any other name as it is."""
    if unit != "time":
        return name
    prefix = next((p for p in PREFIXES if name.startswith(p)), "")
    base = name[len(prefix) :]
    twin = common.time_name(base)
    return prefix + twin if twin != base and twin in spec.table.level_summaries else name


def labels(spec, names: Sequence[str]) -> dict:
    """The heatmaps' descriptions (`plots.heatmaps(labels=)`): an event time in time says so."""
    out = {}
    for name in names:
        prefix = next((p for p in PREFIXES if name.startswith(p)), "")
        base = name[len(prefix) :]
        steps = base[:1].upper() + base[1:]
        declared = spec.table.level_summaries
        if base[:1] == "t" and base in declared and steps in declared:
            out[name] = f"{steps} in time t = eta * steps"
    return out


def column(name: str, level: str) -> str:
    """The table column a heatmap name reads: as given when prefixed, else the level's (the reduced
    level's unless only full ran)."""
    if name.startswith(PREFIXES):
        return name
    return ("full_" if level == "full" else "reduced_") + name


def refuse(spec, level: str, names: Sequence[str]) -> None:
    """Refuse, before any work, a heatmap the level does not offer: the checker's summaries
    (`common.VERDICT`) without level both, and what the setting's table declares not offered
    (`SweepTable.not_offered`)."""
    not_offered = spec.table.not_offered
    for name in names:
        if name in common.VERDICT and level != "both":
            _fail(
                "heatmap",
                name,
                f"with level = {level!r}: the checker's {name} compares the two levels, so only "
                "level = 'both' gives it",
            )
        why = not_offered.get(column(name, level))
        if why is not None:
            _fail("heatmap", name, f"at level = {level!r} ({column(name, level)}): {why}")


def check_grid(setting: str, spec, level: str, options: Mapping, axes: Mapping, heatmaps, pair):
    """Refuse, before any work, what the grid asks for that cannot be done: an axis the flow does
    not read (`flow_unread`), heatmap axes `pair` that are not two swept axes, a heatmap the level
    does not offer or the setting's summaries cannot give (`heatmap_names`), and a heatmap asked
    for without two swept axes to draw it over."""
    flow_unread(setting, level, options, axes)
    drawn_over = plots.pick_axes(dict(axes), pair)
    heatmap_names(spec, level, axes, heatmaps)
    swept = [a for a, v in axes.items() if len(v) > 1]
    if heatmaps and drawn_over is None:
        _fail(
            "heatmap",
            ",".join(heatmaps),
            f"a heatmap is drawn over two swept axes and this sweep has {len(swept)}"
            f"{' (' + ', '.join(swept) + ')' if swept else ''}: sweep a second field, or leave "
            "the heatmap out (table.csv has every summary)",
        )


def flow_unread(setting: str, level: str, options: Mapping, axes: Mapping) -> None:
    """Refuse, with method flow at level reduced, an axis of several values that the gradient flow
    does not read (its config's FLOW_IGNORES: eta, steps, record_every): each value would solve the
    same flow again."""
    unread = getattr(registry.get(setting).config, "FLOW_IGNORES", {})
    swept = [a for a, v in axes.items() if a in unread and len(v) > 1]
    if options.get("method") == "flow" and level == "reduced" and swept:
        _fail(
            swept[0],
            list(axes[swept[0]]),
            f"as an axis with method = 'flow' at level = 'reduced': the gradient flow does not "
            f"read {', '.join(unread)} (they place only its saves and its default end time "
            "t_max = eta * steps), so every value would solve the same flow again; give one "
            "value (t_max sets the horizon), or level = 'both' to compare the flow with full GD "
            "at each value",
        )


def heatmap_names(spec, level: str, axes: Mapping, heatmaps: Optional[Sequence[str]]) -> None:
    """Refuse a heatmap the level does not offer (`refuse`) or a name the setting's summaries
    cannot give (`SweepTable.level_summaries`); a spec that does not list them is checked once the
    table exists (`dynsim.sweeps.sweep`)."""
    refuse(spec, level, heatmaps)
    if not heatmaps or not spec.table.level_summaries:
        return
    prefixes = {"reduced": ("reduced_",), "full": ("full_",), "both": ("reduced_", "full_")}[level]
    known = (
        [p + n for p in prefixes for n in spec.table.level_summaries]
        + list(spec.table.point_summaries)
        + list(axes)
    )
    unknown = [n for n in heatmaps if n not in known and column(n, level) not in known]
    if unknown:
        raise ValueError(
            f"heatmap = {','.join(unknown)} is invalid: must be summaries of this sweep at "
            f"level {level}: {', '.join(spec.table.level_summaries)} (of the "
            f"{' and '.join(prefixes)} level{'s' if len(prefixes) > 1 else ''}), or "
            f"{', '.join(spec.table.point_summaries)}"
            + did_you_mean([*spec.table.level_summaries, *known], *unknown)
        )


def defaults(spec, level: str) -> list[str]:
    """The default heatmaps the level offers (`SweepTable.heatmaps` less the ones it does not)."""
    return [n for n in spec.table.heatmaps if column(n, level) not in spec.table.not_offered]
