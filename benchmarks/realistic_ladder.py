"""The realistic problem (E) in the separation regime: step cost, and GD's time to associate.

Two parts, each written to OUT/realistic_ladder.json as soon as it is measured (a cut-off run keeps
what it finished):

- step: seconds per GD step of the library's realistic step (`full.jsl.realistic.empirical_grad`,
  optax SGD, one jit-compiled fori_loop without the observables, as benchmark e) at each (D, C, N,
  dtype), with the bandwidth of its two reads of X against XLA's own copy of X (read + write).
- train: `dynsim.jsl.realistic_runs.run` (what `check-theorems jsl` judges: seeds vmapped, records
  every T/40 steps) at each ladder point, T chosen from the measured step so that the point fits its
  share of --budget; per record the fraction of (seed, row) pairs associated (Definition 2.2,
  strict), and at T the f*-error of the trained model against the sign-of-count GLM's on the same
  test set.

Run: python benchmarks/realistic_ladder.py [--device cpu|gpu] [--budget SECONDS] [--out DIR]
     [--quick] [--train D:N:seeds:T:eta,...]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jax
import numpy as np

import dynsim  # noqa: F401  (float64)
from benchmarks import machine
from benchmarks.full_large import gd_loop, new_realistic_grad, timed
from dynsim.jsl import JSLConfig, data, realistic_runs, reference
from full.jsl import realistic
from full.jsl.training import model_for, optimizer

# (D, C, q, eta): q (D - C) >= C^2 (the separation regime); eta about 0.1 (9 / D)^2, the early GD
# stability edge of the value direction scaling as 1 / D^2 (0.02 ran at D = 21 and 0.005 at D = 36
# early on; 0.02 diverged at D = 36; late, once the attention sharpens, the edge is lower)
SIZES = {
    10: (10, 2, 0.5, 0.05),
    12: (12, 2, 0.5, 0.05),
    21: (21, 3, 0.5, 0.02),
    36: (36, 4, 0.5, 0.005),
}
STEP_GRID = [(21, 8000), (21, 32000), (36, 8000), (36, 32000)]
TRAIN_GRID = [(21, 4000, 4), (21, 16000, 4), (36, 16000, 2), (36, 64000, 2)]  # (D, N, seeds)
QUICK_STEP = [(21, 1000)]
QUICK_TRAIN = [(21, 1000, 2)]


def config(D: int, N: int, dtype: str, steps: int = 1, eta: float | None = None) -> JSLConfig:
    D, C, q, eta0 = SIZES[D]
    eta = eta0 if eta is None else eta
    return JSLConfig(
        D=D,
        C=C,
        q=q,
        eta=eta,
        temperature="unit",
        N=N,
        n_test=4096,
        steps=steps,
        record_every=max(1, steps // 40),
        dtype=dtype,
    )


def step_row(D: int, N: int, dtype: str, repeats: int) -> dict:
    """Seconds per library step and GB/s of its two reads of X, beside XLA's copy of X."""
    cfg = config(D, N, dtype)
    w = data.feature(cfg, np.dtype(dtype))
    X, y = data.sample(jax.random.key(12), cfg, N, w, np.dtype(dtype))
    params0 = realistic.initial_params(cfg, jax.random.key(11), w)
    loop = gd_loop(new_realistic_grad(model_for(cfg)), optimizer(cfg))
    steps = 20
    t = timed({"step": loop}, params0, {"step": steps}, repeats, (X, y))
    copy = jax.jit(lambda B: B + 1.0, donate_argnums=0)
    buf = [X + 0.0]

    def copy_once():
        buf[0] = jax.block_until_ready(copy(buf[0]))

    copy_once()
    c = machine.side_by_side({"copy": copy_once}, repeats)
    xb = X.size * X.dtype.itemsize
    s = machine.median(t["step"])
    return {
        "D": D,
        "C": cfg.C,
        "N": N,
        "dtype": dtype,
        "X_MB": xb / 1e6,
        "ms_per_step": s * 1e3,
        "GB_per_s_two_reads": 2 * xb / s / 1e9,
        "copy_GB_per_s": 2 * xb / machine.median(c["copy"]) / 1e9,
    }


def train_row(D: int, N: int, seeds: int, steps: int, dtype: str, eta: float | None = None) -> dict:
    """One ladder point: association over time and the f*-errors at T (module docstring)."""
    cfg = config(D, N, dtype, steps, eta)
    t0 = time.perf_counter()
    obs, fin = realistic_runs.run(cfg, seeds)
    wall = time.perf_counter() - t0
    marks = np.arange(len(obs["patch_association"]))
    per_seed = obs["patch_association_seeds"]  # (records, seeds)
    every = np.all(per_seed >= 1.0, axis=-1)
    first = int(np.argmax(every)) if every.any() else None
    rec = cfg.record_every
    return {
        "D": D,
        "C": cfg.C,
        "q": cfg.q,
        "eta": cfg.eta,
        "N": N,
        "seeds": seeds,
        "T": steps,
        "dtype": dtype,
        "wall_s": wall,
        "s_per_seed": wall / seeds,
        "record_every": rec,
        "association_mean": obs["patch_association"].tolist(),
        "first_step_every_row_every_seed": None
        if first is None
        else min(steps, int(marks[first] * rec)),
        "gamma": obs["gamma"].tolist(),
        "rho": obs["rho"].tolist(),
        "loss": obs["loss"].tolist(),
        "f_star_error": fin["f_star_error"].tolist(),
        "glm_f_star_error": fin["glm_f_star_error"].tolist(),
        "glm_exact": reference.glm_error_fstar(cfg),
        "bayes_exact": reference.bayes_error_fstar(cfg),
        "nonfinite": bool(np.any(~np.isfinite(obs["loss"]))),
    }


def show(row: dict) -> None:
    keys = (
        "D",
        "N",
        "seeds",
        "T",
        "eta",
        "wall_s",
        "first_step_every_row_every_seed",
        "f_star_error",
        "glm_f_star_error",
    )
    print({k: row[k] for k in keys}, flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    ap.add_argument("--budget", type=float, default=400.0, help="seconds for the train part")
    ap.add_argument("--out", default=os.environ.get("OUT", "."))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--train",
        default=None,
        help="only these train points, D:N:seeds:T:eta comma-separated (no step part)",
    )
    a = ap.parse_args(argv)
    jax.config.update("jax_default_device", jax.devices(a.device)[0])
    # float32 products in float32, not TF32
    jax.config.update("jax_default_matmul_precision", "highest")
    out = Path(a.out) / "realistic_ladder.json"
    res = {
        "machine": machine.describe() if hasattr(machine, "describe") else None,
        "device": str(jax.devices(a.device)[0]),
        "jax": jax.__version__,
        "step": [],
        "train": [],
    }

    def save():
        out.write_text(json.dumps(res, indent=1))

    repeats = 3 if a.quick else 5
    if a.train:
        for point in a.train.split(","):
            D, N, seeds, T, eta = point.split(":")
            res["train"].append(
                train_row(int(D), int(N), int(seeds), int(T), "float32", float(eta))
            )
            show(res["train"][-1])
            save()
        return 0
    for D, N in QUICK_STEP if a.quick else STEP_GRID:
        for dtype in ("float32", "float64"):
            res["step"].append(step_row(D, N, dtype, repeats))
            print(res["step"][-1], flush=True)
            save()
    ms = {(r["D"], r["N"]): r["ms_per_step"] for r in res["step"] if r["dtype"] == "float32"}
    grid = QUICK_TRAIN if a.quick else TRAIN_GRID
    for D, N, seeds in grid:
        near = min(ms, key=lambda k: (k[0] != D, abs(math.log(k[1] / N))))
        # observables and seeds: a margin of 1.5
        per_step = ms[near] / 1e3 * (N / near[1]) * seeds * 1.5
        steps = max(400, int(a.budget / len(grid) / per_step) // 400 * 400)
        res["train"].append(train_row(D, N, seeds, steps, "float32"))
        show(res["train"][-1])
        save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
