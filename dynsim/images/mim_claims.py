"""The claim of `experiment mim-images`: MIM Section 6's comparison "masked reconstruction learns
more diverse attention than the supervised objective" judged on seeded runs, its premises (each
model trained, each model's attention learned: structured beyond what random weights reach), and
the seed intervals the measurements report (docs/images.md section 2).

The claim declares its statistic (the seed mean of the paired per-seed difference A - B with its
Student-t 95 % interval, `dynsim.images.seeds.mean`), its side (> 0) and its premises, and leaves
the verdict to the one rule (`dynsim.claims.judge`): "A higher than B" holds when the interval lies
above 0 (its lower end > 0), fails when it lies at or below 0 (its upper end <= 0: B at least as
high, with confidence), and is "not evaluated: inconclusive" (more seeds would decide it) when it
contains 0; never a point estimate. Unpaired seeds, one seed or a NaN give no interval: the claim
is then "not evaluated", with the reason."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from dynsim.claims import LITERAL, Claim, Premise, judge, on_interval

from . import seeds

__all__ = [
    "chance_bound",
    "more_diverse",
    "trained_masked",
    "trained_supervised",
    "trained_contrastive",
    "attention_learned",
    "structure_threshold",
    "CONFIDENCE",
    "LOSS_MARGIN",
    "CHANCE_CONFIDENCE",
    "STRUCTURE_MARGIN",
    "STATEMENT",
]

CONFIDENCE = seeds.CONFIDENCE  # two-sided, of every seed interval
# a reconstruction "trained" reaches at most this fraction of the predict-the-mean loss: 10 % below
# it, several times the spread of that ratio over seeds (0.83-0.86 at the default, sd ~0.01)
LOSS_MARGIN = 0.9
CHANCE_CONFIDENCE = 0.999  # one-sided, of the chance bound on the supervised test accuracy
# "attention learned": the top-k mass's seed interval above random attention's mean by 3 SD of one
# random map's value; one map of random weights exceeds it with probability ~0.1 % (normal tail),
# a model's value averages 152 maps, and the whole interval must lie above it
STRUCTURE_MARGIN = 3.0
CHANCE = 0.1  # ten balanced classes
STATEMENT = (
    "It can be seen that the MIM model is particularly effective in learning more diverse "
    "attention patterns, setting it apart from other models that prioritize a uniform global "
    "information with less attention diversity. (Section 6, Figure 3; MAE against supervised "
    "DeiT, MoCo v3 and DINO)"
)


def chance_bound(n_test: int, confidence: float = CHANCE_CONFIDENCE) -> float:
    """The one-sided `confidence` upper bound of a chance classifier's accuracy on `n_test` images
    (normal approximation of Binomial(n_test, 1/10) / n_test)."""
    return CHANCE + norm.ppf(confidence) * math.sqrt(CHANCE * (1 - CHANCE) / n_test)


def trained_masked(loss_ratio) -> Premise:
    """Premise: every seed's masked reconstruction beats predicting each position's mean patch."""
    ratio = np.asarray(loss_ratio, dtype=np.float64)
    return Premise(
        "masked reconstruction trained (test loss below the predict-the-mean baseline)",
        float(np.max(ratio)) if ratio.size else math.nan,
        "<=",
        LOSS_MARGIN,
        "the largest over seeds of test loss / baseline loss on the same masks",
    )


def trained_supervised(accuracy, n_test: int) -> Premise:
    """Premise: every seed's supervised test accuracy lies above chance (`chance_bound`)."""
    acc = np.asarray(accuracy, dtype=np.float64)
    return Premise(
        "supervised model trained (test accuracy above chance)",
        float(np.min(acc)) if acc.size else math.nan,
        ">",
        chance_bound(n_test),
        f"the smallest over seeds; chance 10 % and its one-sided {CHANCE_CONFIDENCE:.1%} "
        f"binomial bound on {n_test} test images",
    )


def trained_contrastive(loss_ratio) -> Premise:
    """Premise: every seed's test InfoNCE lies below log m (chance: the views not matched)."""
    ratio = np.asarray(loss_ratio, dtype=np.float64)
    return Premise(
        "contrastive model trained (test InfoNCE below chance, log m)",
        float(np.max(ratio)) if ratio.size else math.nan,
        "<=",
        LOSS_MARGIN,
        "the largest over seeds of test InfoNCE / log m on m evaluation images",
    )


def structure_threshold(random_mass: dict) -> float:
    """The top-k mass a learned attention exceeds: random attention's mean + STRUCTURE_MARGIN SD
    (random_mass: {"mean", "sd"} over maps of independent uniform weights)."""
    return random_mass["mean"] + STRUCTURE_MARGIN * random_mass["sd"]


def attention_learned(top_mass, random_mass: dict, name: str) -> Premise:
    """Premise: the model's attention is structured beyond what random attention reaches: the
    seed interval of its top-k mass (`dynsim.metrics.top_k_mass`, mean over queries and images)
    above `structure_threshold`, read by the one rule. The diversity cannot say so (random weights
    are as diverse as a trained model: it ranks weights whatever their size), nor can the
    attention's move from its uniform start (a near-uniform map with one weight at 2/P has
    moved); with the masked objective at gamma = 0.05 the attention stays near uniform and its
    top-k mass below random weights'."""
    threshold = structure_threshold(random_mass)
    return on_interval(
        f"{name} attention learned (structured: top-k mass above random attention's)",
        seeds.mean(top_mass),
        ">",
        threshold,
        f"top-k mass, the mean over queries and images of the weight on a query's k largest keys; "
        f"random attention {random_mass['mean']:.3g} (SD {random_mass['sd']:.2g} per map) + "
        f"{STRUCTURE_MARGIN:g} SD; uniform k/P",
    )


def more_diverse(masked, other, other_name: str, premises, regime: str, k: int) -> Claim:
    """MIM Section 6 against one other objective: the diversities of the masked model and of the
    `other_name` model, paired by seed, with the premises that both were trained: the seed mean of
    masked - other, its interval above 0."""
    runs, unpaired = seeds.paired({"masked": masked, other_name: other})
    diff = seeds.mean([] if unpaired else runs["masked"] - runs[other_name])
    premises = list(premises)
    n = 0 if unpaired else runs["masked"].size
    return judge(
        f"Section 6 (masked > {other_name})",
        statement=STATEMENT,
        reading=f"attention diversity (top-{k}, ties to the lower patch index) of the trained "
        "one-layer softmax attention, mean over the evaluation images; the paired per-seed "
        f"difference masked - {other_name}, its seed mean and {CONFIDENCE:.0%} Student-t "
        f"interval over {n} seeds: holds when the interval lies above 0, fails when it lies at "
        "or below 0 (its upper end <= 0), not evaluated (inconclusive) when it contains 0",
        reading_class=LITERAL,
        regime=regime,
        measured=diff,
        relation=">",
        threshold=0.0,
        derivation="'more diverse' read as the paired difference's interval lying above 0 (a "
        "point estimate is not a comparison); the paper is contradicted only by an interval at "
        "or below 0",
        negative_control="the untrained model's diversity (Q = 0: uniform attention, 0 by the "
        "tie rule, the metric's least value) in place of the masked model's, the premises as "
        "measured, makes every difference <= 0, so the claim can never hold, and fails once the "
        "other model's diversity interval lies above 0 (the whole untrained model in its place "
        "is 'not applicable': its attention learned nothing, top-k mass k/P); "
        "tests/test_images_mim.py::test_claim_fails_with_the_untrained_model",
        premises=premises,
        details={
            "difference_mean": diff.value,
            "difference_interval": [diff.low, diff.high],
            "masked": runs["masked"].tolist(),
            other_name: runs[other_name].tolist(),
            # the reason names the data only where the premises leave them the verdict
            **({"why": unpaired} if unpaired and all(p.met for p in premises) else {}),
        },
        at=f"{n} seeds",
    )
