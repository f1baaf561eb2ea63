"""`experiment mim-images` (dynsim.images.mim_*): the model's masking and start, the seed
intervals, the claim's statistic (the seed mean of the paired difference and its Student-t
interval) and its verdicts by the core's one rule on constructed numbers (holds, fails, not
applicable, not evaluated: inconclusive, unpaired, one seed, NaN), its negative control with the
real untrained model, the exit status, and one tiny end-to-end run."""

import json
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dynsim import claims, cli, metrics
from dynsim.claims import FAILS, HOLDS, NOT_APPLICABLE, NOT_EVALUATED
from dynsim.images import digits, mim_claims, mim_experiment, seeds
from dynsim.images.mim_model import Attention, masked_input, masks
from dynsim.images.mim_train import Training, loss

GRID = (4, 4)


def _claim(masked, other, ratio=(0.8, 0.8, 0.8), accuracy=(0.9, 0.9, 0.9), n_test=297):
    premises = [
        mim_claims.trained_masked(ratio),
        mim_claims.trained_supervised(accuracy, n_test),
    ]
    return mim_claims.more_diverse(masked, other, "supervised", premises, "constructed", 4)


def test_masks_hide_round_gamma_p_patches_per_image():
    M = np.asarray(masks(jax.random.PRNGKey(0), 50, 16, 0.3))
    # Definition 2.5: round(0.3 * 16) = 5 patches per image, no more, no fewer
    assert M.shape == (50, 16) and set(M.sum(axis=1).tolist()) == {5}
    # the draws differ between images (a fixed mask would repeat one row)
    assert len({tuple(r) for r in M.tolist()}) > 1


def test_the_start_attends_uniformly_and_the_untrained_diversity_is_zero():
    data = digits.load(2)
    model = Attention(P=16, d=4)
    X = jnp.asarray(data.x[:3])
    attn = np.asarray(model.apply(model.init(jax.random.PRNGKey(0), X), X, method="attention"))
    # Q = 0: every score is 0, so every weight is 1/P up to float64 rounding of the softmax
    assert np.abs(attn - 1 / 16).max() < 1e-15
    # the tie rule gives every query the same top-k, so every pairwise distance is 0
    assert metrics.attention_diversity(attn, GRID, 4).tolist() == [0.0, 0.0, 0.0]


def test_the_reconstruction_loss_reads_masked_patches_only():
    data = digits.load(2)
    training = Training("masked", 1, 4, 0.01, 0.5)
    model = training.model(16, 4)
    X = jnp.asarray(data.x[:4])
    params = model.init(jax.random.PRNGKey(1), X)
    key = jax.random.PRNGKey(2)
    M = masks(key, 4, 16, 0.5)
    base = loss(model, training, params, X, None, key)
    # the masked patches enter only as targets (their input is the token 0): changing them changes
    # the loss and not the input
    changed = jnp.where(M[..., None], X + 1.0, X)
    assert float(loss(model, training, params, changed, None, key)) != float(base)
    # the masked input is the same for both: the masked patches are replaced by the token 0
    assert np.array_equal(masked_input(X, M), masked_input(changed, M))


def test_the_claim_declares_the_student_t_95_interval_of_the_paired_mean():
    # differences 1, 2, 3: sd 1, n 3: t_{0.975, 2} = 4.302653 (tables), half-width
    # 4.302653 / sqrt(3) = 2.484138
    c = _claim([4.0, 6.0, 8.0], [3.0, 4.0, 5.0])
    assert c.measured == 2.0 and c.uncertainty == "95% Student-t over 3 seeds"
    low, high = c.interval
    assert abs(low - (2.0 - 2.484138)) < 1e-6 and abs(high - (2.0 + 2.484138)) < 1e-6  # 7 digits
    assert (c.relation, c.threshold) == (">", 0.0)
    # the measurements' seed intervals are the same definition
    assert mim_experiment._interval([1.0, 2.0, 3.0]) == pytest.approx(
        {"mean": 2.0, "low": low, "high": high}
    )
    assert seeds.mean([1.0]).missing


def test_chance_bound():
    # z_{0.999} = 3.090232 (tables); sqrt(0.1 * 0.9 / 100) = 0.03
    assert abs(mim_claims.chance_bound(100) - (0.1 + 3.090232 * 0.03)) < 1e-6  # 7 digits of z


def test_claim_holds_when_every_paired_difference_is_clearly_positive():
    c = _claim([5.0, 5.1, 4.9], [3.0, 3.2, 2.9])  # differences 2.0, 1.9, 2.0
    # sd 0.0577, t_{0.975, 2} = 4.303: the interval 1.967 +- 0.143 lies above 0
    assert c.verdict == HOLDS and c.measured > 0 and c.holds and c.interval[0] > 0


def test_claim_is_not_evaluated_when_the_interval_straddles_zero():
    c = _claim([4.0, 3.0, 4.5], [3.5, 3.6, 3.9])  # differences 0.5, -0.6, 0.6
    # mean 0.167, sd 0.666, half-width 4.303 x 0.666 / sqrt 3 = 1.65: [-1.49, 1.82] contains 0,
    # so the run neither supports nor contradicts the paper
    assert c.verdict == NOT_EVALUATED and not c.holds and c.measured == pytest.approx(1 / 6)
    why = c.why()
    assert why.startswith("not evaluated: inconclusive: ")
    assert "95% Student-t over 3 seeds" in why and "more seeds would decide it" in why
    assert "[-1.487, 1.821]" in why  # the interval, to the 4 digits it is printed with
    low, high = c.details["difference_interval"]
    assert low < 0 < high and c.interval == [low, high]


def test_claim_is_not_evaluated_when_the_upper_end_is_barely_above_zero():
    # differences -1, -1, 0.9: mean -0.367, sd 1.097, half-width 2.725: the upper end 2.36 > 0
    c = _claim([2.0, 2.0, 3.9], [3.0, 3.0, 3.0])
    assert c.verdict == NOT_EVALUATED and "inconclusive" in c.why()


def test_claim_fails_when_masked_is_clearly_less_diverse():
    c = _claim([2.0, 2.1, 1.9], [3.0, 3.2, 2.9])  # differences -1.0, -1.1, -1.0
    # the interval -1.033 +- 0.143 lies below 0: the other model is more diverse, with confidence
    assert c.verdict == FAILS and not c.holds
    assert c.details["difference_interval"][1] < 0 and "lies wholly outside > 0" in c.why()


def test_claim_fails_when_the_interval_lies_at_zero():
    # every difference 0 (sd 0): the interval is [0, 0], "at or below 0": as diverse, not more
    c = _claim([3.0, 3.5, 4.0], [3.0, 3.5, 4.0])
    assert c.verdict == FAILS and c.details["difference_interval"] == [0.0, 0.0]


@pytest.mark.parametrize(
    "masked,other",
    [([5.0, math.nan, 4.9], [3.0, 3.2, 2.9]),
     ([5.0, 5.1, 4.9], [3.0, 3.2, math.nan]),
     ([], [])],
)  # fmt: skip
def test_claim_is_not_evaluated_when_a_diversity_is_missing(masked, other):
    c = _claim(masked, other)
    assert c.verdict == NOT_EVALUATED and not c.holds and math.isnan(c.measured)


RANDOM = {"mean": 0.43, "sd": 0.012}  # random weights' top-4 mass at P = 16 (mim_experiment.run)
LEARNED = [0.62, 0.60, 0.68, 0.64, 0.65]  # the default masked model's top-4 mass, well above
# near-uniform attention (gamma = 0.05 at P = 16: one patch masked): below random weights'
NEAR_UNIFORM = [0.35, 0.33, 0.33, 0.34, 0.33]


def test_the_structure_threshold_is_random_attentions_mean_plus_three_sds():
    assert mim_claims.structure_threshold(RANDOM) == pytest.approx(0.43 + 3 * 0.012, abs=1e-15)


def _seeds5(premises):
    return mim_claims.more_diverse([5.0, 5.1, 4.9, 5.0, 5.2], [3.0, 3.2, 2.9, 3.1, 3.0],
                                   "supervised", premises, "", 4)  # fmt: skip


def test_attention_that_learned_nothing_makes_the_claim_not_applicable():
    # the diversities alone would make it hold (near-uniform attention ranks its keys as
    # randomly as random weights do); its top-k mass lies below random attention's
    learned = mim_claims.attention_learned(LEARNED, RANDOM, "supervised")
    nothing = mim_claims.attention_learned(NEAR_UNIFORM, RANDOM, "masked")
    assert learned.met and not nothing.met and not nothing.missing
    c = _seeds5([nothing, learned])
    assert c.verdict == NOT_APPLICABLE
    assert "premise not met: masked attention learned" in c.why()
    assert _seeds5([learned, learned]).verdict == HOLDS


def test_attention_structure_is_read_on_its_seed_interval():
    # mean 0.47, sd 0.057: [0.399, 0.541] (t_{0.975,4} = 2.776) straddles 0.466: undecided
    wide = mim_claims.attention_learned([0.40, 0.45, 0.55, 0.50, 0.45], RANDOM, "masked")
    assert wide.missing and not wide.met and "on both sides of > 0.466" in wide.undecided
    assert _seeds5([wide]).verdict == NOT_EVALUATED
    assert "premise undecided: masked attention learned" in _seeds5([wide]).why()


@pytest.mark.parametrize("top_mass", [(0.6, math.nan, 0.6), (), (0.6,)])
def test_attention_learned_is_never_met_without_its_interval(top_mass):
    p = mim_claims.attention_learned(top_mass, RANDOM, "masked")
    assert p.missing and not p.met


def test_items_pass_each_models_attention_premise_and_a_missing_one_is_not_met():
    cfg = mim_experiment.Config(seeds=3)
    seeds = {"diversity": [5.0, 5.1, 4.9], "distance": [1.5] * 3, "loss_ratio": [0.8] * 3}
    masked = {**seeds, "accuracy": [math.nan] * 3, "top_mass": LEARNED[:3]}
    other = {**seeds, "diversity": [3.0, 3.2, 2.9], "accuracy": [0.9] * 3}
    result = {
        "objectives": {"masked": masked, "supervised": {**other, "top_mass": LEARNED[2:]}},
        "untrained": {"diversity": 0.0, "top_mass": 0.25},
        "random": {"diversity": 4.4, "top_mass": RANDOM},
    }
    (claim,) = [c for c in mim_experiment.items(cfg, result) if hasattr(c, "verdict")]
    assert claim.verdict == HOLDS and len(claim.premises) == 4
    # the same numbers without the supervised model's top-k mass: not measured, not met
    del result["objectives"]["supervised"]["top_mass"]
    (claim,) = [c for c in mim_experiment.items(cfg, result) if hasattr(c, "verdict")]
    assert claim.verdict == NOT_EVALUATED and "supervised attention" in claim.why()


def test_claim_is_not_evaluated_when_the_seeds_are_not_paired():
    # one masked seed against three would broadcast into three "differences"
    c = _claim([9.0], [3.0, 3.2, 2.9])
    assert c.verdict == NOT_EVALUATED and "not paired" in c.why()


@pytest.mark.parametrize("ratio", [(0.8, math.nan, 0.8), ()])
def test_a_missing_premise_quantity_is_never_met(ratio):
    # the diversities alone would make it hold; a loss ratio not measured must not pass "trained"
    c = _claim([5.0, 5.1, 4.9], [3.0, 3.2, 2.9], ratio=ratio)
    assert c.verdict == NOT_EVALUATED and "not measured" in c.why()


def test_a_false_premise_outranks_an_inconclusive_interval():
    c = _claim([4.0, 3.0, 4.5], [3.5, 3.6, 3.9], accuracy=(0.9, 0.1, 0.9))
    assert c.verdict == NOT_APPLICABLE and "supervised model trained" in c.why()
    assert "inconclusive" not in c.why() and "why" not in c.details


def test_the_exit_code_tells_holds_from_fails_from_not_judged():
    held = _claim([5.0, 5.1, 4.9], [3.0, 3.2, 2.9])
    failed = _claim([2.0, 2.1, 1.9], [3.0, 3.2, 2.9])
    inconclusive = _claim([4.0, 3.0, 4.5], [3.5, 3.6, 3.9])
    untrained = _claim([5.0, 5.1, 4.9], [3.0, 3.2, 2.9], accuracy=(0.9, 0.1, 0.9))
    verdicts = [c.verdict for c in (held, failed, inconclusive, untrained)]
    assert verdicts == [HOLDS, FAILS, NOT_EVALUATED, NOT_APPLICABLE]
    assert claims.exit_code([held]) == claims.EXIT_HOLDS == 0
    assert claims.exit_code([held, failed]) == claims.EXIT_FAILS == 1
    assert claims.exit_code([held, inconclusive]) == claims.EXIT_UNJUDGED == 3
    assert claims.exit_code([held, untrained]) == 3
    # a failure outranks what could not be judged
    assert claims.exit_code([failed, inconclusive, untrained]) == 1


@pytest.mark.parametrize(
    "ratio,accuracy,named",
    [((0.8, 0.95, 0.8), (0.9, 0.9, 0.9), "masked reconstruction trained"),
     ((0.8, 0.8, 0.8), (0.9, 0.12, 0.9), "supervised model trained")],
)  # fmt: skip
def test_claim_is_not_applicable_when_a_model_did_not_train(ratio, accuracy, named):
    # the diversities alone would make it hold
    c = _claim([5.0, 5.1, 4.9], [3.0, 3.2, 2.9], ratio=ratio, accuracy=accuracy)
    assert c.verdict == NOT_APPLICABLE and named in c.why()


def test_claim_is_not_evaluated_on_one_seed():
    c = _claim([5.0], [3.0], ratio=(0.8,), accuracy=(0.9,))
    assert c.verdict == NOT_EVALUATED and "at least 2 seeds" in c.why()


def test_claim_fails_with_the_untrained_model():
    """Negative control: the untrained model's measured diversity (0) in place of the masked one."""
    data = digits.load(2)
    model = Attention(P=16, d=4)
    X = jnp.asarray(data.x[:6])
    attn = np.asarray(model.apply(model.init(jax.random.PRNGKey(0), X), X, method="attention"))
    untrained = [float(metrics.attention_diversity(a, GRID, 4)[0]) for a in attn[:3]]
    assert untrained == [0.0, 0.0, 0.0]  # the metric's least value: no other model is below it
    assert _claim(untrained, [3.0, 3.2, 2.9]).verdict == FAILS
    # it can never hold: against another untrained model the interval is [0, 0], at 0
    assert _claim(untrained, untrained).verdict == FAILS


def test_default_k_and_queries():
    assert mim_experiment.default_k(16) == 4 and mim_experiment.default_k(64) == 10
    assert mim_experiment.queries((4, 4)) == [0, 6, 9, 15]


def test_mask_ratio_that_masks_nothing_is_refused(tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["experiment", "mim-images", "--mask-ratio", "0.01", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--mask-ratio = 0.01" in err[0]
    assert not out.exists()


def test_a_tiny_run_writes_json_and_png(tmp_path, capsys):
    out = tmp_path / "out"
    argv = ["experiment", "mim-images", "--steps", "3", "--seeds", "2", "--n-test", "30"]
    argv += ["--eval-images", "4", "--batch-size", "8", "--width", "4", "--out", str(out)]
    code = cli.main(argv)
    printed = capsys.readouterr().out
    # 3 steps train neither model: the premises are measured false, nothing is judged
    assert code == claims.EXIT_UNJUDGED and "not applicable" in printed
    data = json.loads((out / "mim-images.json").read_text())
    assert (out / "mim-images.png").stat().st_size > 0
    assert [c["claim"] for c in data["claims"]] == ["Section 6 (masked > supervised)"]
    masked = data["results"]["objectives"]["masked"]
    assert len(masked["diversity"]) == 2 and np.shape(masked["maps"]) == (16, 16)
    assert data["provenance"]["dtype"] == "float32" and data["config"]["k"] == 4


@pytest.mark.parametrize("option,value", [("--steps", "1000000000000"), ("--seeds", "100000000")])
def test_a_run_too_large_is_refused_by_its_estimate(option, value, tmp_path, capsys):
    out = tmp_path / "out"
    code = cli.main(["experiment", "mim-images", option, value, "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and f"{option} = {value}" in err[0]
    assert not out.exists()


def test_items_judge_nothing_without_the_masked_model():
    cfg = mim_experiment.Config(seeds=2, objectives=("supervised",))
    seeds = {"diversity": [3.0, 3.1], "distance": [1.0, 1.1], "accuracy": [0.9, 0.9]}
    result = {
        "objectives": {"supervised": {**seeds, "loss_ratio": [0.1, 0.1]}},
        "untrained": {"diversity": 0.0, "top_mass": 0.25},
        "random": {"diversity": 4.4, "top_mass": RANDOM},
    }
    found = mim_experiment.items(cfg, result)
    (claim,) = [c for c in found if hasattr(c, "verdict")]
    assert claim.verdict == NOT_EVALUATED and "masked objective was not run" in claim.why()
    assert claim.statement == mim_claims.STATEMENT
