"""Points claimed by one sweep process at a time, so that several processes on one store split the
work.

A claim is a lock file `<store>/locks/<key>.lock`, created with O_CREAT | O_EXCL (atomic, also on
NFS v3+) and holding the owner's pid, host name and start time as JSON. While a process holds
claims, a thread refreshes their modification time every HEARTBEAT_SECONDS. A claim is stale, and
taken over, when its owner is on this host and no longer alive (or its pid is now another
process's: one that started after the claim's recorded start, or a claim started ahead of this
host's clock, `could_own`), or when it was not refreshed for STALE_SECONDS (an owner on another
host, or a reused pid), by the file's time or by this process's own clock: a claim this process has
watched unchanged for STALE_SECONDS is stale whatever its time says, so a claim dated in the future
(a planted file, a host whose clock runs ahead on a shared disk) delays a sweep by STALE_SECONDS at
most. A killed sweep never blocks another for long. Taking
over renames the stale file to a unique name first, so of two processes that find it stale at once
only one removes it. If two processes still compute one point (a takeover racing a fresh claim),
both write the same bytes atomically: the store stays right, only the work is doubled.
"""

from __future__ import annotations

import json
import os
import re
import socket
import threading
import time
import uuid
from typing import Optional

from dynsim import inputs, schemas, tempfiles
from dynsim.trajectory import TEMP_PREFIX

HEARTBEAT_SECONDS = 30.0
MAX_CLAIM_BYTES = 1 << 16  # a claim file holds one owner's JSON: a few hundred bytes
# a claim's owner (dynsim.schemas): a pid (pid_t, a positive 32-bit integer), its host and start;
# a claim that is not a small regular file inside locks/ holding these is not one dynsim wrote,
# and is judged as one never written (stale UNWRITTEN_SECONDS after its time, or after this
# process first saw it)
CLAIM = {
    "pid": schemas.kind("integer", low=1, high=2**31 - 1),
    "host": schemas.kind("text"),
    "started": schemas.kind("number", infinite=False),
}
STALE_SECONDS = 300.0  # 10 heartbeats missed: the owner is gone (or frozen)
# a claim still without its owner this long after its creation: the writer was killed between
# creating and writing it (the two are microseconds apart)
UNWRITTEN_SECONDS = 10.0
# a claim's owner started at most this long after the time its claim records (`could_own`): the
# start /proc gives is rounded to the boot time's whole second, plus a clock tick
START_SLACK = 2.0
# a temporary file this old is a killed writer's leftover (a write takes seconds) a killed writer's
# leftovers besides those `tempfiles.remove_leftovers` recognises (named with host and pid): the
# names of earlier versions (TEMP_PREFIX + mkstemp's 8 characters) anywhere in the store; mkstemp's
# plain names and locks moved aside by a takeover, in its own folders
TEMP_AGE_SECONDS = 600.0
OURS = re.compile(re.escape(TEMP_PREFIX) + r"[a-z0-9_]{8}(\.npz\.tmp|\.tmp|\.png)$")
OURS_INSIDE = re.compile(r"^(tmp[a-z0-9_]{8}\.npz\.tmp|[0-9a-f]{64}\.lock\.[0-9a-f]{32}\.stale)$")


def process_start(pid: int) -> Optional[float]:
    """When process `pid` of this host started, in seconds since the epoch to about a second
    (Linux's /proc: its start in clock ticks after boot, and the boot time in whole seconds); None
    where this system does not say."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            stat = fh.read()
        with open("/proc/stat") as fh:
            boot = next(float(line.split()[1]) for line in fh if line.startswith("btime "))
        # the fields after the command name (which may hold spaces and parentheses): the state is
        # field 3, the start time field 22
        ticks = float(stat[stat.rindex(")") + 2 :].split()[19])
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, StopIteration, ValueError, IndexError):
        return None


def could_own(pid: int, started: float) -> bool:
    """Whether the live process `pid` of this host could have made a claim whose owner opened the
    store at `started` (this host's clock): it had started by then, and that time is not ahead of
    this host's clock. A claim failing either (a pid reused since, or a planted claim: pid 1 dated
    ahead) is not its owner's, and is stale at once; where the start is unknown, only the time is
    judged. START_SLACK covers the start's rounding."""
    now = time.time()
    if started > now + START_SLACK:
        return False
    begun = process_start(pid)
    return begun is None or begun <= started + START_SLACK


def _files(directory: str) -> list[str]:
    try:
        return [e.name for e in os.scandir(directory) if e.is_file(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        return []


def _store_folders(root: str) -> list[tuple[str, bool]]:
    """(folder, whether it is points/ or locks/ or under them) of the store's own layout: root,
    locks/, points/ and points/ab/; nothing deeper (root may be a large shared folder: a whole-tree
    walk is slow there: docs/benchmarks.md §l)."""
    points = os.path.join(root, "points")
    try:
        shards = [e.path for e in os.scandir(points) if e.is_dir(follow_symlinks=False)]
    except (FileNotFoundError, NotADirectoryError):
        shards = []
    return [(root, False), (os.path.join(root, "locks"), True), (points, True)] + [
        (d, True) for d in shards
    ]


def remove_leftovers(root: str, now: Optional[float] = None) -> list[str]:
    """Remove the temporary files of killed writers from the store `root`: dynsim's
    (`tempfiles.remove_leftovers`), and OURS anywhere, OURS_INSIDE under points/ and locks/ if older
    than TEMP_AGE_SECONDS; their paths. A live writer's temporary file exists only for the seconds
    of one write; nothing else in `root` (which may be a shared folder) is touched."""
    now = time.time() if now is None else now
    removed = tempfiles.remove_leftovers(root)
    for directory, inside in _store_folders(root):
        for name in _files(directory):
            path = os.path.join(directory, name)
            if not (OURS.match(name) or inside and OURS_INSIDE.match(name)):
                continue
            try:
                if now - os.path.getmtime(path) > TEMP_AGE_SECONDS:
                    os.unlink(path)
                    removed.append(path)
            except FileNotFoundError:  # another process removed it first
                pass
    return removed


class Locks:
    """This process's claims on the points of one store; `with Locks(root) as locks:` releases them
    all at the end (also on Ctrl-C) and stops the heartbeat."""

    def __init__(self, root: str):
        self.directory = os.path.join(root, "locks")
        os.makedirs(self.directory, exist_ok=True)
        self.owner = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        self.held: set[str] = set()
        self._stop = threading.Event()
        self._clock = time.monotonic  # this process's own clock, for the claims it watches
        self._watched: dict[str, tuple[float, float]] = {}  # path -> (its mtime, seen since)
        self._thread = threading.Thread(target=self._heartbeat, name="dynsim-locks", daemon=True)

    def __enter__(self) -> "Locks":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        for key in list(self.held):
            self.release(key)

    def path(self, key: str) -> str:
        return os.path.join(self.directory, f"{key}.lock")

    def claim(self, key: str) -> bool:
        """Claim `key`: True if this process now holds it (it was free, or its claim was stale),
        False if another live process holds it."""
        path = self.path(key)
        for _ in range(3):  # free -> create; stale -> move aside, create; lost a race -> look again
            try:
                fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                if not self._take_over(path):
                    return False
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump(self.owner, fh)
            self.held.add(key)
            return True
        return False

    def release(self, key: str) -> None:
        """Give up the claim on `key` (after its point is stored)."""
        self.held.discard(key)
        try:
            os.unlink(self.path(key))
        except FileNotFoundError:
            pass

    def text(self, path: str) -> Optional[str]:
        """The text of the claim file at `path`: None if it vanished; "" if it is not a claim
        dynsim wrote (not a small regular file inside locks/, a dangling link: never read)."""
        try:
            raw = inputs.read_bytes(path, MAX_CLAIM_BYTES, "claim", inside=self.directory)
        except inputs.InputError as exc:
            return None if exc.missing and not os.path.lexists(path) else ""
        return raw.decode("utf-8", "replace")

    def holder(self, path: str) -> Optional[dict]:
        """The owner recorded in a claim file, None if it vanished; {} if unreadable (a claim being
        written, or torn by a kill between its creation and its write) or not CLAIM's."""
        text = self.text(path)
        try:
            mtime = os.lstat(path).st_mtime  # a link's own time: its target is never read
        except FileNotFoundError:
            text = None
        if text is None:
            return None
        try:
            owner = schemas.check(json.loads(text), CLAIM, "claim", path)
        except ValueError:  # not JSON, or not CLAIM's
            owner = {}
        return {**owner, "mtime": mtime, "text": text}

    def stale(self, owner: dict, path: Optional[str] = None) -> bool:
        """Whether a claim's owner is gone: dead on this host (or its pid now another process's:
        `could_own`), silent for STALE_SECONDS, or never written (no pid after UNWRITTEN_SECONDS).
        Silent: its time is that old, or (`path` given) this process has seen it unchanged that
        long (`unchanged_for`)."""
        age = max(time.time() - owner["mtime"], self.unchanged_for(path, owner["mtime"]))
        if age > STALE_SECONDS or ("pid" not in owner and age > UNWRITTEN_SECONDS):
            return True
        pid = owner.get("pid")
        if owner.get("host") != self.owner["host"] or not isinstance(pid, int):
            return False
        return not tempfiles.alive(pid) or not could_own(pid, owner["started"])

    def unchanged_for(self, path: Optional[str], mtime: float) -> float:
        """Seconds of this process's clock since it first saw the claim at `path` with this mtime (0
        the first time, and whenever the owner's heartbeat has changed it)."""
        if path is None:
            return 0.0
        now = self._clock()
        seen = self._watched.get(path)
        if seen is None or seen[0] != mtime:
            self._watched[path] = (mtime, now)
            return 0.0
        return now - seen[1]

    def _take_over(self, path: str) -> bool:
        """Move a stale claim aside (True: the caller may create its own); False if the claim is
        live."""
        owner = self.holder(path)
        if owner is None:
            return True  # released meanwhile
        if not self.stale(owner, path):
            return False
        if os.path.isdir(path) and not os.path.islink(path):  # dynsim writes files: not ours
            raise ValueError(f"lock = {path!r} is invalid: a folder, not a claim; remove it")
        aside = f"{path}.{uuid.uuid4().hex}.stale"
        try:
            os.rename(path, aside)
        except FileNotFoundError:
            return True  # another process moved it first: look again
        moved = self.text(aside) or ""  # read as the claim was: a FIFO is never opened
        if moved != owner["text"]:  # a fresh claim made after we read the stale one: put it back
            try:
                os.link(aside, path)
            except FileExistsError:
                pass
            os.unlink(aside)
            return False
        os.unlink(aside)
        return True

    def _heartbeat(self) -> None:
        while not self._stop.wait(HEARTBEAT_SECONDS):
            for key in list(self.held):
                try:
                    os.utime(self.path(key))
                except FileNotFoundError:
                    pass
