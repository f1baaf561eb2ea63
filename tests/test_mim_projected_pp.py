"""Lemma 5.3 (b,c) reads every projected PP correlation B_k (the part of B that cluster k's gradient
moved, spec §6 eq. 5.1) at every GD step up to the switch T1, not at the records before it:
`reduced.gd.run(every_step=...)` and `gd.step_series` against a closed form, the shares B_k summing
back to B, the every-step record against a run recorded at every step (K = 2 cells, K = 1 classes),
the Phase-I reading between two records, and a missing reading that must not pass.

Runs: P = 256 grid areas (35 joint cells at K = 2), 60 GD steps recorded every 7 (rows at 0, 7,
..., 56 and a short last row at 60), so the every-step rows are exercised with a stale tail.
"""

import math

import jax.numpy as jnp
import numpy as np
import pytest

import reduced.mim
from dynsim import recording
from dynsim.mim import ladder, records, theorems
from reduced import gd
from reduced.mim import cells

STEPS, EVERY = 60, 7


def config(K: int):
    return ladder.rung_config(theorems.base_config(steps=1000, K=K), 256, 1000).replace(
        steps=STEPS, record_every=EVERY
    )


@pytest.fixture(scope="module")
def k2():
    """K = 2 mean field: recorded every 7 steps with the every-step rows, and every step."""
    cfg = config(2)
    return (
        cfg,
        reduced.mim.simulate(cfg, "mean_field", every_step=True),
        reduced.mim.simulate(cfg.replace(record_every=1), "mean_field"),
    )


def test_step_series_gives_every_step_of_a_closed_form():
    """y <- y - 0.1 y from 1: y_s = 0.9^s. Tolerance: two roundings per step over 30 steps and
    numpy's power (1 ulp) bound the relative error by 61 U64 = 6.8e-15; 1e-14 keeps that margin."""
    _, _, rec = gd.run(
        lambda y: y,
        0.1,
        lambda y: {"y": y},
        jnp.asarray(1.0),
        30,
        EVERY,
        every_step=lambda y: {"v": y},
    )
    steps, values = gd.step_series(recording.recorded_steps(30, EVERY), rec["v"])
    assert steps.tolist() == list(range(1, 31))
    np.testing.assert_allclose(values, 0.9 ** np.arange(1, 31), rtol=1e-14, atol=0)
    np.testing.assert_allclose(rec["y"], 0.9 ** recording.recorded_steps(30, EVERY), rtol=1e-14)


def test_cluster_shares_sum_to_b():
    """B_k moves by cluster k's own gradient term, B by their sum: sum_k B_k = B up to rounding
    (each step adds K + 1 rounded terms to entries <= max|B|: 3 ulp per step over 60 steps, 180 U64
    = 2e-14 of max|B|; 1e-13 leaves a factor 5), and each share is a real part of B (neither 0
    nor all of it)."""
    cfg = config(2)
    index = records.cell_index(cfg)
    state, _ = cells.run_jit(cfg, cells.tables(cfg), jnp.asarray(index.size, jnp.float64), False)
    A, B, Bs, Bk, Bsk = (np.asarray(x) for x in state)
    scale = max(np.max(np.abs(B)), np.max(np.abs(Bs)))
    assert scale > 1e-3  # B moved
    assert np.max(np.abs(Bk.sum(0) - B)) <= 1e-13 * scale
    assert np.max(np.abs(Bsk.sum(0) - Bs)) <= 1e-13 * scale
    for k in range(2):
        share = np.max(np.abs(Bk[k]))
        assert 0.05 * scale < share < 0.95 * np.max(np.abs(Bk).sum(0)) + 1e-12


def test_every_step_rows_equal_a_run_recorded_every_step(k2):
    """The rows hold pp_cluster_max at steps 1..60 as a run recorded at every step reads them. Both
    compile the same GD step (the scan's blocking differs), so they agree to rounding: 1e-13 of the
    largest value (a few ulp per step over 60 steps)."""
    cfg, every, dense = k2
    steps, values = gd.step_series(every.steps, every["pp_cluster_max_steps"])
    assert steps.tolist() == list(range(1, STEPS + 1)) and values.shape == (STEPS, 2)
    ref = np.asarray(dense["pp_cluster_max"])[1:]
    assert np.max(ref) > 1e-3
    assert np.max(np.abs(values - ref)) <= 1e-13 * np.max(ref)


def test_k1_every_step_rows_are_max_b():
    """K = 1 (per class engine): one cluster, B_1 = B; the rows equal pp_max read at every step."""
    cfg = config(1)
    every = reduced.mim.simulate(cfg, "mean_field", every_step=True)
    dense = reduced.mim.simulate(cfg.replace(record_every=1), "mean_field")
    steps, values = gd.step_series(every.steps, every["pp_cluster_max_steps"])
    ref = np.asarray(dense["pp_max"])[1:]
    assert steps.tolist() == list(range(1, STEPS + 1)) and np.max(ref) > 1e-3
    assert np.max(np.abs(values[:, 0] - ref)) <= 1e-13 * np.max(ref)


def test_phase1_reads_to_the_switch_not_to_the_last_record(k2):
    """Up to a T1 between two records (45.5: records at 42 and 49), the reading is the maximum over
    the steps <= 45 and the value at 45.5 itself (halfway between steps 45 and 46, as A_1(T1) is
    interpolated), above what the records up to 42 show (B grows)."""
    cfg, every, dense = k2
    d = np.asarray(dense["pp_cluster_max"])  # (61, K): every step
    exact = max(float(np.max(d[:46])), float(np.max(0.5 * (d[45] + d[46]))))
    recorded = float(np.max(np.asarray(every["pp_cluster_max"])[every.steps <= 45.5]))
    got = ladder.projected_pp_max(every, 45.5)
    assert abs(got - exact) <= 1e-13 * exact
    assert got > float(np.max(d[:46])) * (1 + 1e-6) > recorded * (1 + 1e-6)


def test_a_missing_every_step_reading_is_nan(k2):
    """Without the every-step rows the reading is NaN (tests/test_mim_claims_clusters.py: a NaN
    reading leaves Lemma 5.3 (b,c) not evaluated), never the records' lower value."""
    _, every, _ = k2
    bare = type(every)(
        every.steps,
        {k: v for k, v in every.observables.items() if k != "pp_cluster_max_steps"},
        every.meta,
    )
    assert math.isnan(ladder.projected_pp_max(bare, 45.5))
