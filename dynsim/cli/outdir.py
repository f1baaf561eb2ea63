"""--out, the output folder of every command that writes: checked before any work
(`validate_out_dir`: a folder or nothing yet, its first existing ancestor a writable folder, room on
its file system for the estimated outputs), cleaned of the temporary files a killed run left
(`dynsim.tempfiles.remove_leftovers`); a failed write is one line (`write_error`). Commands write
their files as one set with `dynsim.cli.output.Staged`."""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import math
import os
import shutil

from dynsim import tempfiles

from .options import UsageError
from .output import log

# Failures of a write the user can act on (room, permissions, a file where a folder goes): one line,
# exit 2.
WRITE_ERRNOS = frozenset(
    {
        errno.ENOSPC,
        errno.EDQUOT,
        errno.EROFS,
        errno.EACCES,
        errno.EPERM,
        errno.ENOTDIR,
        errno.EEXIST,
        errno.EISDIR,
        errno.EFBIG,
        errno.ENAMETOOLONG,
    }
)
# figures and JSON: measured compare.png 97-152 kB, report.json 6-10 kB (compare jsl / mim)
FIXED_BYTES = 4 << 20
# per level, run and record: compare jsl records 79 float64 a record at D = 16 (7.6 kB npz of
VALUES_PER_RECORD = 64
#                         6 records x 2 levels); MIM's per-patch P x P arrays hold more: the
#                           estimate is a floor
# commands that write recorded trajectories (check-theorems and transfer write a summary)
RECORDING_VERBS = ("compare", "sweep", "figure")


def _value(args, f: dataclasses.Field):
    """Config field `f` as the run will use it: typed (a list in a sweep), the command's default,
    the dataclass's."""
    if f.name in vars(args):
        return getattr(args, f.name)
    defaults = getattr(args, "config_defaults", {}) or {}
    return defaults.get(f.name, f.default if f.default is not dataclasses.MISSING else None)


def estimated_bytes(args) -> tuple[int, str]:
    """(bytes, how): a rough size of what the command writes: FIXED_BYTES of figures and JSON, and
    for the commands that write trajectories, records (steps // record_every + 2) x runs (grid
    points x seeds x replicates) x 2 levels x VALUES_PER_RECORD x 8 bytes."""
    cls = getattr(args, "config_class", None)
    if cls is None or args.command not in RECORDING_VERBS:
        return FIXED_BYTES, "figures and JSON"
    values = {f.name: _value(args, f) for f in dataclasses.fields(cls)}
    # a sweep's fields are lists (its axes); elsewhere a list is one value (MIM's z)
    grid = args.command == "sweep"
    as_list = {k: v if grid and isinstance(v, list) else [v] for k, v in values.items()}
    steps = max((s for s in as_list.get("steps", [None]) if isinstance(s, int)), default=0)
    every = min(
        (e for e in as_list.get("record_every", [None]) if isinstance(e, int) and e > 0), default=1
    )
    records = steps // every + 2
    runs = math.prod(len(v) for v in as_list.values())
    for name in ("seeds", "replicates"):
        n = getattr(args, name, None)
        runs *= n if isinstance(n, int) and n > 0 else 1
    need = FIXED_BYTES + records * runs * 2 * VALUES_PER_RECORD * 8
    return (
        need,
        f"{records} records x {runs} runs x 2 levels x {VALUES_PER_RECORD} values x 8 B + figures",
    )


def human(n: float) -> str:
    """A size for a message: "812 B", "3.2 MB", "1.5 TB"."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{int(n)} B"


def validate_out_dir(args, option: str = "--out") -> None:
    """Refuse args.out before any work, with one line naming `option`, the path and the problem: an
    existing file (or a file where one of its parent folders would go), a folder name or a path
    too long for its file system (`_check_lengths`), a folder that cannot be written (permissions,
    a read-only file system), too little free space for `estimated_bytes`. Then remove a killed
    run's temporary files there."""
    raw = args.out
    path = os.path.abspath(raw)
    bad = f"{option} = {raw!r} is invalid:"
    why = tempfiles.folder_problem(path)
    if why is not None:
        raise UsageError(f"{bad} {why}")
    parent = path
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    _check_lengths(bad, path, parent)
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(
            f"{bad} {parent!r} is not writable (no permission, or a read-only file system); give a "
            "writable folder"
        )
    need, how = estimated_bytes(args)
    free = shutil.disk_usage(parent).free
    if free < need:
        raise UsageError(
            f"{bad} {human(free)} free on its file system, and the outputs need about "
            f"{human(need)} ({how}); free space, give another folder, or lower --steps / raise "
            f"--record-every"
        )
    removed = tempfiles.remove_leftovers(path)
    if removed:
        log(f"removed {len(removed)} temporary file(s) a killed run left in {raw}")


def _check_lengths(bad: str, path: str, parent: str) -> None:
    """Refuse, before any work, a folder name longer than its file system takes (NAME_MAX, 255
    bytes on most) and a path too long for the files written in it (PATH_MAX, less NAME_MAX for
    their names); `parent`: the first existing folder of `path`."""
    try:
        name_max = os.pathconf(parent, "PC_NAME_MAX")
        path_max = os.pathconf(parent, "PC_PATH_MAX")
    except (OSError, ValueError):  # a system that does not say: POSIX's usual limits
        name_max, path_max = 255, 4096
    for part in os.path.relpath(path, parent).split(os.sep):
        size = len(os.fsencode(part))
        if size > name_max:
            shown = part if len(part) <= 24 else part[:21] + "..."
            raise UsageError(
                f"{bad} the folder name {shown!r} has {size} bytes, more than the {name_max} its "
                "file system takes; give a shorter one"
            )
    size = len(os.fsencode(path))
    if size + 1 + name_max > path_max:
        raise UsageError(
            f"{bad} its path has {size:,} bytes, and a file in it may need {name_max} more: past "
            f"the {path_max:,} a path may have; give a shorter one"
        )


def missing_folders(args) -> list[str]:
    """The folders a command would create on the way to its output folder (--out, or export's
    --to), outermost first: none when it exists."""
    out = getattr(args, "out", None)
    if getattr(args, "command", None) == "export":
        out = args.folder if args.to is None else args.to
    if not isinstance(out, str) or not out.strip():
        return []
    path, made = os.path.abspath(os.path.expanduser(out)), []
    while not os.path.lexists(path) and path != os.path.dirname(path):
        made.append(path)
        path = os.path.dirname(path)
    return made[::-1]


def remove_made(made: list[str]) -> None:
    """Remove the folders of `made` (`missing_folders`, before the command) that a refused command
    created and left empty, and the empty folders it made in them, innermost first: the file system
    is left as the command found it. A folder holding any file is kept (with its parents)."""
    for folder in reversed(made):
        if os.path.islink(folder) or not os.path.isdir(folder):
            continue
        for root, dirs, _ in os.walk(folder, topdown=False):
            for name in dirs:
                with contextlib.suppress(OSError):  # not empty, or a link: kept
                    os.rmdir(os.path.join(root, name))
        try:
            os.rmdir(folder)
        except OSError:  # not empty: it, and the folders above it, stay
            return


def write_error(exc: OSError) -> str | None:
    """The one-line message of a failed write the user can act on (`WRITE_ERRNOS`), else None."""
    if exc.errno not in WRITE_ERRNOS:
        return None
    what = os.strerror(exc.errno)
    where = f": {exc.filename}" if exc.filename else ""
    return (
        f"{what[0].lower()}{what[1:]}{where} (nothing is half-written: the files already "
        f"there are complete)"
    )
