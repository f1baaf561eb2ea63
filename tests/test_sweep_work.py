"""The work a sweep does: a point the seed does not change runs once for all its seeds, vmapped
groups are padded only to their own size, and off a terminal the progress is plain lines that say
the steps inside a chunk."""

from __future__ import annotations

import re

import pytest

import dynsim
from dynsim.sweeps import tasks
from reduced.jsl import many

BASE = dict(D=9, C=3, steps=100, record_every=50, nu=0.02)


@pytest.fixture
def runs(monkeypatch):
    """(batch size, points) of every compiled reduced group run, padding included, counted where
    they run."""
    calls = []
    original = many.run_group_jit

    def spy(method, size, batch_size, devices, classes, cfgs, keys, states0):
        calls.append((batch_size, int(states0.shape[0])))
        return original(method, size, batch_size, devices, classes, cfgs, keys, states0)

    monkeypatch.setattr(many, "run_group_jit", spy)
    return calls


def test_a_deterministic_level_runs_once_per_point_for_every_seed(tmp_path, runs):
    res = dynsim.sweep("jsl", {"q": [0.2, 0.3]}, base=BASE, seeds=3, out=str(tmp_path))
    assert [(r["q"], r["seed"]) for r in res.rows] == [
        (q, s) for q in (0.2, 0.3) for s in (0, 1, 2)
    ]
    assert sum(n for _, n in runs) == 2 and len(res.computed) == 2  # one run per q, no padding
    for i in (0, 3):
        first, *others = res.rows[i : i + 3]
        assert first["seeded"] is False
        assert all(
            o["key"] == first["key"] and o["reduced_final_loss"] == first["reduced_final_loss"]
            for o in others
        )
    again = dynsim.sweep("jsl", {"q": [0.2, 0.3]}, base=BASE, seeds=4, out=str(tmp_path))
    # a fourth seed is the same run: nothing to compute
    assert again.computed == [] and len(again.rows) == 8


def test_a_seeded_sum_runs_every_seed(tmp_path, runs):
    """A Monte Carlo configuration sum draws its sample from the seed: every seed is its own run."""
    res = dynsim.sweep(
        "jsl",
        {"q": [0.3]},
        base=BASE,
        seeds=3,
        options={"max_configurations": 10, "mc_samples": 500},
        out=str(tmp_path),
    )
    assert sum(n for _, n in runs) == 3 and len(res.computed) == 3
    assert (
        all(r["seeded"] for r in res.rows) and len({r["reduced_final_loss"] for r in res.rows}) == 3
    )


@pytest.mark.parametrize("mode, computed", [("exact", 2), ("sampled", 4)])
def test_the_full_level_runs_a_seed_only_where_it_draws(tmp_path, mode, computed):
    res = dynsim.sweep(
        "jsl",
        {"q": [0.2, 0.3]},
        base=dict(BASE, N=32),
        seeds=2,
        level="full",
        options={"mode": mode, "replicates": 2 if mode == "sampled" else None},
        out=str(tmp_path),
    )
    assert len(res.computed) == computed and len(res.rows) == 4


@pytest.mark.parametrize(
    "points, batch, width",
    [(2, 8, 2), (8, 8, 8), (10, 8, 5), (16, 8, 8), (17, 8, 6), (5, 1, 1), (3, 2, 2)],
)
def test_a_batch_is_as_narrow_as_its_points_allow(points, batch, width):
    assert tasks.balanced_batch(points, batch) == width
    batches = -(-points // batch)
    # padded: fewer than the batches
    assert -(-points // width) == batches and batches * width - points < batches


def test_a_small_group_is_padded_only_to_its_size(tmp_path, runs):
    dynsim.sweep("jsl", {"q": [0.2, 0.3]}, base=BASE, out=str(tmp_path), batch_size=8)
    assert runs == [(2, 2)]  # one batch of the 2 points, not 8 with 6 copies
    runs.clear()
    dynsim.sweep(
        "jsl", {"q": [0.1, 0.15, 0.2, 0.25, 0.35]}, base=BASE, out=str(tmp_path / "b"), batch_size=4
    )
    assert runs == [(3, 6)]  # 5 points in 2 batches of 3 (1 copy), not 2 of 4 (3 copies)


def test_off_a_terminal_plain_lines_say_the_steps_inside_a_chunk(tmp_path, capsys, monkeypatch):
    # no sweep here lasts INTERVAL: the first line (at the first report) and the last
    monkeypatch.setattr(dynsim.progress, "INTERVAL", 1e9)
    dynsim.sweep("jsl", {"q": [0.2, 0.3, 0.4]}, base=BASE, out=str(tmp_path / "a"), chunk_size=2)
    lines = capsys.readouterr().err.splitlines()
    first = r"sweep jsl \(reduced\): 0/3 runs, \d+ s elapsed; now \d+/\d+ steps"
    assert len(lines) == 2 and re.fullmatch(first, lines[0]), lines
    # the time left: the pace measured since the bar started (`dynsim.progress.time_left`)
    assert re.fullmatch(r"sweep jsl \(reduced\): 3/3 runs, \d+ s elapsed, ~\d+ s left", lines[1])
    dynsim.sweep("jsl", {"q": [0.2, 0.3, 0.4]}, base=BASE, out=str(tmp_path / "b"), progress=False)
    assert capsys.readouterr().err == ""
