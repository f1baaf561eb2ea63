"""Recorded observables as labelled arrays and tidy tables: what `Trajectory.to_xarray`,
`Trajectory.to_dataframe` and `Trajectories.to_dataframe` return (docs/data.md). Needs xarray and
pandas (`pip install 'dynsim[xarray]'`): the trajectory methods load this module on first use.

An observable's axes after "step" are named by its setting (`dynsim.setting.Frames`, found by the
trajectory's meta["setting"], its config class's name); `<name>_se` takes the axes of `<name>` and
`<name>_seeds` (`dynsim.trajectory.seed_statistics`) adds "seed". Axes nothing names are
<name>_dim1, ... . A tidy table has one row per (observable, step, coordinate tuple): columns
"observable", "step", the named axes and the coordinates over them, "value"; the entries the
setting's `Frames.present` marks as padding are left out, a NaN the run recorded is kept."""

from __future__ import annotations

import json
from typing import Optional

import numpy as np
import pandas as pd
import xarray

from . import setting as registry
from .setting import Frames
from .trajectory import jsonable

SUFFIXES = (("_se", ()), ("_seeds", ("seed",)))  # seed_statistics' names: the axes they add
FIRST, LAST = ("run", "observable", "step"), ("value",)  # the table's outer columns


def declaration(meta: dict) -> Optional[Frames]:
    """The `Frames` of the setting that produced a trajectory with `meta`; None when the setting
    is unknown here (or fails to load) or declares none."""
    name = meta.get("setting")
    if not isinstance(name, str):
        return None
    try:
        found = registry.for_config(name)
    except ImportError:  # another setting's plugin is broken: the generic names serve
        return None
    return None if found is None else found.frames


def axes(name: str, observables: dict, dims: dict) -> tuple[str, ...]:
    """The names of the axes of observable `name` after "step" (`dims`: the setting's)."""
    values = observables[name]
    for suffix, added in SUFFIXES:
        base = name[: -len(suffix)]
        if name.endswith(suffix) and base in observables:
            shape = observables[base].shape + tuple(values.shape[-1:] if added else ())
            if shape == values.shape:
                return axes(base, observables, dims) + added
    declared = tuple(dims.get(name, ()))
    return declared if len(declared) == values.ndim - 1 else generic(name, values)


def generic(name: str, values: np.ndarray) -> tuple[str, ...]:
    return tuple(f"{name}_dim{i}" for i in range(1, values.ndim))


def to_xarray(traj) -> xarray.Dataset:
    """`traj` as an `xarray.Dataset` (`Trajectory.to_xarray`)."""
    frames = declaration(traj.meta)
    dims = dict(frames.dims) if frames is not None else {}
    sizes = {"step": traj.steps.size}
    data = {}
    for name, values in traj.observables.items():
        names = axes(name, traj.observables, dims)
        if any(sizes.get(a, n) != n for a, n in zip(names, values.shape[1:])):
            names = generic(name, values)  # a declared name with another length here
        sizes.update(zip(names, values.shape[1:]))
        data[name] = (("step", *names), values)
    coords: dict = {"step": traj.steps}
    coords.update({a: np.arange(n) for a, n in sizes.items() if a != "step"})
    hook = frames.coords if frames is not None and frames.declares("coords") else None
    for cname, (cdims, values) in (hook(traj) if hook is not None else {}).items():
        values = np.asarray(values)
        if len(cdims) == values.ndim and all(
            sizes.get(d) == n for d, n in zip(cdims, values.shape)
        ):
            coords[cname] = (tuple(cdims), values)
    attrs = {
        k: str(traj.meta[k])
        for k in ("level", "mode", "setting", "dtype", "device")
        if k in traj.meta
    }
    attrs["meta_json"] = json.dumps(traj.meta, default=jsonable, sort_keys=True)
    return xarray.Dataset(data, coords=coords, attrs=attrs)


def chosen(available, observables, what: str) -> list[str]:
    """The observables asked for (None: all of `available`; a name or a list of names)."""
    if observables is None:
        return list(available)
    wanted = [observables] if isinstance(observables, str) else list(observables)
    unknown = [n for n in wanted if n not in available]
    if unknown:
        raise ValueError(
            f"observables = {unknown!r} is invalid: must be observables of {what}: "
            f"{', '.join(available)}"
        )
    return list(dict.fromkeys(wanted))


def to_dataframe(traj, observables=None) -> pd.DataFrame:
    """`traj` as a tidy table (`Trajectory.to_dataframe`)."""
    return concat(*tables(traj, chosen(traj.observables, observables, "this trajectory")))


def tables(traj, names: list[str]) -> tuple[list[pd.DataFrame], list[str]]:
    """The rows of each observable in `names` (one table each) and the names of every axis."""
    ds = to_xarray(traj)
    frames = declaration(traj.meta)
    present = [p for p in (frames.present if frames is not None else ()) if p in ds.coords]
    order = [d for name in names for d in ds[name].dims]
    return [rows(ds[name], name, present) for name in names], list(dict.fromkeys(order))


def rows(da: xarray.DataArray, name: str, present: list[str]) -> pd.DataFrame:
    """One observable's rows: its entries with their coordinates, padding left out."""
    df = da.to_dataframe(name="value").reset_index()
    marks = [p for p in present if p in df.columns]
    if marks:
        df = df.loc[df[marks].all(axis=1)].drop(columns=marks)
    df.insert(0, "observable", name)
    return df


def concat(parts: list[pd.DataFrame], axes: list[str]) -> pd.DataFrame:
    """The tables one under the other, columns in the order: run, observable, step, the axes, the
    other coordinates, value; an integer coordinate stays integer (pandas' nullable Int64 where
    some rows lack it)."""
    if not parts:
        return pd.DataFrame({c: [] for c in ("observable", "step", "value")})
    integer = {c for p in parts for c in p.columns if pd.api.types.is_integer_dtype(p[c])}
    integer -= {c for p in parts for c in p.columns if not pd.api.types.is_integer_dtype(p[c])}
    out = pd.concat(parts, ignore_index=True, sort=False)
    for c in integer - set(LAST):
        out[c] = out[c].astype("Int64" if out[c].isna().any() else np.int64)
    inner = [c for c in out.columns if c not in FIRST + LAST]
    inner = [c for c in axes if c in inner] + [c for c in inner if c not in axes]
    return out[[c for c in FIRST if c in out.columns] + inner + list(LAST)]


def runs_to_dataframe(named: dict, observables=None) -> pd.DataFrame:
    """Several named trajectories as one tidy table with a first column "run", the name
    (`Trajectories.to_dataframe`); with `observables`, each run's rows of those it holds."""
    every = list(dict.fromkeys(n for t in named.values() for n in t.observables))
    wanted = chosen(every, observables, "these trajectories")
    parts, axes = [], []
    for run, traj in named.items():
        found, names = tables(traj, [n for n in wanted if n in traj.observables])
        for df in found:
            df.insert(0, "run", run)
        parts += found
        axes += [a for a in names if a not in axes]
    return concat(parts, axes)
