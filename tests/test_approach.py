"""Theorem 4.2 machinery: vmapped reduced runs from several starts, the approach table's slope and
ladder."""

import math

import numpy as np
import pytest

import reduced.jsl
from dynsim import JSLConfig
from dynsim.checker import compare
from dynsim.jsl import approach
from dynsim.trajectory import Trajectory

from .conftest import U64


def test_simulate_many_equals_separate_runs():
    cfg = JSLConfig(D=8, C=2, steps=300, record_every=30)
    starts = np.array([[0.05, 0.01, -0.02], [-0.03, 0.0, 0.004], [0.1, -0.01, 0.0]])
    many = reduced.jsl.simulate_many(cfg, starts)
    for r, s in enumerate(starts):
        one = reduced.jsl.simulate(cfg, init=dict(zip(("alpha", "gamma", "rho"), s)))
        for name in ("alpha", "gamma", "rho", "loss", "own_set_attention"):
            got, want = many[f"{name}_seeds"][:, r], one[name]
            # The same operations in the same order, batched by vmap: XLA may fuse differently, so
            # allow a few roundings per step carried over 300 steps: 10 * 301 * u * scale.
            assert np.max(np.abs(got - want)) <= 10 * 301 * U64 * max(1.0, np.max(np.abs(want))), (
                name
            )
    assert np.allclose(many["alpha"], many["alpha_seeds"].mean(axis=1), rtol=0, atol=4 * U64)
    assert many.meta["level"] == "reduced" and len(many.meta["starts"]) == 3


@pytest.mark.parametrize("bad", [np.zeros((2, 2)), np.zeros((0, 3)), np.array([[np.nan, 0, 0]])])
def test_simulate_many_rejects_bad_starts(bad):
    with pytest.raises(ValueError, match="inits"):
        reduced.jsl.simulate_many(JSLConfig(D=8, C=2, steps=1), bad)


def test_slope_of_exact_power_law():
    N = [100, 400, 1600]
    assert approach.slope(N, [3.0 * n**-0.5 for n in N]) == pytest.approx(-0.5, abs=1e-12)
    assert approach.slope([100], [1.0]) is None
    # log of zero is dropped, one point remains
    assert approach.slope([100, 200], [0.0, 1.0]) is None


def test_ladder():
    assert approach.ladder(4000) == [250, 1000, 4000]
    assert approach.ladder(100) == [25, 100]
    assert approach.ladder(10) == [10]


def test_statistical_report_gives_deviation_in_standard_errors():
    steps = np.arange(0, 50, 10)
    meta = {"level": "full", "mode": "realistic", "dtype": "float64", "replicates": 8}
    ful = Trajectory(steps, {"alpha": np.full(5, 1.0), "alpha_se": np.full(5, 0.01)}, meta)
    red = Trajectory(
        steps,
        {"alpha": np.array([1.0, 1.0, 1.03, 1.0, 1.0])},
        {"level": "reduced", "dtype": "float64"},
    )
    rep = compare(red, ful, observables=["alpha"])
    assert rep.errors["alpha"].max_z == pytest.approx(3.0, rel=1e-9)
    assert "max |dev|/se" in rep.table()
    # 3 standard errors is inside the 99.9% family-wise band over 5 steps with 7 dof (t quantile
    # 7.06)
    assert rep.passed and math.isfinite(rep.errors["alpha"].tolerance)
