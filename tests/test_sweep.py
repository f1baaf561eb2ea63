"""Sweeps: points equal single runs, the store resumes after kill -9 without recomputing, corrupt
points are recomputed, several devices give the same numbers, and the automatic sum choice reports
bounds that hold."""

from __future__ import annotations

import dataclasses
import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
from scipy import stats

import dynsim
import reduced.jsl
import reduced.mim
from dynsim import JSLConfig, MIMConfig
from dynsim import setting as registry
from dynsim.store import Store
from reduced.jsl import dynamics, many, sums, tables

BASE = dict(D=9, C=3, steps=600, record_every=50, nu=0.02)
# with nu = 0.02 != the group's static 0: every number is traced
AXES = {"q": [0.2, 0.4], "eta": [0.05, 0.1]}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.smoke
def test_sweep_points_equal_single_runs(tmp_path):
    """Every point of a vmapped group equals `reduced.jsl.simulate` of its config, to the checker's
    rounding tolerance (the group computes the configuration weights in JAX, the single run in
    NumPy: ulp-level)."""
    res = dynsim.sweep("jsl", AXES, base=BASE, out=str(tmp_path), batch_size=3)
    store = Store(str(tmp_path))
    assert len(res.rows) == 4 and len(res.computed) == 4 and not res.reused
    for row in res.rows:
        cfg = JSLConfig(**BASE, q=row["q"], eta=row["eta"], seed=row["seed"])
        single = reduced.jsl.simulate(cfg)
        swept = store.load(row["key"], trajectories=True)["trajectories"]["reduced"]
        report = dynsim.compare(single, swept)
        assert report.passed, report.table()
        np.testing.assert_array_equal(single["patch_association"], swept["patch_association"])
        # rounding
        assert row["reduced_final_loss"] == pytest.approx(
            float(single["loss"][-1]), rel=1e-12, abs=0
        )
        assert row["sum_method"] == "full" and row[
            "configurations"
        ] == dynamics.configurations.count(9, 3)


def test_mim_sweep_point_equals_single_run(tmp_path):
    """A MIM sweep point is `reduced.mim.simulate` of its config (same program): equal to the last
    bit."""
    res = dynsim.sweep(
        "mim",
        {"mask_ratio": [0.5, 0.75]},
        base=dict(P=16, steps=40, record_every=10),
        out=str(tmp_path),
    )
    store = Store(str(tmp_path))
    for row in res.rows:
        single = reduced.mim.simulate(
            MIMConfig(P=16, steps=40, record_every=10, mask_ratio=row["mask_ratio"])
        )
        swept = store.load(row["key"], trajectories=True)["trajectories"]["reduced"]
        np.testing.assert_array_equal(single["fp_corr"], swept["fp_corr"])
        assert row["reduced_final_loss"] == float(single["loss"][-1])


def test_resume_after_rerun_and_force(tmp_path):
    first = dynsim.sweep("jsl", {"q": [0.2, 0.3]}, base=BASE, seeds=2, out=str(tmp_path))
    again = dynsim.sweep("jsl", {"q": [0.2, 0.3]}, base=BASE, seeds=2, out=str(tmp_path))
    assert again.computed == [] and sorted(again.reused) == sorted(first.computed)
    assert again.rows == first.rows
    forced = dynsim.sweep(
        "jsl", {"q": [0.2, 0.3]}, base=BASE, seeds=2, out=str(tmp_path), force=True
    )
    assert sorted(forced.computed) == sorted(first.computed)
    # a different option is a different point: nothing reused (the first sweep's outputs moved
    # away, as the refusal of another sweep's folder says)
    os.rename(tmp_path / "sweep.json", tmp_path / "first-sweep.json")
    other = dynsim.sweep(
        "jsl",
        {"q": [0.2, 0.3]},
        base=BASE,
        seeds=2,
        out=str(tmp_path),
        options={"max_configurations": 10**6},
    )
    # one run per q: the reduced level's full sum does not depend on the seed
    assert len(other.computed) == 2


def test_corrupt_point_is_recomputed(tmp_path):
    first = dynsim.sweep("jsl", {"q": [0.2, 0.3, 0.4]}, base=BASE, out=str(tmp_path))
    store = Store(str(tmp_path))
    bad = first.rows[1]["key"]
    # flip bytes in the middle: the zip or the digest no longer matches
    with open(store.path(bad), "r+b") as fh:
        fh.seek(os.path.getsize(store.path(bad)) // 2)
        fh.write(b"\x00garbage\x00")
    truncated = first.rows[2]["key"]
    with open(store.path(truncated), "r+b") as fh:
        fh.truncate(100)
    with pytest.warns(RuntimeWarning, match="corrupt"):
        again = dynsim.sweep("jsl", {"q": [0.2, 0.3, 0.4]}, base=BASE, out=str(tmp_path))
    assert sorted(again.computed) == sorted([bad, truncated])
    assert again.rows == first.rows
    assert os.path.exists(store.path(bad) + ".corrupt")


def test_a_store_whose_points_folder_is_a_link_is_followed(tmp_path):
    """points/ kept on another disk (a symbolic link): every point lies inside the folder the link
    resolves to, so the second sweep reuses them all; a point linked out of that folder is corrupt
    and recomputed."""
    elsewhere = tmp_path / "other-disk"
    elsewhere.mkdir()
    store_dir = tmp_path / "store"
    store_dir.mkdir()
    (store_dir / "points").symlink_to(elsewhere)
    axes = {"q": [0.2, 0.3]}
    first = dynsim.sweep("jsl", axes, base=BASE, out=str(store_dir))
    again = dynsim.sweep("jsl", axes, base=BASE, out=str(store_dir))
    assert again.computed == [] and again.rows == first.rows
    assert not list(elsewhere.glob("*/*.corrupt"))
    # a point file that is a link to a copy outside points/: not read, recomputed
    store = Store(str(store_dir))
    key = first.rows[0]["key"]
    outside = tmp_path / "copy.npz"
    os.replace(store.path(key), outside)
    os.symlink(outside, store.path(key))
    with pytest.warns(RuntimeWarning, match="outside"):
        third = dynsim.sweep("jsl", axes, base=BASE, out=str(store_dir))
    assert third.computed == [key] and third.rows[1] == first.rows[1]
    # recomputed alone instead of in a batch of two: the vmapped program sums in another order, a
    # few ulps (float64: 1e-12 relative is a thousand of them)
    for name, value in first.rows[0].items():
        if isinstance(value, float):
            assert third.rows[0][name] == pytest.approx(value, rel=1e-12, nan_ok=True), name
        else:
            assert third.rows[0][name] == value, name


_KILLED = textwrap.dedent("""
    import sys
    import dynsim
    dynsim.sweep("jsl", {"q": [0.15, 0.2, 0.25, 0.3, 0.35, 0.4]}, base=dict(D=9, C=3, steps=40000, record_every=1000),
                 out=sys.argv[1], chunk_size=1, batch_size=1)
""")  # noqa: E501


def test_kill9_then_resume_gives_the_uninterrupted_table(tmp_path):
    """kill -9 in the middle of a sweep loses at most the chunk in flight; the re-run computes only
    the missing points and the table equals the table of an uninterrupted run, byte for byte."""
    killed, clean = tmp_path / "killed", tmp_path / "clean"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED, str(killed)], cwd=ROOT)
    points = killed / "points"
    deadline = time.time() + 300
    while time.time() < deadline:
        done = list(points.glob("*/*.npz")) if points.exists() else []
        if len(done) >= 2 or proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = {p.stem for p in points.glob("*/*.npz")}
    assert 2 <= len(before) < 6, f"the kill came too late or too early: {len(before)} points stored"
    axes, base = (
        {"q": [0.15, 0.2, 0.25, 0.3, 0.35, 0.4]},
        dict(D=9, C=3, steps=40000, record_every=1000),
    )
    resumed = dynsim.sweep("jsl", axes, base=base, out=str(killed), chunk_size=1, batch_size=1)
    assert set(resumed.reused) == before  # every point stored before the kill is reused ...
    assert not set(resumed.computed) & before  # ... and none is computed twice
    assert len(resumed.computed) + len(before) == 6
    dynsim.sweep("jsl", axes, base=base, out=str(clean), chunk_size=1, batch_size=1)
    assert (killed / "table.csv").read_text() == (clean / "table.csv").read_text()
    # no partial file (.dynsim-tmp-*.tmp)
    assert not [p for p in points.glob("*/*") if p.name.endswith(".tmp")]


def test_several_devices_give_the_same_numbers(tmp_path):
    """With 2 (forced host) devices the points are sharded across them: the same numbers up to
    rounding.

    The sharded group is a different XLA program (shard_map): its fusions may contract a different
    a*b + c into one FMA, and the class sum's matrix-vector product adds in an order that depends on
    the BLAS threads; a 1-ulp difference somewhere in a step (measured: 3 of 42 recorded numbers
    differ, by <= 2.2e-16 relative). GD contracts such differences (the loss decreases); 300 steps
    of 1-ulp perturbations stay below 300 u = 3.3e-14 relative, and 1e-13 is that with a factor 3
    margin."""
    script = textwrap.dedent("""
        import sys, jax, numpy as np, dynsim
        from dynsim import JSLConfig
        from reduced.jsl import many
        cfgs = [JSLConfig(D=9, C=3, steps=300, record_every=50, q=q) for q in (0.2, 0.3, 0.4)]
        out = many.simulate_group(cfgs, {}, 1)
        np.save(sys.argv[1], np.stack([o["loss"] for o in out] + [o["alpha"] for o in out]))
        print(jax.local_device_count())
    """)
    outs = []
    for devices in (1, 2):
        env = dict(os.environ, XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
        path = tmp_path / f"d{devices}.npy"
        got = subprocess.run(
            [sys.executable, "-c", script, str(path)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert got.stdout.strip() == str(devices)
        outs.append(np.load(path))
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-13, atol=0)


def test_choice_full_truncated_monte_carlo():
    cfg = JSLConfig(D=16, C=4, q=0.1)
    assert sums.choose(cfg).method == "full"
    t = sums.choose(cfg, max_configurations=300, tail_target=1e-3)
    assert t.method == "truncated" and t.size <= 300 and t.dropped_probability <= 1e-3
    # the cut is the smallest with dropped probability <= target: one less drops more
    assert dynamics.configurations.tail_probability(16, 4, 0.1, t.max_nonzero - 1) > 1e-3
    assert sums.choose(cfg, max_configurations=10).method == "monte_carlo"
    with pytest.raises(ValueError, match="max_configurations"):
        sums.choose(cfg, max_configurations=0)
    with pytest.raises(ValueError, match="tail_target"):
        sums.choose(cfg, tail_target=2.0)


def _full_loss_at(cfg, states):
    table = tables.table(cfg, None).weights
    return np.array(
        [float(dynamics.loss_and_gradients(cfg, np.asarray(s), table)[0]) for s in states]
    )


def test_truncation_bound_holds_against_full_enumeration():
    """At every recorded state of a truncated run, the exact loss (every configuration) differs from
    the recorded truncated loss by at most the reported bound, and the 0-1 error by at most the
    dropped probability."""
    cfg = JSLConfig(D=16, C=4, q=0.1, steps=1000, record_every=100)
    (t,) = many.simulate_group([cfg], {"max_configurations": 300, "tail_target": 1e-3}, 1)
    tr = t.meta["truncation"]
    assert tr["method"] == "truncated" and tr["dropped_probability"] > 0
    states = np.stack([t["alpha"], t["gamma"], t["rho"]], axis=1)
    gap = np.abs(_full_loss_at(cfg, states) - t["loss"])
    assert np.all(gap <= tr["bounds"]["loss"]), (gap.max(), tr["bounds"]["loss"])
    assert gap.max() > 0  # the truncation is real: the check can fail


def test_monte_carlo_standard_error_covers_the_exact_loss():
    """The sampled loss at each recorded state lies within z standard errors of the exact loss
    there; z is the normal quantile at 0.999 family-wise over the recorded states (Bonferroni; M =
    20000 iid configurations, so the CLT is accurate)."""
    cfg = JSLConfig(D=16, C=4, q=0.3, steps=600, record_every=100)
    (t,) = many.simulate_group([cfg], {"max_configurations": 10, "mc_samples": 20000}, 1)
    assert (
        t.meta["truncation"]["method"] == "monte_carlo"
        and t.meta["approximation"] == "monte_carlo_sum"
    )
    states = np.stack([t["alpha"], t["gamma"], t["rho"]], axis=1)
    z = stats.norm.ppf(1 - 0.001 / (2 * len(states)))
    dev = np.abs(_full_loss_at(cfg, states) - t["loss"]) / t["loss_se_mc"]
    assert np.all(dev <= z), (dev.max(), z)
    assert np.all(t["loss_se_mc"] > 0)


def test_invalid_sweeps_name_the_parameter(tmp_path):
    with pytest.raises(ValueError, match="axis = 'Q'"):
        dynsim.sweep("jsl", {"Q": [0.1]})
    with pytest.raises(ValueError, match="JSLConfig.q = 1.5"):
        dynsim.sweep("jsl", {"q": [0.1, 1.5]})
    with pytest.raises(ValueError, match="level = 'all'"):
        dynsim.sweep("jsl", {"q": [0.1]}, level="all")
    with pytest.raises(ValueError, match="workers = 0"):
        dynsim.sweep("jsl", {"q": [0.1]}, workers=0)
    with pytest.raises(ValueError, match="scheduler = 'localhost'"):
        dynsim.sweep("jsl", {"q": [0.1]}, scheduler="localhost")
    with pytest.raises(ValueError, match="seeds = 0"):
        dynsim.sweep("jsl", {"q": [0.1]}, seeds=0)
    with pytest.raises(ValueError, match="options"):
        dynsim.sweep("jsl", {"q": [0.1]}, options={"approximation": "pp_frozen"})
    # a point a level cannot run is refused before any work (nothing stored)
    with pytest.raises(ValueError, match="mode='exact' would enumerate"):
        dynsim.sweep(
            "jsl", {"q": [0.1, 0.2]}, base=dict(D=36, C=4), level="both", out=str(tmp_path)
        )
    with pytest.raises(ValueError, match="mc_samples = 0"):
        dynsim.sweep("jsl", {"q": [0.1, 0.2]}, options={"mc_samples": 0}, out=str(tmp_path))
    assert not list(tmp_path.glob("points/*/*.npz"))


@pytest.mark.parametrize("name", ["force", "dashboard", "insecure_scheduler", "progress"])
@pytest.mark.parametrize("value", ["False", "no", 0, 1.0])
def test_switches_are_real_booleans(tmp_path, name, value):
    """A switch is never read by truth value: insecure_scheduler="False" would connect to a
    scheduler without credentials. Refused before any work, naming the switch."""
    with pytest.raises(ValueError, match=f"^{name} = {value!r} is invalid: must be "):
        dynsim.sweep("jsl", {"q": [0.1]}, out=str(tmp_path), **{name: value})
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("mode, replicates", [("exact", None), ("sampled", 2)])
def test_full_level_points_equal_single_runs(tmp_path, mode, replicates):
    """The full level of a sweep (q, eta and seeds in one program) equals `full.jsl.simulate` point
    by point: the same keys, batches and configuration weights, so the runs differ only by the order
    a vmapped program sums in, held to the checker's rounding model
    (`tolerances.rounding_tolerance`: SAFETY (t+1) sqrt(M) u max(1, scale), M = the terms summed per
    step). Checked at the first and the last point, which differ in q, eta and seed (each single run
    is a program of its own; the points between them are the same group at other traced values)."""
    import full.jsl
    from dynsim.tolerances import rounding_tolerance

    res = dynsim.sweep(
        "jsl",
        {"q": [0.2, 0.4], "eta": [0.05, 0.1]},
        base=dict(BASE, N=64, steps=200),
        seeds=2,
        level="full",
        options={"mode": mode, "replicates": replicates},
        out=str(tmp_path),
        batch_size=4,
    )
    store = Store(str(tmp_path))
    first, last = res.rows[0], res.rows[-1]
    assert len(res.rows) == 8 and all(first[k] != last[k] for k in ("q", "eta", "seed"))
    for row in (first, last):
        cfg = JSLConfig(**dict(BASE, N=64, steps=200), q=row["q"], eta=row["eta"], seed=row["seed"])
        single = full.jsl.simulate(cfg, mode=mode, replicates=replicates)
        swept = store.load(row["key"], trajectories=True)["trajectories"]["full"]
        # a run that stays finite (N = 32 at eta 0.1 diverged)
        assert "nonfinite_from_step" not in single.meta
        assert sorted(single.observables) == sorted(swept.observables)
        terms = single.meta["configurations"] or single.meta["batch_size"]
        for name in single.observables:
            x, y = np.asarray(single[name], float), np.asarray(swept[name], float)
            tol = rounding_tolerance(
                single.steps.astype(float), float(np.max(np.abs(x))), terms, "float64"
            )
            assert np.all(np.abs(x - y) <= tol), (name, np.max(np.abs(x - y)))
            assert np.max(np.abs(x - y)) < 1e-12  # and in plain numbers: ulps, not a different run


def test_a_diverged_point_is_flagged_not_silently_zero(tmp_path, capsys):
    """eta = 5 diverges within 50 steps: the row says from which step, and the 0-1 error is NaN, not
    0 (a NaN F used to count as 'not wrong')."""
    from dynsim.cli import main

    res = dynsim.sweep(
        "jsl", {"eta": [0.05, 5.0]}, base=dict(BASE, temperature="unit", q=0.5), out=str(tmp_path)
    )
    ok, bad = res.rows
    assert ok["reduced_nonfinite_from_step"] is None and 0 <= ok["reduced_final_error"] <= 1
    # the step the state stopped being finite (a single run says the same), not the next record (50)
    with pytest.warns(RuntimeWarning, match="lower eta"):
        single = reduced.jsl.simulate(JSLConfig(**dict(BASE, temperature="unit", q=0.5, eta=5.0)))
    assert 0 < bad["reduced_nonfinite_from_step"] == single.meta["nonfinite_from_step"] < 50
    assert math.isnan(bad["reduced_final_error"])
    assert math.isnan(bad["reduced_patch_association"])  # not 0: a NaN state ranks nothing
    assert (
        main(
            [
                "sweep",
                "jsl",
                "--D",
                "9",
                "--C",
                "3",
                "--steps",
                "600",
                "--record-every",
                "50",
                "--nu",
                "0.02",
                "--temperature",
                "unit",
                "--q",
                "0.5",
                "--eta",
                "0.05,5",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert "1 points diverged" in capsys.readouterr().out


@pytest.mark.parametrize(
    "setting, axes, base",
    [
        ("jsl", {"q": [0.2, 0.4]}, dict(BASE, steps=20, record_every=10)),
        (
            "mim",
            {"eta": [0.5, 1.0]},
            dict(P=9, kappa_c=0.7, kappa_s=0.3, steps=20, record_every=10),
        ),
    ],
)
def test_heatmap_names_are_checked_before_any_work(tmp_path, setting, axes, base):
    """The summaries a setting declares (`SweepTable.level_summaries`, `point_summaries`) are every
    column its rows hold, so a --heatmap outside them is refused before any point runs (issue 16: it
    was, after all of them)."""
    spec = dynsim.sweeps.spec_of(setting)
    known = (
        {p + n for p in ("reduced_", "full_") for n in spec.table.level_summaries}
        | set(spec.table.point_summaries)
        | {f.name for f in dataclasses.fields(registry.get(setting).config)}
        | {"setting", "seeded", "key"}
    )
    res = dynsim.sweep(setting, axes, base=base, level="both")
    assert set(res.columns) <= known, sorted(set(res.columns) - known)
    assert {"reduced_final_loss", "full_final_loss", "verdict"} <= set(res.columns)
    out = tmp_path / "store"
    with pytest.raises(ValueError, match="heatmap = nonexistent is invalid"):
        dynsim.sweep(
            setting,
            axes,
            base=base,
            level="both",
            heatmaps=["final_loss", "nonexistent"],
            out=str(out),
        )
    assert not list(out.glob("points/*/*"))  # nothing ran
    # a declared name that this level does not give is refused too: full_ summaries in a
    # reduced-only sweep
    with pytest.raises(ValueError, match="heatmap = full_final_loss is invalid"):
        dynsim.sweep(setting, axes, base=base, level="reduced", heatmaps=["full_final_loss"])
