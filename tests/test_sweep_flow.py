"""`sweep --method flow`: the reduced JSL level as the gradient flow, event times in flow time t =
eta * steps (censored at t_max), GD's eta * T1 approaching the flow's t1 as eta shrinks, the
heatmaps' unit, and the heatmaps a level does not offer (refused before any point runs)."""

from __future__ import annotations

import csv
import json
import os

import numpy as np
import pytest

import dynsim
import reduced.jsl.flow
from dynsim import setting as registry
from dynsim.cli import main
from dynsim.jsl import JSLConfig, events
from dynsim.store import Store
from dynsim.sweeps import choices
from tests.helpers import assert_refused

# q = 0.5 reaches T1_attention near t = 425 at D = 9, C = 3, unit temperature; q = 0.4 near t = 490
BASE = dict(D=9, C=3, temperature="unit", nu=0.02)


def flow_event_time(cfg: JSLConfig, event: str):
    """The event's time on the flow saved at eta times every recorded step up to eta * steps: solved
    by `reduced.jsl.flow`, read by `events.detect`, with save times built here (not by the sweep's
    code)."""
    steps = np.arange(0, cfg.steps + 1, cfg.record_every)
    times = cfg.eta * steps.astype(float)
    traj = reduced.jsl.flow.simulate_flow(cfg, t_max=cfg.eta * cfg.steps, times=times)
    step = events.detect(traj).times()[event]
    return None if step is None else float(times[list(steps).index(step)])


def test_flow_sweep_event_times_are_the_flows_in_time_and_censored_at_t_max(tmp_path):
    """Both points run the flow to t_max = eta * steps = 470 saved every eta * record_every = 5: q =
    0.5 reaches T1_attention, q = 0.4 does not and is censored at 470, never given 470 as a time.
    Tolerance none: the sweep and `flow_event_time` give the same solver the same field, start and
    save times, so the event falls on the same save and its time is the same float."""
    base = dict(BASE, eta=0.1, steps=4700, record_every=50)
    res = dynsim.sweep(
        "jsl", {"q": [0.4, 0.5]}, base=base, options={"method": "flow"}, out=str(tmp_path)
    )
    low, high = res.rows
    expected = flow_event_time(JSLConfig(q=0.5, **base), "T1_attention")
    assert expected is not None and high["reduced_t1_attention"] == expected
    assert high["reduced_T1_attention"] == round(expected / 0.1)  # the GD step nearest in time
    assert flow_event_time(JSLConfig(q=0.4, **base), "T1_attention") is None
    assert low["reduced_t1_attention"] is None
    assert low["reduced_t1_attention_censored"] == 0.1 * 4700  # t_max, the flow's horizon
    with open(tmp_path / "sweep.json") as fh:
        manifest = json.load(fh)
    assert manifest["heatmap_unit"] == "time"  # a flow sweep's default
    assert manifest["options"]["method"] == "flow"


def test_gd_event_time_approaches_the_flows_as_eta_shrinks(tmp_path):
    """|eta T1 - t1| (GD against the flow, T1_attention at q = 0.5, t1 ~ 425) falls as eta goes
    from 0.1 to 0.07 to 0.05: one GD sweep over eta at 8,700 steps (horizons 870, 609, 435),
    recorded every step, and the flow to 435 saved every 0.05. A recorded time lies within one
    record after the crossing: GD's within eta, the flow's within 0.05, so a measured error is off
    by at most eta + 0.05 from the true one, and each fall is asserted beyond the sum of the two
    resolutions. Measured errors 1.35, 0.57, 0.25: falls 0.78 and 0.32 against 0.27 and 0.22."""
    base = dict(BASE, q=0.5, steps=8700, record_every=1)
    etas = [0.1, 0.07, 0.05]
    gd = dynsim.sweep("jsl", {"eta": etas}, base=base, out=str(tmp_path / "gd"))
    flow = dynsim.sweep(
        "jsl", {"eta": [0.05]}, base=base, options={"method": "flow"}, out=str(tmp_path / "flow")
    )
    t1 = flow.rows[0]["reduced_t1_attention"]
    errors = [abs(r["reduced_t1_attention"] - t1) for r in gd.rows]
    for eta, smaller, e, e_next in zip(etas, etas[1:], errors, errors[1:]):
        assert e - e_next > (eta + 0.05) + (smaller + 0.05), (etas, errors)


def test_heatmap_unit_time_draws_eta_times_the_steps(tmp_path, capsys):
    """--heatmap-unit time draws the event's twin column t0 = eta * T0 (and its censoring eta * the
    last step): the same product of two floats as the test's, so equal exactly."""
    out = tmp_path / "sw"
    args = ["sweep", "jsl", "--D", "9", "--C", "3", "--temperature", "unit", "--q", "0.3,0.5"]
    args += ["--eta", "0.1,0.2", "--steps", "40", "--record-every", "2", "--out", str(out)]
    assert main(args + ["--heatmap", "T0", "--heatmap-unit", "time"]) == 0
    assert "reduced_t0" in capsys.readouterr().out.splitlines()[0]
    with open(out / "table.csv") as fh:
        rows = list(csv.DictReader(fh))
    reached = [r for r in rows if r["reduced_T0"]]
    assert reached, "no point reached T0: the check would be vacuous"
    for r in rows:
        eta = float(r["eta"])
        if r["reduced_T0"]:
            assert float(r["reduced_t0"]) == eta * int(r["reduced_T0"])
        else:
            assert float(r["reduced_t0_censored"]) == eta * int(r["reduced_T0_censored"])
    assert os.path.exists(out / "heatmap-reduced_t0.png")
    with open(out / "sweep.json") as fh:
        assert json.load(fh)["heatmaps"] == ["t0"]


@pytest.mark.parametrize(
    "extra, needles",
    [
        (["--heatmap", "patch_association"], ["heatmap = 'patch_association'", "Definition 2.2"]),
        (["--level", "both", "--heatmap", "final_loss,patch_association"], ["reduced_patch"]),
        (["--heatmap", "verdict"], ["heatmap = 'verdict'", "level = 'both'"]),
        (["--level", "full", "--heatmap", "max_error"], ["heatmap = 'max_error'"]),
        (["--method", "flow", "--level", "full"], ["method = 'flow'", "full level has none"]),
        (["--t-max", "5"], ["t_max = 5.0 is invalid", "method = 'gd'"]),
        (["--method", "flow", "--t-max", "-1"], ["--t-max = -1.0 is invalid"]),
        # an axis the flow does not read: every value would solve the same flow again
        (["--method", "flow", "--eta", "0.1,0.2"], ["eta = [0.1, 0.2] is invalid", "not read"]),
        (["--method", "flow", "--record-every", "1,2"], ["record_every = [1, 2] is invalid"]),
        # a heatmap asked for over one swept axis cannot be drawn
        (["--heatmap", "final_loss"], ["heatmap = 'final_loss'", "two swept axes", "has 1 (q)"]),
        (["--eta", "0.1,0.2", "--heatmap", "final_los"], ["(did you mean final_loss?)"]),
    ],
)
def test_refusals_exit_2_before_any_point_runs(tmp_path, capsys, extra, needles):
    out = tmp_path / "sw"
    code = main(["sweep", "jsl", "--q", "0.2,0.3", "--steps", "10", "--out", str(out), *extra])
    assert_refused(code, capsys.readouterr().err, *needles)
    assert not (out / "points").exists()


def test_only_the_reduced_flow_refuses_the_axes_it_does_not_read():
    """eta, steps and record_every (the configs' FLOW_IGNORES) are refused as axes of the flow at
    level reduced, in JSL and MIM; GD reads them, and so does full GD beside the flow (level
    both)."""
    flow = {"method": "flow"}
    for setting, axis in (("jsl", "eta"), ("jsl", "steps"), ("mim", "record_every")):
        with pytest.raises(ValueError, match=f"^{axis} = .* method = 'flow' at level = 'reduced'"):
            choices.flow_unread(setting, "reduced", flow, {"q": [0.2], axis: [1, 2]})
        choices.flow_unread(setting, "both", flow, {axis: [1, 2]})
        choices.flow_unread(setting, "reduced", {"method": "gd"}, {axis: [1, 2]})
    choices.flow_unread("jsl", "reduced", flow, {"eta": [0.1], "q": [0.2, 0.3]})  # one value


def test_the_full_levels_association_is_offered():
    """Only the reduced level's flag is refused: the full level's patch association, named or by
    --level full, and the checker's summaries with level both pass."""
    spec = registry.get("jsl").sweep
    choices.refuse(spec, "full", ["patch_association", "final_attention_ratio"])
    choices.refuse(spec, "both", ["full_patch_association", "verdict", "max_error"])


@pytest.mark.parametrize("t_max", ["nan", "inf", "-1", "0"])
def test_a_t_max_not_finite_and_positive_is_refused_in_every_setting(tmp_path, capsys, t_max):
    """ICL's sweep ran GD with the default end time for --t-max nan: refused in one line, exit 2,
    nothing created, on the command line (naming --t-max) and in the library (t_max)."""
    out = tmp_path / "sw"
    for setting in ("icl", "jsl"):
        code = main(["sweep", setting, "--method", "flow", "--t-max", t_max, "--out", str(out)])
        assert_refused(code, capsys.readouterr().err, f"--t-max = {float(t_max)!r} is invalid")
        with pytest.raises(ValueError, match=rf"^t_max = {float(t_max)!r} is invalid: must be a"):
            dynsim.sweep(setting, {}, options={"method": "flow", "t_max": float(t_max)}, out=out)
    assert not out.exists()


def test_an_icl_sweep_runs_the_flow_it_names(tmp_path):
    res = dynsim.sweep(
        "icl",
        {"N": [5, 10]},
        base=dict(steps=40, record_every=10),
        options={"method": "flow", "t_max": 3.0},
        out=str(tmp_path),
    )
    for key in res.computed:
        flow = Store(str(tmp_path)).load(key, trajectories=True)["trajectories"]["reduced"]
        assert flow.meta["approximation"] == "gradient_flow" and flow["t"][-1] == 3.0
