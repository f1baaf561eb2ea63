"""Side-by-side cost of the two JSL levels on one problem: full exact GD / reduced population GD.

Run: python benchmarks/jsl_levels.py [--D 9 --C 3 --steps 20000 --repeats 3]
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
import reduced.jsl
from dynsim import JSLConfig, environment


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--D", type=int, default=9)
    ap.add_argument("--C", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    cfg = JSLConfig(D=a.D, C=a.C, steps=a.steps, record_every=max(a.steps // 100, 1))
    reduced.jsl.simulate(cfg)
    full.jsl.simulate(cfg)  # compile both
    times = {"reduced": [], "full": []}
    for _ in range(a.repeats):
        for name, fn in (("reduced", lambda: reduced.jsl.simulate(cfg)), ("full", lambda: full.jsl.simulate(cfg))):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, {environment.device()}, "
          f"jax {environment.versions()['jax']}")
    print(f"JSL D={cfg.D} C={cfg.C}, {cfg.steps} steps, float64, median of {a.repeats}")
    print(f"reduced: {med['reduced']:.2f} s ({med['reduced'] / cfg.steps * 1e6:.0f} us/step), "
          f"full exact: {med['full']:.2f} s ({med['full'] / cfg.steps * 1e6:.0f} us/step), "
          f"ratio full/reduced = {med['full'] / med['reduced']:.1f}")


if __name__ == "__main__":
    main()
