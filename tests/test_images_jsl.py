"""`experiment jsl-images` (dynsim.images.jsl_*): the learners' shapes, the positional ViT's
equivariance under a patch permutation (the ViT's part of "ViT keeps, CNN loses" is true in
expectation by construction for it), the frozen encodings, the localization score on encodings
whose geometry is known, the three claims' statistics (the seed mean of the paired difference and
its Student-t interval) and verdicts by the core's one rule on constructed numbers (holds, fails,
inconclusive, unpaired, one seed and NaN -> not evaluated, false premise -> not applicable) with
their negative controls, and one tiny end-to-end run (exit status 3: nothing judged)."""

import json
import subprocess
import sys
import math
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dynsim import cli
from dynsim.claims import EXIT_UNJUDGED, FAILS, HOLDS, NOT_APPLICABLE, NOT_EVALUATED
from dynsim.images import digits, jsl_claims, jsl_experiment, jsl_localization, jsl_models
from dynsim.images import jsl_train, seeds

GRID = (4, 4)
GOOD = [0.90, 0.91, 0.92, 0.90, 0.91]  # learned: far above the 0.3 floor
CHANCE_LIKE = [0.10, 0.12, 0.08, 0.11, 0.09]  # not learned: below the 0.3 floor


def _x(n=6, seed=0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=(n, 16, 4)))


@pytest.mark.parametrize("name", jsl_models.MODELS)
def test_every_learner_gives_ten_logits_per_image(name):
    module = jsl_models.make(name, GRID, 2, 4, "float64")
    params = jsl_train.init_params(module, jax.random.PRNGKey(0), _x()[0])
    assert module.apply({"params": params}, _x()).shape == (6, 10)


def test_cnn_sees_the_image_the_patches_were_cut_from():
    # a pixel's neighbourhood in the CNN's gather is its 3 x 3 square on the 8 x 8 image: the
    # centre of pixel (3, 4) has the neighbours (2..4, 3..5), 27 = 3 * 8 + 3 first
    index = jsl_models.neighbours(8, 8)
    assert list(index[3 * 8 + 4]) == [19, 20, 21, 27, 28, 29, 35, 36, 37]
    assert list(index[0][:4]) == [64, 64, 64, 64]  # outside: the appended zero pixel


def _fit(module, params0, x, y, frozen=False, steps=15):
    stack = jax.tree_util.tree_map(lambda a: a[None], params0)
    keys = jax.random.PRNGKey(3)[None]
    return jsl_train.fit(module, frozen, stack, keys, x[None], y[None], x[None], y[None],
                         steps=steps, batch=8, lr=0.05)  # fmt: skip


def test_positional_vit_on_permuted_patches_is_the_same_learner_relabelled():
    # (a) reads positions only through P: permuting the patches and P's rows alike gives the same
    # function, and Adam keeps the relabelling, so the trained P is the permuted trained P
    module = jsl_models.make("positional", GRID, 2, 4, "float64")
    x, y = _x(24), jnp.asarray(np.arange(24) % 10)
    perm = digits.permutation(16, 5)
    p0 = jsl_train.init_params(module, jax.random.PRNGKey(1), x[0])
    p0_perm = {**p0, "P": p0["P"][perm]}
    params, acc, loss = _fit(module, p0, x, y)
    params_perm, acc_perm, loss_perm = _fit(module, p0_perm, x[:, perm], y)
    assert acc_perm[0] == acc[0]
    # float64 sums taken in another order: rounding of ~1e-16 relative, grown over 15 Adam steps
    np.testing.assert_allclose(params_perm["P"][0], params["P"][0][perm], rtol=0, atol=1e-9)
    np.testing.assert_allclose(loss_perm, loss, rtol=1e-9)
    # and the test can fail: without relabelling P the learner differs
    other, _, _ = _fit(module, p0, x[:, perm], y)
    assert np.max(np.abs(other["P"][0] - params["P"][0][perm])) > 1e-3


def test_frozen_positional_encodings_stay_at_their_initialization():
    module = jsl_models.make("frozen", GRID, 2, 4, "float64")
    x, y = _x(24), jnp.asarray(np.arange(24) % 10)
    p0 = jsl_train.init_params(module, jax.random.PRNGKey(1), x[0])
    frozen, _, _ = _fit(module, p0, x, y, frozen=True)
    free, _, _ = _fit(module, p0, x, y, frozen=False)
    np.testing.assert_array_equal(frozen["P"][0], np.asarray(p0["P"]))
    assert np.max(np.abs(free["P"][0] - np.asarray(p0["P"]))) > 1e-3


def _local_P(grid):
    """Encodings whose similarity falls with grid distance: p_c = exp(-|c - u|^2) over the cells
    u, so <p_c, p_c'> is largest for the nearest cells."""
    coords = np.array([(i // grid[1], i % grid[1]) for i in range(grid[0] * grid[1])], float)
    d2 = ((coords[:, None, :] - coords[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2)


def test_baseline_is_the_mean_distance_between_cells():
    # 2 x 2 grid: each cell has two others at distance 1 and one at sqrt(2)
    assert jsl_localization.baseline((2, 2)) == pytest.approx((2 + math.sqrt(2)) / 3, rel=1e-15)


def test_localized_encodings_score_the_nearest_cells_after_the_inverse_permutation():
    P = _local_P(GRID)
    perm = digits.permutation(16, 2)
    trained = P[perm]  # position i shows cell perm[i]: its encoding is that cell's
    # every cell's 4 most similar others are its grid neighbours at distance 1, or at distance
    # sqrt(2) past an edge: the score is a mean of distances in [1, sqrt(2)]
    after = jsl_localization.score(trained, GRID, perm, k=4)
    assert 1.0 <= after <= math.sqrt(2)
    assert after < jsl_localization.baseline(GRID)
    before = jsl_localization.score(trained, GRID, np.arange(16), k=4)
    assert before > after


def test_top_k_ties_go_to_the_lower_index_and_skip_the_position_itself():
    sim = np.ones((5, 5))
    assert jsl_localization.top_k(sim, 2).tolist() == [[1, 2], [0, 2], [0, 1], [0, 1], [0, 1]]
    with pytest.raises(ValueError, match="k must be"):
        jsl_localization.top_k(sim, 5)


def test_maps_after_the_inverse_permutation_put_each_entry_at_its_original_cell():
    P = _local_P(GRID)
    perm = digits.permutation(16, 4)
    before, after = jsl_localization.maps(P[perm], GRID, perm, [5])
    np.testing.assert_array_equal(after[0].ravel(), (P @ P.T)[5])
    assert not np.array_equal(before[0].ravel(), after[0].ravel())


def test_the_seed_interval_is_the_student_t_interval_of_the_mean():
    stat = seeds.mean([1.0, 2.0, 3.0])
    # t_{0.975, 2} = 4.3027 in a 4-decimal table, sd = 1, n = 3: rel 2e-5 covers the table's
    # rounding (half a unit of the 4th decimal over 4.3)
    assert stat.value == 2.0 and stat.how == "95% Student-t over 3 seeds"
    assert stat.high - stat.value == pytest.approx(4.3027 / math.sqrt(3), rel=2e-5)
    assert stat.value - stat.low == pytest.approx(4.3027 / math.sqrt(3), rel=2e-5)
    assert stat.missing is False and seeds.mean([1.0]).missing


# Constructed paired differences with their 95 % intervals worked by hand (t_{0.975, 4} = 2.776,
# n = 5, half-width = 2.776 * sd / sqrt(5)):
TIGHT = [0.01, -0.01, 0.0, 0.01, 0.0]  # mean 0.002, sd 0.0084: [-0.008, 0.012], inside +-0.05
WIDE = [0.10, -0.08, 0.06, -0.05, 0.0]  # mean 0.006, sd 0.075: [-0.087, 0.099], straddles both
GAP = [0.18, 0.22, 0.20, 0.19, 0.21]  # mean 0.2, sd 0.016: [0.180, 0.220], outside +0.05
# mean 0.10 (twice the band), sd 0.079: [0.002, 0.198], reaches into the band: not a contradiction
FAR_BUT_WIDE = [0.05, 0.15, 0.10, 0.20, 0.0]


def _minus(a, d):
    return [x - e for x, e in zip(a, d)]


def _plus(a, d):
    return [x + e for x, e in zip(a, d)]


def test_each_claim_declares_the_seed_mean_of_its_paired_difference():
    # the statistic is seeds.mean of the per-seed difference: measured its mean, interval its
    # Student-t interval, uncertainty where that comes from
    diff = seeds.mean(WIDE)
    for claim in (
        jsl_claims.comparable(GOOD, _plus(GOOD, WIDE)),
        jsl_claims.permutation_robust(GOOD, _minus(GOOD, WIDE), GOOD, CNN_PERM),
    ):
        assert claim.measured == pytest.approx(diff.value, abs=1e-12)
        assert claim.interval == pytest.approx([diff.low, diff.high], abs=1e-12)
        assert claim.uncertainty == "95% Student-t over 5 seeds"
    local = jsl_claims.localized(_plus([2.0] * 5, WIDE), 2.0, SD, GOOD, 4)
    assert local.interval == pytest.approx([diff.low, diff.high], abs=1e-12)
    assert (local.relation, local.threshold) == ("<", pytest.approx(-3 * SD))


@pytest.mark.parametrize(
    "standard, verdict",
    [
        ([0.5625] * 5, HOLDS),  # (b) - (a) = +0.0625 exactly, every seed: the upper edge
        ([0.4375] * 5, HOLDS),  # -0.0625: the lower edge
        ([0.5625 + 2.0**-10] * 5, FAILS),  # just outside above
        ([0.4375 - 2.0**-10] * 5, FAILS),  # just outside below
    ],
)
def test_the_band_includes_its_edges_on_both_sides(monkeypatch, standard, verdict):
    # a band of 0.0625 = 2^-4 and accuracies in binary fractions make the differences exact;
    # equal differences give the zero-width interval [d, d]
    monkeypatch.setattr(jsl_claims, "BAND", 0.0625)
    assert jsl_claims.comparable([0.5] * 5, standard).verdict == verdict


# comparable: (b) minus (a) within +-0.05 over its whole interval
@pytest.mark.parametrize(
    "positional, standard, verdict",
    [
        (GOOD, _plus(GOOD, TIGHT), HOLDS),
        (GOOD, _minus(GOOD, GAP), FAILS),  # (b) 20 points below, with confidence
        (_minus(GOOD, GAP), GOOD, FAILS),  # (b) 20 points above
        (GOOD, _plus(GOOD, WIDE), NOT_EVALUATED),  # means agree, 5 seeds cannot resolve 5 points
        (GOOD, _minus(GOOD, FAR_BUT_WIDE), NOT_EVALUATED),  # a gap, but not outside the band
        (CHANCE_LIKE, GOOD, NOT_APPLICABLE),  # (a) never learned
        (GOOD[:1], GOOD[:1], NOT_EVALUATED),  # one seed: no interval
        (GOOD, GOOD[:4], NOT_EVALUATED),  # unpaired seeds
        (GOOD, GOOD[:4] + [math.nan], NOT_EVALUATED),  # a missing accuracy
        ([], [], NOT_EVALUATED),
    ],
)
def test_comparable_verdicts(positional, standard, verdict):
    assert jsl_claims.comparable(positional, standard).verdict == verdict


@pytest.mark.parametrize(
    "positional, standard, why",
    [
        (GOOD, _minus(GOOD, GAP), "condition not met: (b) - (a) >= -0.05"),
        (_minus(GOOD, GAP), GOOD, "0.2 [0.1804, 0.2196] (95% Student-t over 5 seeds) lies wholly "
         "outside <= 0.05"),
        (GOOD[:1], GOOD[:1], "not evaluated: 1 seed: the interval needs at least 2 seeds"),
        (GOOD, GOOD[:4], "not evaluated: the seeds are not paired (5 (a) positional, 4 (b)"),
        (GOOD, GOOD[:4] + [math.nan], "not evaluated: a NaN among the seeds: (b) standard"),
    ],
)  # fmt: skip
def test_comparable_says_which_part_decided(positional, standard, why):
    assert why in jsl_claims.comparable(positional, standard).why()


def test_an_inconclusive_comparison_names_its_interval_band_and_seeds():
    why = jsl_claims.comparable(GOOD, _plus(GOOD, WIDE)).why()
    assert why.startswith("not evaluated: inconclusive: ")
    assert "95% Student-t over 5 seeds" in why and "more seeds would decide it" in why
    # both edges of the band are undecided: the interval straddles each
    assert why.count("[-0.08675, 0.09875]") == 2
    assert "on both sides of <= 0.05" in why and "on both sides of >= -0.05" in why
    # a false premise gives its own reason, not the interval's
    assert "premise not met" in jsl_claims.comparable(CHANCE_LIKE, _plus(CHANCE_LIKE, WIDE)).why()


CNN_PERM = [0.70, 0.72, 0.69, 0.71, 0.70]  # the CNN loses ~20 points on permuted digits
CNN_GAINS = [0.02, 0.03, 0.01, 0.02, 0.02]  # mean 0.02, sd 0.0071: [0.011, 0.029] above 0
CNN_OPEN = [0.05, -0.03, 0.04, -0.02, 0.01]  # mean 0.01, sd 0.035: [-0.034, 0.054] contains 0


@pytest.mark.parametrize(
    "vit, vit_perm, cnn, cnn_perm, verdict, why",
    [
        (GOOD, _minus(GOOD, TIGHT), GOOD, CNN_PERM, HOLDS, ""),
        (GOOD, _minus(GOOD, GAP), GOOD, CNN_PERM, FAILS, "wholly outside <= 0.05"),  # ViT loses
        (GOOD, _plus(GOOD, GAP), GOOD, CNN_PERM, FAILS, "not met: the ViT's drop >= -0.05"),
        (GOOD, GOOD, GOOD, GOOD, FAILS, "not met: the CNN's drop > 0"),  # the CNN keeps all
        (GOOD, GOOD, GOOD, _plus(GOOD, CNN_GAINS), FAILS, "not met: the CNN's drop > 0"),  # gains
        (GOOD, _minus(GOOD, WIDE), GOOD, CNN_PERM, NOT_EVALUATED, "the ViT's drop >= -0.05: the"),
        (GOOD, GOOD, GOOD, _minus(GOOD, CNN_OPEN), NOT_EVALUATED, "the CNN's drop > 0: the"),
        (GOOD, _minus(GOOD, WIDE), GOOD, GOOD, FAILS, "not met: the CNN's drop"),  # one part
        (GOOD, GOOD, CHANCE_LIKE, CHANCE_LIKE, NOT_APPLICABLE, "CNN"),  # the CNN never learned
        (GOOD, GOOD, GOOD, CNN_PERM[:4] + [math.nan], NOT_EVALUATED, "NaN"),  # missing, not fails
        (GOOD, GOOD, GOOD, CNN_PERM[:4], NOT_EVALUATED, "not paired"),
        (GOOD[:1], GOOD[:1], GOOD[:1], CNN_PERM[:1], NOT_EVALUATED, "1 seed: the interval"),
    ],
)
def test_permutation_robust_verdicts(vit, vit_perm, cnn, cnn_perm, verdict, why):
    claim = jsl_claims.permutation_robust(vit, vit_perm, cnn, cnn_perm)
    assert claim.verdict == verdict
    assert why in claim.why()


def test_negative_controls_of_the_accuracy_claims_fail():
    # the run reports these readings beside the claims (jsl_experiment.judge)
    assert jsl_claims.comparable(GOOD, CNN_PERM).verdict == FAILS
    assert jsl_claims.permutation_robust(GOOD, CNN_PERM, GOOD, CNN_PERM).verdict == FAILS


def _default_run_like():
    """Per-seed accuracies and scores shaped like the default run's (docs/images.md §1)."""
    pos = [0.70, 0.76, 0.68, 0.73, 0.70]
    acc = {
        ("positional", "original"): pos,
        ("standard", "original"): _plus(pos, WIDE),
        ("cnn", "original"): [0.96, 0.95, 0.97, 0.96, 0.95],
        ("positional", "permuted"): _minus(pos, TIGHT),
        ("cnn", "permuted"): [0.92, 0.90, 0.93, 0.92, 0.91],
        ("frozen", "permuted"): [0.59, 0.58, 0.60, 0.60, 0.59],
    }
    after = [2.2, 2.1, 2.25, 2.15, 2.2]
    frozen = [1.995, 1.977, 2.016, 2.103, 1.800]  # the default run's frozen scores
    local = {
        "positional": {"after": after, "before": after, "baseline": 2.142},
        "frozen": {"after": frozen, "before": frozen, "baseline": 2.142},
    }
    return acc, local


def test_the_run_reports_each_negative_control_as_failing():
    items = jsl_experiment.judge(*_default_run_like(), 4, 0.111)
    verdicts = [c.verdict for c in items[:3]]
    assert verdicts == [NOT_EVALUATED, HOLDS, FAILS]
    controls = [m for m in items if getattr(m, "name", "").startswith("negative control")]
    assert [m.value for m in controls] == [FAILS, FAILS, FAILS]


SD = 0.106  # random encodings' score SD at 4 x 4, width 16, k = 4 (jsl_localization.spread)


@pytest.mark.parametrize(
    "scores, accuracy, sd, verdict",
    [
        ([1.2, 1.3, 1.25, 1.2, 1.3], GOOD, SD, HOLDS),  # well below the baseline 2.14
        ([2.1, 2.2, 2.15, 2.1, 2.2], GOOD, SD, FAILS),  # at the baseline
        ([2.0, 2.02, 1.98, 2.0, 2.0], GOOD, SD, FAILS),  # below it, within random encodings' reach
        # P frozen at its start, default run at --seed 0: below the baseline by chance, not by 3 SD
        # (score - baseline [-0.301, -0.026], entirely above -3 SD = -0.318)
        ([1.995, 1.977, 2.016, 2.103, 1.800], GOOD, SD, FAILS),
        # score - baseline: mean -0.38, sd 0.53: [-1.04, 0.28] straddles -0.318: inconclusive
        ([1.8, 2.3, 1.5, 2.2, 1.0], GOOD, SD, NOT_EVALUATED),
        ([1.2, 1.3, 1.25, 1.2, 1.3], CHANCE_LIKE, SD, NOT_APPLICABLE),  # (a) never learned
        ([1.2, 1.3, math.nan, 1.2, 1.3], GOOD, SD, NOT_EVALUATED),  # a missing score
        ([1.2, 1.3, 1.25, 1.2, 1.3], GOOD, math.nan, NOT_EVALUATED),  # no random SD
        ([1.2], GOOD, SD, NOT_EVALUATED),  # one seed
        ([], GOOD, SD, NOT_EVALUATED),
    ],
)
def test_localized_verdicts(scores, accuracy, sd, verdict):
    claim = jsl_claims.localized(scores, jsl_localization.baseline(GRID), sd, accuracy, 4)
    assert claim.verdict == verdict


def test_localization_fails_on_encodings_frozen_at_their_random_initialization():
    # the negative control with the real initialization of (a) and real permutations, 8 seeds:
    # random encodings pick uniformly random cells, so the score's expectation is the baseline and
    # a 95 % interval excludes it below with probability 2.5 %; these seeds are fixed
    module = jsl_models.make("frozen", GRID, 2, 16, "float64")
    scores = []
    for r in range(8):
        P0 = jsl_train.init_params(module, jax.random.PRNGKey(r), _x()[0])["P"]
        scores.append(jsl_localization.score(P0, GRID, digits.permutation(16, 100 + r), 4))
    sd = jsl_localization.spread(GRID, 16, 4, draws=100)
    claim = jsl_claims.localized(scores, jsl_localization.baseline(GRID), sd, GOOD * 2, 4, "frozen")
    assert claim.verdict == FAILS
    # and the same reading on localized encodings holds (the control can tell them apart)
    local = [jsl_localization.score(_local_P(GRID)[p], GRID, p, 4)
             for p in (digits.permutation(16, 100 + r) for r in range(8))]  # fmt: skip
    assert jsl_claims.localized(local, 2.142, sd, GOOD * 2, 4).verdict == HOLDS


def test_end_to_end_tiny_run_writes_json_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["experiment", "jsl-images", "--seeds", "2", "--steps", "3", "--width", "2",
                     "--batch-size", "8", "--out", str(out)])  # fmt: skip
    data = json.loads((out / "jsl-images.json").read_text())
    # three steps learn nothing: every claim is not applicable, none fails, so nothing is judged
    assert [c["verdict"] for c in data["claims"]] == [NOT_APPLICABLE] * 3
    assert code == EXIT_UNJUDGED
    assert (out / "jsl-images.png").stat().st_size > 10_000
    names = [c["claim"] for c in data["claims"]]
    assert names == ["positional ~ standard attention", "ViT keeps, CNN loses on permuted",
                     "localized after inverse permutation"]  # fmt: skip
    assert len(data["results"]["accuracy"]["cnn/permuted"]) == 2
    assert data["provenance"]["dtype"] == "float32"
    assert "localized after inverse permutation" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, option",
    [(["--seeds", "1"], "--seeds"), (["--top-k", "16"], "--top-k"),
     (["--n-test", "1796"], "--n-test"), (["--learning-rate", "nan"], "--learning-rate"),
     (["--steps", "1000000000000"], "--steps"), (["--seeds", "100000"], "--seeds")],
)  # fmt: skip
def test_bad_input_is_refused_before_any_work(tmp_path, capsys, argv, option):
    out = tmp_path / "out"
    assert cli.main(["experiment", "jsl-images", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dynsim: error:") and option in err and "Traceback" not in err
    assert not os.path.exists(out)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--seeds", "1"], ["--top-k", "16"]],
)
def test_help_and_a_refused_value_import_no_jax(argv, tmp_path):
    probe = (
        "import sys\nfrom dynsim import cli\ntry:\n    code = cli.main(sys.argv[1:])\n"
        "except SystemExit as exc:\n    code = exc.code\n"
        "print([m for m in ('jax', 'flax', 'optax') if m in sys.modules], code, file=sys.stderr)"
    )
    out = ["--out", str(tmp_path / "out")]
    run = subprocess.run(
        [sys.executable, "-c", probe, "experiment", "jsl-images", *argv, *out],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.stderr.strip().splitlines()[-1] == ("[] 0" if argv == ["--help"] else "[] 2")
