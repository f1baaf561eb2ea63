"""A resource estimate before any work: what a command would hold in memory and, roughly,
how long it would run, compared with the machine's available memory and the optional --max-memory /
--max-time; and the bounds of the integer options that the hardware sets.

A setting says what its runs need as a list of `Need`s (a term of memory and of work, the options it
grows with and what to do instead); `refuse_oversized` refuses, on one line naming the option, its
value, the estimate and the limit, a command whose needs exceed them. The time is rough:
floating-point operations at `FLOP_RATE` a second.
"""

from __future__ import annotations

import argparse
import sys
import dataclasses
import math
import os
import re
from typing import Iterable, Mapping, Optional, Sequence

from dynsim.validation import INT64_MAX as INT_MAX  # what numpy and JAX (x64) take for an integer
from dynsim.validation import shown, text_count

# Floating-point operations a second, a crude constant for the time estimate: measured once on the
# 2-core development machine, numpy's element-wise work ran at 0.5 Gflop/s and a 1000 x 1000 matrix
# product at 85; dynsim's steps are mostly element-wise sums with a few small products, so 1e9, good
# to about a factor 10 either way.
FLOP_RATE = 1e9
YEAR = 365.25 * 86400
# an estimate above this is refused unless --max-time raises it: a run that long is a mistake more
# often than a plan (the estimates are rough: the largest README command estimates 35 min)
DAY = 86400.0
BOUNDS_HELP = (
    "Every integer option is at most 2^63 - 1 (int64, what numpy and JAX take; --seed >= 0 as "
    "jax.random.key takes it, and seed + seeds - 1 <= 2^63 - 1). Before any work the command "
    "estimates its memory (configurations, batches, replicates and seeds, recorded arrays) and "
    "its time (rough: "
    f"{FLOP_RATE:.0e} floating-point operations a second) and refuses, with exit 2, what "
    f"exceeds the "
    "available memory, --max-memory, or --max-time (default: a day)."
)
RANGE = (
    f"is out of range: must be at most 2^63 - 1 = {INT_MAX} in magnitude (int64, what numpy and "
    "JAX take)"
)
UNITS = {"": 1, "b": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclasses.dataclass(frozen=True)
class Need:
    """One term of an estimate: `what` it is ("the sampled batch: replicates x N x D numbers"), the
    options it grows with and their values ({"--N": 10**9}), its memory in bytes, its work in
    floating-point operations, and what to do instead when it does not fit ("fewer --replicates or a
    smaller --N")."""

    what: str
    options: Mapping[str, object]
    bytes: float = 0.0
    flops: float = 0.0
    instead: str = ""
    # the work grows with these too
    work_options: Mapping[str, object] = dataclasses.field(default_factory=dict)
    # operations a second of this work where measured (its source beside it), else FLOP_RATE
    rate: float = FLOP_RATE

    def scaled(
        self,
        memory: float = 1.0,
        work: float = 1.0,
        what: str = "",
        by: Optional[Mapping[str, object]] = None,
    ) -> "Need":
        """The same term held `memory` times at once and done `work` times (a sweep's batch and its
        points), which the options `by` set."""
        return dataclasses.replace(
            self,
            bytes=self.bytes * memory,
            flops=self.flops * work,
            what=self.what + what,
            options={**self.options, **(by or {})},
        )


def integer(text: str) -> int:
    """An argparse type: an integer within int64 (|x| <= 2^63 - 1), the hardware's bound on every
    integer option."""
    try:
        value = int(text)
    except ValueError:
        digits = text.strip().lstrip("+-").replace("_", "").lstrip("0")
        if not digits.isdigit():
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        # more digits than Python converts (4300): named by its leading ones
        lead = int(digits[:15]) / 10 ** (min(len(digits), 15) - 1)
        size = text_count(log10=len(digits) - 1 + math.log10(lead))
        sign = "-" if text.strip().startswith("-") else ""
        raise argparse.ArgumentTypeError(f"{sign}{size} {RANGE}") from None
    if abs(value) > INT_MAX:
        raise argparse.ArgumentTypeError(f"{shown(value) if len(text) > 30 else text} {RANGE}")
    return value


integer.__name__ = "integer"


def _parse(text: str, units: dict, kind: str, example: str) -> float:
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]?)[bB]?\s*", text)
    if m is None or m.group(2).lower() not in units or float(m.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive {kind} such as {example}")
    return float(m.group(1)) * units[m.group(2).lower()]


def memory_size(text: str) -> float:
    """An argparse type: a memory size in bytes from "8G", "512M", "2.5T", "1000000" (powers of
    1024)."""
    return _parse(text, UNITS, "memory size", "8G, 512M or 2T")


def duration(text: str) -> float:
    """An argparse type: seconds from "90", "30s", "20m", "2h", "1d"."""
    return _parse(text, SECONDS, "duration", "30s, 20m, 2h or 1d")


def add_options(parser: argparse.ArgumentParser) -> None:
    """--max-memory and --max-time, and the bounds of the integer options, in a command's --help."""
    g = parser.add_argument_group("resources", BOUNDS_HELP)
    g.add_argument(
        "--max-memory",
        type=memory_size,
        default=None,
        metavar="SIZE",
        help="refuse, before any work, a run estimated to hold more, e.g. 8G (default: the "
        "available memory, MemAvailable or the cgroup's limit; a larger value overrides "
        "it)",
    )
    g.add_argument(
        "--max-time",
        type=duration,
        default=None,
        metavar="TIME",
        help="refuse, before any work, a run estimated (roughly) to take longer, e.g. 2h or 3d "
        "(default: a day; a larger value allows longer runs)",
    )


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, which `taskset` narrows), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no affinity on this platform
        return max(1, os.cpu_count() or 1)


def available_memory() -> int:
    """The memory available to a new allocation, in bytes: /proc/meminfo's MemAvailable (else the
    free pages), or less where a cgroup (v2) limit leaves less (a container, a batch job)."""
    found = re.search(r"^MemAvailable:\s+(\d+) kB", _read("/proc/meminfo"), re.M)
    avail = (
        int(found.group(1)) * 1024
        if found
        else os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    )
    limit, used = (
        _read("/sys/fs/cgroup/memory.max").strip(),
        _read("/sys/fs/cgroup/memory.current").strip(),
    )
    if limit.isdigit() and used.isdigit():
        # memory.current counts the page cache too; its inactive part is reclaimed before the limit
        # bites
        cache = re.search(r"^inactive_file (\d+)$", _read("/sys/fs/cgroup/memory.stat"), re.M)
        avail = min(avail, max(int(limit) - int(used) + (int(cache.group(1)) if cache else 0), 0))
    return avail


def text_bytes(n: float) -> str:
    """n bytes as "3.1 GB" (powers of 1000) or "812 B"."""
    for unit, scale in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n:.0f} B"


def text_seconds(s: float) -> str:
    """s seconds as "40 s", "2.5 h", "3.1 years"."""
    for unit, scale in (("years", YEAR), ("days", 86400), ("h", 3600), ("min", 60)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s:.2g} s"


def _named(need: Need, work: bool = False) -> str:
    named = {**need.options, **(need.work_options if work else {})}
    return ", ".join(f"{k} = {v}" for k, v in named.items()) or "the configuration"


def sequential(runs: Iterable[Sequence[Need]]) -> list[Need]:
    """The needs of runs done one after another: the work of all of them, the memory of the largest
    run only."""
    runs = [list(r) for r in runs]
    if not runs:
        return []
    peak = max(range(len(runs)), key=lambda i: sum(n.bytes for n in runs[i]))
    return [
        n if i == peak else dataclasses.replace(n, bytes=0.0) for i, r in enumerate(runs) for n in r
    ]


def refuse_oversized(
    needs: Iterable[Need],
    max_memory: Optional[float] = None,
    max_time: Optional[float] = None,
    available: Optional[float] = None,
) -> None:
    """Raise ValueError, on one line naming the option of the largest term, its value, the estimate
    and the limit and what to do instead, when the summed memory of `needs` exceeds `max_memory`
    (default: the available memory), or their rough time exceeds `max_time` (default: a day)."""
    needs = list(needs)
    if not needs:
        return
    memory = sum(n.bytes for n in needs)
    avail = available_memory() if available is None else available
    # --max-memory replaces the available memory: lower, to leave room; higher, where the estimate
    #   overshoots (it
    # counts arrays the run may never hold at once) or memory the system would free
    limit, source = (
        (max_memory, "--max-memory") if max_memory is not None else (avail, "available memory")
    )
    if memory > limit:
        big = max(needs, key=lambda n: n.bytes)
        raise ValueError(
            f"{_named(big)} is too large here: the run would hold about {text_bytes(memory)} "
            f"({big.what}: {text_bytes(big.bytes)}), above the {source} of {text_bytes(limit)}, so "
            f"nothing was started; {big.instead or 'choose a smaller problem'}"
        )
    seconds = work_seconds(needs)
    limit, source = (
        (max_time, "--max-time")
        if max_time is not None
        else (DAY, "a day (raise it with --max-time)")
    )
    if seconds > limit:
        big = max(needs, key=lambda n: n.flops)
        raise ValueError(
            f"{_named(big, work=True)} is too large here: the run would take roughly "
            f"{text_seconds(seconds)} ({big.what}; rough: {_rates(needs)}), above "
            f"{source}{f' ({text_seconds(limit)})' if source == '--max-time' else ''}, so "
            f"nothing was started; {big.instead or 'choose a smaller problem'}"
        )


def work_seconds(needs: Iterable[Need]) -> float:
    """The estimated seconds of `needs`: each term's operations at its own rate."""
    return sum(n.flops / n.rate for n in needs)


def _rates(needs: Sequence[Need]) -> str:
    """The rates an estimate assumed, in words."""
    rates = sorted({n.rate for n in needs if n.flops}, reverse=True) or [FLOP_RATE]
    return " to ".join(f"{r:.0e}" for r in rates) + " operations a second"


# the estimate line of the accepted command, said when its work starts (`say_pending`): a refusal
# after the estimate (of --out, of the run's own checks) stays one line
_pending: list[str] = []


def say_long(needs: Iterable[Need], above: float = 60.0) -> None:
    """Work estimated at more than `above` seconds says so on the first line of its work
    (`say_pending`, called where the work starts)."""
    _pending.clear()
    needs = list(needs)
    seconds = work_seconds(needs)
    if seconds > above:
        _pending.append(
            f"dynsim: estimated at roughly {text_seconds(seconds)} of work (rough: "
            f"{_rates(needs)}; --max-time refuses longer runs before they start)"
        )


def say_pending(stream=None) -> None:
    """Print the estimate line `say_long` left, once (stderr)."""
    while _pending:
        print(_pending.pop(0), file=stream or sys.stderr, flush=True)


def records(steps, record_every) -> int:
    """How many times a run of `steps` steps records (every `record_every` steps, and the start and
    the last step)."""
    return max(int(steps), 0) // max(int(record_every), 1) + 2


def record_need(
    steps,
    record_every,
    numbers: float,
    per: str,
    what_else: Optional[Mapping[str, object]] = None,
    or_else: str = "",
) -> Need:
    """The recorded arrays: records x `numbers` float64 each (`per` says what the numbers are,
    `what_else` the other options they grow with, `or_else` what else to do)."""
    n = records(steps, record_every)
    return Need(
        f"recorded arrays: {n:,} records x {per}",
        {"--steps": steps, "--record-every": record_every, **(what_else or {})},
        bytes=8.0 * n * numbers,
        instead="fewer records: fewer --steps or a larger --record-every" + or_else,
    )
