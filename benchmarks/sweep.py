"""Benchmark d: a 64-point sweep as one vmapped program against 64 sequential runs.

python benchmarks/sweep.py [--quick]

The 64 points are reduced JSL runs on an 8 x 8 grid of (q, eta) at D=9, C=3. Three ways, side by side:
  sequential  64 calls of `reduced.jsl.simulate(cfg)`: what a user writes. The config is a static argument of the
              compiled run, so each new point compiles its own program;
  vmapped     `reduced.jsl.many.simulate_group(cfgs, {}, 64)`: one program, q and eta traced, one compilation;
  sweep batch-1  the same program at batch size 1 called 64 times (one compilation): what vmapping adds on top of
              compiling once.
Every repeat starts from empty JAX caches (`jax.clear_caches()`), so compilation counts as it does for a user.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import jax  # noqa: E402

import dynsim  # noqa: E402,F401  (float64)
import reduced.jsl  # noqa: E402
from benchmarks import machine  # noqa: E402
from dynsim import JSLConfig  # noqa: E402
from reduced.jsl import many as reduced_many  # noqa: E402

GOAL = 10.0


def _configs(side: int, steps: int) -> list[JSLConfig]:
    qs = [0.1 + 0.35 * i / (side - 1) for i in range(side)]
    etas = [0.02 + 0.18 * i / (side - 1) for i in range(side)]
    return [JSLConfig(D=9, C=3, steps=steps, record_every=max(steps // 20, 1), q=q, eta=e) for q in qs for e in etas]


def run(quick: bool = False) -> dict:
    side, steps, repeats = (2, 200, 1) if quick else (8, 2000, 2)
    cfgs = _configs(side, steps)
    n = len(cfgs)

    def fresh(fn):
        def timed():
            jax.clear_caches()
            return fn()
        return timed

    fns = {
        "sequential": fresh(lambda: [reduced.jsl.simulate(c) for c in cfgs]),
        "vmapped": fresh(lambda: reduced_many.simulate_group(cfgs, {}, n)),
        "batch1": fresh(lambda: [reduced_many.simulate_group([c], {}, 1) for c in cfgs]),
    }
    # the same numbers both ways (else the timing compares different work)
    a, b = reduced.jsl.simulate(cfgs[-1]), reduced_many.simulate_group(cfgs, {}, n)[-1]
    assert dynsim.compare(a, b).passed
    times = machine.side_by_side(fns, repeats)
    ratio = machine.median_ratio(times["sequential"], times["vmapped"])
    rows = [
        {"way": "64 sequential reduced.jsl.simulate" if n == 64 else f"{n} sequential simulate",
         "median s": machine.median(times["sequential"]), "s per point": machine.median(times["sequential"]) / n},
        {"way": f"one vmapped program (batch {n})", "median s": machine.median(times["vmapped"]),
         "s per point": machine.median(times["vmapped"]) / n, "sequential / this": ratio},
        {"way": "same program, batch 1, called per point", "median s": machine.median(times["batch1"]),
         "s per point": machine.median(times["batch1"]) / n,
         "sequential / this": machine.median_ratio(times["sequential"], times["batch1"])},
    ]
    notes = (f"{n} points, reduced JSL D=9 C=3, {steps} steps each, {repeats} interleaved repeat(s), each from empty "
             "JAX caches (compilation included, as a user meets it). The gain is compilation: a single run's config "
             "is static, so every point compiles; the sweep compiles once with q and eta traced. On 2 CPU cores the "
             "vmapped batch does not raise the arithmetic throughput per point much (each run already vectorizes "
             "over its configuration sum): compare the batch-1 row, which also compiles once.")
    measured = (f"{ratio:.1f}x: {n} points in one vmapped program {machine.median(times['vmapped']):.1f} s, "
                f"{n} sequential runs {machine.median(times['sequential']):.0f} s")
    return {"id": "d", "title": f"a sweep of {n} points vmapped against {n} sequential runs",
            "goal": f">= {GOAL:g}x", "rows": rows, "measured": measured, "met": None if quick else ratio >= GOAL, "notes": notes}


if __name__ == "__main__":
    machine.print_result(run(quick="--quick" in sys.argv))
