"""JSL Section 6 in miniature on the digits (docs/images.md §1): train (a) the positional-attention
ViT, (b) the same layer with standard attention, (c) a small CNN on original, patch-permuted and
shuffle-grid digits (Figure 5a-b), measure the localization of the positional encodings of (a)
trained on permuted digits before and after the inverse permutation (Figure 5c), against (a) with P
frozen at its initialization, and judge the three claims (`dynsim.images.jsl_claims`)."""

from __future__ import annotations

import numpy as np

from dynsim import interrupt, progress
from dynsim.claims import Measurement

from . import digits, jsl_claims, jsl_localization, jsl_train, seeds
from .jsl_options import LEARNERS, Config, runs

__all__ = ["Config", "run", "runs", "LEARNERS"]


def _scores(P, data, k: int) -> dict:
    """Per seed: the localization score after the inverse permutation, before it (the permuted
    frame), and the shuffled baseline."""
    perms = data.perms["permuted"]
    D = perms.shape[1]
    after = [jsl_localization.score(P[r], data.grid, perms[r], k) for r in range(len(P))]
    before = [jsl_localization.score(P[r], data.grid, np.arange(D), k) for r in range(len(P))]
    return {"after": after, "before": before, "baseline": jsl_localization.baseline(data.grid)}


def spread(cfg: Config) -> float:
    """The SD of random encodings' localization score at this grid, width and k."""
    grid = (8 // cfg.patch, 8 // cfg.patch)
    return jsl_localization.spread(grid, cfg.width, cfg.k, seed=cfg.seed)


def run(cfg: Config) -> dict:
    """Every training and measurement; moves the active progress bar by one per training."""
    data = digits.load(cfg.patch)
    conditions = jsl_train.condition_blocks(data.grid, cfg.patch)
    sd = jsl_train.seed_data(data, cfg.n_test, cfg.seeds, cfg.seed, conditions)
    trained = {}
    for name, condition in runs(conditions):
        interrupt.raise_if_interrupted()
        trained[(name, condition)] = jsl_train.train(
            name,
            sd,
            condition,
            patch=cfg.patch,
            width=cfg.width,
            dtype=cfg.dtype,
            steps=cfg.steps,
            batch=cfg.batch,
            lr=cfg.lr,
            seed=cfg.seed,
        )
        progress.advance()
    acc = {key: trained[key]["accuracy"] for key in trained}
    local = {m: _scores(trained[(m, "permuted")]["P"], sd, cfg.k) for m in ("positional", "frozen")}
    return {
        "config": cfg.to_dict(),
        "conditions": conditions,
        "grid": list(data.grid),
        "accuracy": acc,
        "loss": {key: trained[key]["loss"] for key in trained},
        "localization": local,
        "P": {m: trained[(m, "permuted")]["P"] for m in ("positional", "frozen")},
        "perms": sd.perms,
        "example": {
            c: digits.unpatch(sd.x_test[0][:1][:, sd.perms[c][0]], cfg.patch)[0] for c in conditions
        },
        "random_sd": (random_sd := spread(cfg)),
        "items": judge(acc, local, cfg.k, random_sd),
    }


def judge(acc: dict, local: dict, k: int, sd: float) -> list:
    """The three claims, their negative controls and the accuracies as measurements."""
    pos, std, cnn = (acc[(m, "original")] for m in LEARNERS)
    pos_perm, cnn_perm = acc[("positional", "permuted")], acc[("cnn", "permuted")]
    base = local["positional"]["baseline"]
    items = [
        jsl_claims.comparable(pos, std),
        jsl_claims.permutation_robust(pos, pos_perm, cnn, cnn_perm),
        jsl_claims.localized(local["positional"]["after"], base, sd, pos_perm, k),
        jsl_claims.control(
            "positional ~ standard, with the CNN on permuted digits as (b)",
            jsl_claims.comparable(pos, cnn_perm),
        ),
        jsl_claims.control(
            "ViT keeps, CNN loses, with the CNN's accuracy on permuted digits as (a)'s",
            jsl_claims.permutation_robust(pos, cnn_perm, cnn, cnn_perm),
        ),
        jsl_claims.control(
            "localized, read on (a) with P frozen at its initialization",
            jsl_claims.localized(
                local["frozen"]["after"], base, sd, acc[("frozen", "permuted")], k, "(a) frozen P"
            ),
        ),
    ]
    before = seeds.mean(np.asarray(local["positional"]["before"]) - base)
    items.append(
        Measurement(
            "localization before the inverse permutation",
            f"(a) on permuted digits: top-{k} distance in the permuted frame minus the baseline "
            "(the paper: no spatial structure before the inverse permutation)",
            before.value,
            {"interval": [before.low, before.high]},
        )
    )
    for (name, condition), values in acc.items():
        stat = seeds.mean(values)
        items.append(
            Measurement(
                f"accuracy {name} {condition}",
                "test accuracy, seed mean with its 95 % interval",
                stat.value,
                {"interval": [stat.low, stat.high], "seeds": [float(v) for v in values]},
            )
        )
    return items
