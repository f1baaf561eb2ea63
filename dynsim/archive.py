"""A trajectory file read back as untrusted input: its size, its zip members' declared sizes and
its npy headers checked against a trajectory file's layout before any data is read (a zip bomb
declaring gigabytes is refused from its headers), then its arrays read, a member that does not read
as its header says refused in one line naming the file."""

from __future__ import annotations

import zipfile
import zlib

import numpy as np

from . import inputs

# a trajectory file larger than this is not one dynsim wrote (the largest runs write megabytes)
MAX_FILE_BYTES = 1 << 36


def layout(headers: dict[str, tuple]) -> None:
    """Refuse (ValueError) an archive whose npy headers (`inputs.npz_sizes`: name -> (shape,
    dtype)) are not a trajectory file's, before any data is read: one trajectory (steps, meta,
    obs/..., final/...) or several under prefixes (<prefix>/steps, ...; a name without "/" is not a
    trajectory's and is never read), each with its steps a 1-d integer array and its meta text, and
    each observable one row per step. An observable declaring any other number of rows (a zip bomb
    shaped as one) is not read."""
    prefixes = (
        [""]
        if "steps" in headers
        else list(dict.fromkeys(k.split("/", 1)[0] + "/" for k in headers if "/" in k))
    )
    for pre in prefixes:
        steps, meta = headers.get(pre + "steps"), headers.get(pre + "meta")
        if steps is None or len(steps[0]) != 1 or steps[1].kind not in "iu":
            raise ValueError(f"member {pre}steps.npy: missing, or not a 1-d array of integers")
        if meta is None or meta[0] != () or meta[1].kind != "U":
            raise ValueError(f"member {pre}meta.npy: missing, or not text")
        rows = steps[0][0]
        for name, (shape, _) in headers.items():
            if name.startswith(pre + "obs/") and shape[:1] != (rows,):
                raise ValueError(
                    f"member {name}.npy: its header declares {shape[0] if shape else 0:,} rows, "
                    f"its trajectory has {rows:,} steps (one row per step)"
                )


def read_arrays(path) -> tuple[str, dict[str, np.ndarray]]:
    """(path with "~" expanded, the trajectories' arrays by name) of an .npz file: checked before
    any data is read (`inputs.npz_file`, `layout`; a FIFO would block np.load), then read, a member
    that does not read as its header says (a truncated or corrupt stream) refused in one line naming
    the file; a name without "/" beside several trajectories is not read."""
    path = inputs.npz_file(path, MAX_FILE_BYTES, "path", layout)
    try:
        with np.load(path, allow_pickle=False) as f:
            names = f.files if "steps" in f.files else [k for k in f.files if "/" in k]
            return path, {k: f[k] for k in names}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise inputs.InputError(f"path = {path!r} is invalid: unreadable ({exc})") from None
