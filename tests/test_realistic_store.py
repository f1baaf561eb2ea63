"""The realistic runs of `check-theorems jsl` are stored seed by seed: an interrupted ladder, run
again, computes only the seeds not finished, what it reads back is bit for bit what it computed, and
seeds run on a local Dask cluster give the in-process numbers."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dynsim import cli
from dynsim.jsl import JSLConfig, claims_realistic as cr, realistic_plan, realistic_runs
from dynsim.store import Store

# a ladder of two N at D = 9 small enough to run in seconds (the verdict is not what is tested)
PLAN = cr.Plan(
    n_ladder=(64, 128),
    horizon=20,
    n_test=64,
    n_tilde=(8,),
    transfer_seeds=2,
    transfer_steps=10,
    fig2_grid=(),
    fig2_steps=0,
    fig2_n=16,
)
CFG = JSLConfig(D=9, C=3, q=0.5, nu=1e-4, steps=20)
ONLY = frozenset({"Theorem 4.2"})
REAL_SEED = realistic_runs.seed_run


class Interrupted(Exception):
    """Stands for Ctrl-C or a kill in the middle of a run (the store does not care which)."""


def counting(monkeypatch, stop_at=None):
    """Wrap realistic_runs.seed_run: record each (N, seed) it computes; raise Interrupted at
    stop_at."""
    calls = []

    def seed_run(cfg, r, shuffle=False):
        if (cfg.N, r) == stop_at:
            raise Interrupted
        calls.append((cfg.N, r))
        return REAL_SEED(cfg, r, shuffle)

    monkeypatch.setattr(realistic_runs, "seed_run", seed_run)
    return calls


def theorem_4_2(items):
    (claim,) = [i for i in items if getattr(i, "claim", None) == "Theorem 4.2"]
    return claim


@pytest.mark.parametrize("at_once", [1, 2])
def test_an_interrupted_ladder_reruns_only_the_unfinished_seeds(tmp_path, monkeypatch, at_once):
    """One seed at a time, or two side by side (where the failing seed stops the one beside it,
    which is then not stored): a rerun computes exactly the seeds the store does not hold."""
    monkeypatch.setattr(realistic_runs, "side_by_side", lambda seeds: min(at_once, seeds))
    store = Store(tmp_path)
    calls = counting(monkeypatch, stop_at=(128, 1))
    with pytest.raises(Interrupted):
        cr.realistic_items(CFG, quick=True, seeds=2, plan=PLAN, only=ONLY, store=store)
    rc = cr.realistic_config(CFG, PLAN)
    every = [(N, r) for N in (64, 128) for r in (0, 1)]
    held = [
        (N, r) for N, r in every if store.load(realistic_runs.run_key(rc.replace(N=N), r, False))
    ]
    if at_once == 1:  # N = 64 and seed 0 of N = 128 finished, each written as it finished
        assert calls == [(64, 0), (64, 1), (128, 0)] and held == calls
    else:  # N = 64 finished; seed 0 of N = 128 was stopped beside the failing seed 1
        assert sorted(calls) == [(64, 0), (64, 1), (128, 0)] and held == [(64, 0), (64, 1)]
    calls = counting(monkeypatch)
    log = []
    resumed = cr.realistic_items(
        CFG, quick=True, seeds=2, plan=PLAN, only=ONLY, store=store, log=log.append
    )
    # every finished seed is read back, not recomputed
    assert sorted(calls) == [x for x in every if x not in held]
    assert any("2 of 2 seeds read back" in line for line in log)
    assert any("1 of 2 seeds read back" in line for line in log) == (at_once == 1)
    claim = theorem_4_2(resumed)
    # at these N, GD at eta = 0.1 crosses its stability edge while the loss drops (eta lambda_max
    # 2.8 at a record): not applicable, which is not what this test is about
    assert claim.details["N"] == [64, 128]
    assert claim.verdict in ("holds", "fails", "not applicable")
    # what is read back equals what was computed bit for bit (the next test), so the resumed
    # verdict is the uninterrupted one


def test_a_stored_run_reads_back_bit_for_bit_and_another_config_is_not_found(tmp_path):
    store = Store(tmp_path)
    cfg = cr.realistic_config(CFG, PLAN).replace(N=64)
    log: list = []
    records, final, loaded = realistic_runs.run_stored(store, cfg, 2, log=log.append)
    assert loaded == 0
    # each seed's wall time is stored beside it and read back; its CPU time where it ran alone in
    # its process (seeds side by side share the process's time: none)
    alone = realistic_runs.side_by_side(2) == 1
    for r in (0, 1):
        wall, cpu = realistic_runs.cost_of(
            store.load(realistic_runs.run_key(cfg, r, False))["summary"]
        )
        assert wall > 0 and (cpu > 0 if alone else cpu is None)
    # the rung's line: its seeds, how many side by side, the process's CPU time
    assert any(re.search(r"N = 64: 2 seeds in \d+ s, .*\d+ CPU s in this process$", x) for x in log)
    log2: list = []
    records2, final2, loaded2 = realistic_runs.run_stored(store, cfg, 2, log=log2.append)
    assert loaded2 == 2
    assert not any("CPU s" in x for x in log2), log2  # nothing computed: no cost line
    same(records, records2)
    same(final, final2)
    # the stored form is `run`'s: the same seeds computed without a store
    same((records, final), realistic_runs.run(cfg, 2))
    # every field of the config is in the key: another seed, or the shuffled control, is another run
    key = realistic_runs.run_key
    assert key(cfg.replace(seed=1), 0, False) != key(cfg, 0, False)
    assert key(cfg, 0, True) != key(cfg, 0, False)
    assert key(cfg, 1, False) != key(cfg, 0, False)


@pytest.mark.parametrize(
    "summary,read",
    [
        ({}, None),
        ({"cpu_s": 2.0}, None),
        ({"wall_s": "1", "cpu_s": 2.0}, None),
        ({"wall_s": True, "cpu_s": 2.0}, None),
        ({"wall_s": -1.0, "cpu_s": 2.0}, None),
        ({"wall_s": float("nan")}, None),
        ({"wall_s": float("inf"), "cpu_s": 2.0}, None),
        ({"wall_s": 1.0}, (1.0, None)),
        ({"wall_s": 1.0, "cpu_s": None}, (1.0, None)),
        ({"wall_s": 1.0, "cpu_s": float("nan")}, (1.0, None)),
        ({"wall_s": 1.0, "cpu_s": [2.0]}, (1.0, None)),
        ({"wall_s": 1, "cpu_s": 2.5}, (1.0, 2.5)),
    ],
)
def test_a_stored_seed_cost_is_read_as_untrusted_input(summary, read):
    """Anything but a finite non-negative number is no value: no wall time, no cost."""
    assert realistic_runs.cost_of(summary) == read


def same(mine, back):
    """Equal bit for bit, dtypes and shapes included (NaN equal to NaN)."""
    if isinstance(mine, tuple):
        for m, b in zip(mine, back, strict=True):
            same(m, b)
        return
    assert mine.keys() == back.keys()
    for k in mine:
        x, y = np.asarray(mine[k]), np.asarray(back[k])
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), k


def test_seeds_on_local_dask_workers_equal_the_in_process_seeds(tmp_path):
    """A worker process computes the seeds (the same compiled program on the same CPU; one worker
    keeps the cluster's start and compilation to one process): the stored seeds and the combined
    records equal the in-process ones bit for bit."""
    cfg = cr.realistic_config(CFG, PLAN).replace(N=64)
    here = realistic_runs.run_stored(Store(tmp_path / "here"), cfg, 2)
    there = realistic_runs.run_stored(Store(tmp_path / "there"), cfg, 2, executor={"workers": 1})
    assert here[2] == there[2] == 0
    same(here[:2], there[:2])


@pytest.mark.parametrize(
    "argv,named",
    [
        (["--workers", "0"], "workers = 0"),
        (["--security", "x.toml"], "security = 'x.toml'"),
        (["--workers", "2", "--scheduler", "tls://h:1"], "are exclusive"),
    ],
)
def test_bad_executor_options_are_refused_before_any_work(tmp_path, capsys, argv, named):
    code = cli.main(["check-theorems", "jsl", "--quick", "--out", str(tmp_path), *argv])
    err = capsys.readouterr().err
    assert code == 2 and named in err and "Traceback" not in err, err
    assert not (tmp_path / "points").exists() or not any((tmp_path / "points").iterdir())


@pytest.mark.parametrize(
    "spec,named",
    [
        ("D=10,C=3", "JSLConfig.D = 10"),
        ("N=4000:1000", "N = 4000:1000"),
        ("T=0", "T = 0"),
        ("eta=fast", "eta = 'fast'"),
        ("D=10,Z=1", "item 'Z=1'"),
    ],
)
def test_bad_realistic_sizes_are_refused_before_any_work(tmp_path, capsys, spec, named):
    code = cli.main(
        ["check-theorems", "jsl", "--quick", "--out", str(tmp_path), "--realistic-sizes", spec]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--realistic-sizes" in err and named in err, err
    assert "Traceback" not in err and not (tmp_path / "points").exists()


def test_realistic_sizes_set_the_runs_and_the_estimate_counts_them(tmp_path, capsys):
    """--realistic-sizes reaches the realistic config (the report records it) and the resource
    estimate: refused by --max-time, the message names the chosen ladder's seeds and sizes. The size
    is one where Definition 2.1 holds (D = 21, C = 3, q = 0.5: P[y f* <= 0] = 0.084), so Theorem
    4.2 runs its ladder; where it fails the claim is decided without runs (nothing to estimate)."""
    code = cli.main(
        [
            "check-theorems",
            "jsl",
            "--quick",
            "--out",
            str(tmp_path),
            "--only",
            "Theorem 4.2",
            "--max-time",
            "1s",
            "--realistic-sizes",
            "D=21,C=3,q=0.5,eta=0.02,T=10000000,N=64000:128000",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "12 of 12 to run" in err and "128,000" in err and "D 21 x d 21" in err, err
    plan = realistic_plan.with_sizes(realistic_plan.QUICK, "D=10,C=2,q=0.5,eta=0.02,T=100,N=64:128")
    rc = realistic_plan.realistic_config(CFG, plan)
    assert (rc.D, rc.C, rc.q, rc.eta, rc.steps, plan.n_ladder) == (10, 2, 0.5, 0.02, 20, (64, 128))


def test_the_decide_plan_runs_its_own_ladder_and_seeds(tmp_path, capsys):
    """--plan decide reaches the estimate: refused by --max-time, the message counts its seeds (10,
    the plan's, where --seeds is not given; --seeds wins where given) and its largest N; with
    --quick it is refused as exclusive, before any work."""
    argv = [
        "check-theorems",
        "jsl",
        "--plan",
        "decide",
        "--only",
        "Theorem 4.2",
        "--max-time",
        "1s",
    ]
    assert cli.main([*argv, "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err
    ladder = realistic_plan.DECIDE.n_ladder
    assert realistic_plan.DECIDE.seeds == 10
    assert f"{10 * len(ladder)} of {10 * len(ladder)} to run" in err and f"{ladder[-1]:,}" in err
    assert cli.main([*argv, "--seeds", "7", "--out", str(tmp_path / "b")]) == 2
    assert f"{7 * len(ladder)} of {7 * len(ladder)} to run" in capsys.readouterr().err
    code = cli.main([*argv, "--quick", "--out", str(tmp_path / "c")])
    err = capsys.readouterr().err
    assert code == 2 and "--quick and --plan decide are exclusive" in err, err
    assert "Traceback" not in err and not (tmp_path / "c").exists()
    assert realistic_plan.seeds_for(realistic_plan.FULL, None) == realistic_plan.CHECK_SEEDS
