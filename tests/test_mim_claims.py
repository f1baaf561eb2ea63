"""MIM claims (dynsim.mim.theorems) on the P ladders: each holds in regime and FAILS on its negative control.

The runs are deterministic (reduced level, mean_field), so a verdict is a property of the run, not of a sample.
"""

import dataclasses
import math
import warnings

import numpy as np
import pytest

import reduced.mim
from dynsim.claims import FAILS, HOLDS
from dynsim.mim import boundary, diversity, ladder, theorems

QUICK = ladder.QUICK_LADDER
LADDER = ladder.LADDER  # the default ladder: 4 rungs, 2 dof for every trend (3 rungs leave 1: t = 12.7 at 95%)
STEPS = 1000
BASE = theorems.base_config(steps=STEPS)
quiet = lambda s: None  # noqa: E731


def _ladder(base=BASE, steps=STEPS, sizes=QUICK, scaled=True, beside=False):
    return [ladder.run_rung(base, P, steps, quiet, scaled=scaled, beside=beside) for P in sizes]


@pytest.fixture(scope="module")
def rungs():
    return _ladder(sizes=LADDER, beside=True)  # the default ladder, pp_frozen+mean_field beside (the measurement)


@pytest.fixture(scope="module")
def short():
    return _ladder(steps=2)


def test_in_regime_claims_hold(rungs):
    claims = [theorems.loss_gap_claim(rungs), theorems.attention_claim(rungs), theorems.attention_trend_claim(rungs),
              theorems.two_phase_claim(rungs[-1]), theorems.rate_ratio_claim(rungs), theorems.pp_claim(rungs)]
    assert [c.verdict for c in claims] == [HOLDS] * len(claims), [(c.claim, c.measured, c.threshold) for c in claims]


def test_switch_holds_on_three_rungs_and_fails_on_the_default_ladder(rungs):
    """Lemma 5.3 in regime: on the quick ladder (1 dof) -Delta/2 lies in the slope's interval and the interval excludes
    0; the default ladder resolves the slope to about 0.78 x (-Delta/2) and the claim fails (a finding, docs/mim.md 6)."""
    quick = theorems.switch_claim(_ladder())
    assert quick.verdict == HOLDS, (quick.measured, quick.threshold, quick.details["trend"])
    full = theorems.switch_claim(rungs)
    assert full.verdict == FAILS and full.measured > full.threshold
    # the finding, not a tolerance: the level does fall in log P, at least half as fast as -Delta/2 (measured 0.78x)
    assert full.details["fit"]["slope_high"] < full.details["predicted_slope"] * 0.5 < 0


def test_theorem_4_1_fails_on_short_or_frozen_runs(short):
    frozen = _ladder(base=BASE.replace(eta=1e-12), sizes=QUICK[:1])
    for rs in (short, frozen):
        assert theorems.loss_gap_claim(rs).verdict == FAILS
        assert theorems.attention_claim(rs).verdict == FAILS


def test_a_diverged_rung_is_not_evaluated_never_holds(rungs):
    """A NaN reading at any rung (a diverged run) makes the claims that read it 'not evaluated', wherever it sits in
    the ladder (Python's min/max would skip a NaN after the first item)."""
    for i in range(len(rungs)):
        bad = list(rungs)
        bad[i] = dataclasses.replace(bad[i], max_query_loss=math.nan, min_attention=math.nan, initial_ratio=math.nan)
        for claim in (theorems.loss_gap_claim, theorems.attention_claim, theorems.rate_ratio_claim,
                      theorems.attention_trend_claim):
            assert claim(bad).verdict == "not evaluated", (i, claim.__name__)


def test_eta_1e4_no_longer_diverges():
    """eta = 1e4 at P = 256 used to 'diverge' from an overflowing exp in the reduced level while the full model
    stayed finite (issue 16); with the scores shifted by their maximum the run stays finite and is judged."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a divergence flag would raise here
        rung = ladder.run_rung(BASE.replace(eta=1e4), 256, 30, quiet, scaled=False, beside=False)
    assert not rung.diverged and math.isfinite(rung.min_attention) and math.isfinite(rung.max_query_loss)
    assert theorems.loss_gap_claim([rung]).verdict != "not evaluated"


def _diverging(simulate, after):
    """`simulate` whose trajectory turns non-finite after record `after`, as a diverged level's recording does
    (a real divergence can no longer be provoked through eta in float64: see the test above)."""
    def run(cfg, approximation):
        t = simulate(cfg, approximation)
        obs = {}
        for k, v in t.observables.items():
            v = np.array(v, dtype=float)
            v[after + 1:] = np.nan
            obs[k] = v
        return type(t)(t.steps, obs, t.meta)
    return run


def test_a_diverged_run_gives_verdicts_not_errors(monkeypatch):
    """A run whose readings become NaN: the claims are not evaluated, and the Section 6 diversity of a diverged run
    is NaN, not an exception."""
    monkeypatch.setattr(reduced.mim, "simulate", _diverging(reduced.mim.simulate, after=2))
    rung = ladder.run_rung(BASE, 256, 30, quiet, scaled=False, beside=False)
    assert rung.diverged and math.isnan(rung.min_attention)
    for claim in (theorems.loss_gap_claim([rung]), theorems.two_phase_claim(rung), theorems.rate_ratio_claim([rung]),
                  theorems.switch_claim([rung])):
        assert claim.verdict == "not evaluated", (claim.claim, claim.measured)
    cfg = ladder.rung_config(BASE, 256, 30, scaled=False)
    div = diversity.diversities(cfg, reduced.mim.simulate(cfg, ladder.JUDGED), 4, theorems.TOP_K)
    assert np.all(np.isnan(div["trained"])) and theorems.diversity_claim(div, cfg).verdict == "not evaluated"


def test_trend_fails_when_T_is_not_scaled():
    fixed = _ladder(steps=190, scaled=False)  # T = 190 at every P: the larger P are less converged
    assert theorems.attention_trend_claim(fixed).verdict == FAILS


def test_two_phase_fails_near_the_boundary(short):
    near = ladder.run_rung(BASE.replace(mask_ratio=0.75, kappa_c=0.8), 1024, STEPS, quiet, beside=False)
    c = theorems.two_phase_claim(near)  # (1 - gamma) P^Delta = 1: a Phase-I drop of about 0.02
    assert c.verdict == FAILS and 0 < c.measured < 0.1, (c.measured, c.details)
    assert theorems.two_phase_claim(short[-1]).verdict == FAILS  # no switch in 2 steps


def test_rate_ratio_fails_just_below_the_boundary():
    base = BASE.replace(mask_ratio=0.75, kappa_c=0.78, kappa_s=0.35)
    near = ladder.run_rung(base, 256, 3, quiet, beside=False)
    assert near.predicted_ratio < 1 < near.initial_ratio  # the leading order puts it on the wrong side
    assert theorems.rate_ratio_claim([near]).verdict == FAILS


def test_switch_ratio_and_pp_fail_on_short_runs(short):
    assert theorems.switch_claim(short).verdict == FAILS  # no switch: measured inf
    ratio = theorems.rate_ratio_claim(short)  # the initial ratio is on the right side, but no phase is observed
    assert ratio.measured > 0 and ratio.verdict == FAILS
    assert theorems.pp_claim(short).verdict == FAILS  # the runs never reach T*


def test_pp_fails_with_areas_of_fixed_size():
    fixed = [ladder.run_rung(BASE.replace(kappa_s=math.log(4) / math.log(P)), P, STEPS, quiet, beside=False)
             for P in QUICK]
    assert {len(a) for r in fixed for a in r.cfg.areas[0][1:]} <= {3, 4}  # local areas of 3-4 patches at every P
    c = theorems.pp_claim(fixed)
    assert c.verdict == FAILS and c.measured >= 0, c.details  # the slope, not only the T* condition, fails


def test_pp_frozen_keeps_b_zero_and_b_free_moves_a(rungs):
    same = ladder.run_rung(BASE, QUICK[0], STEPS, quiet, dynamics=ladder.THEORY)
    assert same.max_abs_B == 0.0  # B = 0 exactly under pp_frozen (no PP update is ever applied)
    # B free against B = 0: issue 13 measured 11-15% of max|A| at P = 1024; a wiring bug that ran the same dynamics
    # twice gives 0, so any value above half the smallest measured (0.05) shows two different runs
    assert theorems.frozen_measurement(rungs).value > 0.05


def _diversity(steps):
    cfg = ladder.rung_config(BASE, 64, steps)
    return diversity.diversities(cfg, reduced.mim.simulate(cfg, ladder.JUDGED), 16, theorems.TOP_K), cfg


def test_diversity_fails_after_two_steps():
    div, cfg = _diversity(2)
    assert theorems.diversity_claim(div, cfg).verdict == FAILS


def test_diversity_baselines_beat_the_trained_model():
    """A finding: random logits score above the trained model (docs/mim.md §6), so the claim fails in regime."""
    div, cfg = _diversity(STEPS)
    assert np.mean(div["random logits"]) > np.mean(div["trained"])
    assert theorems.diversity_claim(div, cfg).verdict == FAILS


def test_check_theorems_rejects_bad_eps():
    with pytest.raises(ValueError, match="eps"):
        theorems.check_theorems(quick=True, eps=1.5)



def test_delta_star_brackets_the_leading_order_boundary():
    # the leading order: (1 - gamma) P^Delta = 1 at Delta = log 2 / log 1024 = 0.1 exactly
    assert boundary.predicted(1024, 0.5) == pytest.approx(0.1, rel=1e-12)  # rounding of two logs
    r = boundary.delta_star(theorems.base_config(P=256), (0.75, 0.79))  # realised Delta 0.092 and 0.179
    lo, hi = r["bracket"]
    assert lo < r["measured"] < hi and lo < r["predicted"] < hi  # both boundaries between the two grid problems
    with pytest.raises(ValueError, match="bracket"):
        boundary.delta_star(theorems.base_config(P=256), (0.9,))  # one problem, above the boundary
