"""Speed levers of `check-theorems jsl`'s realistic seeds at the default plan's size, side by side.

One whole seed of `dynsim.jsl.realistic_runs` (data, start, GD with the sharpness at its records,
the finals) at D = 16, C = 2, q = 2/7, eta = 0.01, for N = 500 to 4000, timed one seed after
another (`_one_seed` jit-compiled once), the six seeds vmapped in one program, and the six seeds
side by side in threads, one a core (as the command runs them: `realistic_runs.run`,
`dynsim.sweeps.threads.side_by_side`), in float64 and float32. Each is timed at two lengths (SHORT
and LONG steps, after a compile) so that the difference gives seconds per step without compilation
and the records' fixed cost. Reported: microseconds per seed-step for each, and the ratios
sequential / vmapped, sequential / side by side and float64 / float32.

Run: python benchmarks/realistic_levers.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax
import jax.numpy as jnp

import dynsim  # noqa: F401  (float64)
from benchmarks import machine
from dynsim.jsl import JSLConfig, data, realistic_plan, realistic_runs
from dynsim.sweeps import threads
from full.jsl import realistic

SEEDS = 6
SHORT, LONG = 200, 4200


def _seconds(fn) -> float:
    start = time.perf_counter()
    jax.block_until_ready(fn())
    return time.perf_counter() - start


def measure(N: int, dtype: str, long: int) -> dict:
    """Microseconds per seed-step at N: one seed after another, the seeds vmapped, and the seeds
    side by side in threads."""
    plan = realistic_plan.FULL
    cores = realistic_runs.side_by_side(SEEDS)
    out = {}
    one = jax.jit(realistic_runs._one_seed)
    many = jax.jit(jax.vmap(realistic_runs._one_seed, in_axes=(None, None, 0, None)))
    for steps in (SHORT, long):
        cfg = JSLConfig(
            D=plan.D,
            C=plan.C,
            q=plan.q,
            N=N,
            eta=plan.eta,
            temperature="unit",
            steps=steps,
            record_every=steps,
            n_test=plan.n_test,
            dtype=dtype,
        )
        w = data.feature(cfg, jnp.dtype(dtype))
        keys = jax.vmap(lambda r: realistic.seed_key(cfg, r))(jnp.arange(SEEDS))
        shuffle = jnp.asarray(False)
        one(cfg, shuffle, keys[0], w), many(cfg, shuffle, keys, w)  # compile
        tasks = [(r,) for r in range(SEEDS)]

        def seed(r):
            return jax.block_until_ready(one(cfg, shuffle, keys[r], w))

        out[steps] = (
            sum(_seconds(lambda r=r: one(cfg, shuffle, keys[r], w)) for r in range(SEEDS)),
            _seconds(lambda: many(cfg, shuffle, keys, w)),
            _seconds(lambda: list(threads.side_by_side(tasks, seed, cores))),
        )
    per = 1e6 / ((long - SHORT) * SEEDS)
    seq, vm, side = ((out[long][i] - out[SHORT][i]) * per for i in (0, 1, 2))
    return {
        "N": N,
        "dtype": dtype,
        "us_per_seed_step_sequential": seq,
        "us_per_seed_step_vmapped": vm,
        "us_per_seed_step_side_by_side": side,
        "threads": cores,
        "sequential_over_vmapped": seq / vm,
        "sequential_over_side_by_side": seq / side,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"N = 500 only, {SHORT * 3} steps")
    ap.add_argument("--out", default=None, help="write levers.json into this directory")
    args = ap.parse_args(argv)
    Ns, long = ([500], SHORT * 3) if args.quick else ([500, 1000, 2000, 4000], LONG)
    rows = [measure(N, dtype, long) for N in Ns for dtype in ("float64", "float32")]
    print(
        "| N | dtype | us / seed-step, one after another | vmapped | side by side (threads) "
        "| sequential / vmapped | sequential / side by side |"
    )
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['N']} | {r['dtype']} | {r['us_per_seed_step_sequential']:.0f} | "
            f"{r['us_per_seed_step_vmapped']:.0f} | {r['us_per_seed_step_side_by_side']:.0f} "
            f"({r['threads']}) | {r['sequential_over_vmapped']:.2f} | "
            f"{r['sequential_over_side_by_side']:.2f} |"
        )
    for N in Ns:
        f64, f32 = (
            next(r for r in rows if r["N"] == N and r["dtype"] == d) for d in ("float64", "float32")
        )
        ratio = f64["us_per_seed_step_sequential"] / f32["us_per_seed_step_sequential"]
        print(f"N = {N}: float64 / float32, one after another: {ratio:.2f}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "levers.json"), "w") as f:
            json.dump({"machine": machine.describe(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
