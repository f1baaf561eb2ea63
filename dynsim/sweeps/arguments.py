"""The arguments of `dynsim.sweep` checked before any work: their types (`check_types`: a
TypeError naming the argument) and the folder `out` (`check_out`: one that cannot be a folder, or
that holds another sweep's outputs, is refused in one line)."""

from __future__ import annotations

import os
from typing import Mapping, Optional, Sequence

from dynsim import tempfiles
from dynsim.validation import Short, check_type

from . import plots

LEVELS = ("reduced", "full", "both")


def check_axes(axes) -> None:
    """A TypeError naming the argument unless `axes` maps names to lists of values."""
    check_type("axes", axes, Mapping, "a mapping of config fields to lists of values")
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"axes[{name!r}] must be a list of values, got {type(values).__name__}")


def check_types(setting, level, axes, out, log, mappings: dict, names: dict) -> None:
    """A TypeError, in one line naming the argument, for an argument of `sweep` of the wrong type:
    `mappings` and `names` hold the arguments that are a mapping and a list of names, or None."""
    check_type("setting", setting, str, "a setting's name (str)")
    check_type("level", level, str, f"one of {', '.join(map(repr, LEVELS))}")
    check_axes(axes)
    for name, value in mappings.items():
        if value is not None:
            check_type(name, value, Mapping, "a mapping or None")
    for name, value in names.items():
        listed = isinstance(value, Sequence) and not isinstance(value, (str, bytes))
        if value is not None and not (listed and all(isinstance(v, str) for v in value)):
            raise TypeError(
                f"{name} must be a list of names (str) or None, got {Short().repr(value)}"
            )
    if out is not None:
        check_type("out", out, (str, os.PathLike), "a folder's path (str or os.PathLike) or None")
    if log is not None and not callable(log):
        raise TypeError(
            f"log must be a function of one line of text, or None, got {type(log).__name__}"
        )


def check_out(out: str, setting: str, level: str, keys: list) -> Optional[dict]:
    """Refuse (ValueError, one line) an `out` that cannot be a folder (`tempfiles.folder_problem`)
    or that holds another sweep's outputs (`plots.read_manifest`: its sweep.json), which this one
    would replace: another setting or level, or a grid without every point of it. Else the manifest
    of the sweep it holds (this one, or a smaller grid this one extends), or None."""
    bad = f"out = {out!r} is invalid:"  # the whole path: a bounded repr would cut it
    why = tempfiles.folder_problem(out)
    if why is not None:
        raise ValueError(f"{bad} {why}")
    old = plots.read_manifest(out)
    if old is None:
        return None
    points = set(old.get("points") or ())
    if (old.get("setting"), old.get("level")) == (setting, level) and points <= set(keys):
        return old
    raise ValueError(
        f"{bad} it holds the outputs of another sweep ({old.get('setting')!r} at level "
        f"{old.get('level')!r}, {len(points)} distinct runs: its sweep.json, table.csv and "
        "heatmaps), which this one would replace; give another folder, or move that sweep.json, "
        "table.csv and heatmap-*.png away to replace them (the stored points stay, and are "
        "reused)",
    )
