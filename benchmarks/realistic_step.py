"""The realistic step (E) that `check-theorems jsl` runs, before and after reading X transposed.

Side by side in one run, at D = 10, 16, 21 (d = D, N = 16,000, unit temperature, q = 0.5), float64
and float32: GD steps (optax SGD, the frozen diagonal) in one jit-compiled loop with
`full.jsl.realistic.empirical_value_and_grad`, its v-gradient contracted per sample from X (before:
`Xt=None`) or as one matrix-vector product with X transposed once (after: `realistic.transposed`).
Reported: ms per step, GB/s of the step's two reads of X, and that as a fraction of XLA's own
copy of X (read + write) on the same machine; the largest relative difference of v after the
loop (the same sums in another order: rounding).

Run: python benchmarks/realistic_step.py [--quick] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax
import jax.numpy as jnp
import optax

import dynsim  # noqa: F401  (float64)
from benchmarks import machine
from dynsim.jsl import JSLConfig, data
from full.jsl import realistic
from full.jsl.training import model_for, optimizer

SIZES = [(10, 2), (16, 2), (21, 3)]
STEPS = 100


def loop(cfg: JSLConfig, X, y, Xt):
    """STEPS GD steps from params0 reading X (Xt None) or X transposed for the v-gradient."""
    model, opt = model_for(cfg), optimizer(cfg)

    def step(c, _):
        params, state = c
        _, g = realistic.empirical_value_and_grad(model, params, X, y, Xt)
        updates, state = opt.update(g, state, params)
        return (optax.apply_updates(params, updates), state), None

    return jax.jit(lambda p0: jax.lax.scan(step, (p0, opt.init(p0)), None, length=STEPS)[0][0])


def row(D: int, C: int, N: int, dtype: str, repeats: int) -> list[dict]:
    cfg = JSLConfig(D=D, C=C, q=0.5, N=N, temperature="unit", eta=0.01, steps=1, dtype=dtype)
    w = data.feature(cfg, jnp.dtype(dtype))
    X, y = data.sample(jax.random.key(1), cfg, N, w, jnp.dtype(dtype))
    p0 = realistic.initial_params(cfg, jax.random.key(2), w)
    loops = {"before": loop(cfg, X, y, None), "after": loop(cfg, X, y, realistic.transposed(X))}
    out = {k: jax.block_until_ready(f(p0)) for k, f in loops.items()}
    copy = jax.jit(lambda B: B + 1.0, donate_argnums=0)
    buf = [X + 0.0]

    def copy_once():
        buf[0] = jax.block_until_ready(copy(buf[0]))

    copy_once()
    fns = {k: (lambda f=f: jax.block_until_ready(f(p0))) for k, f in loops.items()}
    t = machine.side_by_side({**fns, "copy": copy_once}, repeats)
    xb = X.size * X.dtype.itemsize
    copy_gbs = 2 * xb / machine.median(t["copy"]) / 1e9
    v = {k: o["params"]["v"] for k, o in out.items()}
    dv = float(jnp.max(jnp.abs(v["after"] - v["before"])) / jnp.max(jnp.abs(v["before"])))
    rows = []
    for k in loops:
        s = machine.median(t[k]) / STEPS
        gbs = 2 * xb / s / 1e9
        rows.append(
            {
                "D": D,
                "C": C,
                "N": N,
                "dtype": dtype,
                "variant": k,
                "X_MB": xb / 1e6,
                "ms_per_step": s * 1e3,
                "GB_per_s_two_reads": gbs,
                "copy_GB_per_s": copy_gbs,
                "fraction_of_copy": gbs / copy_gbs,
                "rel_diff_v": dv,
            }
        )
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="D = 10, N = 2000, 3 rounds")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    a = ap.parse_args(argv)
    res = {"machine": machine.describe(), "jax": jax.__version__, "rows": []}
    sizes = [(10, 2, 2000)] if a.quick else [(D, C, 16000) for D, C in SIZES]
    for D, C, N in sizes:
        for dtype in ("float64", "float32"):
            for r in row(D, C, N, dtype, 3 if a.quick else 7):
                res["rows"].append(r)
                print(
                    {k: (round(x, 3) if isinstance(x, float) else x) for k, x in r.items()},
                    flush=True,
                )
            (Path(a.out) / "realistic_step.json").write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
