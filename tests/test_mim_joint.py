"""Issue 15: the reduced MIM level with several clusters and the PP correlations B free
(`reduced.mim.joint`)."""

from __future__ import annotations

import numpy as np
import pytest

import full.mim
import reduced.mim
from dynsim import MIMConfig, compare
from dynsim.mim.partition import area_of
from reduced.mim import joint

OBSERVABLES = ("fp_corr", "pp_corr", "area_attention", "loss")
# P <= 9 with mask ratio 0.5: the full exact loss sums K x C(9, 4 or 5) <= 3 x 126 masks (latents
# const) per step; over 30 steps the rounding of both levels stays below steps x terms x u x scale =
# 30 x 378 x 1.1e-16 x 10 ~ 1.3e-11
SMALL_TOL = 1e-10
SMALL = {
    "K=2, P=9": MIMConfig(
        P=9,
        K=2,
        kappa_c=0.7,
        kappa_s=0.3,
        partition="random",
        mask_ratio=0.5,
        steps=30,
        record_every=10,
        seed=3,
    ),
    "K=3, P=8": MIMConfig(
        P=8,
        K=3,
        kappa_c=0.7,
        kappa_s=0.3,
        partition="random",
        mask_ratio=0.5,
        steps=30,
        record_every=10,
        seed=1,
    ),
    "K=2, P=8, two latents": MIMConfig(
        P=8,
        K=2,
        kappa_c=0.7,
        kappa_s=0.3,
        partition="random",
        mask_ratio=0.5,
        z=[(0.5, 0.5), (1.5, 0.5)],
        steps=20,
        record_every=10,
        seed=2,
    ),
}


@pytest.fixture(scope="module", params=sorted(SMALL))
def pair(request):
    cfg = SMALL[request.param]
    return cfg, reduced.mim.simulate(cfg), full.mim.simulate(cfg)


def test_b_free_equals_the_full_exact_model(pair):
    cfg, red, ful = pair
    assert red.meta["approximation"] == "exact" and red["pp_corr"].shape == ful["pp_corr"].shape
    for name in OBSERVABLES:
        assert np.nanmax(np.abs(red[name] - ful[name])) < SMALL_TOL, name
    # B really moves, and differs within an area: the clusters disagree on which keys share p's area
    B = red["pp_corr"][-1]
    assert np.max(np.abs(B)) > 0.05
    a = area_of(cfg.areas, cfg.P)
    p = 0
    same0 = [q for q in range(cfg.P) if q != p and a[0, q] == a[0, p]]
    assert np.ptp(B[p, same0]) > 1e-3 or any(
        np.ptp(B[p, [q for q in range(cfg.P) if q != p and a[k, q] == a[k, p]]]) > 1e-3
        for k in range(cfg.K)
    )


def test_b_free_stays_finite_where_exp_overflows():
    """eta = 1e5: the scores reach ~3600, e^score overflows float64; the softmax does not (issue 16:
    the reduced level reported "diverged" while the full model stayed finite). The masses are taken
    relative to the largest score, so both levels stay finite and agree. Tolerance: the bound of
    SMALL_TOL relative to the largest |value| (~4e3)."""
    cfg = SMALL["K=2, P=9"].replace(eta=1e5)
    red, ful = reduced.mim.simulate(cfg), full.mim.simulate(cfg)
    assert "nonfinite_from_step" not in red.meta and "nonfinite_from_step" not in ful.meta
    assert np.nanmax(np.abs(ful["fp_corr"])) > 709  # the regime: e^(z A) alone would overflow
    for name in OBSERVABLES:
        assert np.nanmax(np.abs(red[name] - ful[name])) < SMALL_TOL * max(
            1.0, np.nanmax(np.abs(ful[name]))
        ), name


def test_default_grid_k2_agrees_under_the_checker():
    """P = 16, K = 2 (grid areas 8, 2, 2, 2, 2 in each cluster): the checker's rounding tolerances
    (derived from the number of summed terms) hold for every observable."""
    cfg = MIMConfig(K=2, steps=40, record_every=10)
    report = compare(reduced.mim.simulate(cfg), full.mim.simulate(cfg))
    assert report.passed and report.kind == "rounding" and set(OBSERVABLES) <= set(report.errors)


def test_wrong_joint_types_fail(monkeypatch):
    """Negative control: keys grouped by their area in cluster 0 only (the K = 1 class structure,
    which ties B across keys the other clusters tell apart) no longer reproduce the full model."""
    cfg = SMALL["K=2, P=9"]
    true = joint.joint_types

    def cluster0_only(c):
        t = true(c)
        a = area_of(c.areas, c.P)
        of_key = np.where(t.of_key < 0, -1, a[0][None, :])  # type = area of cluster 0
        T = c.max_areas
        population = np.zeros((c.P, T), dtype=np.int64)
        area = np.zeros((c.P, T, c.K), dtype=np.int64)
        for p in range(c.P):
            for q in range(c.P):
                if q != p:
                    population[p, a[0, q]] += 1
                    area[p, a[0, q]] = a[:, q]  # a representative key's areas: wrong for the others
        return joint.Types(of_key, population, area, t.own)

    monkeypatch.setattr(joint, "joint_types", cluster0_only)
    red, ful = reduced.mim.simulate(cfg), full.mim.simulate(cfg)
    assert max(np.nanmax(np.abs(red[n] - ful[n])) for n in OBSERVABLES) > 1e3 * SMALL_TOL


def test_pp_frozen_deviation_from_b_free_is_reported():
    """pp_frozen (B = 0) against B free at the reduced level: the checker reports the
    approximation's deviation."""
    cfg = SMALL["K=2, P=9"]
    frozen, free = reduced.mim.simulate(cfg, "pp_frozen"), reduced.mim.simulate(cfg)
    report = compare(frozen, free)
    assert report.kind == "approximation" and report.residuals["pp_max"].value == pytest.approx(
        np.max(np.abs(free["pp_corr"]))
    )
    assert report.errors["fp_corr"].max_abs > 1e-3  # dropping B moves A (measured 1.8e-2 here)


def test_mean_field_with_clusters():
    """Counts at their means: exact at Q = 0 (the attention is linear in the counts there),
    different later."""
    cfg = SMALL["K=2, P=9"]
    exact, mf = reduced.mim.simulate(cfg), reduced.mim.simulate(cfg, "mean_field")
    assert mf.meta["approximation"] == "mean_field"
    np.testing.assert_allclose(mf["area_attention"][0], exact["area_attention"][0], atol=1e-15)
    assert np.nanmax(np.abs(mf["fp_corr"][-1] - exact["fp_corr"][-1])) > 1e-6


def test_joint_types_of_a_hand_built_partition():
    """P = 4, K = 2: cluster 0 areas {0, 1}, {2, 3}; cluster 1 areas {0, 2}, {1, 3}. For query 0 the
    keys 1, 2, 3 have joint types (0, 1), (1, 0), (1, 1): three types of one key each."""
    cfg = MIMConfig(
        P=4, K=2, partitions=[[[0, 1], [2, 3]], [[0, 2], [1, 3]]], mask_ratio=0.5, steps=1
    )
    t = joint.joint_types(cfg)
    assert t.of_key[0, 0] == -1 and sorted(t.of_key[0, 1:].tolist()) == [0, 1, 2]
    assert t.population[0].tolist() == [1, 1, 1]
    assert sorted(map(tuple, t.area[0].tolist())) == [(0, 1), (1, 0), (1, 1)] and t.own[
        0
    ].tolist() == [0, 0]


def test_k_sweep_reports_pp_dominance_and_the_frozen_deviation(tmp_path):
    """The K study's columns: max|B|/max|A| over the run and, with versus_frozen, max|A(B free) -
    A(B = 0)|/max|A|, recomputed here from two independent runs."""
    import dynsim

    base = dict(
        P=9,
        kappa_c=0.7,
        kappa_s=0.3,
        partition="random",
        mask_ratio=0.5,
        steps=20,
        record_every=10,
        seed=3,
    )
    res = dynsim.sweep(
        "mim", {"K": [1, 2]}, base=base, options={"versus_frozen": True}, out=str(tmp_path)
    )
    for row in res.rows:
        cfg = MIMConfig(**base, K=row["K"])
        free, frozen = reduced.mim.simulate(cfg), reduced.mim.simulate(cfg, "pp_frozen")
        from dynsim.mim.records import with_per_patch

        a, b = (with_per_patch(t, cfg)["fp_corr"] for t in (free, frozen))
        fp = np.nanmax(np.abs(a))
        assert row["reduced_pp_over_fp"] == pytest.approx(np.max(free["pp_max"]) / fp, rel=1e-12)
        assert row["reduced_fp_deviation_from_pp_frozen"] == pytest.approx(
            np.nanmax(np.abs(a - b)) / fp, rel=1e-12
        )
        # B moves A at this size: the column is not vacuous
        assert row["reduced_fp_deviation_from_pp_frozen"] > 1e-3
    plain = dynsim.sweep("mim", {"K": [1, 2]}, base=base, out=str(tmp_path / "plain"))
    # only when asked
    assert all(r["reduced_fp_deviation_from_pp_frozen"] is None for r in plain.rows)


# Monte Carlo over the counts: replicate r draws `samples` count vectors per query from numpy's
# default_rng([seed, 0x3C, r]), so these runs are deterministic; the checker's band is the t
# quantile at 99.9% family-wise (Bonferroni over the recorded steps and compared entries) times the
# standard error of R = 8 means.
MC = dict(samples=64, replicates=8)


@pytest.mark.parametrize("name", ["K=2, P=9", "K=3, P=8"])
def test_monte_carlo_agrees_with_exact_within_its_band(name):
    cfg = SMALL[name]
    mc, exact = reduced.mim.simulate(cfg, **MC), reduced.mim.simulate(cfg)
    assert (
        mc.meta["mode"] == "sampled" and mc.meta["samples"] == 64 and "fp_corr_se" in mc.observables
    )
    report = compare(mc, exact)
    assert report.kind == "statistical" and report.passed, report.table()
    # negative control: the same band refuses a run of another problem (eta x 1.5)
    other = reduced.mim.simulate(cfg.replace(eta=1.5 * cfg.eta))
    assert not compare(mc, other).passed


def test_monte_carlo_with_one_cluster_matches_the_class_engine():
    cfg = MIMConfig(steps=20, record_every=10)  # P = 16, K = 1: the joint types are the areas
    report = compare(reduced.mim.simulate(cfg, **MC), reduced.mim.simulate(cfg))
    assert report.kind == "statistical" and report.passed, report.table()


@pytest.mark.parametrize(
    "kwargs, needle",
    [
        (dict(samples=0), "samples = 0"),
        (dict(samples=8, replicates=1), "replicates = 1"),
        (dict(samples=8, approximation="mean_field"), "invalid with samples"),
        (dict(samples=8, method="flow"), "method = 'flow' is invalid with samples"),
    ],
)
def test_monte_carlo_arguments_are_checked(kwargs, needle):
    with pytest.raises(ValueError, match=needle):
        reduced.mim.simulate(SMALL["K=2, P=9"], **kwargs)


def test_monte_carlo_one_cluster_large_p_stays_per_class():
    """K = 1, P = 4096: the Monte Carlo level runs on the query classes and records per class (no P
    x P array: 3 records x 4096^2 entries exceed the expansion budget), with standard errors."""
    cfg = MIMConfig(P=4096, kappa_c=0.9, kappa_s=0.4, mask_ratio=0.5, steps=2, record_every=1)
    t = reduced.mim.simulate(cfg, samples=8, replicates=2)
    assert (
        "pp_corr" not in t.observables
        and "pp_class_se" in t.observables
        and "fp_corr_se" in t.observables
    )
    assert t.meta["mode"] == "sampled" and np.all(np.isfinite(t["loss_se"]))
