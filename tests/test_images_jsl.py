"""`experiment jsl-images` (dynsim.images.jsl_*): the learners' shapes, the blocks' attention codes
(vanilla reads the tokens, positional reads P only, gate 0 is the block without its sublayer), the
blocks' equivariance under a patch permutation (the ViT's part of "ViT keeps, CNN loses" is true in
expectation by construction), the translations, the frozen encodings, the localization measures on
encodings whose geometry is known, the three claims' statistics (the seed mean of the paired
difference, or of rho, and its Student-t interval) and verdicts by the core's one rule on
constructed numbers (holds, fails, inconclusive, unpaired, one seed and NaN -> not evaluated, false
premise -> not applicable) with their negative controls, and one tiny end-to-end run (exit status
3: nothing judged)."""

import json
import math
import os
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dynsim import cli
from dynsim.claims import EXIT_UNJUDGED, FAILS, HOLDS, NOT_APPLICABLE, NOT_EVALUATED
from dynsim.images import digits, jsl_claims, jsl_experiment, jsl_localization, jsl_models
from dynsim.images import jsl_options, jsl_train, seeds

GRID = (4, 4)
GOOD = [0.90, 0.91, 0.92, 0.90, 0.91]  # learned: far above the 0.3 floor
CHANCE_LIKE = [0.10, 0.12, 0.08, 0.11, 0.09]  # not learned: below the 0.3 floor
BLOCK = jsl_models.make("vit", GRID, 2, 4, 2, "float64")


def _x(n=6, seed=0):
    return jnp.asarray(np.random.default_rng(seed).normal(size=(n, 16, 4)))


# one compiled initialization and one compiled forward (the code traced) for every block test
_init = jax.jit(lambda key: jsl_train.init_params(BLOCK, key, _x()[0]))
_forward = jax.jit(
    lambda params, x, code: BLOCK.apply({"params": params}, x, code, mutable=["intermediates"])
)


def _params(seed=0):
    return _init(jax.random.PRNGKey(seed))


def _apply(params, x, name="vit"):
    return np.asarray(_forward(params, x, jnp.asarray(jsl_models.ATTENTION[name]))[0])


def _weights(params, x, name):
    state = _forward(params, x, jnp.asarray(jsl_models.ATTENTION[name]))[1]
    return np.asarray(state["intermediates"]["attention"][0])  # (n, heads, D, D)


def test_every_learner_gives_ten_logits_per_image_and_the_learners_agree_with_the_options():
    assert jsl_models.MODELS == jsl_options.LEARNERS
    assert set(jsl_models.ATTENTION) | {"cnn"} == set(jsl_models.MODELS)
    x = jax.ShapeDtypeStruct((6, 16, 4), jnp.float64)
    for name in jsl_models.MODELS:
        module = jsl_models.make(name, GRID, 2, 4, 2, "float64")

        def logits(x, module=module):
            params = module.init(jax.random.PRNGKey(0), x)
            return module.apply(params, x, jsl_models.ATTENTION.get(name))

        assert jax.eval_shape(logits, x).shape == (6, 10)


def test_positional_attention_reads_p_only_and_vanilla_attention_the_image():
    params, x = _params(), _x()
    positional, vanilla = _weights(params, x, "positional"), _weights(params, x, "vit")
    # Definition 3.2: the scores come from P, the same for every image
    np.testing.assert_array_equal(positional, np.broadcast_to(positional[:1], positional.shape))
    assert np.max(np.abs(vanilla - vanilla[:1])) > 1e-3  # vanilla: each image its own


def test_the_block_without_attention_ignores_the_attention_parameters():
    params, x = _params(), _x()
    moved = {**params, **{n: jax.tree_util.tree_map(lambda a: a + 1.0, params[n])
                          for n in ("query", "key", "value", "out")}}  # fmt: skip
    # gate 0: the sublayer's output is multiplied by 0, so the block is the block without it
    np.testing.assert_array_equal(
        _apply(moved, x, "no-attention"), _apply(params, x, "no-attention")
    )
    for name in ("vit", "positional"):
        assert np.max(np.abs(_apply(moved, x, name) - _apply(params, x, name))) > 1e-3


@pytest.mark.parametrize("name", list(jsl_models.ATTENTION))
def test_a_block_on_permuted_patches_is_the_same_block_with_p_relabelled(name):
    # the blocks read positions only through P: permuting the patches and P's rows alike gives
    # the same function, so a block trained on permuted digits is, in distribution over P's
    # i.i.d. start, the block trained on the originals (Adam's update is elementwise)
    params, x = _params(), _x()
    perm = digits.permutation(16, 5)
    relabelled = {**params, "P": params["P"][perm]}
    # float64 sums of the same terms in another order (the mean over positions): ~1e-16 relative
    np.testing.assert_allclose(_apply(relabelled, x[:, perm], name), _apply(params, x, name),
                               rtol=1e-12, atol=1e-12)  # fmt: skip
    # and the test can fail: permuting the patches without P changes the logits
    assert np.max(np.abs(_apply(params, x[:, perm], name) - _apply(params, x, name))) > 1e-3


def test_cnn_sees_the_image_the_patches_were_cut_from():
    # a pixel's neighbourhood in the CNN's gather is its 3 x 3 square on the 8 x 8 image: the
    # centre of pixel (3, 4) has the neighbours (2..4, 3..5), 27 = 3 * 8 + 3 first
    index = jsl_models.neighbours(8, 8)
    assert list(index[3 * 8 + 4]) == [19, 20, 21, 27, 28, 29, 35, 36, 37]
    assert list(index[0][:4]) == [64, 64, 64, 64]  # outside: the appended zero pixel


def test_translations_move_the_original_image_and_shift_zeros_in():
    image = jnp.arange(64.0).reshape(1, 8, 8) + 1
    S = jsl_train.SHIFT
    move = jax.jit(jsl_train.translate)
    np.testing.assert_array_equal(move(image, jnp.array([[S, S]])), image)
    down = np.asarray(move(image, jnp.array([[S - 1, S + 1]])))[0]
    # offset (S - 1, S + 1): the picture moves one row down and one column left
    np.testing.assert_array_equal(down[1:, :-1], np.asarray(image)[0, :-1, 1:])
    assert not down[0].any() and not down[:, -1].any()  # zeros shifted in
    # no translations: every offset is the centre; with them, every move of -1..1 is drawn
    draw = jax.jit(jsl_train.offsets, static_argnums=1)
    key = jax.random.PRNGKey(0)
    assert set(np.asarray(draw(key, (200,), 0)).ravel()) == {S}
    assert set(np.asarray(draw(key, (200,), 1)).ravel()) == {S - 1, S, S + 1}


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


def test_rank_correlation_is_one_for_encodings_ordered_by_distance():
    # a Gram matrix exp(-|c_i - c_j|^2 / 2) is a decreasing function of the distance alone: the
    # ranks of the similarities are those of minus the distances, so rho = 1
    coords = np.array([(i // 4, i % 4) for i in range(16)], float)
    perm = digits.permutation(16, 3)
    gram = np.exp(-((coords[perm][:, None] - coords[perm][None]) ** 2).sum(-1) / 2)
    P = np.linalg.cholesky(gram)  # rows whose inner products are `gram`
    # float64 Cholesky: the inner products back to ~1e-15, far below the gaps between the
    # Gram matrix's distinct values (>= 0.02), so the ranks are exact
    assert jsl_localization.rank_correlation(P, GRID, perm) == pytest.approx(1.0, abs=1e-12)
    before = jsl_localization.rank_correlation(P, GRID, np.arange(16))
    assert abs(before) < 0.5  # the permuted frame: the same similarities at shuffled cells


def test_rank_correlation_of_any_encodings_has_mean_zero_under_random_relabelling():
    # every pair gets every distance rank with the same probability: E[rho] = 0 exactly; 400
    # random permutations of one fixed P: the mean lies within 4 of its standard errors of 0
    P = _local_P(GRID)
    rng = np.random.default_rng(7)
    rho = [jsl_localization.rank_correlation(P, GRID, rng.permutation(16)) for _ in range(400)]
    assert abs(np.mean(rho)) < 4 * np.std(rho, ddof=1) / math.sqrt(400)


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
    local = jsl_claims.localized(_plus([0.5] * 5, WIDE), SD, GOOD)
    assert local.interval == pytest.approx([0.5 + diff.low, 0.5 + diff.high], abs=1e-12)
    assert (local.relation, local.threshold) == (">", pytest.approx(3 * SD))


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
        (GOOD, _minus(GOOD, GAP), "condition not met: ViT - positional >= -0.05"),
        (_minus(GOOD, GAP), GOOD, "0.2 [0.1804, 0.2196] (95% Student-t over 5 seeds) lies wholly "
         "outside <= 0.05"),
        (GOOD[:1], GOOD[:1], "not evaluated: 1 seed: the interval needs at least 2 seeds"),
        (GOOD, GOOD[:4], "not evaluated: the seeds are not paired (5 positional, 4 ViT)"),
        (GOOD, GOOD[:4] + [math.nan], "not evaluated: a NaN among the seeds: ViT"),
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


SD = 0.089  # random encodings' rho SD at 4 x 4, width 32 (jsl_localization.spread)
LOCAL = [0.50, 0.45, 0.55, 0.48, 0.52]  # mean 0.5, sd 0.038: [0.453, 0.547], above 3 SD = 0.267
CHANCE_RHO = [0.02, -0.05, 0.08, -0.01, 0.03]  # mean 0.014, sd 0.048: [-0.046, 0.074], below
WIDE_RHO = [0.5, 0.1, 0.6, 0.0, 0.4]  # mean 0.32, sd 0.26: [-0.003, 0.643], straddles 0.267


@pytest.mark.parametrize(
    "rho, accuracy, sd, verdict",
    [
        (LOCAL, GOOD, SD, HOLDS),
        (CHANCE_RHO, GOOD, SD, FAILS),  # random encodings' level
        # above 0 with confidence, but within random encodings' reach: [0.18, 0.22] under 0.267
        ([0.20, 0.18, 0.22, 0.19, 0.21], GOOD, SD, FAILS),
        (WIDE_RHO, GOOD, SD, NOT_EVALUATED),
        (LOCAL, CHANCE_LIKE, SD, NOT_APPLICABLE),  # the ViT never learned
        # the accuracy's interval [0.2, 0.4] straddles the 0.3 floor: the premise is undecided
        (LOCAL, [0.2, 0.4, 0.3, 0.35, 0.25], SD, NOT_EVALUATED),
        (LOCAL[:4] + [math.nan], GOOD, SD, NOT_EVALUATED),  # a missing rho
        (LOCAL, GOOD, math.nan, NOT_EVALUATED),  # no random SD
        (LOCAL[:1], GOOD, SD, NOT_EVALUATED),  # one seed
        ([], GOOD, SD, NOT_EVALUATED),
    ],
)
def test_localized_verdicts(rho, accuracy, sd, verdict):
    assert jsl_claims.localized(rho, sd, accuracy).verdict == verdict


def test_an_undecided_premise_says_its_interval():
    why = jsl_claims.localized(LOCAL, SD, [0.2, 0.4, 0.3, 0.35, 0.25]).why()
    assert why.startswith("not evaluated: premise undecided: ViT on permuted learned the task")
    assert "lies on both sides of >= 0.3: more seeds would decide it" in why


def test_without_translations_the_claim_says_why():
    claim = jsl_claims.localized(CHANCE_RHO, SD, GOOD, translations=False)
    assert claim.verdict == FAILS and jsl_claims.WHY_TRANSLATIONS in claim.regime
    assert "--no-translations" in claim.regime and not claim.details["translations"]


def _default_run_like(translations=True):
    """Per-seed accuracies and rho shaped like the default run's (docs/images.md §1): the ViT
    localized, the CNN 20 points down on permuted digits, the controls at random encodings'
    level."""
    cfg = jsl_options.Config(translations=translations)
    acc = dict.fromkeys(jsl_options.runs(cfg), GOOD)
    acc.update({r: CNN_PERM for r in acc if r.learner == "cnn" and r.condition == "permuted"})
    local = {}
    for r in acc:
        if r.condition == "permuted" and r.learner != "cnn":
            after = CHANCE_RHO if r.frozen or r.translations != translations else LOCAL
            local[r] = {"rho_after": after, "rho_before": CHANCE_RHO, "top_after": [2.0] * 5,
                        "top_before": [2.1] * 5}  # fmt: skip
    return cfg, acc, local


def test_the_run_reports_each_negative_control_as_failing():
    cfg, acc, local = _default_run_like()
    items = jsl_experiment.judge(cfg, acc, local, SD)
    assert [c.verdict for c in items[:3]] == [HOLDS, HOLDS, HOLDS]
    named = [m for m in items if hasattr(m, "name")]
    controls = {m.name: m.value for m in named if m.name.startswith("negative control")}
    assert list(controls.values()) == [FAILS] * 4
    # the comparison runs: translations off (fails), no attention and positional (hold here)
    runs = {m.name: m.value for m in named if m.name.startswith("comparison run")}
    assert list(runs.values()) == [FAILS, HOLDS, HOLDS]
    assert "without translations" in list(runs)[0]


def test_the_run_without_translations_judges_the_untranslated_vit():
    cfg, acc, local = _default_run_like(translations=False)
    items = jsl_experiment.judge(cfg, acc, local, SD)
    assert WHY_OFF in items[2].regime
    named = [m.name for m in items if hasattr(m, "name")]
    assert "with translations" in [n for n in named if n.startswith("comparison")][0]


WHY_OFF = jsl_claims.WHY_TRANSLATIONS


def test_localization_fails_on_encodings_at_their_random_start():
    # the negative control with the real start of the block's P and real permutations, 8 seeds:
    # random encodings have rho's expectation 0, so a 95 % interval lies below 3 SD unless about
    # 3 SD / (t sd / sqrt(8)) ~ 3.6 of its half-widths fit above 0; these seeds are fixed
    starts = [_params(seed)["P"] for seed in range(8)]
    perms = [digits.permutation(16, 100 + r) for r in range(8)]
    rho = [jsl_localization.rank_correlation(P, GRID, p) for P, p in zip(starts, perms)]
    sd = jsl_localization.spread(GRID, 4, draws=100)
    assert jsl_claims.localized(rho, sd, GOOD + GOOD[:3]).verdict == FAILS
    # and the same reading on localized encodings holds (the control can tell them apart)
    local = [jsl_localization.rank_correlation(_local_P(GRID)[p], GRID, p) for p in perms]
    assert jsl_claims.localized(local, sd, GOOD + GOOD[:3]).verdict == HOLDS


def test_end_to_end_tiny_run_writes_json_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["experiment", "jsl-images", "--seeds", "2", "--steps", "3", "--width", "4",
                     "--heads", "2", "--batch-size", "8", "--out", str(out)])  # fmt: skip
    data = json.loads((out / "jsl-images.json").read_text())
    # three steps learn nothing: every claim is not applicable, none fails, so nothing is judged
    assert [c["verdict"] for c in data["claims"]] == [NOT_APPLICABLE] * 3
    assert code == EXIT_UNJUDGED
    assert (out / "jsl-images.png").stat().st_size > 10_000
    names = [c["claim"] for c in data["claims"]]
    assert names == ["positional ~ standard attention", "ViT keeps, CNN loses on permuted",
                     jsl_claims.LOCALIZED]  # fmt: skip
    results = data["results"]
    labels = [r["label"] for r in results["runs"]]
    assert labels == [r.label for r in jsl_options.runs(jsl_options.Config())]
    assert len(results["accuracy"]["cnn permuted"]) == 2
    frozen, vit = (results["localization"][f"vit permuted{x}"] for x in (" P frozen", ""))
    assert set(frozen) >= {"rho_after", "rho_before", "top_after", "top_before"}
    # P frozen stays at its start exactly (Adam's update of a zero gradient is 0); three Adam
    # steps of 0.01 move the learned P by about 0.01 each
    assert frozen["p_moved"] == [0.0, 0.0] and min(vit["p_moved"]) > 1e-3
    assert data["provenance"]["dtype"] == "float32" and data["config"]["translations"]
    assert jsl_claims.LOCALIZED in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, option",
    [(["--seeds", "1"], "--seeds"), (["--top-k", "16"], "--top-k"),
     (["--n-test", "1796"], "--n-test"), (["--learning-rate", "nan"], "--learning-rate"),
     (["--steps", "1000000000000"], "--steps"), (["--seeds", "100000"], "--seeds"),
     (["--heads", "3"], "--heads")],
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
