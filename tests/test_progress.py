"""The progress bar on a fake clock (`dynsim.progress`): the time left counts no compiling, off a
terminal plain lines come at a bounded rate however the work reports (runs of check-theorems,
chunks of a sweep), the run in progress shows inside a bar of other units, in a notebook one output
is updated in place, a log line gets a line of its own, and a trainer's scan reports every
REPORT_EVERY steps."""

from __future__ import annotations

import io
import re
import sys
import types

import jax
import jax.numpy as jnp
import pytest

from dynsim import progress
from dynsim.cli import output


class Clock:
    """A fake `time` for dynsim.progress: `now` moves only when a test moves it."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


class Log(io.StringIO):
    """A stream that is no terminal and notes the fake time of each line written."""

    def __init__(self, clock: Clock):
        super().__init__()
        self.clock, self.times = clock, []

    def write(self, text: str) -> int:
        self.times += [self.clock.now] * text.count("\n")
        return super().write(text)


@pytest.fixture
def clock(monkeypatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(progress, "time", fake)
    return fake


def last_line(stream: io.StringIO) -> str:
    return stream.getvalue().replace("\r", "\n").strip().splitlines()[-1]


def test_the_time_left_is_measured_after_compiling(clock):
    out = io.StringIO()
    with progress.bar(1000, "run", stream=out, enabled=True):
        clock.now = 100.0  # 100 s of compiling, then the first report
        progress.report(100, 1000)
        clock.now = 101.0  # 100 steps a second since: 800 steps left
        progress.report(200, 1000)
        # counted from the bar's start it would be 101 s / 200 steps * 800 = 404 s
        assert last_line(out).endswith("200/1000 steps, 101 s elapsed, ~8 s left")
        clock.now = 115.0  # the next batch: its program compiled for 14 s, its count starts again
        progress.report(100, 1000)
        clock.now = 116.0
        progress.report(200, 1000)
        assert last_line(out).endswith("200/1000 steps, 116 s elapsed, ~8 s left")


def test_a_count_held_at_its_start_is_compiling_too(clock):
    # a flow's field compiles inside its first callbacks: the count stays at its first save time
    out = io.StringIO()
    with progress.bar(None, "flow", stream=out, enabled=True):
        for clock.now in (10.0, 40.0, 70.0):
            progress.report(1, 101, "save times")
        clock.now = 71.0
        progress.report(11, 101, "save times")  # 10 save times a second: 90 left
        assert last_line(out).endswith("11/101 save times, 71 s elapsed, ~9 s left")


def test_a_run_shows_inside_a_bar_of_other_units(clock):
    out = io.StringIO()
    with progress.bar(3, "claims", stream=out, enabled=True, unit="runs"):
        clock.now = 5.0
        progress.report(5000, 20000)
        clock.now = 6.0
        progress.report(10000, 20000)
        assert last_line(out).endswith("0/3 runs, 6 s elapsed; now 10000/20000 steps (~2 s left)")
        clock.now = 10.0
        progress.advance()
        clock.now = 20.0
        progress.advance()  # 10 s a run since the first: one left
        assert last_line(out).endswith("2/3 runs, 20 s elapsed, ~10 s left")


def test_the_time_left_of_units_is_the_measured_pace_and_shrinks_as_they_finish():
    """`progress.time_left` on fake elapsed times: 10 units, the first done at 20 s (compiling
    included), then a new group compiles before the third (rates from the first unit on grew from
    1 s to 5 s a unit there, and the time left with them)."""
    finished = [20.0, 21.0, 30.0, 31.0, 32.0]
    left = [progress.time_left(t, k + 1, 10) for k, t in enumerate(finished)]
    assert left == [180.0, 84.0, 70.0, 46.5, 32.0]  # elapsed / done x the units left
    assert progress.time_left(20.0, 1, 10, since=15.0) == 165.0  # counted down until the next
    assert progress.time_left(20.0, 1, 10, since=500.0) == 0.0
    assert progress.time_left(40.0, 10, 10) == 0.0
    assert progress.time_left(0.0, 0, 10) is None  # nothing finished: no measured pace


def test_a_bar_of_units_counts_its_time_left_down_between_two_finished_units(clock):
    out = io.StringIO()
    with progress.bar(4, "sweep", stream=out, enabled=True, unit="runs"):
        clock.now = 10.0
        progress.advance()  # 10 s a unit measured: 3 left
        assert last_line(out).endswith("1/4 runs, 10 s elapsed, ~30 s left")
        clock.now = 15.0
        progress.report(50, 100)
        assert last_line(out).endswith("1/4 runs, 15 s elapsed, ~25 s left; now 50/100 steps")


@pytest.mark.parametrize("chunk", [6.0, 360.0])  # seconds between two chunks of a sweep
@pytest.mark.parametrize("where", ["here", "on Dask"])
def test_off_a_terminal_plain_lines_come_at_a_bounded_rate(clock, chunk, where):
    """A sweep of 12 minutes whose runs report every 0.5 s (or, on Dask workers, whose wait polls
    every 0.5 s): a line at least every INTERVAL seconds (never silent) and at most one per
    INTERVAL, plus the last."""
    log, end = Log(clock), 720.0
    units = int(end / chunk)
    with progress.bar(units, "sweep", stream=log, unit="runs"):  # Log is no terminal: plain lines
        steps = 0
        while clock.now < end:
            clock.now += 0.5
            steps += 1
            progress.report(steps, 1e9) if where == "here" else progress.pulse()
            if clock.now % chunk == 0:
                progress.advance()
    gaps = [b - a for a, b in zip([0.0] + log.times, log.times + [end])]
    assert max(gaps) <= progress.INTERVAL + 0.5  # + the time between two reports
    assert len(log.times) <= end / progress.INTERVAL + 2  # a line per interval, the first, the last
    assert "\r" not in log.getvalue()
    assert log.getvalue().splitlines()[-1].startswith(f"sweep: {units}/{units} runs")


def test_run_logged_off_a_terminal_writes_plain_lines_for_any_unit(clock, capsys):
    """check-theorems' bar (`output.run_logged`, unit "runs") on a stderr that is no terminal."""

    def work():
        clock.now = progress.DELAY + progress.INTERVAL  # one run, reporting its steps
        progress.report(10, 100)
        clock.now += progress.INTERVAL
        progress.report(40, 100)  # a step a second: 60 s left
        progress.advance()

    output.run_logged("claims", 1, work, {}, "seconds", unit="runs")
    err = capsys.readouterr().err
    assert "claims: 0/1 runs, 33 s elapsed; now 10/100 steps" in err
    assert "claims: 0/1 runs, 63 s elapsed; now 40/100 steps (~60 s left)" in err
    assert "claims: 1/1 runs" in err and "\r" not in err


class Kernel(io.StringIO):
    """An ipykernel OutStream as `progress.notebook` recognises it."""


Kernel.__module__ = "ipykernel.iostream"


def test_in_a_notebook_one_output_is_updated_in_place(clock, monkeypatch):
    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(("update", data["text/plain"]))

    def display(data, raw, display_id):
        shown.append(("display", data["text/plain"]))
        return Handle()

    ipython = types.ModuleType("IPython")
    ipython.display = types.SimpleNamespace(display=display)
    monkeypatch.setitem(sys.modules, "IPython", ipython)
    monkeypatch.setitem(sys.modules, "IPython.display", ipython.display)
    stream = Kernel()
    with progress.bar(54, "reduced", stream=stream):
        for step in range(1, 55):
            clock.now += 1.0
            progress.report(step, 54)
    assert [kind for kind, _ in shown] == ["display"] + ["update"] * 53
    assert "54/54 steps" in shown[-1][1] and stream.getvalue() == ""


def test_off_a_notebook_nothing_imports_ipython(clock, monkeypatch):
    monkeypatch.setitem(sys.modules, "IPython", None)  # an import of it would raise ImportError
    out = io.StringIO()
    with progress.bar(10, "run", stream=out, enabled=True):
        clock.now = 1.0
        progress.report(10, 10)
    assert "10/10 steps" in out.getvalue()


def test_a_log_line_takes_the_bars_line(clock, capsys):
    with progress.bar(10, "run", stream=sys.stderr, enabled=True):
        progress.report(5, 10)
        output.log("reduced (P) at D = 36 ...")
        clock.now = 1.0
        progress.report(10, 10)
    err = capsys.readouterr().err
    before, after = err.split("reduced (P) at D = 36 ...\n")
    assert before.endswith("\r") and set(before.rsplit("\r", 2)[1]) == {" "}  # the bar cleared
    assert after.startswith("\rrun: [") and "10/10 steps" in after and after.endswith("\n")


def test_a_trainers_scan_reports_every_report_every_steps(monkeypatch):
    monkeypatch.setattr(progress, "REDRAW", 0.0)  # every report drawn
    steps = 2 * progress.REPORT_EVERY + 7

    def train(w):  # one seed's scan, vmapped over seeds as the image trainers do
        def step(w, t):
            progress.report_every(t + 1, steps)
            return w * 0.5, None

        return jax.lax.scan(step, w, jnp.arange(steps))[0]

    out = io.StringIO()
    with progress.bar(steps, "train", stream=out, enabled=True):
        jax.jit(jax.vmap(train))(jnp.ones(2))
    counts = [int(c) for c in re.findall(r"\] (\d+)/", out.getvalue())]
    assert counts == [progress.REPORT_EVERY, 2 * progress.REPORT_EVERY, steps]  # once, not per seed
