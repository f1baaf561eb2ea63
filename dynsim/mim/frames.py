"""Coordinates of MIM's observables for `Trajectory.to_xarray` and `to_dataframe` (docs/data.md):
the areas a run used (meta["areas"], else those of meta["config"]) give each axis its labels. The
axis names are declared in `dynsim.mim.setting` (`Setting.frames`).

- (patch, cluster): own_area = a_k(p), the area of cluster k holding patch p.
- (cluster, area): area_size = |P_{k,j}|, 0 where j >= N_k; area_present = j < N_k (padding: the
  entries of fp_corr, area_attention, fp_cell, area_attention_cell at j >= N_k are NaN).
- (class, position): class_area_size, the size of the area at each position of a query class's
  order (own area first, then the others by (size, index); `dynsim.mim.records`), 0 past the
  class's areas; class_area_present.
- (cell,): cell_size, the patches of each joint cell; (cell, cluster): cell_area, its area in
  cluster k.
"""

from __future__ import annotations

import types
from typing import Optional

import numpy as np

from . import records
from .config import MIMConfig
from .partition import area_of


def areas(meta: dict) -> Optional[tuple]:
    """The areas of the run that wrote `meta` (per cluster, per area, the patch indices), as
    tuples; None when neither its areas nor a valid config are recorded, or its areas do not
    partition the patches."""
    found = meta.get("areas")
    try:
        if found is None:
            found = MIMConfig(**meta["config"]).areas
        found = tuple(tuple(tuple(int(p) for p in area) for area in cluster) for cluster in found)
    except (KeyError, TypeError, ValueError):
        return None
    # each cluster's areas partition the patches 0..P-1 (an edited file's may not: no labels then)
    patches = list(range(sum(len(a) for a in found[0]))) if found else []
    every = all(sorted(p for area in cluster for p in area) == patches for cluster in found)
    return found if found and patches and every else None


def sizes(rows: list) -> np.ndarray:
    """Lists of sizes as one array, each row padded with 0."""
    out = np.zeros((len(rows), max(len(r) for r in rows)), np.int64)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def coords(traj) -> dict:
    """{coordinate: (axes, values)} of a MIM trajectory (the module's docstring); {} when its areas
    are not recorded."""
    found = areas(traj.meta)
    if found is None:
        return {}
    P = sum(len(a) for a in found[0])
    area_size = sizes([[len(a) for a in cluster] for cluster in found])
    # the same indices the reduced level's records use
    where = types.SimpleNamespace(areas=found, P=P)
    classes = sizes(records.class_index(where).sizes)
    cells = records.cell_index(where)
    return {
        "own_area": (("patch", "cluster"), area_of(found, P).T),
        "area_size": (("cluster", "area"), area_size),
        "area_present": (("cluster", "area"), area_size > 0),
        "class_area_size": (("class", "position"), classes),
        "class_area_present": (("class", "position"), classes > 0),
        "cell_size": (("cell",), np.asarray(cells.size)),
        "cell_area": (("cell", "cluster"), np.asarray(cells.labels)),
    }
