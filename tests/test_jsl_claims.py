"""The idealized JSL claims (dynsim.jsl.claims_idealized, claims_glm): each holds on an in-regime run and fails (or is
not applicable) on its negative control; the f* machinery against independent brute force."""

import dataclasses
from fractions import Fraction

import numpy as np
import pytest

from dynsim import JSLConfig
from dynsim.jsl import claims_glm, claims_idealized as ci, ladder, partition, reference
from reduced.jsl import configurations, fstar, sums
from reduced.jsl.class_sums import ClassWeights, sampled_classes
from tests.conftest import U64
from tests.test_reference import _joint

IDEAL = dict(C=4, q=0.5, eta=0.02, temperature="unit", record_every=100)


def _fstar(s, C):
    """f* of Assumption 1 with contiguous sets (the sets of tests.test_reference._joint), from its definition."""
    total = 0
    for l in range(len(s) // C):
        t = sum(s[l * C:(l + 1) * C])
        total += t if abs(t) > 0.9 * C else 0
    return total


@pytest.mark.parametrize("shape", [(8, 4), (9, 3), (8, 2), (12, 4)])
@pytest.mark.parametrize("q", [0.3, 0.5])
def test_fstar_reference_lines_equal_brute_force(shape, q):
    """P[f* T <= 0] and P[f* = 0] against exact Fractions over every (y, signal set, delta): both round an exact
    rational once, so they agree to |diff| <= 2u |exact|."""
    D, C = shape
    if D * 3 ** (D - C) > 3e5:
        q = 0.5  # (12, 4): 3^8 deltas, one q is enough
    joint = _joint(D, C, q)
    glm = sum(w for (s, y), w in joint.items() if _fstar(s, C) * sum(s) <= 0)
    bayes = sum(w for (s, y), w in joint.items() if _fstar(s, C) == 0)
    cfg = JSLConfig(D=D, C=C, q=q, partition="contiguous")
    assert abs(reference.glm_error_fstar(cfg) - float(glm)) <= 2 * U64 * float(glm)
    assert abs(reference.bayes_error_fstar(cfg) - float(bayes)) <= 2 * U64 * float(bayes)
    assert glm > 0 and isinstance(glm, Fraction)


@pytest.mark.parametrize("shape", [(12, 4), (9, 3), (8, 2)])
def test_signed_classes_equal_the_multiset_sum(shape):
    """The f*-signed classes give the error against f* of the multiset enumeration (every multiset of set types, its
    own monomials and N+ - N- counted from the types) at a trained-like state. Tolerance: both sum <= 5,000 positive
    terms of float64 weights (each within a few u of exact), so 1e4 u covers the summation orders."""
    D, C = shape
    cfg = JSLConfig(D=D, C=C, q=0.5, temperature="unit")
    theta = np.array([0.15, 0.8, -0.3])
    n, w = configurations.enumerate_configurations(D, C, cfg.q, None)
    types = configurations.set_types(C)
    sign = np.sign(1 + n[:, types.index((C, 0))] - n[:, types.index((0, C))])
    multiset = fstar.SignedClasses(ClassWeights(sampled_classes(cfg, n, cfg.dtype), np.asarray(w)), np.asarray(sign))
    want = fstar.error(cfg, theta, multiset)[0]
    got = fstar.error(cfg, theta, fstar.signed_table(cfg))[0]
    assert abs(got - want) <= 1e4 * U64 * want
    # at gamma = rho = 0 the model is the sign-of-count GLM (derivations 3e): the exact f* line
    start = fstar.error(cfg, np.array([cfg.alpha0, 0.0, 0.0]), fstar.signed_table(cfg))[0]
    assert abs(start - reference.glm_error_fstar(cfg)) <= 1e4 * U64


def test_fstar_monte_carlo_within_its_standard_error():
    """The sampled f* error at D = 16 lies within 4 standard errors of the exact one (two-sided 6e-5 chance)."""
    cfg = JSLConfig(D=16, **IDEAL)
    theta = np.array([0.15, 0.8, -0.3])
    exact = fstar.error(cfg, theta, fstar.signed_table(cfg))[0]
    est, se = fstar.error(cfg, theta, fstar.sampled_signed(cfg, sums.mc_key(cfg), 200_000))
    assert se > 0 and abs(est - exact) <= 4 * se


# --------------------------------------------------------------------------------------------------- Lemma 4.1

def test_lemma_4_1_holds_on_the_idealized_exact_run():
    claim = ci.lemma_4_1(JSLConfig(D=8, steps=300, **IDEAL))
    assert claim.verdict == "holds" and claim.details["max_abs_gamma_minus_rho"] > 1e-3  # A moved


def test_lemma_4_1_fails_on_a_shuffled_partition():
    """A0 constant on the orbits of another partition (the data's sets are contiguous): the spread is that of A0."""
    cfg = JSLConfig(D=8, steps=300, partition="contiguous", **IDEAL)
    shuffled = partition.orbit_masks(JSLConfig(D=8, C=4, partition="random", seed=3))[0]
    A0 = cfg.sigma_A * np.eye(8) + 0.5 * shuffled
    claim = ci.lemma_4_1(cfg, init={"A": A0})
    assert claim.verdict == "fails" and claim.measured >= 0.5 - 1e-12


# --------------------------------------------------------------------------------------------------- Lemma 4.3

def test_lemma_4_3_holds_over_every_recorded_step():
    point = ladder.run_point(JSLConfig(D=12, steps=3000, **IDEAL))
    claim = ci.lemma_4_3(point, [point])
    assert claim.verdict == "holds" and point.min_d_gamma > 0 and np.isfinite(point.max_ratio)


def test_lemma_4_3_fails_when_attention_anti_associates():
    """sqrt_d, D=8, C=2, q=0.5, nu=0.01 (issue 13): gamma falls below rho, so some d gamma < 0."""
    point = ladder.run_point(JSLConfig(D=8, C=2, q=0.5, nu=0.01, temperature="sqrt_d", steps=600, record_every=20))
    claim = ci.lemma_4_3(point, [point])
    assert claim.verdict == "fails" and claim.measured < 0


def test_lemma_4_3_not_applicable_on_one_step():
    point = ladder.run_point(JSLConfig(D=12, steps=1, **IDEAL))
    assert ci.lemma_4_3(point, [point]).verdict == "not applicable"


# ------------------------------------------------------------------------------------------------- Theorem 4.1

@pytest.fixture(scope="module")
def ladder_runs():
    """The ladder D = 8, 12, 16 (eta by `ladder_config`) at 5,000 steps and at 1 step."""
    return {steps: [ladder.run_point(ci.ladder_config(JSLConfig(D=8, steps=steps, **IDEAL), D)) for D in (8, 12, 16)]
            for steps in (1, 5000)}


def _with_gaps(points, gaps):
    return [dataclasses.replace(p, error_fstar=p.lines["bayes_error_fstar"] + g) for p, g in zip(points, gaps)]


def _past_event_3(p):
    """The point with T3 marked at its last step: the verdict logic on runs read as past the theorem's horizon."""
    return dataclasses.replace(p, events={**p.events, "T3": p.steps})


def test_theorem_4_1_holds_when_the_gap_shrinks(ladder_runs):
    """The verdict logic on the measured points with gaps decreasing in D (the trend the claim asks for)."""
    points = [_past_event_3(p) for p in _with_gaps(ladder_runs[5000], [0.03, 0.02, 0.01])]
    claim = ci.theorem_4_1(points, JSLConfig(D=12, **IDEAL))
    assert claim.verdict == "holds" and claim.details["trend"]["slope_high"] < 0


def test_theorem_4_1_fails_on_one_step_and_on_frozen_A(ladder_runs):
    """steps = 1: the gap is the Event-I GLM's, growing with D, and the run is far from the theorem's horizon (its
    one step is all of its loss decrease): not applicable, never holds. Frozen A (gamma = rho = 0): F = sign(T) for
    any alpha, so the error is the sign-of-count line at every D (derivations 3e), on converged runs: fails."""
    cfg = JSLConfig(D=12, **IDEAL)
    one = ci.theorem_4_1(ladder_runs[1], cfg)
    assert one.verdict == "not applicable" and one.measured > 0 and "Event III not over" in one.regime
    frozen = [_past_event_3(dataclasses.replace(p, error_fstar=p.lines["glm_error_fstar"])) for p in ladder_runs[5000]]
    assert ci.theorem_4_1(frozen, cfg).verdict == "fails"


def test_theorem_4_1_at_a_fixed_horizon_is_measured_not_assumed(ladder_runs):
    """At 5,000 steps every size is associated; the verdict is whatever the trend of the gap says (docs/jsl.md 12),
    and the gap is never below 0 (P[f* = 0] is a floor for every F)."""
    pts = ladder_runs[5000]
    assert all(p.patch_association == 1.0 and p.gap_fstar >= -1e-12 for p in pts)
    claim = ci.theorem_4_1(pts, JSLConfig(D=12, **IDEAL))
    if any(p.events.get("T3") is None for p in pts):
        assert claim.verdict == "not applicable"
    else:
        assert claim.verdict == ("holds" if claim.details["trend"]["slope_high"] < 0 else "fails")


# ------------------------------------------------------------------------------------------------- Theorem 3.1

def test_theorem_3_1_holds_in_regime():
    """D=24, C=3, q=0.5: q(D-C) = 10.5 >= C^2 = 9; sign-of-count errs 0.256 against f*."""
    cfg = JSLConfig(D=24, C=3, q=0.5, steps=100, N=400, n_test=2048)
    claim, lit = claims_glm.theorem_3_1(cfg, quick=True, seeds=2)
    assert claim.verdict == "holds" and claim.measured >= 0.125
    assert lit.value == reference.bayes_error_fstar(cfg) and lit.value < 0.125


def test_theorem_3_1_not_applicable_where_a_glm_beats_one_eighth():
    """D=16, C=4, q=0.5: q(D-C) = 6 < C^2 and the sign-of-count GLM errs 0.080 < 1/8 against f*."""
    cfg = JSLConfig(D=16, C=4, q=0.5, steps=50, N=300, n_test=1024)
    claim, _ = claims_glm.theorem_3_1(cfg, quick=True, seeds=2)
    assert claim.verdict == "not applicable" and claim.measured < 0.125


def test_literal_phi_glm_beats_one_eighth():
    """With phi arbitrary, w_j = 3^j w* and phi = f* o decode errs only where f* = 0: P[f* = 0] < 1/8, by enumerating
    every configuration (exact rational weights rounded once; the sum of 2 * 3^8 terms: 1e5 u)."""
    cfg = JSLConfig(D=12, C=4, q=0.5, partition="contiguous")
    err = claims_glm.literal_phi_error(cfg)
    assert abs(err - reference.bayes_error_fstar(cfg)) <= 1e5 * U64 and err < 0.125


def test_ladder_config_rescales_eta_and_resolves_the_size():
    """eta x min(1, (D_judged/D)^2) (GD stability on alpha), d = D and the partition chosen again at each size."""
    judged = JSLConfig(D=36, **IDEAL)
    big, small = ci.ladder_config(judged, 64), ci.ladder_config(judged, 16)
    assert big.eta == pytest.approx(0.02 * (36 / 64) ** 2, rel=1e-15) and small.eta == 0.02
    assert (big.D, big.d, big.partition, small.d, small.partition) == (64, 64, "grid", 16, "grid")
    assert ci.ladder_config(judged, 20).partition == "contiguous"
