"""What a sweep's own choices resolve to before any point runs: the reduced level's method (GD, or
the gradient flow where the setting's reduced `dynsim.verbs.Level` declares `flow`), the heatmaps'
columns in the unit picked (recorded steps, or time t = eta * steps), and the heatmaps a level does
not offer (refused in one line naming the option, the value and why)."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

from dynsim import verbs
from dynsim import setting as registry
from dynsim.validation import shown

from . import common

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
    declares none, or at level full (the full level has no flow); t_max without the flow."""
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


def defaults(spec, level: str) -> list[str]:
    """The default heatmaps the level offers (`SweepTable.heatmaps` less the ones it does not)."""
    return [n for n in spec.table.heatmaps if column(n, level) not in spec.table.not_offered]
