import dynsim  # noqa: F401  (float64)

import math

import numpy as np
import pytest

import reduced.mim
from dynsim.mim import MIMConfig, phases
from dynsim.trajectory import Trajectory

# P = 256 on the 16 x 16 grid: kappa (0.9, 0.4) gives a global area of 144 and local areas of 8-12
# (Delta = +0.40, predicted initial ratio (1 - gamma) P^Delta = 4.7); kappa (0.6, 0.4) a global area
# of 32 (Delta = -0.15, prediction 0.21). Both sides of 1 are clear at this size and a run of 300
# steps takes about 2 s.
BASE = dict(
    P=256,
    K=1,
    kappa_s=0.4,
    mask_ratio=0.5,
    z="const",
    eta=1.0,
    steps=300,
    record_every=2,
    partition="grid",
)


@pytest.fixture(scope="module")
def runs():
    out = {}
    for name, kc in (("pos", 0.9), ("neg", 0.6)):
        cfg = MIMConfig(kappa_c=kc, **BASE)
        out[name] = (cfg, reduced.mim.simulate(cfg, "pp_frozen+mean_field"))
    return out


def _locals(cfg):
    # one patch per local area (patches of an area are identical)
    return [int(area[0]) for area in cfg.areas[0][1:]]


def test_sign_of_delta(runs):
    assert runs["pos"][0].delta > 0.3 and runs["neg"][0].delta < -0.1


def test_two_phase_when_delta_positive(runs):
    cfg, t = runs["pos"]
    for p in _locals(cfg):
        c = phases.classify(t, p, cfg=cfg)
        assert c.label == "two-phase", c.reason
        sw = c.switch
        assert sw is not None and sw.stage1_from == 0 and 0 < sw.step < t.steps[-1]
        # the global FP correlation has fallen before the switch, and the target takes off only
        # after it
        assert sw.A_global < 0 and c.takeoff is not None and c.takeoff > sw.step
        # Lemma 5.3's condition Attn_1^2 = Attn_n at the Q = 0 attentions (predicted_sizes) leaves
        # out the factor (1 - Attn_1) of the global rate and the target's own growth before the
        # switch: O(1) terms in the exponent that measure 0.05 (P = 256) to 0.11 (P = 4096) in A;
        # 0.25 leaves room and still separates it from the leading-order -(Delta/2) log P (0.3-0.6
        # away at this size)
        assert abs(sw.A_global_interpolated - sw.predicted_sizes) <= 0.25, sw
        # the interpolated crossing lies within one recorded interval of the recorded switch step
        assert abs(sw.step_interpolated - sw.step) <= cfg.record_every


def test_one_phase_when_delta_negative(runs):
    cfg, t = runs["neg"]
    for p in _locals(cfg):
        c = phases.classify(t, p, cfg=cfg)
        assert c.label == "one-phase", c.reason
        assert phases.switch(t, p, cfg=cfg) is None
    # prediction 2, A_global "changes only slightly": IH (b) bounds its fall by O(1) when Delta < 0
    # against Theta(Delta log P) when Delta > 0; at P = 256 the two are only a factor ~3.5 apart
    # (-0.50 vs -1.76 at most), so ask for a factor 2
    pos_cfg, pos_t = runs["pos"]
    neg_fall = max(-phases.classify(t, p, cfg=cfg).A_global_min for p in _locals(cfg))
    pos_fall = min(-phases.classify(pos_t, p, cfg=pos_cfg).A_global_min for p in _locals(pos_cfg))
    assert neg_fall < 0.5 * pos_fall, (neg_fall, pos_fall)


def test_global_patch_is_one_phase(runs):
    for name in ("pos", "neg"):
        cfg, t = runs[name]
        p = int(cfg.areas[0][0][0])
        c = phases.classify(t, p, cfg=cfg)
        assert c.label == "one-phase", (name, c.reason)
        assert phases.switch(t, p, cfg=cfg) is None
        assert math.isnan(phases.initial_rate_ratio(t, p, cfg=cfg).measured)
        # straight to Phase II: the global patch takes off before every local patch of its run
        assert c.takeoff < min(phases.takeoff(t, q, cfg=cfg) for q in _locals(cfg))


def test_classify_all_counts(runs):
    cfg, t = runs["pos"]
    labels = [c.label for c in phases.classify_all(t, cfg=cfg)]
    n_global = len(cfg.areas[0][0])
    assert labels.count("one-phase") == n_global and labels.count("two-phase") == cfg.P - n_global


def test_initial_rate_ratio_side_of_one(runs):
    for name, side in (("pos", 1), ("neg", -1)):
        cfg, t = runs[name]
        for p in _locals(cfg):
            rr = phases.initial_rate_ratio(t, p, cfg=cfg)
            assert np.sign(math.log(rr.measured)) == side == np.sign(rr.delta), (name, p, rr)
            assert np.sign(math.log(rr.predicted)) == side
            assert rr.interval == (0, cfg.record_every)


def test_meta_config_is_enough(runs):
    cfg, t = runs["pos"]
    p = _locals(cfg)[0]
    assert phases.classify(t, p) == phases.classify(t, p, cfg=cfg)


# --------------------------------------------------------------------------- synthetic trajectories

SYN = MIMConfig(
    P=16,
    K=1,
    kappa_c=0.75,
    kappa_s=0.25,
    mask_ratio=0.5,
    partition="grid",
    steps=100,
    record_every=1,
)


def _synthetic(a_global, a_target, steps, p, att=None, cfg=SYN):
    """A Trajectory whose fp_corr holds the given A_global and A_target for patch p (all else 0)."""
    n = phases.own_area(None, p, cfg=cfg)
    T = len(steps)
    fp = np.zeros((T, cfg.P, cfg.K, cfg.max_areas))
    fp[:, p, 0, 0] = a_global
    fp[:, p, 0, n] = a_target
    aa = np.zeros_like(fp) if att is None else att
    return Trajectory(steps, {"fp_corr": fp, "area_attention": aa}, {"config": SYN.to_dict()})


LOCAL = int(SYN.areas[0][1][0])


def test_synthetic_switch_at_known_step():
    steps = np.arange(0, 101)
    # the global falls at 0.1 per step and the target grows at 0.01 until step 40, then 0.01 and 0.2
    s = 40
    a_glob = np.where(steps <= s, -0.1 * steps, -0.1 * s - 0.01 * (steps - s))
    a_tgt = np.where(steps <= s, 0.01 * steps, 0.01 * s + 0.2 * (steps - s))
    t = _synthetic(a_glob, a_tgt, steps, LOCAL)
    sw = phases.switch(t, LOCAL)
    assert sw is not None and sw.step == s and sw.stage1_from == 0
    assert sw.A_global == pytest.approx(-0.1 * s, abs=1e-12)  # exact: A_global is linear up to s
    r = phases.rates(t, LOCAL)
    # finite differences of exact lines
    np.testing.assert_allclose(r.d_global[:s], -0.1, atol=1e-12)
    np.testing.assert_allclose(r.d_target[s:], 0.2, atol=1e-12)
    assert phases.classify(t, LOCAL).label == "two-phase"
    rr = phases.initial_rate_ratio(t, LOCAL)
    assert rr.measured == pytest.approx(10.0, rel=1e-9)  # 0.1 / 0.01, exact up to rounding


def test_synthetic_switch_between_records():
    # the same kink at step 42 recorded every 5 steps: the interval (40, 45] mixes both stages
    steps = np.arange(0, 101, 5)
    s = 42
    a_glob = np.where(steps <= s, -0.1 * steps, -0.1 * s - 0.01 * (steps - s))
    a_tgt = np.where(steps <= s, 0.01 * steps, 0.01 * s + 0.2 * (steps - s))
    t = _synthetic(a_glob, a_tgt, steps, LOCAL)
    sw = phases.switch(t, LOCAL)
    # interval (40, 45]: fall (0.2 + 0.03) / 5 = 0.046 < growth (0.02 + 0.6) / 5 = 0.124, so it
    # starts the switch
    assert sw.step == 40
    assert 37.5 <= sw.step_interpolated <= 42.5  # between the midpoints of (35, 40] and (40, 45]


def test_synthetic_no_switch_and_late_stage():
    steps = np.arange(0, 51)
    # stage 1 throughout: the run ends before any switch
    t = _synthetic(-0.1 * steps, 0.01 * steps, steps, LOCAL)
    assert phases.switch(t, LOCAL) is None
    assert phases.classify(t, LOCAL).label == "undetermined"
    # the target leads from the start: one phase, no switch
    t = _synthetic(-0.01 * steps, 0.1 * steps, steps, LOCAL)
    assert phases.switch(t, LOCAL) is None and phases.classify(t, LOCAL).label == "one-phase"
    # a stage 1 that begins only later: switch finds it, but classify does not call it two-phase
    a_glob = np.where(steps <= 20, -0.01 * steps, -0.2 - 0.1 * (steps - 20))
    a_glob = np.where(steps <= 30, a_glob, -1.2 - 0.01 * (steps - 30))
    t = _synthetic(a_glob, 0.05 * steps, steps, LOCAL)
    sw = phases.switch(t, LOCAL)
    assert sw is not None and sw.stage1_from == 20 and sw.step == 30
    assert phases.classify(t, LOCAL).label == "one-phase"


def test_synthetic_takeoff():
    steps = np.arange(0, 11)
    att = np.zeros((steps.size, SYN.P, SYN.K, SYN.max_areas))
    att[:, LOCAL, 0, 1] = np.linspace(0, 1, steps.size)  # 0.0, 0.1, ..., 1.0
    t = _synthetic(np.zeros(steps.size), 0.1 * steps, steps, LOCAL, att=att)
    assert phases.takeoff(t, LOCAL) == 5


def test_bad_patch_raises():
    steps = np.arange(0, 3)
    t = _synthetic(np.zeros(3), np.zeros(3), steps, LOCAL)
    with pytest.raises(ValueError, match="out of range"):
        phases.classify(t, SYN.P)


def test_phase_labels_do_not_depend_on_the_record_interval():
    """Issue 15's K study found the labels moved with record_every (stage 1 was tested on the first
    recorded interval: 22 of 22 local patches two-phase at record_every 10, none at 80). With the
    first GD step (`initial`, a one-step run) the labels are the same at both resolutions; without
    it they are not (the old behaviour)."""
    from dynsim.mim import ladder

    runs = {}
    for every in (10, 80):
        cfg = MIMConfig(
            P=64,
            K=1,
            kappa_c=0.9,
            kappa_s=0.4,
            mask_ratio=0.5,
            partition="random",
            steps=1040,
            record_every=every,
        )
        t = reduced.mim.simulate(cfg, "mean_field")
        first = ladder.first_step(cfg, "mean_field")
        runs[every] = (
            [c.label for c in phases.classify_all(t, cfg=cfg, initial=first)],
            [c.label for c in phases.classify_all(t, cfg=cfg)],
        )
    fine, coarse = runs[10][0], runs[80][0]
    assert fine.count("two-phase") == 22
    # never a contradiction: a label is the same at both resolutions, or the coarse one cannot
    # resolve Phase I
    assert all(a == b or b == "undetermined" for a, b in zip(fine, coarse))
    assert "one-phase" not in [b for a, b in zip(fine, coarse) if a == "two-phase"]
    # the first recorded interval alone called these two-phase patches one-phase at record_every 80
    # (the old label)
    assert [b for a, b in zip(runs[10][1], runs[80][1]) if a == "two-phase"].count(
        "one-phase"
    ) == 22


class _Run:
    """What `dynsim.mim.plotting.pp_pair` reads of a trajectory: its observables."""

    def __init__(self, observables: dict):
        self.observables = observables

    def __getitem__(self, name):
        return self.observables[name]


def test_pp_pair_reads_the_cells_and_is_none_without_pp_records():
    """figure mim-phases at several clusters past the record budget (e.g. --P 1024 --K 2) has no
    pp_corr or pp_class: it used to end in a KeyError traceback; the per-cell records are read where
    present, and without any PP record the panel says so."""
    import numpy as np

    from dynsim.mim import plotting, records

    from dynsim import MIMConfig

    cfg = MIMConfig(P=16, K=2)
    cell = records.cell_index(cfg).cell
    cells = int(cell.max()) + 1
    pp_cell = np.arange(3 * cells * cells, dtype=float).reshape(3, cells, cells)
    pp_self = -np.arange(3 * cells, dtype=float).reshape(3, cells)
    run = _Run({"pp_cell": pp_cell, "pp_self_cell": pp_self})
    p, q = 1, 6
    assert plotting.pp_pair(cfg, run, p, q).tolist() == pp_cell[:, cell[p], cell[q]].tolist()
    assert plotting.pp_pair(cfg, run, p, p).tolist() == pp_self[:, cell[p]].tolist()
    assert plotting.pp_pair(cfg, _Run({"loss": np.zeros(3)}), p, q) is None
