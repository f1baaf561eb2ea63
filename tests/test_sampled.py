"""Sampled (Monte Carlo) full-matrix GD against the exact reduced dynamics."""

import numpy as np
import pytest

import full.jsl as fj
import reduced.jsl as rj
from dynsim import JSLConfig, compare


@pytest.fixture(scope="module")
def sampled():
    cfg = JSLConfig(D=8, C=2, steps=200, record_every=20, N=4096)
    return cfg, fj.simulate(cfg, mode="sampled", replicates=8)


def test_sampled_agrees_with_exact_within_its_band(sampled):
    """The band: Student t (7 dof) at 99.9% family-wise over the recorded steps x standard error of the mean
    of 8 seeded runs. With fixed seeds the test is deterministic; under the null it would fail with
    probability <= 0.1% per observable (plus the O(1/N) bias documented in docs/jsl.md, small at N = 4096)."""
    cfg, ful = sampled
    red = rj.simulate(cfg)
    report = compare(red, ful)
    assert report.kind == "statistical"
    assert report.passed, report.table()
    assert all(ful[f"{k}_se"][-1] > 0 for k in ("alpha", "gamma", "rho", "loss"))
    assert ful.meta["replicates"] == 8 and ful.meta["batch_size"] == 4096
    # sampling noise really is present: the full run is not secretly exact
    assert report.errors["alpha"].max_abs > 1e-6 and ful["v_perp"][-1] > 1e-4


def test_band_detects_a_different_dynamics(sampled):
    """The same sampled run against exact dynamics at another learning rate must disagree."""
    cfg, ful = sampled
    other = rj.simulate(cfg.replace(eta=0.04))
    assert not compare(other, ful).passed


def test_sampled_needs_two_replicates():
    with pytest.raises(ValueError, match="replicates"):
        fj.simulate(JSLConfig(D=8, C=2, steps=1), mode="sampled", replicates=1)
    with pytest.raises(ValueError, match="mode = 'other'"):
        fj.simulate(JSLConfig(D=8, C=2, steps=1), mode="other")


def test_sampled_is_reproducible():
    cfg = JSLConfig(D=8, C=2, steps=10, record_every=5, N=64)
    a = fj.simulate(cfg, mode="sampled", replicates=2)
    b = fj.simulate(cfg, mode="sampled", replicates=2)
    for k in a.observables:
        assert np.array_equal(a[k], b[k]), k
    c = fj.simulate(cfg.replace(seed=1), mode="sampled", replicates=2)
    assert not np.array_equal(a["alpha"], c["alpha"])
