"""Benchmark h: the cost of one GD step of each MIM level at P = 256 with K = 2, 4, 8 clusters
(issue 15).

Side by side in one process, per K: the full level sampled (`full.mim.simulate`, mode "sampled", N =
256 images a step, 2 replicates, reported per replicate), the reduced level with B free under mean
field (`reduced.mim.simulate(cfg, "mean_field")`, one count row per query and joint type) and by
Monte Carlo (`samples=64`, 2 draws). Each run is the library's own call with its observables
recorded every 10 steps; it runs once to compile and is then timed warm (median of `repeats`), so a
step's cost is the warm time over the steps. Random areas, kappa = (0.9, 0.4), gamma = 0.5.

Run: python benchmarks/mim_levels.py [--quick]
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dynsim  # noqa: F401  (float64)
import full.mim
import reduced.mim
from benchmarks import machine
from dynsim.mim import MIMConfig

GOAL = (
    "MIM at P = 256, K = 2-8 on 2 CPU cores: 200 GD steps (the docs/mim.md §3b comparison) of "
    "each level, one replicate, within 5 minutes"
)


def run(quick: bool = False) -> dict:
    P, Ks, steps, repeats = (64, (2,), 4, 1) if quick else (256, (2, 4, 8), 10, 3)
    rows = []
    for K in Ks:
        cfg = MIMConfig(
            P=P,
            K=K,
            kappa_c=0.9,
            kappa_s=0.4,
            mask_ratio=0.5,
            partition="random",
            eta=1.0,
            steps=steps,
            record_every=10,
            N=256,
        )
        calls = {
            "full sampled": lambda: full.mim.simulate(cfg, mode="sampled", replicates=2),
            "reduced mean_field": lambda: reduced.mim.simulate(cfg, "mean_field"),
            "reduced Monte Carlo": lambda: reduced.mim.simulate(cfg, samples=64, replicates=2),
        }
        for call in calls.values():
            call()  # compile
        times = machine.side_by_side(calls, repeats)
        per = {name: machine.median(t) / steps for name, t in times.items()}
        per["full sampled"] /= 2  # per replicate: the 2 replicates are one vmapped run
        types = reduced.mim.simulate(cfg, "mean_field").meta["joint_types"]
        rows.append(
            {
                "what": f"P={P}, K={K}, d={cfg.d}, joint types per query {min(types)}-{max(types)}",
                "full_s_per_step": per["full sampled"],
                "mean_field_s_per_step": per["reduced mean_field"],
                "monte_carlo_s_per_step": per["reduced Monte Carlo"],
                "full/mean_field": per["full sampled"] / per["reduced mean_field"],
                "full/monte_carlo": per["full sampled"] / per["reduced Monte Carlo"],
            }
        )
    worst = max(
        max(r["full_s_per_step"], r["mean_field_s_per_step"], r["monte_carlo_s_per_step"])
        for r in rows
    )
    return {
        "id": "h",
        "title": f"MIM levels at P={P}, K={', '.join(map(str, Ks))}: seconds per GD step",
        "goal": GOAL,
        "rows": rows,
        "met": None if quick else worst * 200 <= 300,
        "measured": f"slowest step {worst:.3g} s (200 steps in {worst * 200 / 60:.1f} min)",
        "notes": "full: N = 256 images a step, per replicate (2 run vmapped; R replicates cost "
        "about R times that); Monte Carlo: 64 count vectors per query in each of 2 "
        "draws; mean field: one row per query and joint type. A step's cost is the "
        "warm run over its steps, observables recorded every 10 steps included.",
    }


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    for row in run(quick)["rows"]:
        print({k: machine.fmt(v) for k, v in row.items()})
