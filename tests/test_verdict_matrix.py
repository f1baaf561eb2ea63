"""The truth-known verdict matrix of the JSL claims: for every claim, a scenario where the paper's
conclusion holds by construction ("holds"), one where it is false by construction ("fails"), and one
outside a premise ("not applicable"), each a real run, never a spliced result. `MATRIX` lists every
row with the test that proves it (some rows live beside their fixtures in other files) and
`UNREACHABLE` says why a claim cannot reach an outcome; `test_every_claim_has_its_three_rows` fails
when a claim of `dynsim.jsl.theorems.CLAIMS` lacks one.

The scenarios (docs/claims.md, "JSL claims"):
- in the premise: D = 36, C = 4, q = 0.5, nu = 1e-4 (alpha0 = 0.01 below the Event-I plateau: alpha
  rises first);
- Lemma 4.3 false: D = 28, q = 2/3, nu = 1e-4 (Event I happens; d gamma < 0 early in Event II);
- the corollary and Theorem 4.1 false: q(D - C) = 14.4 at D = 20, 24, 28 (q = 0.9, 0.72, 0.6), t =
  1e6: the flow
  converges to anti-association (gamma < rho) at D = 20 and 24, every size past the horizon;
- outside the premise: nu = 0.01 at D = 36 (alpha0 = 0.1 above the plateau: alpha only falls, no
  Event I).
"""

import ast
import dataclasses
import inspect
import pathlib

import numpy as np
import pytest

from dynsim import JSLConfig
from dynsim.jsl import claims_glm, claims_idealized as ci, ladder, partition, setting, theorems

HOLDS, FAILS, NA = "holds", "fails", "not applicable"
IDEAL = dict(C=4, q=0.5, eta=0.02, temperature="unit", record_every=100)
FLOW = dict(C=4, eta=0.005, temperature="unit", record_every=100)

# (claim, scenario, expected verdict, test proving it as "file::test")
PAST_THE_EDGE = (
    "test_realistic_stability.py::test_theorem_4_2_and_lemma_4_2_are_not_applicable_past_the_edge"
)
MATRIX = [
    (
        "Lemma 4.1",
        "idealized start, full exact run D = 8",
        HOLDS,
        "test_verdict_matrix.py::test_lemma_4_1",
    ),
    (
        "Lemma 4.1",
        "A0 on the orbits of a shuffled partition",
        NA,
        "test_verdict_matrix.py::test_lemma_4_1",
    ),
    (
        "Lemma 4.3",
        "D = 36, nu = 1e-4",
        HOLDS,
        "test_verdict_matrix.py::test_lemma_4_3_and_its_corollary",
    ),
    (
        "Lemma 4.3",
        "D = 28, q = 2/3, nu = 1e-4",
        FAILS,
        "test_verdict_matrix.py::test_lemma_4_3_and_its_corollary",
    ),
    (
        "Lemma 4.3",
        "D = 36, nu = 0.01: no Event I",
        NA,
        "test_verdict_matrix.py::test_lemma_4_3_and_its_corollary",
    ),
    (
        ci.COROLLARY,
        "D = 36, nu = 1e-4",
        HOLDS,
        "test_verdict_matrix.py::test_lemma_4_3_and_its_corollary",
    ),
    (
        ci.COROLLARY,
        "D = 20, q = 0.9: anti-association",
        FAILS,
        "test_verdict_matrix.py::test_lemma_4_3_and_its_corollary",
    ),
    (
        ci.COROLLARY,
        "D = 36, nu = 0.01: no Event I",
        NA,
        "test_verdict_matrix.py::test_lemma_4_3_and_its_corollary",
    ),
    (
        "Theorem 4.1",
        "quick ladder D = 32, 36, 40, t = 1e6",
        HOLDS,
        "test_verdict_matrix.py::test_theorem_4_1",
    ),
    (
        "Theorem 4.1",
        "q(D - C) = 14.4 at D = 20, 24, 28: anti-association",
        FAILS,
        "test_verdict_matrix.py::test_theorem_4_1",
    ),
    (
        "Theorem 4.1",
        "quick ladder, steps = 1: not past the horizon",
        NA,
        "test_verdict_matrix.py::test_theorem_4_1",
    ),
    (
        "Theorem 4.1",
        "q fixed at 0.5: q(D - C) not kept",
        NA,
        "test_jsl_claims.py::test_theorem_4_1_not_applicable_at_fixed_q",
    ),
    (
        "Theorem 3.1",
        "D = 24, C = 3, q = 0.5, monotone phi",
        HOLDS,
        "test_verdict_matrix.py::test_theorem_3_1",
    ),
    (
        "Theorem 3.1",
        "phi arbitrary (literal-phi GLM)",
        FAILS,
        "test_verdict_matrix.py::test_theorem_3_1",
    ),
    (
        "Theorem 3.1",
        "D = 16, C = 4: q(D - C) < C^2",
        NA,
        "test_verdict_matrix.py::test_theorem_3_1",
    ),
    (
        "Lemma 4.2 (realistic)",
        "N = 8000, 5300 steps (the quick plan's horizon)",
        HOLDS,
        "test_jsl_claims_realistic.py::test_lemma_4_2_holds_in_regime",
    ),
    (
        "Lemma 4.2 (realistic)",
        "shuffled labels",
        FAILS,
        "test_jsl_claims_realistic.py::test_lemma_4_2_fails_on_shuffled_labels",
    ),
    (
        "Theorem 4.2",
        "N = 500, 8000",
        HOLDS,
        "test_jsl_claims_realistic.py::test_theorem_4_2_holds_in_regime",
    ),
    (
        "Theorem 4.2",
        "N = 500 only, to the flow's horizon: under-sampled GD crosses its stability edge",
        NA,
        "test_jsl_claims_realistic.py::test_too_few_samples_leave_gd_off_its_flow",
    ),
    ("Theorem 4.2", "eta = 0.6 at D = 9: GD past its stability edge", NA, PAST_THE_EDGE),
    (
        "Theorem 4.2",
        "N = 500, 1500 steps (t = 120 short of the flow's end of Event II, t = 421): under-trained",
        NA,
        "test_jsl_claims_realistic.py::test_under_training_is_not_a_verdict",
    ),
    (
        "Theorem 5.1",
        "A from a pretraining of 1500 steps (short of the flow's end of Event II): under-trained",
        NA,
        "test_jsl_claims_realistic.py::test_under_training_is_not_a_verdict",
    ),
    (
        "Lemma 4.2 (realistic)",
        "1 step: short of the flow's end of Event I",
        NA,
        "test_jsl_claims_realistic.py::test_no_trained_claim_holds_after_one_step",
    ),
    ("Lemma 4.2 (realistic)", "eta = 0.6 at D = 9: GD past its stability edge", NA, PAST_THE_EDGE),
    (
        "Theorem 4.2",
        "D = 10, C = 2, q = 0.5 (q(D - C) = C^2): Definition 2.1 fails (P[y f* <= 0] = 0.189)",
        NA,
        "test_jsl_claims_realistic.py::test_theorem_4_2_is_not_applicable_where_definition_2_1_fails",
    ),
    (
        "Theorem 5.1",
        "associated A (gamma = 3, rho = -1) at D = 9, where Definition 2.1 holds",
        HOLDS,
        "test_jsl_claims_realistic.py::test_theorem_5_1_holds_with_an_associated_A",
    ),
    (
        "Theorem 5.1",
        "anti-associated A (gamma = -1, rho = 0.3) and A at initialization at D = 9: outside the "
        "theorem's hypothesis (patch association)",
        NA,
        "test_jsl_claims_realistic.py::test_theorem_5_1_needs_an_associated_A",
    ),
    (
        "Theorem 5.1",
        "the idealized A (gamma = 3, rho = -1) at D = 10, C = 2, q = 0.5: Definition 2.1 fails",
        NA,
        "test_jsl_claims_realistic.py::test_theorem_5_1_is_not_applicable_where_definition_2_1_fails",
    ),
    (
        "Theorem 5.1",
        "the A the exact flow reaches at the default plan's horizon (D = 16, C = 2, q = 2/7)",
        HOLDS,
        "test_jsl_claims_realistic.py::test_theorem_5_1_at_the_default_plan_size",
    ),
    (
        "Theorem 5.1",
        "A at initialization at the default plan's size: outside the hypothesis",
        NA,
        "test_jsl_claims_realistic.py::test_theorem_5_1_at_the_default_plan_size",
    ),
    (
        "Figure 2",
        "left the plateau at chance association",
        HOLDS,
        "test_jsl_claims_realistic.py::test_figure_2_judgement_fails_on_an_associated_learner",
    ),
    (
        "Figure 2",
        "left the plateau with association",
        FAILS,
        "test_jsl_claims_realistic.py::test_figure_2_judgement_fails_on_an_associated_learner",
    ),
]

# claim -> outcomes it cannot reach, and why (docs/claims.md says the same)
UNREACHABLE = {
    "Lemma 4.1": {FAILS: "an exact symmetry: from a start on the manifold only a defect breaks it"},
    "Theorem 5.1": {
        FAILS: "inside its premises (an associated A, Definition 2.1, the pretraining's horizon) "
        "every A tried beats the same-N~ GLM and A at init at D = 9; without association the "
        "theorem is silent (not applicable)"
    },
    "Theorem 4.2": {
        FAILS: "inside its premises (past the flow's end of Event II, GD within its stability edge "
        "at the judged N, Definition 2.1 and the separation) no run found leaves most seeds "
        "unassociated: a too-small N crosses the stability edge first (not applicable), a short "
        "run misses the horizon (not applicable); the claim's own negative control is the "
        "inconclusive 2-seed row and the rule's tests (tests/test_claims.py)"
    },
    "Figure 2": {
        NA: "a search that never leaves the linear plateau is 'not evaluated', not a premise"
    },
}


def test_every_claim_has_its_three_rows():
    """Every JSL claim has a holds, a fails and a not-applicable row, or a written reason; every
    row's test exists."""
    for name in theorems.CLAIMS:
        have = {verdict for claim, _, verdict, _ in MATRIX if claim == name}
        missing = {HOLDS, FAILS, NA} - have - set(UNREACHABLE.get(name, {}))
        assert not missing, (name, missing)
    here = pathlib.Path(__file__).parent
    for claim, _, _, where in MATRIX:
        assert claim in theorems.CLAIMS, claim
        path, test = where.split("::")
        names = {
            n.name
            for n in ast.walk(ast.parse((here / path).read_text()))
            if isinstance(n, ast.FunctionDef)
        }
        assert test in names, where


def _anti_associated_ladder_config(D: int) -> JSLConfig:
    judged = JSLConfig(D=20, q=0.9, nu=1e-4, steps=200_000_000, **FLOW)  # t = 1e6
    return ladder.ladder_config(judged, D)


@pytest.fixture(scope="module")
def points():
    """The flow runs of the scenarios (module docstring); t = eta T as short as each verdict
    allows."""
    # t = 1e4
    return {
        "in": ladder.run_point(JSLConfig(D=36, q=0.5, nu=1e-4, steps=2_000_000, **FLOW)),
        "lemma_false": ladder.run_point(JSLConfig(D=28, q=2 / 3, nu=1e-4, steps=2_000_000, **FLOW)),
        # t = 100
        "no_event_i": ladder.run_point(JSLConfig(D=36, q=0.5, nu=0.01, steps=20_000, **FLOW)),
        "anti": [ladder.run_point(_anti_associated_ladder_config(D)) for D in (20, 24, 28)],
    }


def test_lemma_4_1():
    cfg = JSLConfig(D=8, steps=300, partition="contiguous", **IDEAL)
    claim = ci.lemma_4_1(cfg)
    assert claim.verdict == HOLDS and claim.details["max_abs_gamma_minus_rho"] > 1e-3  # A moved
    # A0 constant on the orbits of another partition than the data's: off the lemma's manifold from
    # t = 0
    shuffled = partition.orbit_masks(JSLConfig(D=8, C=4, partition="random", seed=3))[0]
    off = ci.lemma_4_1(cfg, init={"A": cfg.sigma_A * np.eye(8) + 0.5 * shuffled})
    assert off.verdict == NA and "the start is on the lemma's manifold" in off.why()


def test_lemma_4_3_and_its_corollary(points):
    eta = FLOW["eta"]
    p = points["in"]
    assert p.alpha_rise > 0 and p.events["T0"] is not None
    assert ci.lemma_4_3(p, eta).verdict == HOLDS and ci.corollary(p, eta).verdict == HOLDS
    false = ci.lemma_4_3(points["lemma_false"], eta)
    assert false.verdict == FAILS and false.measured < 0 and false.at.startswith("D = 28, t = ")
    anti = ci.corollary(points["anti"][0], eta)
    assert anti.verdict == FAILS and anti.measured < -1  # gamma ends far below rho (-4.6 measured)
    # nu = 0.01: alpha only falls (d alpha(0) < 0); d gamma(0) < 0 there too, and it must not read
    # as a failure
    out = points["no_event_i"]
    assert out.alpha_rise == 0 and out.d_alpha_at_start < 0 and out.min_d_gamma < 0
    for claim in (ci.lemma_4_3(out, eta), ci.corollary(out, eta)):
        assert claim.verdict == NA and "Event I happened" in claim.why(), claim.why()


def test_lemma_4_3_guard_does_not_pass_when_its_quantity_is_missing(points):
    """A point whose alpha rise could not be measured (alpha0 = 0) is not evaluated, never
    judged."""
    p = dataclasses.replace(points["in"], alpha_rise=float("nan"))
    assert ci.lemma_4_3(p, FLOW["eta"]).verdict == "not evaluated"


def test_theorem_4_1(points):
    judged = JSLConfig(D=36, q=0.5, nu=1e-4, **{**FLOW, "record_every": 100})
    quick = {
        steps: [
            ladder.run_point(ladder.ladder_config(judged.replace(steps=steps), D))
            for D in setting.QUICK_LADDER
        ]
        for steps in (1, 200_000_000)
    }
    held = ci.theorem_4_1(quick[200_000_000], judged)
    assert held.verdict == HOLDS, (
        held.regime,
        held.details["trend_text"],
        held.details.get("conditions"),
    )
    short = ci.theorem_4_1(quick[1], judged.replace(steps=1))
    assert short.verdict == NA and "past the horizon" in short.why()
    anti = ci.theorem_4_1(points["anti"], _anti_associated_ladder_config(20))
    assert [p.patch_association for p in points["anti"]] == [0.0, 0.0, 1.0]
    assert anti.verdict == FAILS and anti.at == "not associated at D = 20, 24", anti.why()
    # past the horizon at every size: the failure is the dynamics', not the run's
    assert anti.premises[1].met
    with pytest.raises(ValueError, match="at least 3 distinct sizes"):
        ci.theorem_4_1(points["anti"][:2], _anti_associated_ladder_config(20))


def test_theorem_4_1_horizon_guard_does_not_pass_when_a_change_is_missing(points):
    """A NaN gap change at any size, first or not, leaves the horizon premise not measured: never a
    verdict."""
    pts = points["anti"]
    for i in range(len(pts)):
        broken = [
            dataclasses.replace(p, error_fstar_earlier=float("nan")) if j == i else p
            for j, p in enumerate(pts)
        ]
        assert ci.theorem_4_1(broken, _anti_associated_ladder_config(20)).verdict == "not evaluated"


def test_theorem_3_1():
    cfg = JSLConfig(D=24, C=3, q=0.5, steps=500, N=400, n_test=2048)  # the GLM's full budget
    claim, lit = claims_glm.theorem_3_1(cfg, quick=True, seeds=2)
    assert claim.verdict == HOLDS and claim.measured >= 0.125 and lit.value < 0.125
    arbitrary, _ = claims_glm.theorem_3_1(cfg, quick=True, seeds=2, phi="arbitrary")
    assert arbitrary.verdict == FAILS and arbitrary.measured < 0.125
    small, _ = claims_glm.theorem_3_1(
        JSLConfig(D=16, C=4, q=0.5, steps=50, N=300, n_test=1024), quick=True, seeds=2
    )
    assert small.verdict == NA and small.measured < 0.125


def test_only_runs_what_the_asked_claims_need(points, monkeypatch):
    """--only "Lemma 4.3": one reduced run (the judged point), no ladder, no realistic run; the runs
      counted for the
    progress bar are the runs made."""
    cfg = JSLConfig(D=36, q=0.5, nu=0.01, steps=20_000, **FLOW)
    only = frozenset({"Lemma 4.3"})
    made = []
    monkeypatch.setattr(
        ci, "run_point", lambda c, *a, **k: made.append(c.D) or points["no_event_i"]
    )
    items = theorems.check_theorems(cfg, quick=True, seeds=2, only=only)
    assert made == [36] and theorems.runs(cfg, quick=True, seeds=2, only=only) == 1
    assert [getattr(i, "claim", None) for i in items] == ["Lemma 4.3"] and items[0].verdict == NA
    with pytest.raises(ValueError, match="the JSL claims are"):
        theorems.check_theorems(cfg, quick=True, only=frozenset({"Lemma 9"}))
    assert "only" in inspect.signature(theorems.check_theorems).parameters


def test_event_i_rise_counts_only_a_rise_before_the_first_fall():
    """The premise 'Event I happened' reads alpha before it first falls: a start above the plateau
    that falls and later rises (Event III) has no Event I; alpha(0) = 0 cannot be measured (NaN: the
    claim is not evaluated)."""
    assert ladder.event_i_rise(np.array([0.1, 0.09, 0.05, 0.2, 0.3]), None) == 0.0
    assert ladder.event_i_rise(np.array([0.01, 0.02, 0.07, 0.06, 0.5]), None) == pytest.approx(
        6.0, rel=1e-12
    )
    assert ladder.event_i_rise(np.array([0.01, 0.03, 0.02, 0.5]), 1) == pytest.approx(
        2.0, rel=1e-12
    )
    assert np.isnan(ladder.event_i_rise(np.array([0.0, 1.0]), None))
