"""MIM reduced at large P: per-class records, per-patch views only where they fit, bounded memory at
P = 65536."""

import dynsim  # noqa: F401  (float64)

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import full.mim
import reduced.mim
from dynsim import compare
from dynsim.mim import MIMConfig, phases, records
from dynsim.trajectory import Trajectory
from reduced.mim import classes, dynamics

ROOT = Path(__file__).resolve().parent.parent
U = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64
PER_PATCH = ("fp_corr", "area_attention", "pp_corr")


def _class_only(t: Trajectory) -> Trajectory:
    """The trajectory as a run beyond the expansion budget holds it: per class only."""
    return Trajectory(
        t.steps, {k: v for k, v in t.observables.items() if k not in PER_PATCH}, t.meta
    )


def _class_order(cfg, k: int, n: int) -> list[int]:
    """Independent of `records`: the areas of cluster k in the class order of area n, by direct
    sorting."""
    sizes = [len(a) for a in cfg.areas[k]]
    return [n] + sorted((j for j in range(len(sizes)) if j != n), key=lambda j: (sizes[j], j))


def _class_id(t, cfg, k: int, n: int) -> int:
    """The class of area (k, n): its signature (own size, sorted other sizes) looked up in
    meta["classes"]."""
    return t.meta["classes"].index([len(cfg.areas[k][j]) for j in _class_order(cfg, k, n)])


# --- the per-class records against the full level's per-patch records
#   -------------------------------------------


@pytest.mark.parametrize(
    "cfg",
    [
        # P = 16: a global area of 8 and four areas of 2 (2 classes)
        MIMConfig(steps=40, record_every=8),
        MIMConfig(
            P=9,
            kappa_c=None,
            kappa_s=None,
            partitions=[[[0, 1, 2, 3], [4, 5, 6], [7, 8]]],
            mask_ratio=0.5,
            steps=40,
            record_every=8,
        ),  # three sizes, three classes
    ],
)
def test_class_records_equal_the_full_levels_per_patch_records_aggregated(cfg):
    """The full level (the literal d x d matrix Q, optax GD: no classes anywhere) records per patch.
    Aggregated per class (the patches of a class and, per position of the class order, the areas
    there), it must equal the reduced level's per-class records, and every patch of a class must
    carry them (exchangeability)."""
    red, ful = reduced.mim.simulate(cfg), full.mim.simulate(cfg, mode="exact")
    # rounding model of dynsim.checker (docs/mim.md §5): each level sums at most M terms per step
    # (the full level's masks: 1820 at P = 16, 126 x ... at P = 9), relative error ~ sqrt(M) u per
    # step, at most carried forward over t <= 40 stable steps, times SAFETY = 10 and the
    # observable's scale (|A| <= 10, attention <= 1)
    M = max(ful.meta["configurations"], red.meta["configurations"])
    tol = 10 * (red.steps[-1] + 1) * math.sqrt(M) * U * 10
    for name, key in records.CLASS_KEYS.items():
        got = red[key]
        seen = np.zeros(got.shape[1:], dtype=int)
        for p in range(cfg.P):
            n = next(i for i, a in enumerate(cfg.areas[0]) if p in a)
            c = _class_id(red, cfg, 0, n)
            for pos, j in enumerate(_class_order(cfg, 0, n)):
                assert np.max(np.abs(ful[name][:, p, 0, j] - got[:, c, pos])) <= tol, (name, p, j)
                seen[c, pos] += 1
        assert np.all(seen > 0)  # every class entry was checked against some patch
    # PP: B_{p,q} of the full run per (class, position of q's area) and B_{p,p}
    for p in range(cfg.P):
        n = next(i for i, a in enumerate(cfg.areas[0]) if p in a)
        c = _class_id(red, cfg, 0, n)
        assert np.max(np.abs(ful["pp_corr"][:, p, p] - red["pp_self"][:, c])) <= tol
        for pos, j in enumerate(_class_order(cfg, 0, n)):
            for q in cfg.areas[0][j]:
                if q != p:
                    assert (
                        np.max(np.abs(ful["pp_corr"][:, p, q] - red["pp_class"][:, c, pos])) <= tol
                    ), (p, q)


def test_per_patch_views_equal_an_independent_expansion():
    """fp_corr and area_attention of a reduced run are its class records re-indexed by (class of p's
    area, position of area j): the test rebuilds that mapping by sorting, entry by entry, and every
    slice `records` expands agrees."""
    cfg = MIMConfig(
        P=64, kappa_c=0.75, kappa_s=0.4, mask_ratio=0.5, steps=6, record_every=3, partition="random"
    )
    t = reduced.mim.simulate(cfg, "mean_field")
    assert "per patch: fp_corr, area_attention, pp_corr" in t.meta["records"]
    for name, key in records.CLASS_KEYS.items():
        for p in range(cfg.P):
            n = next(i for i, a in enumerate(cfg.areas[0]) if p in a)
            c = _class_id(t, cfg, 0, n)
            expected = np.full((t.steps.size, cfg.max_areas), np.nan)
            for pos, j in enumerate(_class_order(cfg, 0, n)):
                expected[:, j] = t[key][:, c, pos]
            np.testing.assert_array_equal(t[name][:, p, 0, :], expected)
    some = [5, 0, 63, 5]
    np.testing.assert_array_equal(
        records.expand(records.class_index(cfg), t["fp_class"], some), t["fp_corr"][:, some]
    )
    np.testing.assert_array_equal(
        reduced.mim.pp_corr(
            dynamics.Indices(cfg, classes.classes(cfg)), t["pp_class"], t["pp_self"], some
        ),
        t["pp_corr"][:, some],
    )


def test_phases_read_per_class_records_as_per_patch_ones():
    """Everything the claims, sweeps and figures read (phases) gives the same from the per-class
    form."""
    cfg = MIMConfig(P=256, kappa_c=0.9, kappa_s=0.4, mask_ratio=0.5, steps=120, record_every=4)
    t = reduced.mim.simulate(cfg, "pp_frozen+mean_field")
    c = _class_only(t)
    for a, b in (
        (phases.own_area_attention(t, cfg=cfg), phases.own_area_attention(c, cfg=cfg)),
        (phases.own_area_attention(t, 3, cfg=cfg), phases.own_area_attention(c, 3, cfg=cfg)),
        (phases.own_area_fp(t, cfg=cfg), phases.own_area_fp(c, cfg=cfg)),
    ):
        np.testing.assert_array_equal(a, b)
    # repr: a global patch's initial ratio is NaN, which == would call unequal to itself
    assert [repr(x) for x in phases.classify_all(t, cfg=cfg)] == [
        repr(x) for x in phases.classify_all(c, cfg=cfg)
    ]
    labels = {ph.label for ph in phases.classify_all(c, cfg=cfg)}
    # Delta = 0.4: locals two-phase, globals one-phase (not vacuous)
    assert labels == {"one-phase", "two-phase"}
    p = cfg.areas[0][1][0]
    assert repr(phases.initial_rate_ratio(t, p, cfg=cfg)) == repr(
        phases.initial_rate_ratio(c, p, cfg=cfg)
    )


def test_the_comparison_works_from_per_class_records(monkeypatch):
    """Beyond the budget a reduced run holds per class only: the checker then says what it did not
    compare, and `records.with_per_patch` (what `dynsim compare mim` calls) expands the views so
    that the levels agree again."""
    cfg = MIMConfig(steps=20, record_every=5)
    monkeypatch.setattr(dynamics, "PATCH_BUDGET", 0)
    monkeypatch.setattr(dynamics, "PP_BUDGET", 0)
    red, ful = reduced.mim.simulate(cfg), full.mim.simulate(cfg)
    assert (
        not any(n in red.observables for n in PER_PATCH)
        and "per patch: none" in red.meta["records"]
    )
    partial = compare(red, ful)
    assert set(partial.errors) == {"loss"} and partial.residuals["per_class_only"].value == 3
    report = compare(records.with_per_patch(red, cfg), ful)
    assert report.passed and set(report.errors) == {"loss", "fp_corr", "pp_corr", "area_attention"}
    assert "per_class_only" not in report.residuals


def test_missing_observables_are_named():
    cfg = MIMConfig(steps=2, record_every=1)
    t = Trajectory([0, 1, 2], {"loss": np.zeros(3)}, {})
    with pytest.raises(ValueError, match="no fp_corr observable"):
        records.patch_series(t, "fp_corr", 0, 0, cfg)
    with pytest.raises(ValueError, match="no area_attention observable"):
        records.own(t, "area_attention", cfg)


# --- the count table at large P
#   ----------------------------------------------------------------------------------


def test_saturating_count_equals_the_enumeration():
    rng = np.random.default_rng(0)
    for _ in range(100):
        caps = rng.integers(0, 6, size=rng.integers(1, 6)).tolist()
        total = int(rng.integers(0, sum(caps) + 2))
        n = len(classes.count_vectors(caps, total))  # the enumeration itself
        assert classes.count_size(caps, total) == n
        assert classes.count_size(caps, total, limit=3) == min(n, 4)


def test_exact_at_large_p_is_refused_at_once_naming_mean_field():
    cfg = MIMConfig(P=65536, kappa_c=0.9, kappa_s=0.4, mask_ratio=0.5, steps=1, partition="random")
    with pytest.raises(
        ValueError, match=r"more than 2,000,000 .*other areas 83 x 15, 84 x 508.*mean_field"
    ):
        reduced.mim.simulate(cfg)


# --- P = 65536 in bounded memory
#   ----------------------------------------------------------------------------------

LARGE = textwrap.dedent("""
    import json, resource, sys, time, tracemalloc
    import dynsim, reduced.mim
    from dynsim.mim import MIMConfig, phases

    def run(P):
        cfg = MIMConfig(P=P, kappa_c=0.9, kappa_s=0.4, mask_ratio=0.5, steps=4, record_every=2, partition="random")
        t = reduced.mim.simulate(cfg, **json.loads(sys.argv[1]))
        phases.own_area_attention(t, cfg=cfg)
        return cfg, t, phases.classify(t, cfg.areas[0][1][0], cfg=cfg), phases.classify(t, cfg.areas[0][0][0], cfg=cfg)

    def rss():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # bytes (Linux reports KiB)

    run(64), run(256)  # the process baseline: interpreter, jax, the sympy derivation, compilations, both code paths
    before = rss()
    tracemalloc.start()
    t0 = time.perf_counter()
    cfg, t, local, glob = run(65536)
    seconds = time.perf_counter() - t0
    print(json.dumps({"rss_before": before, "rss_peak": rss(), "host_peak": tracemalloc.get_traced_memory()[1],
                      "seconds": seconds, "K": cfg.K, "P": cfg.P, "N": cfg.max_areas, "classes": len(t.meta["classes"]),
                      "records": int(t.steps.size), "keys": sorted(t.observables),
                      "fp_class": list(t["fp_class"].shape), "labels": [local.label, glob.label]}))
""")  # noqa: E501


@pytest.mark.parametrize(
    "options",
    [
        {"approximation": "pp_frozen+mean_field"},
        {"approximation": "mean_field"},
        {"samples": 8, "replicates": 2},
    ],
)
def test_p65536_runs_in_bounded_memory(options):
    """Reduced MIM at P = 65536 (524 areas, 3 classes), 4 steps, 3 records: mean field (one count
    row per class) and Monte Carlo (issue 15: 8 count vectors per class in each of 2 independent
    draws, a mean and `_se` per record).

    Bound (docs/mim.md §3), in bytes beyond the process's peak after the same program ran at P = 64
    and 256:
      host (numpy and Python, measured by tracemalloc): the partition (cfg.areas: a tuple slot and
        an int object,
        36 B per patch and cluster), a_k(p) twice and the class of (p, k) (8 B each), the meta's
          copy of the areas
        (8 B), the temporaries that build them (permutation and splits, 16 B): 84 B per patch and
          cluster, doubled
        for list over-allocation: 256 B x K x P (16 MiB here); the records on the host, 3 per-class
          observables of
        R x C x N float64 plus pp_self, loss, pp_max: 8 B x R x (3 C N + C + 2), x 8 for copies
          (JSON meta, the
        view, the device transfer); the expectation table 4 x C x rows x N float64, x 8 likewise; 1
          MiB for the
        fixed rest (config, meta strings);
      device and compiler (RSS only): the same records and the compiled step's ~40 intermediates of
        C x rows x N,
        and 64 MiB for compiling the program anew at these shapes (a size of the program, not of P:
          measured
        2-38 MiB at P = 256 ... 65536).
    No term grows with P^2, P x N or records x P: the old per-patch recording needed a 32 GiB P x P
    index here.
    """
    out = subprocess.run(
        [sys.executable, "-c", LARGE, json.dumps(options)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    m = json.loads(out.stdout.strip().splitlines()[-1])
    K, P, N, C, R = m["K"], m["P"], m["N"], m["classes"], m["records"]
    # count rows per class, all draws together
    rows = options.get("samples", 1) * options.get("replicates", 1)
    # Monte Carlo records a mean and a standard error of each observable
    draws = 2 if "samples" in options else 1
    assert (P, C, R) == (65536, 3, 3) and m["fp_class"] == [R, C, N]
    assert not set(PER_PATCH) & set(m["keys"])  # beyond the budget: per class only
    # read per class: 4 steps are still stage 1 for a local query
    assert m["labels"] == ["undetermined", "one-phase"]
    records_bytes = draws * 8 * R * (3 * C * N + C + 2)
    host = 256 * K * P + 8 * records_bytes + 8 * (4 * 8 * C * rows * N) + 2**20
    device = 2 * records_bytes + 40 * 8 * C * rows * N + 64 * 2**20
    # measured (mean field) 5.8 MiB against 17.6 MiB; Monte Carlo 6.3 MiB against 24.9 MiB
    assert m["host_peak"] <= host, (m["host_peak"], host)
    # measured (mean field) 23-35 MiB against 82 MiB; Monte Carlo 26 MiB against 97 MiB
    assert m["rss_peak"] - m["rss_before"] <= host + device, m
