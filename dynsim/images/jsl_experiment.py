"""JSL Section 6 in miniature on the digits (docs/images.md §1): train the ViT block, the same block
with positional attention, the block without attention and a small CNN on original and
patch-permuted digits with random translations (Figure 5a-b), measure how local the positional
encodings of the blocks trained on permuted digits are after the inverse permutation and before it
(Figure 5c), against the ViT trained with the translations switched and with P frozen at its start,
and judge the three claims (`dynsim.images.jsl_claims`)."""

from __future__ import annotations

import numpy as np

from dynsim import interrupt, progress
from dynsim.claims import Measurement

from . import digits, jsl_claims, jsl_localization, jsl_train, seeds
from .jsl_options import Config, Run, runs

__all__ = ["Config", "run", "runs", "judge", "localization", "spread"]


def localization(P, P0, data: jsl_train.SeedData, k: int) -> dict:
    """Per seed, of encodings P (R, D, width) trained on permuted digits from P0: rho and the
    top-k score, each after the inverse permutation and before it (the permuted frame), and the
    largest move of an entry of P from its start (0 with P frozen)."""
    perms, grid = data.perms["permuted"], data.grid
    identity = np.arange(perms.shape[1])
    out = {"p_moved": np.abs(P - P0).max(axis=(1, 2)).tolist()}
    for when, frame in (("after", lambda r: perms[r]), ("before", lambda r: identity)):
        out[f"rho_{when}"] = [
            jsl_localization.rank_correlation(P[r], grid, frame(r)) for r in range(len(P))
        ]
        out[f"top_{when}"] = [
            jsl_localization.score(P[r], grid, frame(r), k) for r in range(len(P))
        ]
    return out


def spread(cfg: Config) -> float:
    """The SD of random encodings' rho at this grid and width."""
    side = digits.SIDE // cfg.patch
    return jsl_localization.spread((side, side), cfg.width, seed=cfg.seed)


def run(cfg: Config) -> dict:
    """Every training and measurement; moves the active progress bar by one per training."""
    side = digits.SIDE // cfg.patch
    data = jsl_train.seed_data(cfg.n_test, cfg.seeds, cfg.seed, (side, side))
    trained = {}
    for each in runs(cfg):
        interrupt.raise_if_interrupted()
        trained[each] = jsl_train.train(
            each, data, patch=cfg.patch, width=cfg.width, heads=cfg.heads, dtype=cfg.dtype,
            steps=cfg.steps, batch=cfg.batch, lr=cfg.lr, seed=cfg.seed,
        )  # fmt: skip
        progress.advance()
    local = {
        r: localization(out["P"], out["P0"], data, cfg.k)
        for r, out in trained.items()
        if "P" in out and r.condition == "permuted"
    }
    shown = trained[Run("vit", "permuted", cfg.translations)]
    example = data.x_test[0][:1]
    return {
        "config": cfg.to_dict(),
        "grid": [side, side],
        "accuracy": {r: trained[r]["accuracy"] for r in trained},
        "loss": {r: trained[r]["loss"] for r in trained},
        "localization": local,
        "baseline": jsl_localization.baseline((side, side)),
        "P": shown["P"],
        "perms": data.perms,
        "example": {
            "original": example[0],
            "permuted": digits.unpatch(
                digits.patches(example, cfg.patch)[:, data.perms["permuted"][0]], cfg.patch
            )[0],
        },
        "random_sd": (random_sd := spread(cfg)),
        "items": judge(cfg, {r: trained[r]["accuracy"] for r in trained}, local, random_sd),
    }


def _measured(name: str, what: str, values) -> Measurement:
    """The seed mean of `values` with its 95 % interval, reported (the interval in its text)."""
    stat = seeds.mean(values)
    return Measurement(
        name,
        f"{what}: seed mean, 95 % interval [{stat.low:.3f}, {stat.high:.3f}]",
        stat.value,
        {"interval": [stat.low, stat.high], "seeds": [float(v) for v in values]},
    )


def judge(cfg: Config, acc: dict, local: dict, sd: float) -> list:
    """The three claims, their negative controls, the localization's comparison runs and the
    accuracies as measurements."""
    t = cfg.translations
    vit, switched, frozen = (Run("vit", "permuted", t), Run("vit", "permuted", not t),
                             Run("vit", "permuted", t, frozen=True))  # fmt: skip
    original, cnn, cnn_perm = (Run("vit", "original", t), Run("cnn", "original", t),
                               Run("cnn", "permuted", t))  # fmt: skip
    positional, alone = Run("positional", "permuted", t), Run("no-attention", "permuted", t)

    def reading(r: Run, key: str = "rho_after", who: str = "ViT"):
        return jsl_claims.localized(local[r][key], sd, acc[r], who, r.translations)

    items = [
        jsl_claims.comparable(acc[positional], acc[vit]),
        jsl_claims.permutation_robust(acc[original], acc[vit], acc[cnn], acc[cnn_perm]),
        reading(vit),
        jsl_claims.control(
            "positional ~ standard, with the CNN on permuted digits as the ViT",
            jsl_claims.comparable(acc[positional], acc[cnn_perm]),
        ),
        jsl_claims.control(
            "ViT keeps, CNN loses, with the CNN's accuracy on permuted digits as the ViT's",
            jsl_claims.permutation_robust(acc[original], acc[cnn_perm], acc[cnn], acc[cnn_perm]),
        ),
        jsl_claims.control(
            "localized, read on the ViT with P frozen at its start",
            reading(frozen, who="ViT, P frozen"),
        ),  # fmt: skip
        jsl_claims.control(
            "localized, read before the inverse permutation", reading(vit, "rho_before")
        ),  # fmt: skip
        jsl_claims.control(
            f"localized, read on the ViT trained {'without' if t else 'with'} translations",
            reading(switched),
            "comparison run",
            "the translations switched: " + ("off" if t else "on, as at the default"),
        ),  # fmt: skip
        jsl_claims.control(
            "localized, read on the block without attention",
            reading(alone, who="no-attention block"),
            "comparison run",
            "does the localization need attention?",
        ),  # fmt: skip
        jsl_claims.control(
            "localized, read on the positional-attention block",
            reading(positional, who="positional block"),
            "comparison run",
            "Definition 3.2's attention",
        ),  # fmt: skip
        _measured(
            "attention needed for the localization: rho of the ViT minus the no-attention block",
            "paired by seed; an interval above 0 says the attention sublayer adds to the "
            "localization in this block, one containing 0 or below it that the block localizes "
            "without it (a measurement, not a claim about attention)",
            np.subtract(local[vit]["rho_after"], local[alone]["rho_after"]),
        ),
        _measured(
            "ViT on permuted minus CNN on original digits",
            "test accuracy, paired by seed: how close the ViT block on permuted digits comes to "
            "the CNN on the originals",
            np.subtract(acc[vit], acc[cnn]),
        ),
    ]
    for r, values in local.items():
        for key in ("rho_before", "top_after", "top_before"):
            items.append(_measured(f"{key.replace('_', ' ')} {r.label}", key, values[key]))
    items += [_measured(f"accuracy {r.label}", "test accuracy", v) for r, v in acc.items()]
    return items
