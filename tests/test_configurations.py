"""The count-configuration sum of the reduced population loss, and its truncation bounds."""

import itertools
import math

import jax.numpy as jnp
import numpy as np
import pytest

import reduced.jsl as rj
from dynsim import JSLConfig
from reduced.jsl import configurations as conf
from tests.conftest import U64


@pytest.mark.parametrize("D,C,expected", [(16, 4, 680), (9, 3, 55), (36, 4, 319_770)])
def test_number_of_configurations(D, C, expected):
    # Counts printed in docs/derivations/jsl.md §3b.
    assert conf.count(D, C) == expected


@pytest.mark.parametrize("D,C,q", [(9, 3, 0.3), (16, 4, 0.5), (12, 3, 1.0)])
def test_weights_are_the_law_of_the_counts(D, C, q):
    """W(n) against a brute-force count over all 3^(D-C) sign patterns of the random sets."""
    n, w = conf.enumerate_configurations(D, C, q)
    types = conf.set_types(C)
    brute: dict = {}
    prob = {1: q / 2, -1: q / 2, 0: 1 - q}
    for delta in itertools.product((1, -1, 0), repeat=D - C):
        pr = math.prod(prob[x] for x in delta)
        if pr == 0:
            continue
        key = [0] * len(types)
        for s in range(D // C - 1):
            block = delta[s * C : (s + 1) * C]
            key[types.index((block.count(1), block.count(-1)))] += 1
        brute[tuple(key)] = brute.get(tuple(key), 0.0) + pr
    got = {tuple(row): wt for row, wt in zip(n.tolist(), w)}
    assert set(got) == set(brute)
    # Each weight is a product of < 3D factors computed in floating point: relative error < 3D u;
    # 10x margin.
    for k, v in brute.items():
        assert got[k] == pytest.approx(v, rel=30 * D * U64, abs=0)


def test_tail_probability_is_the_dropped_mass():
    D, C, q = 16, 4, 0.5
    for k in (0, 3, 6, 12):
        _, w = conf.enumerate_configurations(D, C, q, max_nonzero=k)
        # sum of <= 680 weights and a binomial tail sum: rounding <= 700 terms x u, 10x margin
        assert w.sum() + conf.tail_probability(D, C, q, k) == pytest.approx(1.0, abs=7000 * U64)


def test_truncation_error_is_within_its_bounds():
    """Loss and per-entry gradients of a truncated sum differ from the full sum by at most the
    stated bounds."""
    cfg = JSLConfig(D=16, C=4, q=0.5, temperature="unit")
    state = jnp.array([0.3, 0.8, -0.4])
    full_table = rj.dynamics.Table(cfg, None).weights
    _, Gam, Xi = rj.attention_weights(cfg, state)
    for k in (2, 5, 8):
        tab = rj.dynamics.Table(cfg, k)
        g_full = np.asarray(rj.loss_and_gradients(cfg, state, full_table))
        g_trunc = np.asarray(rj.loss_and_gradients(cfg, state, tab.weights))
        b = conf.truncation_bounds(
            cfg.D, cfg.C, cfg.p, cfg.nu, cfg.tau, tab.dropped, 0.3, float(Gam), float(Xi)
        )
        per_entry = np.array([1.0, 1.0 / (cfg.D * (cfg.C - 1)), 1.0 / (cfg.D * (cfg.D - cfg.C))])
        err = np.abs(g_full - g_trunc) * np.concatenate([[1.0], per_entry])
        assert tab.dropped > 0
        assert err[0] <= b["loss"] and err[1] <= b["grad_alpha"]
        assert err[2] <= b["grad_gamma_per_entry"] and err[3] <= b["grad_rho_per_entry"]


def test_truncated_run_reports_its_bounds():
    cfg = JSLConfig(D=16, C=4, q=0.5, steps=20, record_every=10)
    tr = rj.simulate(cfg, max_nonzero=4)
    t = tr.meta["truncation"]
    assert t["max_nonzero"] == 4 and t["dropped_probability"] == pytest.approx(
        conf.tail_probability(16, 4, 0.5, 4)
    )
    assert t["configurations"] < t["configurations_total"] == 680
    assert set(t["bounds"]) == {"loss", "grad_alpha", "grad_gamma_per_entry", "grad_rho_per_entry"}
    assert all(v > 0 for v in t["bounds"].values())
    full = rj.simulate(cfg)
    assert full.meta["truncation"]["dropped_probability"] == 0.0


def test_truncated_count_matches_enumeration_and_reference():
    # docs/derivations/jsl.md §3b: D=36, C=4, q=0.3, K_max=20 keeps 128,913 configurations with tail
    # 3.4e-5.
    n, _ = conf.enumerate_configurations(36, 4, 0.3, max_nonzero=20)
    assert conf.count_truncated(36, 4, 20) == n.shape[0] == 128_913
    # printed to 2 digits
    assert conf.tail_probability(36, 4, 0.3, 20) == pytest.approx(3.4e-5, abs=5e-7)
    for D, C, k in ((16, 4, None), (16, 4, 5), (12, 3, 0), (9, 3, 2)):
        assert (
            conf.count_truncated(D, C, k) == conf.enumerate_configurations(D, C, 0.5, k)[0].shape[0]
        )


def test_too_large_a_sum_is_refused_before_enumerating(monkeypatch):
    """A given truncation whose sum does not fit is refused with the way out named: the multiset
    reference at its limit (counted without enumerating), the class sum as soon as its table passes
    MAX_CLASSES (here lowered)."""
    with pytest.raises(ValueError, match="configurations.*mode='sampled'"):
        rj.simulate(JSLConfig(D=64, C=4, q=0.25, steps=1), max_nonzero=40, enumeration="multisets")
    monkeypatch.setattr(rj.tables, "MAX_CLASSES", 100)
    with pytest.raises(ValueError, match="more than 100 moment classes.*mode='sampled'"):
        rj.simulate(JSLConfig(D=24, C=4, q=0.25, steps=1), max_nonzero=12)
