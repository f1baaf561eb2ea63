"""Progress of library calls (`dynsim.progress.tracked`): progress=True draws a bar that reaches the
run's steps, False draws nothing, None draws after DELAY seconds (plain lines off a terminal), and
a call inside a bar already drawn (the CLI's) draws nothing of its own; a flow's bar counts the
save times it reaches."""

from __future__ import annotations

import io

import pytest

import dynsim  # noqa: F401  (float64)
import full.mim
import reduced.jsl
from dynsim import JSLConfig, MIMConfig, progress

STEPS = 40
CFG = JSLConfig(D=9, C=3, q=0.5, steps=STEPS, record_every=10)


def test_progress_true_draws_a_bar_to_the_last_step(capsys):
    reduced.jsl.simulate(CFG, progress=True)
    err = capsys.readouterr().err
    assert "reduced JSL: [" in err
    assert f"{STEPS}/{STEPS} steps" in err  # the last record's report reaches the total
    assert err.endswith("\n")  # the bar's line is closed


def test_progress_false_draws_nothing(capsys):
    reduced.jsl.simulate(CFG, progress=False)
    full.mim.simulate(MIMConfig(P=16, K=1, steps=5), progress=False)
    assert capsys.readouterr().err == ""


def test_default_waits_for_delay_then_writes_plain_lines(capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 1e9)  # no run lasts this long: nothing is drawn
    reduced.jsl.simulate(CFG)
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(progress, "DELAY", 0.0)  # pytest's stderr is no terminal: plain lines
    reduced.jsl.simulate(CFG)
    err = capsys.readouterr().err
    assert "\r" not in err and err.startswith("reduced JSL: ")
    assert err.strip().splitlines()[-1].startswith(f"reduced JSL: {STEPS}/{STEPS} steps")


def test_inside_an_active_bar_draws_nothing_of_its_own(capsys, monkeypatch):
    monkeypatch.setattr(progress, "DELAY", 0.0)
    outer = io.StringIO()
    with progress.bar(STEPS, "outer", stream=outer, enabled=True):
        reduced.jsl.simulate(CFG)
    assert capsys.readouterr().err == ""
    assert "outer: [" in outer.getvalue() and "reduced JSL" not in outer.getvalue()


def test_a_flow_counts_its_save_times_to_the_last(capsys):
    times = [0.0, 0.5, 1.0, 2.0]  # t_max = eta * steps = 2
    reduced.jsl.simulate(CFG, method="flow", times=times, progress=True)
    err = capsys.readouterr().err
    assert f"reduced JSL: [{'#' * progress.WIDTH}] 4/4 save times" in err


@pytest.mark.parametrize("bad", ["yes", 1, 0.5])
def test_progress_must_be_none_true_or_false(bad):
    with pytest.raises(ValueError, match="progress = .* is invalid: must be None, True or False"):
        reduced.jsl.simulate(CFG, progress=bad)
