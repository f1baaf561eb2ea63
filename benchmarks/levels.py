"""Side-by-side cost of the two levels on one problem: full exact GD / reduced population GD (JSL or
MIM).

Run: python benchmarks/levels.py jsl [--D 9 --C 3 --steps 20000 --repeats 3]
     python benchmarks/levels.py mim [--P 16 --steps 2000 --repeats 3]
Both runs are compiled first (warm-up), then timed `repeats` times each, interleaved; the median
ratio is printed with the machine description. Speed is a ratio measured in one run, never an
absolute number in a test.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

import dynsim  # noqa: F401  (float64)
import full.jsl
import full.mim
import reduced.jsl
import reduced.mim
from dynsim import JSLConfig, MIMConfig, environment


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("setting", choices=("jsl", "mim"))
    ap.add_argument("--D", type=int, default=9, help="jsl: patches")
    ap.add_argument("--C", type=int, default=3, help="jsl: set size")
    ap.add_argument("--P", type=int, default=16, help="mim: patches")
    ap.add_argument("--steps", type=int, default=None, help="default: 20000 (jsl), 2000 (mim)")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    if a.setting == "jsl":
        steps = a.steps or 20000
        cfg = JSLConfig(D=a.D, C=a.C, steps=steps, record_every=max(steps // 100, 1))
        levels, what = (
            {"reduced": reduced.jsl.simulate, "full": full.jsl.simulate},
            f"JSL D={cfg.D} C={cfg.C}",
        )
    else:
        steps = a.steps or 2000
        cfg = MIMConfig(P=a.P, steps=steps, record_every=max(steps // 100, 1))
        levels = {"reduced": reduced.mim.simulate, "full": full.mim.simulate}
        what = f"MIM P={cfg.P} areas {[len(x) for x in cfg.areas[0]]} |M|={cfg.masked}"
    for fn in levels.values():
        fn(cfg)  # compile
    times: dict = {name: [] for name in levels}
    for _ in range(a.repeats):
        for name, fn in levels.items():
            t0 = time.perf_counter()
            fn(cfg)
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, {environment.device()}, "
        f"jax {environment.versions()['jax']}"
    )
    print(f"{what}, {steps} steps, float64, median of {a.repeats}")
    print(
        f"reduced: {med['reduced']:.2f} s ({med['reduced'] / steps * 1e6:.0f} us/step), "
        f"full exact: {med['full']:.2f} s ({med['full'] / steps * 1e6:.0f} us/step), "
        f"ratio full/reduced = {med['full'] / med['reduced']:.1f}"
    )


if __name__ == "__main__":
    main()
