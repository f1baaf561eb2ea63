"""The realistic runs of `check-theorems jsl` are stored: an interrupted ladder, run again, computes
only what was not finished, and what it reads back is bit for bit what it computed."""

from __future__ import annotations

import numpy as np
import pytest

from dynsim.jsl import JSLConfig, claims_realistic as cr, realistic_runs
from dynsim.store import Store

# a ladder of two N at D = 9 small enough to run in seconds (the verdict is not what is tested)
PLAN = cr.Plan(n_ladder=(64, 128), horizon=20, n_test=64, n_tilde=(8,), transfer_seeds=2,
               transfer_steps=10, fig2_grid=(), fig2_steps=0, fig2_n=16)
CFG = JSLConfig(D=9, C=3, q=0.5, nu=1e-4, steps=20)
ONLY = frozenset({"Theorem 4.2"})
REAL_RUN = realistic_runs.run


class Interrupted(Exception):
    """Stands for Ctrl-C or a kill in the middle of a run (the store does not care which)."""


def counting(monkeypatch, stop_at=None):
    """Wrap realistic_runs.run: record each N it computes; raise Interrupted before stop_at."""
    calls = []

    def run(cfg, seeds, *, shuffle=False):
        if cfg.N == stop_at:
            raise Interrupted
        calls.append(cfg.N)
        return REAL_RUN(cfg, seeds, shuffle=shuffle)

    monkeypatch.setattr(realistic_runs, "run", run)
    return calls


def theorem_4_2(items):
    (claim,) = [i for i in items if getattr(i, "claim", None) == "Theorem 4.2"]
    return claim


def test_an_interrupted_ladder_reruns_only_the_unfinished_run(tmp_path, monkeypatch):
    store = Store(tmp_path)
    calls = counting(monkeypatch, stop_at=128)
    with pytest.raises(Interrupted):
        cr.realistic_items(CFG, quick=True, seeds=2, plan=PLAN, only=ONLY, store=store)
    assert calls == [64]  # N = 64 finished and was written before the interruption
    calls = counting(monkeypatch)
    log = []
    resumed = cr.realistic_items(CFG, quick=True, seeds=2, plan=PLAN, only=ONLY, store=store,
                                 log=log.append)
    assert calls == [128]  # the finished run is read back, not recomputed
    assert any("read back" in line for line in log)
    claim = theorem_4_2(resumed)
    assert claim.details["N"] == [64, 128] and claim.verdict in ("holds", "fails")
    # what is read back equals what was computed bit for bit (the next test), so the resumed
    # verdict is the uninterrupted one

def test_a_stored_run_reads_back_bit_for_bit_and_another_config_is_not_found(tmp_path):
    store = Store(tmp_path)
    cfg = cr.realistic_config(CFG, PLAN).replace(N=64)
    records, final, loaded = realistic_runs.run_stored(store, cfg, 2)
    assert not loaded
    records2, final2, loaded2 = realistic_runs.run_stored(store, cfg, 2)
    assert loaded2
    for mine, back in ((records, records2), (final, final2)):
        assert mine.keys() == back.keys()
        for k in mine:
            x, y = np.asarray(mine[k]), np.asarray(back[k])
            assert x.dtype == y.dtype and x.shape == y.shape
            assert np.array_equal(x, y, equal_nan=x.dtype.kind == "f"), k
    # every field of the config is in the key: another seed, or the shuffled control, is another run
    key = realistic_runs.run_key
    assert key(cfg.replace(seed=1), 2, False) != key(cfg, 2, False)
    assert key(cfg, 2, True) != key(cfg, 2, False)
    assert key(cfg, 3, False) != key(cfg, 2, False)
