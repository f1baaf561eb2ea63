"""Benchmark d: a 64-point sweep as one vmapped program against 64 sequential runs.

python benchmarks/sweep.py [--quick]

The 64 points are reduced JSL runs on an 8 x 8 grid of (q, eta) at D=9, C=3. Four ways, side by
side:
  static      64 calls of `reduced.jsl.simulate(cfg)` with the config a static argument of the
    compiled run
              (`jax.jit(dynamics.run, static_argnums=0)`, how dynsim compiled before configs were
                pytrees): each
              new point compiles its own program;
  sequential  64 calls of `reduced.jsl.simulate(cfg)`: what a user writes. The config is a pytree
    whose numbers
              are traced (`dynsim.pytree`), so the 64 points share one compiled program;
  vmapped     `reduced.jsl.many.simulate_group(cfgs, {}, 64)`: one program, q and eta traced, one
    compilation;
  sweep batch-1  the same program at batch size 1 called 64 times (one compilation): what vmapping
    adds on top of
              compiling once.
Every repeat starts from empty JAX caches (`jax.clear_caches()`), so compilation counts as it does
for a user.
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
from reduced.jsl import dynamics  # noqa: E402
from benchmarks import machine  # noqa: E402
from dynsim import JSLConfig  # noqa: E402
from reduced.jsl import many as reduced_many  # noqa: E402

GOAL = 10.0


def _configs(side: int, steps: int) -> list[JSLConfig]:
    qs = [0.1 + 0.35 * i / (side - 1) for i in range(side)]
    etas = [0.02 + 0.18 * i / (side - 1) for i in range(side)]
    return [
        JSLConfig(D=9, C=3, steps=steps, record_every=max(steps // 20, 1), q=q, eta=e)
        for q in qs
        for e in etas
    ]


def run(quick: bool = False) -> dict:
    side, steps, repeats = (2, 200, 1) if quick else (8, 2000, 2)
    cfgs = _configs(side, steps)
    n = len(cfgs)

    def fresh(fn):
        def timed():
            jax.clear_caches()
            return fn()

        return timed

    def static():
        pytree_run = dynamics.run_jit
        dynamics.run_jit = jax.jit(dynamics.run, static_argnums=0)
        try:
            return [reduced.jsl.simulate(c) for c in cfgs]
        finally:
            dynamics.run_jit = pytree_run

    fns = {
        "static": fresh(static),
        "sequential": fresh(lambda: [reduced.jsl.simulate(c) for c in cfgs]),
        "vmapped": fresh(lambda: reduced_many.simulate_group(cfgs, {}, n)),
        "batch1": fresh(lambda: [reduced_many.simulate_group([c], {}, 1) for c in cfgs]),
    }
    # the same numbers both ways (else the timing compares different work)
    a, b = reduced.jsl.simulate(cfgs[-1]), reduced_many.simulate_group(cfgs, {}, n)[-1]
    assert dynsim.compare(a, b).passed
    times = machine.side_by_side(fns, repeats)
    ratio = machine.median_ratio(times["static"], times["vmapped"])

    def row(way, name):
        med = machine.median(times[name])
        out = {"way": way, "median s": med, "s per point": med / n}
        if name != "static":
            out["static / this"] = machine.median_ratio(times["static"], times[name])
        return out

    rows = [
        row(f"{n} sequential simulate, config static (one program per point)", "static"),
        row(f"{n} sequential reduced.jsl.simulate (config a pytree: one program)", "sequential"),
        row(f"one vmapped program (batch {n})", "vmapped"),
        row("same program, batch 1, called per point", "batch1"),
    ]
    notes = (
        f"{n} points, reduced JSL D=9 C=3, {steps} steps each, {repeats} interleaved "
        f"repeat(s), each from empty "
        "JAX caches (compilation included, as a user meets it). The gain over the static row "
        "is compilation: with the config static every point compiles; as a pytree (numbers "
        "traced) the sequential runs and the sweep compile once. On 2 CPU cores the vmapped "
        "batch does not raise the arithmetic throughput per point much (each run already "
        "vectorizes over its configuration sum): compare the batch-1 row."
    )
    measured = (
        f"{ratio:.1f}x: {n} points in one vmapped program "
        f"{machine.median(times['vmapped']):.1f} s, {n} sequential runs "
        f"{machine.median(times['sequential']):.1f} s, {n} with the config static "
        f"{machine.median(times['static']):.0f} s"
    )
    return {
        "id": "d",
        "title": f"a sweep of {n} points vmapped against {n} sequential runs, config static or "
        f"traced",
        "goal": f">= {GOAL:g}x",
        "rows": rows,
        "measured": measured,
        "met": None if quick else ratio >= GOAL,
        "notes": notes,
    }


if __name__ == "__main__":
    machine.print_result(run(quick="--quick" in sys.argv))
