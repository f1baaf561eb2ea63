"""JSL realistic-run claims (docs/jsl.md §13): each claim holds on an in-regime run and fails on its
negative control.

Sizes are small (D = 9, C = 3, q = 0.5, unit temperature, eta = 0.08, 5300 steps: the quick plan's,
past the exact flow's end of Event II at t = 421; 6 seeds where Theorem 4.2's w.h.p. is judged: n of
n seeds decide a 95% Clopper-Pearson interval against 1/2 from n = 6 on, 2 elsewhere); the default
ladder's numbers are in the docs. D = 9, C = 3, q = 0.5 is a
size where Definition 2.1 and the 1/8 separation hold (P[y f* <= 0] = 0.0305, P[f* = 0] = 0.0303);
D = 10, C = 2, q = 0.5 (OUTSIDE) is one where they do not.
"""

import dataclasses
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reduced.jsl

from dynsim import JSLConfig
from dynsim.jsl import claims_realistic as cr
from dynsim.jsl import error, partition, realistic_plan, realistic_runs, reference, settling
from dynsim.jsl.association import chance
from dynsim.claims import HORIZON, Claim, Measurement

SEEDS = 2
WHP_SEEDS = 6  # 0.025^(1/6) = 0.54 > 1/2: six of six associated decide Theorem 4.2's w.h.p.
LARGE = 8000
TINY = cr.Plan(
    n_ladder=(500,),
    horizon=realistic_plan.QUICK.horizon,
    eta=realistic_plan.QUICK.eta,
    n_test=256,
    n_tilde=(8,),
    transfer_seeds=6,
    transfer_steps=300,
    fig2_grid=((0.005, 0.01),),
    fig2_steps=5,
    fig2_n=64,
)
# the realistic size of the claims (D = 9, C = 3, eta = 0.08: realistic_config), at the quick
# plan's horizon
RC = cr.realistic_config(JSLConfig(D=36, C=4, q=0.5, temperature="unit", steps=60000), TINY)
# D = 10, C = 2, q = 0.5, eta = 0.02, T = 37,500: the smallest size of q(D - C) >= C^2, where
# Definition 2.1 and the 1/8 separation fail (P[y f* <= 0] = 0.189, P[f* = 0] = 0.170)
OUTSIDE = realistic_plan.with_sizes(
    realistic_plan.FULL, "D=10,C=2,q=0.5,eta=0.02,T=37500,N=1000:4000:16000"
)
# 1500 steps (t = 120): short of the flow's end of Event II (t = 421), where every seed at N = 500
# is still unassociated (the under-training a referee saw judged "fails")
SHORT = RC.replace(steps=1500, record_every=1500 // 8)


@pytest.fixture(scope="module")
def large():
    """N = 8000 at the quick plan's horizon: every seed associated on every row (measured: docs
    §13)."""
    return realistic_runs.run(RC.replace(N=LARGE), WHP_SEEDS)


@pytest.fixture(scope="module")
def small():
    return realistic_runs.run(RC.replace(N=500), WHP_SEEDS)


def test_f_star_against_a_loop_over_the_sets():
    """f* of docs/derivations/jsl.md §1 written out set by set; every value is a sum of integers
    s_i, so equality is exact."""
    cfg = JSLConfig(D=9, C=3, q=0.5)
    s = np.asarray(jax.random.randint(jax.random.key(0), (200, cfg.D), -1, 2), dtype=float)
    expected = np.zeros(200)
    for set_ in partition.sets(cfg):
        z = s[:, set_].sum(axis=1)
        expected += np.where(np.abs(z) > 0.9 * cfg.C, z, 0.0)
    assert np.array_equal(np.asarray(error.f_star(cfg, jnp.asarray(s))), expected)
    F = np.where(np.arange(200) % 2, 1.0, -1.0)
    assert float(error.f_star_error(cfg, jnp.asarray(F), jnp.asarray(s))) == np.mean(
        ~(expected * F > 0)
    )


def test_lemma_4_2_holds_in_regime(large):
    claim = cr.lemma_4_2(RC.replace(N=LARGE), large[1], WHP_SEEDS)
    assert claim.verdict == "holds", claim.details
    assert np.all(np.asarray(claim.details["tangent"]) < 1)


def test_lemma_4_2_fails_on_shuffled_labels():
    rc = SHORT.replace(N=500)  # past Lemma 4.2's horizon (the flow's end of Event I, t = 0.5)
    _, final = realistic_runs.run(rc, SEEDS, shuffle=True)
    assert cr.lemma_4_2(rc, final, SEEDS, shuffled=True).verdict == "fails"


def test_theorem_4_2_holds_in_regime(large, small):
    claim = cr.theorem_4_2(RC, {500: small, LARGE: large}, WHP_SEEDS)
    assert claim.verdict == "holds", (claim.why(), claim.details)
    assert claim.measured == 1.0 and claim.interval[0] > 0.5
    # the line is the exact sign-of-count f*-error, not the test points' estimate (T = 0 ties broken
    # by rounding)
    assert (
        claim.details["f_star_error_T"][-1]
        < claim.details["glm_f_star_error_exact"]
        == reference.glm_error_fstar(RC)
    )


def test_too_few_samples_leave_gd_off_its_flow(small):
    """At N = 500, run to T = 5300 (past the flow's end of Event II), no seed is associated on
    every row, but GD has crossed its stability edge (eta lambda_max > 2: the N = 500 training
    loss sharpens as it overfits): Theorem 4.2 reads GD as following its flow, so the claim is
    not applicable, naming the stability premise, and never "fails" on a run outside it."""
    claim = cr.theorem_4_2(RC, {500: small}, WHP_SEEDS)
    assert claim.premises[0].name.startswith(HORIZON) and claim.premises[0].met
    assert claim.verdict == "not applicable" and "stability edge" in claim.why(), claim.why()


def test_under_training_is_not_a_verdict():
    """The same N = 500 seeds at 1500 steps (t = 120, short of the flow's end of Event II): 0 of 6
    associated, which said "fails" before the horizon premise; now Theorem 4.2 and a Theorem 5.1
    whose A comes from that pretraining are "not applicable", naming the horizon (even with an
    associated A: the premise reads the pretraining, not A)."""
    run = realistic_runs.run(SHORT.replace(N=500), WHP_SEEDS)
    assert np.all(np.asarray(run[0]["patch_association_seeds"])[-1] < 1)  # none associated
    claim = cr.theorem_4_2(SHORT, {500: run}, WHP_SEEDS)
    assert claim.verdict == "not applicable" and HORIZON in claim.why(), claim.why()
    horizon = claim.premises[0]
    assert horizon.measured > 1 and not horizon.met
    rc = SHORT.replace(N=500)
    A = {"A": _ideal_A(rc, 3.0, -1.0), "A0": _A0(rc)}
    (transfer,) = cr.theorem_5_1(rc, A, TINY, pretraining=rc)
    assert transfer.verdict == "not applicable" and HORIZON in transfer.why(), transfer.why()


def test_both_plans_meet_the_flow_horizon():
    """The quick and the default plan's T are past the flow's end of Event II at their sizes (the
    default: t = eta T = 2540 against t_flow = 2536.06); T = 37,500 at D = 10 (t = 750) is not
    (t_flow = 1045 there), which Definition 2.1 decides first."""
    quick = cr.realistic_config(JSLConfig(q=0.5), realistic_plan.QUICK)
    assert cr.association_horizon(quick).met and cr.line_horizon(quick).met
    # check-theorems' default steps (2e8) are capped at the plan's horizon
    full = cr.realistic_config(JSLConfig(steps=200_000_000), realistic_plan.FULL)
    assert full.steps == 254_000
    assert cr.association_horizon(full).met and cr.line_horizon(full).met
    # the flow's end of Event II at D = 16, C = 2, q = 2/7, to the 0.58% its log-spaced saves
    # allow (FLOW_SAVES): inside (2500, 2540]
    assert 2500 < cr.flow_events(full)["T1"] <= full.eta * full.steps
    outside = cr.realistic_config(JSLConfig(steps=200_000_000), OUTSIDE)
    assert not cr.association_horizon(outside).met and cr.line_horizon(outside).met


def test_the_default_plan_meets_the_criterion():
    """The default realistic size, D = 16, C = 2, q = 2/7, meets all three conditions of
    realistic_plan.criterion: P[y f* <= 0] = 0.1194 and P[f* = 0] = 0.1120 below 1/8 (the values
    measured with independent code in the test below), q(D - C) = 4 = C^2 (exactly in floating
    point: 2/7 x 14 rounds to 4); the smallest size of q(D - C) >= C^2 meets only the last."""
    full = cr.realistic_config(JSLConfig(), realistic_plan.FULL)
    assert (full.D, full.C, full.q) == (16, 2, 2 / 7)
    assert realistic_plan.meets_criterion(full)
    assert not realistic_plan.meets_criterion(cr.realistic_config(JSLConfig(), OUTSIDE))
    text = realistic_plan.separation(full)
    assert "P[f* = 0] = 0.112 = 1/8 - 0.013" in text and "at the separation size" in text, text
    # --realistic-sizes writes the default back to itself: q = 2/7 keeps every digit
    plan = realistic_plan.FULL
    assert realistic_plan.with_sizes(plan, realistic_plan.describe_sizes(plan)) == plan


def test_realistic_sizes_set_the_runs_dtype_apart_from_the_config():
    """The default plan's float32 reaches the realistic config only (cfg stays float64) and
    dtype=float64 in --realistic-sizes restores it; the quick plan keeps cfg's; an unknown dtype is
    refused naming the option."""
    cfg = JSLConfig(steps=200_000_000)
    assert cr.realistic_config(cfg, realistic_plan.FULL).dtype == "float32"
    assert cfg.dtype == "float64"
    assert cr.realistic_config(cfg, realistic_plan.QUICK).dtype == "float64"
    plan = realistic_plan.with_sizes(realistic_plan.FULL, "dtype=float64")
    assert cr.realistic_config(cfg, plan).dtype == "float64"
    assert realistic_plan.describe_sizes(plan).endswith(",dtype=float64")
    with pytest.raises(ValueError, match="--realistic-sizes.*dtype"):
        realistic_plan.with_sizes(realistic_plan.FULL, "dtype=float16")


def test_theorem_5_1_transfers_the_first_associated_seed():
    """Association is Theorem 5.1's hypothesis: the A it transfers is the first seed, in seed order,
    associated on every row at T (read from association alone), seed 0 when none is (then its
    premise says not applicable)."""
    last = {"patch_association_seeds": np.array([[0.0, 0.0, 0.0], [0.9375, 1.0, 1.0]])}
    assert cr.pretrained_seed(last) == 1
    none = {"patch_association_seeds": np.array([[1.0, 1.0], [0.9375, 0.5]])}
    assert cr.pretrained_seed(none) == 0


def test_association_settled_reads_the_verdict_over_the_last_quarter():
    """Theorem 4.2's horizon premise is false where the w.h.p. reading's verdict changes at a record
    of the run's last quarter, and met where seeds move without moving it (10 of 10 and 9 of 10
    both lie above 1/2 by Clopper-Pearson at 95%: [0.69, 1] and [0.555, 0.997]), or move before the
    last quarter; each seed's settling time is its first record of the final state."""
    rc = RC.replace(steps=800, record_every=100)  # records 0, 100, ..., 800: 600-800 the last part
    steady = np.zeros((9, 10))
    steady[2:, :] = 1  # every seed associated from step 200 on
    assert cr.association_settled(rc, {"patch_association_seeds": steady}).met
    one = steady.copy()
    one[7, 1] = 0  # seed 1 loses a row at step 700 only: 9 of 10 there, the verdict still holds
    assert cr.association_settled(rc, {"patch_association_seeds": one}).met
    three = steady.copy()
    three[7, :3] = 0  # 7 of 10 at step 700: [0.35, 0.93], inconclusive there, then holds again
    premise = cr.association_settled(rc, {"patch_association_seeds": three})
    assert not premise.met and premise.measured == 2 and HORIZON in premise.name
    early = steady.copy()
    early[5, :5] = 0  # a change at step 500, before the last quarter: still settled
    assert cr.association_settled(rc, {"patch_association_seeds": early}).met
    marks = np.arange(0, 900, 100)
    assert settling.settled_from(one == 1, marks)[:2] == [200, 800]
    assert settling.settled_from(early == 1, marks)[0] == 600


def test_theorem_4_2_is_inconclusive_on_too_few_seeds():
    """Two seeds decide nothing about 'more often than not': 0 of 2 has the interval [0, 0.84]."""
    claim = cr.theorem_4_2(RC, {500: realistic_runs.run(RC.replace(N=500), SEEDS)}, SEEDS)
    assert claim.verdict == "not evaluated" and "inconclusive" in claim.why(), claim.why()


def test_definition_2_1_and_the_separation_reproduce_the_measured_values():
    """P[f* = 0] and P[y f* <= 0] by dynsim.jsl.reference against the values measured with
    independent code (exact enumeration of the sign configurations, 3 digits rounded from 4: 0.0835
    became 0.084, so one unit of the third digit)."""
    measured = {
        (10, 2, 0.5): (0.170, 0.189),
        (16, 2, 2 / 7): (0.112, 0.119),
        (21, 3, 0.5): (0.080, 0.084),
        (36, 4, 0.5): (0.030, 0.030),
    }
    for (D, C, q), (zero, mislabel) in measured.items():
        cfg = JSLConfig(D=D, C=C, q=q)
        assert abs(reference.bayes_error_fstar(cfg) - zero) <= 1e-3, (D, C, q)
        assert abs(reference.mislabel_fstar(cfg) - mislabel) <= 1e-3, (D, C, q)
    premises = cr.definition_premises(cr.realistic_config(JSLConfig(), OUTSIDE))
    assert [p.met for p in premises] == [False, False]
    premises = cr.definition_premises(cr.realistic_config(JSLConfig(), realistic_plan.FULL))
    assert [p.met for p in premises] == [True, True]
    assert [p.met for p in cr.definition_premises(RC)] == [True, True]


def _ideal_A(cfg, gamma, rho):
    within, between = partition.orbit_masks(cfg)
    return cfg.sigma_A * np.eye(cfg.D) + gamma * within + rho * between


def _A0(rc):
    return np.asarray(
        realistic_runs.realistic.initial_params(rc, jax.random.key(0), None)["params"]["A"]
    )


def test_theorem_5_1_holds_with_an_associated_A():
    """An A with the orbit structure the idealized dynamics reach (gamma = 3, rho = -1: full
    association), at D = 9 where Definition 2.1 holds: below the same-N~ GLM and A at init against
    f*, each paired difference's interval below 0; the paired difference and the trend in N~ are
    reported beside."""
    rc = RC.replace(N=LARGE)
    A0 = _A0(rc)
    claim, paired, trend = cr.theorem_5_1(rc, {"A": _ideal_A(rc, 3.0, -1.0), "A0": A0}, TINY)
    assert claim.verdict == "holds", (claim.why(), claim.details)
    assert claim.interval[1] < 0 and all(p.met for p in claim.premises)
    assert isinstance(paired, Measurement) and isinstance(trend, Measurement)
    assert set(claim.details["y_error"]) == {"pretrained", "initial", "glm"}  # y beside


@pytest.mark.parametrize(
    "name, gamma, rho",
    [("A at initialization", None, None), ("anti-associated (gamma = -1 < rho = 0.3)", -1.0, 0.3)],
)
def test_theorem_5_1_needs_an_associated_A(name, gamma, rho):
    """Patch association is Theorem 5.1's hypothesis (what pretraining per Theorem 4.2 gives): an
    A without it is not applicable, naming the premise, and no transfer is run, whatever it would
    have measured (the anti-associated A beats both learners at D = 9: a condition would have
    called that 'fails', a premise says the theorem is silent)."""
    rc = RC.replace(N=LARGE)
    A0 = _A0(rc)
    A = A0 if gamma is None else _ideal_A(rc, gamma, rho)
    (claim,) = cr.theorem_5_1(rc, {"A": A, "A0": A0}, TINY, label=name)
    assert claim.verdict == "not applicable", (name, claim.why())
    assert "the pretrained A is associated on every row" in claim.why()


@pytest.mark.parametrize("associated", [True, False])
def test_theorem_5_1_at_the_default_plan_size(associated):
    """The default plan's size, D = 16, C = 2, q = 2/7 (its premises met): the A the exact flow of
    (P) reaches at the plan's horizon t = eta T = 2540 (gamma = 1.71, rho = -0.93, associated)
    holds against the same-N~ GLM and A at init; A at initialization is outside the hypothesis,
    not applicable. The plan's 2000 fine-tuning steps at N~ = 8 over 16 seeds: the paired
    differences' SD over seeds is about 0.05-0.14, so the 95% half-width is at most about 2.13 x
    0.14 / 4 = 0.075 against differences near -0.1 (to A at init) and -0.26 (to the GLM). (The
    over-concentrated A of gamma = 3, rho = -1 transfers worse here, f*-error 0.22 against A at
    init's 0.26: undecided over 24 seeds.)"""
    full = cr.realistic_config(JSLConfig(steps=200_000_000), realistic_plan.FULL)
    rc = full.replace(N=LARGE, n_test=1024)
    A0 = _A0(rc)
    if associated:
        key = full.replace(N=1, n_test=1, steps=1, record_every=1)
        flow = reduced.jsl.simulate(
            key, cr.FLOW_START, method="flow", t_max=full.eta * full.steps, saves=8, t_min=full.eta
        )
        A = _ideal_A(rc, float(flow["gamma"][-1]), float(flow["rho"][-1]))
    else:
        A = A0
    plan = dataclasses.replace(
        TINY, transfer_seeds=16, transfer_steps=realistic_plan.FULL.transfer_steps
    )
    claim = cr.theorem_5_1(rc, {"A": A, "A0": A0}, plan)[0]
    if associated:
        assert claim.verdict == "holds", (claim.why(), claim.details)
        assert claim.interval[1] < 0 and all(p.met for p in claim.premises)
    else:
        assert claim.verdict == "not applicable", claim.why()
        assert "the pretrained A is associated on every row" in claim.why()


def test_theorem_5_1_is_not_applicable_where_definition_2_1_fails():
    """The idealized A at OUTSIDE's realistic size (D = 10, C = 2, q = 0.5, eta = 0.02; TINY's
    transfer budget: the premises read the size only): Definition 2.1 fails there (P[y f* <= 0] =
    0.189), and the claim names it (no transfer is run: the paper says nothing there)."""
    rc = cr.realistic_config(JSLConfig(), OUTSIDE).replace(N=LARGE, n_test=256)
    assert (rc.D, rc.C, rc.q) == (10, 2, 0.5)
    A = {"A": _ideal_A(rc, 3.0, -1.0), "A0": _A0(rc)}
    (claim,) = cr.theorem_5_1(rc, A, TINY)
    assert claim.verdict == "not applicable" and "Definition 2.1" in claim.why(), claim.why()
    assert claim.details["p_y_f_star_not_positive"] == reference.mislabel_fstar(rc)


def test_theorem_4_2_is_not_applicable_where_definition_2_1_fails():
    """A real (one-step) ladder at OUTSIDE's size: Definition 2.1 and the separation fail there,
    whatever the run did; and `realistic_items` decides it without any run."""
    rc = cr.realistic_config(JSLConfig(steps=1), OUTSIDE).replace(n_test=256)
    claim = cr.theorem_4_2(rc, {500: realistic_runs.run(rc.replace(N=500), SEEDS)}, SEEDS)
    assert claim.verdict == "not applicable" and "Definition 2.1" in claim.why(), claim.why()
    assert "Theorem 3.1's 1/8 separates" in claim.why()
    only = {"Theorem 4.2"}
    assert cr.n_ladder(OUTSIDE, only, JSLConfig()) == ()
    (alone,) = cr.realistic_items(
        JSLConfig(steps=1), quick=False, seeds=SEEDS, only=only, plan=OUTSIDE
    )
    assert alone.verdict == "not applicable" and "Definition 2.1" in alone.why(), alone.why()


def test_a_plan_runs_only_the_rungs_its_judged_claims_read():
    """At D = 10, C = 2, q = 0.5 Theorems 4.2 and 5.1 are decided without runs: Lemma 4.2's largest
    N (16,000) and the shuffled control at the smallest (1000) are all that run; the progress count
    and the seeds to run say the same. The default plan runs its whole ladder and the control."""
    default = cr.pending_seeds(JSLConfig(), False, 6, None, None, realistic_plan.FULL)
    assert sorted(default[0]) == [1000] * 12 + [2000] * 6 + [4000] * 6 and default[1] == 24
    full = OUTSIDE
    pending, total = cr.pending_seeds(JSLConfig(), False, 4, None, None, full)
    assert sorted(pending) == [1000] * 4 + [16000] * 4 and total == 8
    # largest N, the control, transfer (decided without a run, still one unit), Figure 2's points
    assert cr.total_runs(False, None, full, JSLConfig()) == 1 + 1 + 1 + len(full.fig2_grid)
    assert cr.pending_seeds(JSLConfig(), False, 4, {"Theorem 5.1"}, None, full) == ([], 0)


def test_no_trained_claim_holds_after_one_step():
    items = cr.realistic_items(
        JSLConfig(D=36, C=4, q=0.5, temperature="unit", steps=1), quick=True, seeds=SEEDS, plan=TINY
    )
    claims = [c for c in items if isinstance(c, Claim)]
    assert {c.claim for c in claims} >= {
        "Lemma 4.2 (realistic)",
        "Theorem 4.2",
        "Theorem 5.1",
        "Figure 2",
    }
    assert not any(c.holds for c in claims), [(c.claim, c.verdict) for c in claims]
    assert next(c for c in claims if c.claim == "Figure 2").verdict == "not evaluated"
    # one step is short of every horizon: under-training is never a verdict
    for c in claims[:3]:
        assert c.verdict == "not applicable" and HORIZON in c.why(), (c.claim, c.why())
    named = {name for c in claims for name in re.findall(r"::(test_\w+)", c.negative_control)}
    # each control names a test of this file
    assert named and all(name in globals() for name in named), named


@pytest.mark.parametrize("seeds", [0, 1.5, True])
def test_bad_seeds_is_a_value_error(seeds):
    with pytest.raises(ValueError, match="seeds"):
        cr.realistic_items(JSLConfig(steps=1), quick=True, seeds=seeds, plan=TINY)


def test_quick_counts_its_progress_units():
    assert cr.total_runs(True) == len(realistic_plan.QUICK.n_ladder) + 2 + len(
        realistic_plan.QUICK.fig2_grid
    )
    # a trend needs 3
    assert (
        realistic_plan.FULL.n_ladder == tuple(sorted(realistic_plan.FULL.n_ladder))
        and len(realistic_plan.FULL.n_ladder) >= 3
    )


def test_figure_2_judgement_fails_on_an_associated_learner():
    """The Figure 2 verdict at a point that left the plateau: association at chance (1/binom(15, 3)
    = 1/455) holds, an associated learner (every row, as on the idealized data) fails. The search
    itself has not left the plateau in any run (docs/jsl.md 11), so the claim is reported 'not
    evaluated'; this tests the judgement it would apply."""
    cfg = JSLConfig(**{k: v for k, v in cr.FIG2_DEFAULTS.items() if k != "record_every"})
    p = 1.0 / 455.0
    assert abs(chance(cfg) - p) <= 1e-15  # the chance level of the judgement is the documented one
    point = {"chance": p, "patch_association": 0.0}
    assert cr.figure_2_claim(point, "test").verdict == "holds"
    assert cr.figure_2_claim({**point, "patch_association": 1.0}, "test").verdict == "fails"
