"""The claims core (dynsim.claims, dynsim.trends): verdicts, the exit rule, the JSON contract, the
trend interval."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from dynsim import claims, results, statistic, trends

CONTRACT = {
    "claim",
    "statement",
    "reading",
    "regime",
    "threshold",
    "derivation",
    "measured",
    "verdict",
    "negative_control",
    "reading_class",
    "premises",
}


def _claim(measured, threshold=1.0, relation="<=", **kw):
    kw.setdefault("reading_class", "literal")
    return claims.judge(
        "c",
        statement="s",
        reading="r",
        regime="g",
        measured=measured,
        relation=relation,
        threshold=threshold,
        derivation="d",
        negative_control="n",
        **kw,
    )


@pytest.mark.parametrize(
    "measured, relation, verdict",
    [
        (0.5, "<=", "holds"),
        (1.5, "<=", "fails"),
        (1.0, "<", "fails"),
        (1.0, ">=", "holds"),
        (math.nan, "<=", "not evaluated"),
    ],
)
def test_verdict_follows_the_relation(measured, relation, verdict):
    assert _claim(measured, relation=relation).verdict == verdict


def test_regime_violation_is_not_applicable_and_named():
    c = _claim(0.5, regime_violations=["q(D - C) = 1.5 < C = 3"])
    assert c.verdict == "not applicable" and "q(D - C) = 1.5 < C = 3" in c.regime and not c.holds


def test_a_false_condition_fails_a_passing_comparison():
    c = _claim(0.5, conditions={"patch association": False})
    assert c.verdict == "fails" and c.details["conditions"] == {"patch association": False}


def test_why_names_the_failing_part():
    """Issue 14: the failing sub-condition was buried in the details; `why` (table and JSON) names
    it."""
    assert _claim(0.5).why() == ""
    assert _claim(1.5).why() == "measured 1.5 is not <= 1"
    c = _claim(0.5, conditions={"patch association": False, "monotone": True})
    assert c.why() == "condition not met: patch association (the main comparison 0.5 <= 1 holds)"
    both = _claim(1.5, conditions={"a": False, "b": False})
    assert both.why() == "measured 1.5 is not <= 1; conditions not met: a, b"
    assert _claim(0.5, regime_violations=["q too small"]).why() == "premise not met: q too small"
    assert (
        "stopped early" in claims.not_evaluated("c", "stopped early", reading_class="order").why()
    )
    text = results.table([c, _claim(0.5)])
    assert "1 of 2 claims hold" in text and "  c: condition not met: patch association" in text
    assert json.loads(claims.to_json([c]))["claims"][0]["why"].startswith("condition not met")


def test_exit_status_says_what_happened():
    """0: every claim holds; 1: some claim fails (whatever else); 3: none fails, some could not be
    judged (not applicable, not evaluated, or nothing judged at all)."""
    ok, bad = _claim(0.5), _claim(2.0)
    na = _claim(0.5, regime_violations=["x"])
    ne = claims.not_evaluated("c", "too large", reading_class="literal")
    m = claims.Measurement("T0", "event time", 100)
    assert claims.exit_code([ok, m]) == claims.EXIT_HOLDS == 0
    assert claims.exit_code([ok, bad]) == claims.EXIT_FAILS == 1
    for other in (na, ne):
        assert claims.exit_code([ok, other]) == claims.EXIT_UNJUDGED == 3
        assert claims.exit_code([bad, other]) == 1  # a contradiction outranks what was not judged
    assert claims.exit_code([m]) == 3  # nothing judged is not a pass


def test_a_premise_the_dynamics_broke_is_told_apart_from_one_not_judged():
    """4: none fails, and some claim is not applicable because a premise on the dynamics (the
    horizon, GD's stability) was measured false; 3 stays for a regime premise or a missing
    measurement, and a contradiction still outranks both."""
    short = _claim(0.5, premises=[claims.reached_horizon(0.5, 0.1, "late move")])
    missing = _claim(0.5, premises=[claims.reached_horizon(float("nan"), 0.1, "late move")])
    regime = _claim(0.5, regime_violations=["x"])
    assert short.verdict == claims.NOT_APPLICABLE and claims.dynamics_broken(short)
    assert claims.exit_code([_claim(0.5), short]) == claims.EXIT_DYNAMICS == 4
    assert claims.exit_code([regime, short]) == 4
    assert claims.exit_code([_claim(2.0), short]) == claims.EXIT_FAILS
    assert missing.verdict == claims.NOT_EVALUATED and claims.exit_code([missing]) == 3
    assert claims.exit_code([regime]) == 3
    assert "dynamics" not in claims.Premise("a", 1.0, ">=", 1.0).to_dict()
    assert short.premises[0].to_dict()["dynamics"] is True


def _interval(value, low, high):
    return statistic.Statistic(value, low, high, "95% Student-t over 4 seeds", "more seeds")


@pytest.mark.parametrize(
    "low, high, relation, verdict",
    [
        (0.2, 0.8, "<=", "holds"),  # wholly on the statement's side
        (0.2, 1.0, "<=", "holds"),  # the edge is on the side of "<="
        (0.2, 1.0, "<", "not evaluated"),  # ... and not of "<"
        (1.2, 1.8, "<=", "fails"),  # wholly on the other side
        (1.0, 1.8, "<", "fails"),
        (1.0, 1.8, "<=", "not evaluated"),
        (0.5, 1.5, "<=", "not evaluated"),  # straddles: the data decide neither way
        (0.5, 1.5, ">", "not evaluated"),
        (1.2, 1.8, ">", "holds"),
        (0.2, 0.8, ">=", "fails"),
        (-math.inf, math.inf, "<", "not evaluated"),  # two rungs: no interval, no verdict
    ],
)
def test_the_one_rule_reads_the_interval(low, high, relation, verdict):
    c = _claim(
        _interval((low + high) / 2 if math.isfinite(low + high) else 0.0, low, high),
        relation=relation,
    )
    assert c.verdict == verdict
    assert c.interval == [low, high] and c.uncertainty == "95% Student-t over 4 seeds"
    if verdict == "not evaluated":
        why = c.why()
        assert why.startswith("not evaluated: inconclusive: the interval") and "more seeds" in why
    if verdict == "fails":
        assert "lies wholly outside" in c.why()


def test_an_exact_statistic_is_the_plain_comparison():
    """An exact statistic (a number) reduces the rule to `measured relation threshold`, inf
    included (a class that never switched fails a bound)."""
    assert _claim(math.inf).verdict == "fails" and _claim(-math.inf).verdict == "holds"
    assert _claim(statistic.exact(0.5)).statistic.exact
    assert _claim(1.0, relation="==").verdict == "holds"
    assert _claim(1.5, relation="==").verdict == "fails"


def test_conditions_join_with_and_under_the_same_rule():
    cond = claims.Condition(_interval(0.5, -0.1, 1.1), ">", 0.0)  # straddles 0
    # the main part holds, a condition is undecided: not evaluated, naming the condition
    c = _claim(0.5, conditions={"diff above 0": cond})
    assert c.verdict == "not evaluated" and "diff above 0: the interval [-0.1, 1.1]" in c.why()
    # a decided false part decides the conjunction
    assert _claim(0.5, conditions={"diff above 0": cond, "x": False}).verdict == "fails"
    assert _claim(1.5, conditions={"diff above 0": cond}).verdict == "fails"
    # a decided false condition under an undecided main part: the why says the main is undecided
    c = _claim(_interval(0.5, 0.2, 1.4), conditions={"x": False})
    assert c.verdict == "fails" and "(the main comparison is undecided: the interval" in c.why()
    held = claims.Condition(_interval(0.5, 0.1, 0.9), ">", 0.0)
    assert _claim(0.5, conditions={"diff above 0": held}).verdict == "holds"
    gone = claims.Condition(statistic.mean([0.3]), ">", 0.0)  # one seed: no interval
    assert _claim(0.5, conditions={"d": gone}).verdict == "not evaluated"


def test_mean_interval_is_students_t():
    """The 95% interval of 4 values: mean +- t(0.975, 3) sd / 2 (scipy's quantile; rounding)."""
    x = [1.0, 2.0, 4.0, 5.0]
    s = statistic.mean(x)
    half = stats.t.ppf(0.975, 3) * np.std(x, ddof=1) / 2
    assert s.value == 3.0 and abs(s.high - 3.0 - half) < 1e-12 and abs(3.0 - s.low - half) < 1e-12
    assert statistic.mean([1.0]).missing and statistic.mean([1.0, math.nan]).missing
    t = trends.fit([1, 2, 3], [1.0, 2.5, 2.9])
    sl = statistic.slope(t, "rungs")
    assert (sl.value, sl.low, sl.high) == (t.slope, t.slope_low, t.slope_high)
    assert "over 3 rungs" in sl.how and sl.decide == "more rungs"
    with pytest.raises(ValueError, match="reversed"):
        statistic.Statistic(0.0, 1.0, -1.0)


def test_proportion_is_clopper_pearson():
    """4 of 4: the exact two-sided 95% interval is [0.025^(1/4), 1] = [0.3976, 1] (closed form for k
    = n; rounding); 0 of 6: [0, 1 - 0.025^(1/6)] = [0, 0.4593]; none: missing."""
    s = statistic.proportion([True] * 4)
    assert s.value == 1.0 and s.high == 1.0 and abs(s.low - 0.025**0.25) < 1e-12
    z = statistic.proportion([False] * 6)
    assert z.low == 0.0 and abs(z.high - (1 - 0.025 ** (1 / 6))) < 1e-12
    assert statistic.proportion([]).missing and "4 seeds (4 yes)" in s.how


def test_largest_carries_each_relative_correction():
    """max v within [max v / (1 + k), max v (1 + k)]: each end written out by hand (the values are
    binary fractions: the products are exact, the quotients within one rounding, 1e-15)."""
    s = statistic.largest([0.5, 0.875], [0.25, 0.0625], "test")
    assert s.value == 0.875 and s.high == 0.875 * 1.0625 and abs(s.low - 0.875 / 1.0625) < 1e-15
    assert statistic.decide(s, "<=", 1.0) == statistic.HOLDS  # 0.9297 <= 1
    near = statistic.largest([0.5, 0.96875], [0.25, 0.125], "test")  # [0.861, 1.090]
    assert statistic.decide(near, "<=", 1.0) == statistic.INCONCLUSIVE
    far = statistic.largest([1.25, 0.5], [0.125, 0.0], "test")  # low 1.111 > 1
    assert statistic.decide(far, "<=", 1.0) == statistic.FAILS
    for values, k in (([], []), ([1.0], [0.1, 0.2]), ([1.0], [-0.1])):
        with pytest.raises(ValueError, match="relative corrections"):
            statistic.largest(values, k, "test")


def test_invalid_verdict_and_relation_are_refused():
    with pytest.raises(ValueError, match="verdict"):
        claims.Claim("c", "s", "r", "g", 1.0, "d", 1.0, "passes", "n")
    with pytest.raises(ValueError, match="relation"):
        _claim(1.0, relation="~")


def test_json_contract_and_table():
    items = [
        _claim(0.5),
        claims.not_evaluated("e", "too large", reading_class="order"),
        claims.Measurement("T0", "event time", 100),
    ]
    data = json.loads(claims.to_json(items, {"D": 36}))
    assert (
        data["config"] == {"D": 36}
        and len(data["claims"]) == 2
        and data["measurements"][0]["value"] == 100
    )
    for c in data["claims"]:
        assert CONTRACT <= set(c) and c["verdict"] in claims.VERDICTS
    text = results.table(items)
    assert "not evaluated" in text and "1 of 2 claims hold" in text and "T0" in text


def test_trend_recovers_an_exact_line_and_refuses_bad_input():
    t = trends.fit(
        [16, 36, 64, 100],
        [3 * 16**-0.5, 3 * 36**-0.5, 3 * 64**-0.5, 3 * 100**-0.5],
        logx=True,
        logy=True,
    )
    # rounding only
    assert t.slope == pytest.approx(-0.5, abs=1e-12) and t.slope_high - t.slope_low < 1e-10
    assert math.isinf(trends.fit([1, 2], [1, 3]).slope_high)  # two points give no interval
    with pytest.raises(ValueError, match="log scale"):
        trends.fit([0, 1, 2], [1, 2, 3], logx=True)


def test_trend_interval_covers_the_true_slope_at_its_confidence():
    """2000 fits of 5 noisy points: the 90% interval covers the true slope in a fraction within the
    binomial 99.9% band around 0.9 (sd sqrt(0.9 * 0.1 / 2000) = 0.0067, band +-3.29 sd =
    +-0.022)."""
    rng = np.random.default_rng(0)
    x = np.arange(5.0)
    hits = 0
    for _ in range(2000):
        t = trends.fit(x, 1.0 - 0.3 * x + rng.normal(size=5), confidence=0.9)
        hits += t.slope_low <= -0.3 <= t.slope_high
    band = stats.norm.ppf(0.9995) * math.sqrt(0.9 * 0.1 / 2000)
    assert abs(hits / 2000 - 0.9) <= band


@pytest.mark.parametrize("measured, verdict", [(0.5, "holds"), (1.5, "fails")])
def test_a_met_premise_leaves_the_verdict_to_the_measurement(measured, verdict):
    c = _claim(
        measured, premises=[claims.Premise("Event I happened", 3.0, ">", 0.0, "alpha's rise")]
    )
    assert c.verdict == verdict and c.premises[0].met and "Event I happened" in c.regime


def test_a_false_premise_is_not_applicable_and_named_whatever_the_measurement():
    for measured in (0.5, 1.5):
        c = _claim(
            measured,
            premises=[
                claims.Premise("Delta > 0", -0.2, ">", 0.0),
                claims.flag("Event I happened", True),
            ],
        )
        assert (
            c.verdict == "not applicable"
            and c.why() == "premise not met: Delta > 0 (-0.2, needs > 0)"
        )


def test_a_premise_that_could_not_be_measured_never_passes():
    """A guard whose quantity is missing (NaN, None) must not pass: the claim is not evaluated,
    naming it."""
    for missing in (math.nan, None):
        c = _claim(0.5, premises=[claims.Premise("T0 detected", missing, ">=", 1.0)])
        assert (
            c.verdict == "not evaluated" and not c.holds and "T0 detected (not measured" in c.why()
        )
    assert _claim(0.5, premises=[claims.flag("alpha rose", None)]).verdict == "not evaluated"
    assert (
        not claims.flag("alpha rose", None).met and not claims.Premise("x", math.nan, "<=", 1.0).met
    )


@pytest.mark.parametrize(
    "low, high, relation, met, missing, verdict",
    [
        (0.6, 0.8, ">", True, False, "holds"),  # wholly above 0.5: met
        (0.2, 0.4, ">", False, False, "not applicable"),  # wholly below: measured false
        (0.3, 0.5, ">", False, False, "not applicable"),  # up to 0.5: "> 0.5" fails
        (0.4, 0.6, ">", False, True, "not evaluated"),  # straddles: undecided
        (0.5, 0.7, ">", False, True, "not evaluated"),  # from 0.5: neither wholly above nor not
        (0.2, 0.4, "<=", True, False, "holds"),
        (0.6, 0.8, "<=", False, False, "not applicable"),
    ],
)
def test_a_premise_on_an_interval_is_read_by_the_one_rule(low, high, relation, met, missing,
                                                          verdict):  # fmt: skip
    stat = statistic.Statistic((low + high) / 2, low, high, "95% Student-t over 5 seeds")
    p = claims.on_interval("learned", stat, relation, 0.5, "accuracy")
    assert (p.met, p.missing) == (met, missing)
    if not missing:  # measured: the interval's end nearest the threshold
        assert p.measured == min((low, high), key=lambda end: abs(end - 0.5))
    c = _claim(0.5, premises=[p])
    assert c.verdict == verdict
    if missing:  # the claim says why: the interval and what would decide it
        assert c.why() == (
            f"not evaluated: premise undecided: learned (undecided: the interval [{low:g}, "
            f"{high:g}] of {(low + high) / 2:g} (95% Student-t over 5 seeds) lies on both sides "
            "of > 0.5, accuracy)"
        )
        assert "undecided" in p.to_dict()
    else:
        assert "undecided" not in p.to_dict() and "95% Student-t over 5 seeds" in p.how
    with pytest.raises(ValueError, match="reads a side"):
        claims.on_interval("x", stat, "==", 0.5)


def test_reading_class_is_required_and_checked():
    with pytest.raises(TypeError, match="reading_class"):
        claims.judge(
            "c",
            statement="s",
            reading="r",
            regime="g",
            measured=0.5,
            relation="<=",
            threshold=1.0,
            derivation="d",
            negative_control="n",
        )
    with pytest.raises(ValueError, match="reading_class"):
        _claim(0.5, reading_class="measurement")
    data = json.loads(
        claims.to_json(
            [
                _claim(
                    0.5,
                    reading_class="order",
                    premises=[claims.flag("Delta > 0", True, "realised areas")],
                )
            ]
        )
    )
    c = data["claims"][0]
    assert c["reading_class"] == "order" and c["premises"] == [
        {
            "name": "Delta > 0",
            "measured": 1.0,
            "relation": ">=",
            "threshold": 1.0,
            "how": "realised areas",
            "met": True,
        }
    ]


def test_only_parses_names_case_insensitively_and_refuses_unknown_ones():
    known = ("Lemma 4.3", "Theorem 4.1")
    assert claims.parse_only(None, known) is None
    assert claims.parse_only("lemma 4.3", known) == {"Lemma 4.3"}
    assert claims.parse_only(" Lemma 4.3 ,THEOREM 4.1", known) == {"Lemma 4.3", "Theorem 4.1"}
    with pytest.raises(
        ValueError, match="'Zorn' is not a claim here; the claims are: Lemma 4.3, Theorem 4.1"
    ):
        claims.parse_only("Zorn", known)
    with pytest.raises(ValueError, match=r"'Lemma 9' is not a claim here \(did you mean Lemma 4.3"):
        claims.parse_only("Lemma 9", known)
    with pytest.raises(ValueError, match="name at least one"):
        claims.parse_only(" , ", known)
    # a comma inside a name's parentheses does not split it
    both = ("Lemma 5.3 (b,c) small", "F.3 two-phase")
    assert claims.parse_only("lemma 5.3 (b,c) small,F.3 two-phase", both) == set(both)
    assert claims.wanted(None, "x") and claims.wanted(frozenset({"x"}), "y", "x")
    assert not claims.wanted(frozenset({"x"}), "y")


def test_the_shared_premises_reach_both_sides():
    """The horizon and the leading order's resolution are premises like any other: violated, the
    claim is not applicable, naming them."""
    late = claims.reached_horizon(0.5, 0.1, "last half's share of the loss's move", "loss settled")
    assert not late.met and late.name.startswith(claims.HORIZON)
    c = _claim(1.5, premises=[late])
    assert c.verdict == "not applicable" and "the run reached its horizon (loss settled)" in c.why()
    assert claims.reached_horizon(0.02, 0.1, "x").met
    # prediction 0.936 against 1 with a correction of 0.3: inside the band, not resolved
    inside = claims.resolved(0.936, 1.0, 0.3, "measured / predicted over the ladder")
    assert not inside.met and abs(inside.measured - 0.064 / 0.3) < 1e-12  # rounding
    assert _claim(1.5, premises=[inside]).verdict == "not applicable"
    assert claims.resolved(4.0, 1.0, 0.3, "x").met
    assert claims.resolved(2.0, 1.0, 0.0, "x").met and not claims.resolved(1.0, 1.0, 0.0, "x").met


def test_normal_interval_is_value_plus_minus_the_quantile_times_se():
    """95%: z = 1.959964 (the normal's 0.975 quantile, to 6 digits: 1e-6 bounds the printed
    digits); one relation table: a premise's comparison is the rule on an exact value."""
    s = statistic.normal(0.3, 0.01, 0.95, "test set")
    assert abs(s.high - 0.3 - 0.01959964) < 1e-8 and abs(0.3 - s.low - 0.01959964) < 1e-8
    assert s.how.startswith("95% normal") and not s.exact
    assert claims.compare(1.0, "<=", 1.0) and not claims.compare(1.0, "<", 1.0)
    assert not claims.compare(math.nan, "<=", 1.0) and claims.compare(2.0, "==", 2.0)


def test_the_table_reads_at_a_glance():
    """One row per claim (verdict, statistic with its interval, threshold, a short reason), the
    measurements by value, why each claim that does not hold does not, the count last; the account
    of each claim (statement, reading, regime, details) only when verbose; numbers inside details
    printed as numbers, never as numpy reprs."""
    inconclusive = claims.judge(
        "slope claim", statement="s", reading="r", reading_class="order", regime="g",
        measured=statistic.Statistic(-0.42, -1.29, 0.45, how="95% slope interval"), relation="<",
        threshold=0.0, derivation="d", negative_control="n",
        details={"per_P": {256: np.float64(0.1396), 1024: np.float64(0.066)}},
    )  # fmt: skip
    items = [_claim(0.5), inconclusive, claims.Measurement("T0", "a long description", 100)]
    short = results.table(items).splitlines()
    row = next(line for line in short if line.startswith("slope claim"))
    assert "not evaluated" in row and "-0.42 [-1.29, 0.45]" in row and "< 0" in row
    assert "inconclusive" in row
    assert any(line.split() == ["T0", "100"] for line in short)
    assert "  slope claim: not evaluated: inconclusive: the interval" in "\n".join(short)
    counted = [i for i, line in enumerate(short) if "of 2 claims hold" in line]
    assert counted == [len(short) - 2]
    assert short[-2].startswith("1 of 2 claims hold; not evaluated: slope claim (exit 3)")
    assert not any(line.startswith("  reading (") for line in short)
    verbose = results.table(items, verbose=True)
    assert "  reading (order): r" in verbose and "a long description" in verbose
    assert "per_P = {256: 0.1396, 1024: 0.066}" in verbose and "np.float64" not in verbose
