"""dynsim's temporary files: every write goes to a temporary file of a unique name in the target's
folder, then a rename (atomic on POSIX), so a reader sees the old file or the new one, never a part.
The names carry a prefix, the host and the writer's pid (".dynsim-tmp-HOST-PID-XXXXXXXX.SUFFIX"), so
that the leftovers of a killed writer (kill -9 between the write and the rename) are recognised as
dynsim's and removed by the next run into that folder (`remove_leftovers`), and nothing else is
touched."""

from __future__ import annotations

import errno
import os
import re
import shutil
import socket
import tempfile
import time
from typing import Optional

PREFIX = ".dynsim-tmp-"
# a temporary file unchanged this long is no live write's (the writers write, then rename)
STALE_SECONDS = 3600.0
# greedy host: the pid is the last -digits- field
_NAME = re.compile(r"^\.dynsim-tmp-(?P<host>.+)-(?P<pid>\d+)-")


def _prefix() -> str:
    return f"{PREFIX}{socket.gethostname()}-{os.getpid()}-"


def mkstemp(directory: str, suffix: str = "") -> tuple[int, str]:
    """(fd, path) of a new temporary file in `directory`, named as this module says (mode 0600, as
    tempfile's)."""
    return tempfile.mkstemp(dir=directory, prefix=_prefix(), suffix=suffix)


def mkdtemp(directory: str) -> str:
    """A new temporary folder in `directory`, named as this module says."""
    return tempfile.mkdtemp(dir=directory, prefix=_prefix())


def folder_problem(path: str) -> Optional[str]:
    """Why `path` cannot be an output folder, in words that follow "PATH is invalid:", or None: it
    exists and is not a folder (a file, a link to one, a dangling link), or a file stands where one
    of its parent folders would go. Nothing is created."""
    path = os.path.abspath(path)
    if os.path.lexists(path) and not os.path.isdir(path):
        return "it is an existing file, not a folder; give a folder (new or existing)"
    parent = path
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"{parent!r} is a file, so the folder cannot be created there; give another folder"
    return None


def alive(pid: int) -> bool:
    """Whether process `pid` of this host exists (another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def stale(name: str, mtime: float, now: float) -> bool:
    """Whether the temporary file or folder `name` (last changed at `mtime`) is a leftover: written
    by a process of this host that is gone, or unchanged for STALE_SECONDS (another host's, or a
    reused pid). Not ours: False."""
    m = _NAME.match(name)
    if m is None:
        return False
    if now - mtime > STALE_SECONDS:
        return True
    pid = int(m["pid"])
    return m["host"] == socket.gethostname() and pid != os.getpid() and not alive(pid)


def _entries(folder: str) -> list:
    try:
        return list(os.scandir(folder))
    except OSError:  # not there, not a folder, not readable: nothing of ours to remove
        return []


def remove_leftovers(folder: str, depth: int = 2) -> list[str]:
    """Remove dynsim's stale temporary files and folders (`stale`) from `folder` and its subfolders
    `depth` deep (a sweep's points/ab/); return their paths. A folder that does not exist has
    none."""
    removed, now, entries = [], time.time(), _entries(folder)
    level = entries
    for _ in range(depth):
        level = [
            s
            for e in level
            if e.is_dir(follow_symlinks=False) and not e.name.startswith(PREFIX)
            for s in _entries(e.path)
        ]
        entries = entries + level
    for e in entries:
        try:
            if not stale(e.name, e.stat(follow_symlinks=False).st_mtime, now):
                continue
            if e.is_dir(follow_symlinks=False):
                shutil.rmtree(e.path)
            else:
                os.unlink(e.path)
        # removed meanwhile (its writer renamed it, or another run cleaned it)
        except FileNotFoundError:
            continue
        removed.append(e.path)
    return removed


def _umask() -> int:
    """The process's umask: from /proc/self/status on Linux, else by setting and restoring it (os
    has no getter before Python 3.13; the set-and-restore window could touch files other threads
    create meanwhile)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def public_mode(tmp: str) -> None:
    """Give a temporary file the mode a plain open() would (0666 less the umask): mkstemp makes it
    0600, so a renamed result would be unreadable by the collaborators a shared filesystem's umask
    admits."""
    os.chmod(tmp, 0o666 & ~_umask())


def atomic_write(path: str, suffix: str, write) -> None:
    """Call write(binary file) on a temporary file in path's folder, then rename it to path. On any
    failure (a full disk: ENOSPC) the temporary file is removed and `path` is as it was; an OSError
    is raised again naming `path` (a failed write() names no file; a missing folder would name the
    temporary file). Refused before anything is written, in one line: an empty path (ValueError), a
    folder that does not exist (FileNotFoundError naming it: no folder is created), a folder at
    `path` itself (IsADirectoryError)."""
    if os.fspath(path) in ("", b""):
        raise ValueError("path = '' is invalid: an empty path; give a file name")
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path) and not os.path.islink(path):  # a rename replaces a link itself
        raise IsADirectoryError(errno.EISDIR, "a folder is where the file goes", os.fspath(path))
    try:
        fd, tmp = mkstemp(folder, suffix)
    except OSError as exc:
        if exc.errno is None:
            raise
        why = os.strerror(exc.errno)
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):  # name the folder, not the file
            state = "does not exist" if not os.path.lexists(folder) else "is not a folder"
            why = f"its folder {folder!r} {state} (it is not created; nothing was written)"
        raise OSError(exc.errno, why, os.fspath(path)) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        public_mode(tmp)
        os.replace(tmp, path)
    except BaseException as exc:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.errno is not None:
            raise OSError(exc.errno, os.strerror(exc.errno), os.fspath(path)) from exc
        raise
