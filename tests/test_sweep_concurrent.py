"""Sweeps sharing one store: two processes split the points (each computed once) and print the same
table; a lock left by a dead process or gone silent is taken over; killed writers' temporary files
are removed."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import dynsim
from dynsim.sweeps import locks
from dynsim.trajectory import TEMP_PREFIX

ROOT = Path(__file__).resolve().parent.parent
# 8 points of one compiled group, one per chunk: each process claims one point at a time (~0.8 s
# each)
ARGS = [
    "sweep",
    "jsl",
    "--D",
    "9",
    "--C",
    "3",
    "--q",
    "0.15,0.2,0.25,0.3",
    "--eta",
    "0.05,0.1",
    "--steps",
    "60000",
    "--record-every",
    "6000",
    "--chunk-size",
    "1",
    "--batch-size",
    "1",
]


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _lock(
    directory: Path, key: str, pid: int, host: str = socket.gethostname(), age: float = 0.0
) -> Path:
    path = directory / f"{key}.lock"
    path.write_text(json.dumps({"pid": pid, "host": host, "started": time.time() - age}))
    os.utime(path, (time.time() - age, time.time() - age))
    return path


def test_two_concurrent_sweeps_compute_each_point_once(tmp_path):
    store = tmp_path / "shared"
    command = [sys.executable, "-m", "dynsim.cli", *ARGS, "--out", str(store)]
    first, second = (
        subprocess.Popen(
            command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for _ in range(2)
    )
    outs = [p.communicate(timeout=300) for p in (first, second)]
    assert [p.returncode for p in (first, second)] == [0, 0], [err[-2000:] for _, err in outs]
    counts = [
        re.search(r"8 points: (\d+) computed now, (\d+) reused", out).groups() for out, _ in outs
    ]
    computed = [int(c) for c, _ in counts]
    # each point once, by one of them
    assert sum(computed) == 8, (counts, [err[-2000:] for _, err in outs])
    # they split the work (started together: 6 s of runs, ~0.8 s a point)
    assert min(computed) >= 1, counts
    assert all(int(c) + int(r) == 8 for c, r in counts)
    tables = [out.splitlines()[:-1] for out, _ in outs]  # the last line says what each computed
    assert tables[0] == tables[1] and len(tables[0]) >= 9
    assert len(list(store.glob("points/*/*.npz"))) == 8
    # every lock released, no temp left
    assert not list(store.glob("locks/*")) and not list(store.glob(f"**/{TEMP_PREFIX}*"))


def test_lock_of_a_dead_process_does_not_block(tmp_path):
    axes, base = {"q": [0.2, 0.3]}, dict(D=9, C=3, steps=400, record_every=100)
    keys = [
        r["key"] for r in dynsim.sweep("jsl", axes, base=base, out=str(tmp_path / "first")).rows
    ]
    held = tmp_path / "second" / "locks"
    held.mkdir(parents=True)
    stale = [
        _lock(held, keys[0], _dead_pid()),
        _lock(held, keys[1], os.getpid(), host="elsewhere", age=locks.STALE_SECONDS + 60),
    ]
    done: list = []
    runner = threading.Thread(
        target=lambda: done.append(
            dynsim.sweep("jsl", axes, base=base, out=str(tmp_path / "second"))
        ),
        daemon=True,
    )
    runner.start()
    # a blocked sweep would wait forever (it polls every second); the run takes seconds
    runner.join(timeout=120)
    assert done and sorted(done[0].computed) == sorted(keys)  # both taken over and computed
    assert not any(p.exists() for p in stale) and not list(held.iterdir())


def test_which_locks_are_stale(tmp_path):
    with locks.Locks(str(tmp_path)) as mine:
        directory = Path(mine.directory)
        live_here = _lock(directory, "a" * 64, os.getppid())  # the parent of this process: alive
        # pid means nothing there
        live_elsewhere = _lock(directory, "b" * 64, _dead_pid(), host="elsewhere", age=10)
        # pid reused, owner gone
        silent = _lock(directory, "c" * 64, os.getppid(), age=locks.STALE_SECONDS + 1)
        dead_here = _lock(directory, "d" * 64, _dead_pid())
        torn = directory / f"{'e' * 64}.lock"
        # killed between creating and writing its lock; fresh: maybe being written now
        torn.write_text("")
        old_torn = directory / f"{'9' * 64}.lock"
        old_torn.write_text("")  # the same, older than UNWRITTEN_SECONDS: its writer is gone
        when = time.time() - locks.UNWRITTEN_SECONDS - 5
        os.utime(old_torn, (when, when))
        assert mine.claim("9" * 64) and json.loads(old_torn.read_text())["pid"] == os.getpid()
        assert not mine.claim("a" * 64) and not mine.claim("b" * 64) and not mine.claim("e" * 64)
        assert mine.claim("c" * 64) and mine.claim("d" * 64) and mine.claim("f" * 64)
        assert (
            json.loads(silent.read_text())["pid"]
            == os.getpid()
            == json.loads(dead_here.read_text())["pid"]
        )
        assert live_here.exists() and live_elsewhere.exists()
        # a live process's own lock: a second claim is refused like any other
        assert not mine.claim("c" * 64)
    # released on exit, others kept
    assert not silent.exists() and not dead_here.exists() and live_here.exists()


def test_leftover_temporary_files_are_removed(tmp_path):
    folder = tmp_path / "points" / "ab"
    folder.mkdir(parents=True)
    old = time.time() - locks.TEMP_AGE_SECONDS - 60
    ours = TEMP_PREFIX + "a1b2c3d4"
    names = {  # (folder, name): modification time
        # mkstemp's plain name, in points/
        (folder, ours + ".npz.tmp"): old,
        (folder, "tmpa1b2c3d4.npz.tmp"): old,
        (tmp_path, ours + ".png"): old,
        (tmp_path, ours + ".tmp"): old,
        (tmp_path / "locks", f"{'0' * 64}.lock.{'f' * 32}.stale"): old,
        (folder, TEMP_PREFIX + "q1w2e3r4.npz.tmp"): time.time(),  # being written now
        # not ours: --out may be shared
        (tmp_path, "tmpz_9y8x7w.png"): old,
        (tmp_path, "mytmp_notes.tmp"): old,
        # outside the store's layout: not walked (--out may be a big folder)
        (tmp_path / "data", ours + ".png"): old,
    }
    for (where, name), when in names.items():
        where.mkdir(exist_ok=True)
        (where / name).write_text("x")
        os.utime(where / name, (when, when))
    removed = locks.remove_leftovers(str(tmp_path))
    assert len(removed) == 5 and sorted(removed) == sorted(str(w / n) for (w, n) in list(names)[:5])
    assert all((w / n).exists() for (w, n) in list(names)[5:])


def test_a_claim_dated_in_the_future_is_stale_once_watched_unchanged(tmp_path):
    """A planted claim of a live process of this host (this test's parent), dated a day ahead:
    its age is negative, so only the watching rule can end the wait, after STALE_SECONDS of this
    process's own clock without a heartbeat; a heartbeat (a new mtime) restarts the watch."""
    with locks.Locks(str(tmp_path)) as mine:
        now = [1000.0]
        mine._clock = lambda: now[0]
        ahead = _lock(Path(mine.directory), "a" * 64, os.getppid())
        when = time.time() + 86400
        os.utime(ahead, (when, when))
        assert not mine.claim("a" * 64)  # first seen: live
        now[0] += locks.STALE_SECONDS / 2
        os.utime(ahead, (when + 30, when + 30))  # a heartbeat: watched anew
        now[0] += locks.STALE_SECONDS / 2 + 1
        assert not mine.claim("a" * 64)
        now[0] += locks.STALE_SECONDS + 1
        assert mine.claim("a" * 64) and json.loads(ahead.read_text())["pid"] == os.getpid()


def test_a_folder_planted_at_a_claims_path_is_refused_in_one_line(tmp_path):
    """A claim is a file dynsim writes: a folder in its place is neither followed nor removed (it
    may hold someone's files), but refused once it would be taken over, naming it."""
    mine = locks.Locks(str(tmp_path))
    os.mkdir(mine.path("k"))
    (Path(mine.path("k")) / "keep").write_text("x")
    now = [0.0]
    mine._clock = lambda: now[0]
    assert not mine.claim("k")  # first seen: not yet stale
    now[0] += locks.STALE_SECONDS + 1
    with pytest.raises(
        ValueError, match=r"^lock = .* is invalid: a folder, not a claim; remove it$"
    ):
        mine.claim("k")
    assert (Path(mine.path("k")) / "keep").read_text() == "x"
