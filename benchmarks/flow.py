"""Benchmark b: gradient flow of reduced JSL at D=36, C=4, q=0.3 to t = 1e6 with dynsim's defaults
(LSODA on the moment-class sum), cold and warm, against diffrax Kvaerno4 on the same sum (the
previous solver), the previous multiset vector field (per evaluation) and SciPy LSODA on a NumPy
multiset field (the reference, to t = 100). Run: python benchmarks/flow.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

import dynsim  # noqa: F401  (float64)
import reduced.jsl
from benchmarks import machine
from dynsim import JSLConfig
from reduced import flow as generic_flow  # noqa: E402
from reduced.jsl import flow


def scipy_run(cfg: JSLConfig, hand, t_max: float, times: np.ndarray):
    from scipy.integrate import solve_ivp

    rates = np.asarray(flow.rates(cfg))
    return solve_ivp(
        lambda t, y: -rates * hand.loss_and_gradients(y)[1:],
        (0.0, t_max),
        np.asarray(reduced.jsl.initial_state(cfg)),
        method="LSODA",
        t_eval=times,
        rtol=generic_flow.RTOL,
        atol=generic_flow.ATOL,
    )


def per_eval(fn, repeats: int = 5) -> float:
    fn()
    ts = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return machine.median(ts)


_COLD = """
import json, sys, time
import dynsim, reduced.jsl
from dynsim import JSLConfig
t0 = time.perf_counter()
tr = reduced.jsl.simulate(JSLConfig(D=int(sys.argv[1]), C=4, q=0.3), method="flow", t_max=1e6)
print(json.dumps({"s": time.perf_counter() - t0, "result": tr.meta["solver_result"]}))
"""


def run(quick: bool = False) -> dict:
    import json
    import subprocess

    import jax.numpy as jnp

    from benchmarks.reduced_numpy import HandReduced
    from reduced.jsl import tables

    D = 16 if quick else 36
    cfg = JSLConfig(D=D, C=4, q=0.3)
    t_max, t_common, repeats = 1e6, 1e2, 3
    cold = json.loads(
        subprocess.run(
            [sys.executable, "-c", _COLD, str(D)], capture_output=True, text=True, check=True
        )
        .stdout.strip()
        .splitlines()[-1]
    )

    def run_lsoda(t):
        return reduced.jsl.simulate(cfg, method="flow", t_max=t)

    def run_kvaerno(t):
        return reduced.jsl.simulate(cfg, method="flow", t_max=t, solver="kvaerno4")

    traj = run_lsoda(t_max)
    traj_k = run_kvaerno(t_max)  # compiles the diffrax solve
    times = machine.side_by_side(
        {"lsoda": lambda: run_lsoda(t_max), "kvaerno4": lambda: run_kvaerno(t_max)}, repeats
    )
    hand = HandReduced(cfg)
    opts = generic_flow.Flow(t_max=t_common).resolved(cfg.eta, t_common)
    t0 = time.perf_counter()
    sc = scipy_run(cfg, hand, t_common, opts["times"])
    scipy_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    traj_c = run_lsoda(t_common)
    lsoda_common = time.perf_counter() - t0
    static = generic_flow.static(cfg)
    th = jnp.asarray(reduced.jsl.initial_state(cfg))
    classes, multisets = (
        tables.table(static, None).weights,
        tables.table(static, None, "multisets").weights,
    )
    c_cls = per_eval(lambda: np.asarray(flow.rhs_jit(static, classes, th)))
    c_mul = per_eval(lambda: np.asarray(flow.rhs_jit(static, multisets, th)))
    c_jac = per_eval(lambda: np.asarray(flow.jacobian_jit(static, classes, th)))
    final = np.array([traj[k][-1] for k in ("alpha", "gamma", "rho")])
    final_k = np.array([traj_k[k][-1] for k in ("alpha", "gamma", "rho")])
    agree = float(
        np.max(np.abs(sc.y[:, -1] - np.array([traj_c[k][-1] for k in ("alpha", "gamma", "rho")])))
    )
    warm = machine.median(times["lsoda"])
    m = traj.meta
    rows = [
        {
            "what": f"dynsim flow to t = {t_max:g}, cold process (sympy, classes, compile, solve)",
            "s": cold["s"],
        },
        {
            "what": f"dynsim flow to t = {t_max:g}, warm (median of {repeats}): LSODA on the "
            f"class sum",
            "s": warm,
            "evaluations": m["evaluations"],
            "jacobians": m["jacobians"],
            "solver_steps": m["solver_steps"],
        },
        {
            "what": "same, diffrax Kvaerno4 (the previous solver) on the class sum",
            "s": machine.median(times["kvaerno4"]),
            "solver_steps": traj_k.meta["solver_steps"],
            "ratio_kvaerno4/lsoda": machine.median_ratio(times["kvaerno4"], times["lsoda"]),
        },
        {"what": "per evaluation: vector field over moment classes", "s": c_cls},
        {
            "what": "per evaluation: vector field over multisets (the previous sum)",
            "s": c_mul,
            "ratio_multisets/classes": c_mul / c_cls,
        },
        {"what": "per evaluation: Jacobian (jacfwd) over moment classes", "s": c_jac},
        {
            "what": f"scipy LSODA + numpy hand-derived multiset field to t = {t_common:g} "
            f"(reference, one run)",
            "s": scipy_s,
            "evaluations": int(sc.nfev),
        },
        {
            "what": f"dynsim LSODA to t = {t_common:g} (same run)",
            "s": lsoda_common,
            "ratio_scipy_numpy/dynsim": scipy_s / lsoda_common,
        },
    ]
    met = None if quick else bool(cold["s"] <= 20.0 and warm <= 5.0)
    notes = (
        f"Goal (issue 12): <= 20 s cold and <= 5 s warm on 2 cores. Terms: "
        f"{classes.w.shape[0]:,} moment classes ({multisets.w.shape[0]:,} multisets). rtol "
        f"{generic_flow.RTOL:g}, atol {generic_flow.ATOL:g}, 100 log-spaced saves with every "
        "observable. The "
        f"two solvers' final states differ by "
        f"{np.max(np.abs(final - final_k) / np.abs(final)):.1g} relative (both within rtol); "
        f"dynsim and the SciPy/NumPy reference agree at t = {t_common:g} to {agree:.2g}. The "
        f"previous implementation (multiset sum + Kvaerno4) took 911 s to t = 1e6 in the "
        f"previous benchmark run (2026-11-22, not re-run: 15 minutes); its vector field is "
        f"timed above side by side."
    )
    return {
        "id": "b",
        "title": f"gradient flow, reduced JSL D={D} C=4 q=0.3 to t=1e6: LSODA on moment classes",
        "goal": "<= 20 s cold, <= 5 s warm on 2 CPU cores",
        "rows": rows,
        "met": met,
        "notes": notes,
        "measured": f"cold {cold['s']:.1f} s, warm {warm:.1f} s; Kvaerno4 "
        f"{machine.median_ratio(times['kvaerno4'], times['lsoda']):.1f}x slower; field "
        f"{c_mul / c_cls:.0f}x faster than the multiset sum",
    }


if __name__ == "__main__":
    machine.print_result(run(quick="--quick" in sys.argv))
