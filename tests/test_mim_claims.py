"""MIM claims (dynsim.mim.theorems): the negative controls beyond the verdict matrix
(tests/test_verdict_matrix_mim.py, which holds the scenarios near the boundaries: kappa_c = 0.83,
gamma = 0.6, kappa_c = 0.72, shrinking areas), diverged runs and the measurements.

The runs are deterministic (reduced level, mean_field), so a verdict is a property of the run, not
of a sample.
"""

import dataclasses
import math
import warnings

import numpy as np
import pytest

import reduced.mim
from dynsim.claims import NOT_APPLICABLE, RESOLUTION
from dynsim.mim import boundary, diversity, ladder, premises, setting, theorems
from tests import test_verdict_matrix_mim as matrix

QUICK = setting.QUICK_LADDER
# the default ladder: 4 rungs, 2 dof for every trend (3 rungs leave 1: t = 12.7 at 95%)
LADDER = setting.LADDER
STEPS = 1000
BASE = theorems.base_config(steps=STEPS)
quiet = lambda s: None  # noqa: E731


def _ladder(base=BASE, steps=STEPS, sizes=QUICK, scaled=True, beside=False):
    return [ladder.run_rung(base, P, steps, quiet, scaled=scaled, beside=beside) for P in sizes]


@pytest.fixture(scope="module")
def rungs():
    return list(matrix.scenario("in regime"))  # the default ladder (shared with the verdict matrix)


@pytest.fixture(scope="module")
def short():
    return list(matrix.scenario("short"))


def test_theorem_4_1_is_not_applicable_on_short_or_frozen_runs(short):
    """Under-training is never a verdict: a run whose classes never took off has not reached its
    horizon (the gap stays far above eps, the attention far below the bound)."""
    # frozen Q: eta = 1e-12 for the reference problem's T (not scaled by 1/eta, which is the point)
    frozen = _ladder(base=BASE.replace(eta=1e-12), sizes=QUICK[:1], scaled=False)
    for rs in (short, frozen):
        c = theorems.loss_gap_claim(rs)
        assert c.verdict == NOT_APPLICABLE and c.measured > 10 * theorems.EPS, c.why()
        assert c.why().startswith(matrix.HORIZON), c.why()
        assert theorems.attention_measurement(rs).value < 1 - math.sqrt(2 * theorems.EPS)


def test_a_diverged_rung_is_not_evaluated_never_holds(rungs):
    """A NaN reading at any rung (a diverged run) makes the claims that read it 'not evaluated',
    wherever it sits in the ladder (Python's min/max would skip a NaN after the first item)."""
    for i in range(len(rungs)):
        bad = list(rungs)
        bad[i] = dataclasses.replace(
            bad[i], max_query_loss=math.nan, min_attention=math.nan, initial_ratio=math.nan
        )
        for claim in (theorems.loss_gap_claim, theorems.rate_ratio_claim):
            assert claim(bad).verdict == "not evaluated", (i, claim.__name__)
        assert math.isnan(theorems.attention_trend(bad).value)


def test_eta_1e4_no_longer_diverges():
    """eta = 1e4 at P = 256 used to 'diverge' from an overflowing exp in the reduced level while the
    full model stayed finite (issue 16); with the scores shifted by their maximum the run stays
    finite and is judged."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # a divergence flag would raise here
        rung = ladder.run_rung(BASE.replace(eta=1e4), 256, 30, quiet, scaled=False, beside=False)
    assert (
        not rung.diverged
        and math.isfinite(rung.min_attention)
        and math.isfinite(rung.max_query_loss)
    )
    assert theorems.loss_gap_claim([rung]).verdict != "not evaluated"


def _diverging(simulate, after):
    """`simulate` (or `simulate_with_first_step`: its run) whose trajectory turns non-finite after
    record `after`, as a diverged level's recording does (a real divergence can no longer be
    provoked through eta in float64: see the test above)."""

    def cut(t):
        obs = {}
        for k, v in t.observables.items():
            v = np.array(v, dtype=float)
            v[after + 1 :] = np.nan
            obs[k] = v
        return type(t)(t.steps, obs, t.meta)

    def run(cfg, approximation, **options):
        out = simulate(cfg, approximation, **options)
        return (cut(out[0]), out[1]) if isinstance(out, tuple) else cut(out)

    return run


def test_a_diverged_run_gives_verdicts_not_errors(monkeypatch):
    """A run whose readings become NaN: the claims are not evaluated, and the Section 6 diversity of
    a diverged run is NaN, not an exception."""
    for name in ("simulate", "simulate_with_first_step"):
        monkeypatch.setattr(reduced.mim, name, _diverging(getattr(reduced.mim, name), after=2))
    rung = ladder.run_rung(BASE, 256, 30, quiet, scaled=False, beside=False)
    assert rung.diverged and math.isnan(rung.min_attention)
    for claim in (
        theorems.loss_gap_claim([rung]),
        theorems.rate_ratio_claim([rung]),
        theorems.switch_claim([rung]),
        theorems.small_claim([rung]),
        theorems.global_claim([rung]),
    ):
        assert claim.verdict == "not evaluated", (claim.claim, claim.measured)
    # F.3's resolution premise reads the config: at P = 256 no class's derived band clears log 2,
    # so it is not applicable whatever the run did (never "holds")
    f3 = theorems.two_phase_claim([rung])
    assert f3.verdict == NOT_APPLICABLE and RESOLUTION in f3.why(), f3.why()
    cfg = ladder.rung_config(BASE, 256, 30, scaled=False)
    div = diversity.diversities(cfg, reduced.mim.simulate(cfg, ladder.JUDGED), 4, theorems.TOP_K)
    assert all(np.all(np.isnan(v)) for v in div.values())
    assert all(math.isnan(m.value) for m in theorems.diversity_measurements(div, cfg))


def test_deficit_trend_follows_the_T_schedule():
    """The deficit's trend in P is a measurement: it follows the T schedule, not the theorem (T =
    190 at every P: the larger P are less converged, the slope turns positive)."""
    fixed = _ladder(steps=190, scaled=False)
    assert theorems.attention_trend(fixed).value > 0


def test_pp_frozen_keeps_b_zero_and_b_free_moves_a():
    same = ladder.run_rung(BASE, QUICK[0], STEPS, quiet, dynamics=ladder.THEORY)
    assert same.max_abs_B == 0.0  # B = 0 exactly under pp_frozen (no PP update is ever applied)
    # B free against B = 0: issue 13 measured 11-15% of max|A| at P = 1024; a wiring bug that ran
    # the same dynamics twice gives 0, so any value above half the smallest measured (0.05) shows
    # two different runs
    beside = [ladder.run_rung(BASE, QUICK[0], STEPS, quiet, beside=True)]
    assert theorems.frozen_measurement(beside).value > 0.05


def test_check_theorems_rejects_bad_eps():
    with pytest.raises(ValueError, match="eps"):
        theorems.check_theorems(quick=True, eps=1.5)


def test_delta_star_brackets_the_leading_order_boundary():
    # the leading order: (1 - gamma) P^Delta = 1 at Delta = log 2 / log 1024 = 0.1 exactly
    assert boundary.predicted(1024, 0.5) == pytest.approx(0.1, rel=1e-12)  # rounding of two logs
    # realised Delta 0.092 and 0.179
    r = boundary.delta_star(theorems.base_config(P=256), (0.75, 0.79))
    lo, hi = r["bracket"]
    # both boundaries between the two grid problems
    assert lo < r["measured"] < hi and lo < r["predicted"] < hi
    with pytest.raises(ValueError, match="bracket"):
        boundary.delta_star(theorems.base_config(P=256), (0.9,))  # one problem, above the boundary


def test_a_longer_run_records_the_switch_as_the_default_does():
    """The record interval follows the phases' time scale, not T: at --steps 20000 (T = 8706 at P =
    256) the switch (near step 40) used to fall inside the first recorded interval (every 87 steps),
    so F.3, the switch and (b,c) failed on the same dynamics that hold at 1000 steps. Same dynamics,
    same readings."""
    short, long = (
        ladder.run_rung(theorems.base_config(), 256, s, quiet, beside=False) for s in (1000, 20000)
    )
    assert long.cfg.steps > 10 * short.cfg.steps and long.cfg.record_every == short.cfg.record_every
    assert set(long.labels) == {"two-phase"} and long.drop_at_switch == short.drop_at_switch
    assert theorems.two_phase_claim([long]).verdict == theorems.two_phase_claim([short]).verdict


def test_a_smaller_eps_runs_longer(monkeypatch):
    """T* = (the phases) + O(K / (gamma eta eps)): below the reference eps = 0.01 every rung runs
    EPS_REF / eps times longer (a referee's --eps 0.0005 failed from under-training and held with
    20x the steps); above it, never shorter."""
    assert ladder.steps_for(1000, 0.0005) == 20000 and ladder.steps_for(1000, 0.1) == 1000
    seen = []
    monkeypatch.setattr(
        ladder, "run_rung", lambda base, P, steps, *a, **k: seen.append(steps) or 1 / 0
    )
    with pytest.raises(ZeroDivisionError):
        theorems.check_theorems(
            quick=True, steps=1000, eps=0.0005, only=frozenset({"Thm 4.1 loss gap"})
        )
    assert seen == [20000]


def _flow_switch(cfg, k: int, n: int, move: float = 1e-3) -> float:
    """The drop -A_global where the theory's own gradient flow (Lemma 5.1, z = 1, B = 0, every
    area's FP correlation moving, the mean field's shares at Q = 0) switches, r = |dA_global| /
    dA_target = 1: Heun steps that move A_global by `move`, the crossing interpolated. An
    integration of the model's equations written apart from the simulator and the band."""
    share = premises.shares(cfg, k, n)

    def rates(A):
        att = share * np.exp(A) / (1 + np.sum(share * np.exp(A) - share))
        sq = att**2
        d = -att * (att * (1 - att) + att[n] * (1 - att[n]) - (sq.sum() - sq - sq[n]))
        d[n] = att[n] * ((1 - att[n]) ** 2 + sq.sum() - sq[n])
        return d

    A, before = np.zeros_like(share), None
    while True:
        d = rates(A)
        r = -d[0] / d[n]
        if r <= 1:
            x0, r0 = before
            return x0 + (-A[0] - x0) * (r0 - 1) / (r0 - r)
        before = (-A[0], r)
        h = move / abs(d[0])
        A = A + 0.5 * h * (d + rates(A + h * d))


@pytest.mark.parametrize(
    "change,P",
    [
        ({}, 256),
        ({}, 1024),
        ({"mask_ratio": 0.25}, 256),
        ({"mask_ratio": 0.75}, 4096),
        ({"kappa_s": 0.2, "mask_ratio": 0.25}, 1024),
        ({"kappa_c": 0.95, "mask_ratio": 0.1}, 1024),
    ],
)
def test_the_drop_band_holds_the_theory_flows_switch(change, P):
    """premises.drop_band bounds a class's Phase-I drop about (1/2) log R0 from the config alone;
    the theory's own flow (integrated here, without the simulator) switches inside the band less
    its GD step, for every local area size, on problems where the drop falls short of the leading
    order (the defaults) and where it overshoots it (areas of 3-4 patches, kappa_s = 0.2). The
    integration's error (steps of 1e-3 in A_global, the crossing interpolated) is far below the
    smallest margin seen (0.05)."""
    cfg = ladder.rung_config(theorems.base_config(**change), P, 1000)
    sizes = {len(a): n for n, a in enumerate(cfg.areas[0]) if n > 0}
    for n in sizes.values():
        band = premises.drop_band(cfg, 0, n)
        if not math.isfinite(band.lo) or band.predicted <= 0.3:
            continue  # no band (or a Phase I too short to integrate): the class is never judged
        offset = _flow_switch(cfg, 0, n) - band.predicted
        assert band.lo + band.step < offset < band.hi - band.step, (n, offset, band)


def test_rate_ratio_reads_phase_labels_only_where_a_label_resolves_them(rungs, monkeypatch):
    """Where (1 - gamma) P^Delta > 1 a class is held to "two-phase" only when F.3's margin says
    its Phase I reaches log 2 (a grid run at kappa = (0.85, 0.6), P = 16384: prediction 1.36,
    margins below 1, labelled one-phase, used to fail the claim on the healthy simulator); where it
    is <= 1 every patch must be one-phase."""
    from dynsim.mim import claims_phases

    top = rungs[-1]
    assert top.predicted_ratio > 1 and claims_phases.labels_on_side(top)
    one = dataclasses.replace(
        top,
        labels=("one-phase",) * len(top.labels),
        class_labels=("one-phase",) * len(top.class_labels),
    )
    resolvable = [r for r in claims_phases.class_drops(one) if r["margin"] >= premises.PHASE_MARGIN]
    assert resolvable and not claims_phases.labels_on_side(one)
    below = dataclasses.replace(top, predicted_ratio=0.5)
    assert not claims_phases.labels_on_side(below)
    assert claims_phases.labels_on_side(dataclasses.replace(one, predicted_ratio=0.5))
    # no class resolvable: the labels say nothing on the side above 1
    monkeypatch.setattr(claims_phases, "PHASE_MARGIN", math.inf)
    assert claims_phases.labels_on_side(one)
