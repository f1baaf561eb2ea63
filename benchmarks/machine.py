"""The machine a benchmark ran on, and the side-by-side timing helper every benchmark uses."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import statistics
import time
from typing import Callable, Mapping


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _ram_gb() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    return int(line.split()[1]) / 1024**2
    except OSError:
        pass
    return None


def _version(name: str) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cores() -> str:
    from dynsim.resources import usable_cores  # where describe() runs, as jax below

    return f"{usable_cores()} usable ({os.cpu_count()} logical)"


def describe() -> dict:
    """CPU model, cores, RAM, OS, package versions, float64 flag, date (UTC)."""
    import jax

    import dynsim  # noqa: F401  (float64)

    ram = _ram_gb()
    dev = jax.devices()[0]
    return {
        "cpu": _cpu_model(),
        "cores": _cores(),
        "ram": f"{ram:.1f} GiB" if ram else "unknown",
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": platform.python_version(),
        "jax": _version("jax"),
        "jaxlib": _version("jaxlib"),
        "numpy": _version("numpy"),
        "scipy": _version("scipy"),
        "torch": _version("torch"),
        "jax device": f"{dev.platform}:{dev.id} ({dev.device_kind})",
        "float64 (jax_enable_x64)": str(bool(jax.config.jax_enable_x64)),
        "XLA_FLAGS": os.environ.get("XLA_FLAGS", "(unset)"),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
    }


def line() -> str:
    """One line for a benchmark's __main__ output."""
    m = describe()
    return (
        f"machine: {m['cpu']}, {m['cores']} cores, {m['ram']}, {m['os']}; python "
        f"{m['python']}, jax {m['jax']}, numpy {m['numpy']}, torch {m['torch']}, float64 "
        f"{m['float64 (jax_enable_x64)']}"
    )


def side_by_side(fns: Mapping[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Wall times of each callable, `repeats` rounds, interleaved (a, b, c, a, b, c, ...). Warm up
    before calling."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def median(xs) -> float:
    return float(statistics.median(xs))


def median_ratio(num: list[float], den: list[float]) -> float:
    """Median over repeats of the per-round ratio num[i] / den[i] (rounds are interleaved, so
    paired)."""
    return float(statistics.median(a / b for a, b in zip(num, den)))


def print_result(res: dict) -> None:
    """The __main__ output of a benchmark module."""
    print(line())
    print(f"[{res['id']}] {res['title']}")
    print(f"goal: {res['goal']}")
    for row in res["rows"]:
        print("  " + ", ".join(f"{k}={fmt(v)}" for k, v in row.items()))
    print(f"met: {res['met']}")
    print(res["notes"])


def fmt(v) -> str:
    if isinstance(v, float):
        if v == 0 or 1e-3 <= abs(v) < 1e5:
            return f"{v:.4g}"
        return f"{v:.3e}"
    return str(v)
