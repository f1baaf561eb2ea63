"""The results store of a sweep: one file per point, keyed by a versioned hash of what determines
the point.

A point's key is the SHA-256 of its canonical JSON description (setting, level, every config field,
the run options) together with STORE_VERSION; bump STORE_VERSION when what a stored point means
changes, and old points are no longer found (they are recomputed, never misread). Each point is one
.npz written to a temporary file in the same directory and renamed into place (atomic on POSIX), so
a crash or kill -9 leaves either the whole file or none. On reading, the file must open, carry its
own key and match the SHA-256 of its contents recorded inside it; anything else is moved aside as
`<name>.corrupt` and the point counts as not done. Before anything is decompressed or parsed, the
sizes the file declares are checked (`check_sizes`): loading a point never allocates much more than
the file's own size on disk, however its headers lie.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import warnings
from typing import Any, Callable, Optional

import numpy as np

from . import inputs, schemas
from .trajectory import Trajectory, atomic_savez, jsonable, many_from_arrays, many_to_arrays

STORE_VERSION = 1
# a stored point holds one configuration's summaries and trajectories: megabytes; more is not one
MAX_POINT_BYTES = 1 << 32


def point_path(root: str, key: str) -> str:
    """Where the store under `root` keeps the point `key` (nothing is created: an estimate reads
    it)."""
    return os.path.join(os.fspath(root), "points", key[:2], f"{key}.npz")


def point_key(description: dict) -> str:
    """The versioned hash of a point: sha256 of {"store_version": STORE_VERSION, **description} as
    canonical JSON."""
    text = json.dumps(
        {"store_version": STORE_VERSION, **description},
        sort_keys=True,
        default=jsonable,
        separators=(",", ":"),
    )
    return hashlib.sha256(text.encode()).hexdigest()


def _digest(arrays: dict[str, np.ndarray]) -> str:
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(name.encode())
        h.update(str(a.dtype).encode())
        h.update(str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


# a sweep's point summary (one row of its table; dynsim.schemas): every value a scalar, and the
# columns every setting's row shares of their kind: each level's stability flags and the step its
# run stopped being finite (`dynsim.sweeps.common.stability`), the checker's verdict
# (`common.verdict`), an event's time and its censoring bound (`common.censored`: `EVENT`, named
# by `summary_schema`). Any other column is the setting's own: a number, text, a boolean or null
# (none: not available) is read as it is.
SCALAR = schemas.kind("null", "bool", "number", "text", nan=True)
EVENT = schemas.kind("number", "null", low=0, infinite=False)  # a recorded step or a time t
CENSORED = "_censored"
SUMMARY = {
    "*": SCALAR,
    f"*{CENSORED}": EVENT,
    **{
        level + name: kind
        for level in ("reduced_", "full_")
        for name, kind in (
            ("loss_sign_changes", schemas.kind("integer", "null", low=0)),
            ("non_monotone", schemas.kind("bool", "null")),
            ("unstable", schemas.kind("bool", "null")),
            ("nonfinite_from_step", schemas.kind("integer", "null", low=0)),
        )
    },
    "verdict": schemas.kind("text", "null"),
    "max_error": schemas.kind("number", "null", low=0, nan=True),
    "worst_observable": schemas.kind("text", "null"),
    "check_kind": schemas.kind("text", "null"),
}


def summary_schema(names, schema: Optional[dict] = None) -> dict:
    """`schema` (default SUMMARY) with the event times of a row holding the columns `names`: the
    twin `X` of each censoring column `X_censored`, an EVENT too."""
    events = {n[: -len(CENSORED)]: EVENT for n in names if n.endswith(CENSORED)}
    return {**(SUMMARY if schema is None else schema), **events}


def row(summary: dict) -> None:
    """A `load` check for a sweep's point: its summary is one row of the table, so every value is
    null, a boolean, a number or text (never a list or a mapping), and the shared columns hold
    SUMMARY's kinds (`summary_schema`)."""
    nested = [
        k for k, v in summary.items() if not (v is None or isinstance(v, (bool, int, float, str)))
    ]
    if nested:
        raise ValueError(f"its summary's {nested[0]!r} is not a number, text or null")
    why = schemas.problem(summary, summary_schema(summary))
    if why is not None:
        raise ValueError(f"its summary's {why}")


def check_sizes(path: str) -> None:
    """Refuse (ValueError) an .npz whose declared sizes exceed what its file holds, before reading
    any data (`inputs.npz_sizes`): the store writes members uncompressed, so their declared sizes
    together are at most the file's size."""
    inputs.npz_sizes(path, os.path.getsize(path))


class Store:
    """A directory of finished points: `<root>/points/<key[:2]>/<key>.npz`."""

    def __init__(self, root: str):
        self.root = os.fspath(root)
        os.makedirs(os.path.join(self.root, "points"), exist_ok=True)

    def path(self, key: str) -> str:
        return point_path(self.root, key)

    def save(self, key: str, summary: dict, trajectories: dict[str, Trajectory]) -> None:
        """Write one point atomically: its summary (JSON), its trajectories and a digest of all of
        it."""
        arrays = {
            "key": np.array(key),
            "summary": np.array(json.dumps(summary, default=jsonable)),
            **many_to_arrays(trajectories),
        }
        arrays["digest"] = np.array(_digest(arrays))
        os.makedirs(os.path.dirname(self.path(key)), exist_ok=True)
        atomic_savez(self.path(key), arrays)

    def load(
        self, key: str, trajectories: bool = False, check: Optional[Callable[[dict], None]] = None
    ) -> Optional[dict[str, Any]]:
        """The stored point {"summary": ..., "trajectories": {...} (if asked)}; None if absent or
        corrupt (a corrupt file is renamed to .corrupt, with a warning, so the point is
        recomputed). check(summary): what the caller's summaries must be (a ValueError: corrupt;
        `row` for a sweep's points)."""
        path = self.path(key)
        if not os.path.exists(path):
            return None
        try:
            # a regular file inside the store's points/ (a FIFO or a link to a device never read),
            # bounded; points/ itself may be a link (points kept on another disk): followed
            inputs.regular_file(
                path, MAX_POINT_BYTES, "stored point", inside=os.path.join(self.root, "points")
            )
            check_sizes(path)
            with np.load(path, allow_pickle=False) as f:
                arrays = {name: f[name] for name in f.files}
            digest = str(arrays.pop("digest"))
            if digest != _digest(arrays) or str(arrays["key"]) != key:
                raise ValueError("digest or key mismatch")
            out: dict[str, Any] = {"summary": inputs.json_text(str(arrays["summary"]), "summary")}
            if not isinstance(out["summary"], dict):
                raise ValueError(f"its summary is a {type(out['summary']).__name__}, not a mapping")
            if check is not None:
                check(out["summary"])
            if trajectories:  # each meta must be a trajectory's (`dynsim.trajectory.META`)
                out["trajectories"] = many_from_arrays(arrays, path)
        # any unreadable file: truncated zip, bad JSON, missing entries, wrong digest
        except Exception as exc:
            # another sweep on this store moved it aside first
            with contextlib.suppress(FileNotFoundError):
                os.replace(path, path + ".corrupt")
            warnings.warn(
                f"stored point {path} is corrupt ({type(exc).__name__}: {exc}); moved to "
                f".corrupt and "
                "recomputed",
                RuntimeWarning,
                stacklevel=2,
            )
            return None
        return out
