"""`experiment mim-images`: MIM Section 6 in miniature on the digits. The same one-layer softmax
attention (`dynsim.images.mim_model`) trained by masked reconstruction, supervised and (asked for)
contrastive objectives, seeds vmapped; per seed the attention diversity (Section 6, top-k) and the
average attention distance of the test images' attention, their seed intervals, the claim and the
measurements (`dynsim.images.mim_claims`)."""

from __future__ import annotations

import dataclasses
import math
from typing import Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import metrics
from dynsim.claims import Measurement, not_evaluated

from . import digits, mim_claims, seeds
from .mim_model import OBJECTIVES
from .mim_options import Sizes
from .mim_train import Training, evaluate, train

__all__ = ["Config", "run", "items", "default_k", "queries", "RANDOM_DRAWS"]

# random attention maps whose mean diversity is reported (one draw's varies by ~4 % at P = 16)
RANDOM_DRAWS = 100


@dataclasses.dataclass(frozen=True)
class Config(Sizes):
    """The experiment's sizes (`mim_options.Sizes`, the CLI's defaults: docs/images.md section 2)
    and what the run derives from them."""

    @property
    def k(self) -> int:
        return self.top_k if self.top_k is not None else default_k(self.P)

    def training(self, objective: str) -> Training:
        return Training(
            objective,
            self.steps,
            self.batch,
            self.learning_rate,
            self.mask_ratio,
            self.width,
            self.dtype,
        )


def default_k(P: int) -> int:
    """k of the diversity: the paper's 10 on 196 patches, at most a quarter of the grid here."""
    return max(1, min(10, P // 4))


def queries(grid: tuple[int, int]) -> list[int]:
    """Four query patches spread over the grid: two corners and two inner cells."""
    rows, cols = grid
    cells = [(0, 0), (rows // 3, 2 * cols // 3), (2 * rows // 3, cols // 3), (rows - 1, cols - 1)]
    return list(dict.fromkeys(r * cols + c for r, c in cells))


def _stack(cfg: Config):
    data = digits.load(cfg.patch)
    splits = [digits.split(data, cfg.n_test, cfg.seed + s) for s in range(cfg.seeds)]
    as_x = lambda ds: jnp.asarray(np.stack([d.x for d in ds]), cfg.dtype)  # noqa: E731
    as_y = lambda ds: jnp.asarray(np.stack([d.y for d in ds]))  # noqa: E731
    train_set, test_set = [s[0] for s in splits], [s[1] for s in splits]
    ev = [digits.Digits(t.x[: cfg.eval_images], t.y[: cfg.eval_images], t.grid) for t in test_set]
    return data.grid, as_x(train_set), as_y(train_set), as_x(ev), as_y(ev)


def _per_image(attn: np.ndarray, grid, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per seed: the mean over images of the diversity, of the average attention distance and of
    the top-k mass."""
    div = np.array([np.mean([metrics.attention_diversity(a, grid, k)[0] for a in s]) for s in attn])
    dist = np.array([np.mean(metrics.average_attention_distance(s, grid)) for s in attn])
    mass = np.array([np.mean(metrics.top_k_mass(s, grid, k)) for s in attn])
    return div, dist, mass


def run(cfg: Config, runner: Optional[Callable] = None) -> dict:
    """Train and evaluate every objective of `cfg`; runner(label, steps, fn) runs a training (the
    CLI's progress bar; default: fn()). Returns per objective the per-seed numbers, the seed-0
    attention maps (mean over the evaluation images), and the untrained model's numbers."""
    runner = runner or (lambda label, steps, fn: fn())
    grid, X, y, Xe, ye = _stack(cfg)
    root = jax.random.PRNGKey(cfg.seed)
    out: dict = {"grid": list(grid), "k": cfg.k, "objectives": {}}
    for i, objective in enumerate(cfg.objectives):
        training = cfg.training(objective)
        keys = jax.random.split(jax.random.fold_in(root, i), cfg.seeds)
        params, losses = runner(objective, cfg.steps, lambda: train(training, X, y, keys))
        attn, value, baseline, accuracy = (
            np.asarray(a, np.float64)
            for a in evaluate(training, params, X, Xe, ye, jax.random.fold_in(root, 100))
        )
        div, dist, mass = _per_image(attn, grid, cfg.k)
        out["objectives"][objective] = {
            "diversity": div.tolist(),
            "distance": dist.tolist(),
            "top_mass": mass.tolist(),
            "test_loss": value.tolist(),
            "baseline": baseline.tolist(),
            "loss_ratio": (value / baseline).tolist(),
            "accuracy": accuracy.tolist(),
            "final_train_loss": np.asarray(losses, np.float64)[-1].tolist(),
            "maps": attn[0].mean(axis=0).tolist(),
        }
    # Q = 0, the paper's start: every query attends uniformly (eq. 2.6 with zero scores: 1/P, as
    # the model's own start gives to 1e-15, tests/test_images_mim.py)
    uniform = np.full((1, 1, cfg.P, cfg.P), 1.0 / cfg.P)
    div, dist, mass = _per_image(uniform, grid, cfg.k)
    out["untrained"] = {
        "diversity": float(div[0]),
        "distance": float(dist[0]),
        "top_mass": float(mass[0]),
    }
    # the reference at the other end: independent uniform weights, no structure at all
    rng = np.random.default_rng(cfg.seed)
    noise = rng.random((RANDOM_DRAWS, cfg.P, cfg.P))
    noise /= noise.sum(axis=-1, keepdims=True)
    mass = metrics.top_k_mass(noise, grid, cfg.k)
    out["random"] = {
        "diversity": float(np.mean(metrics.attention_diversity(noise, grid, cfg.k))),
        "top_mass": {"mean": float(np.mean(mass)), "sd": float(np.std(mass, ddof=1))},
    }
    return out


def _interval(values) -> dict:
    stat = seeds.mean(values)
    return {"mean": stat.value, "low": stat.low, "high": stat.high}


def items(cfg: Config, result: dict) -> list:
    """The claims (masked against each other objective run) and the measurements."""
    obj = result["objectives"]
    regime = (
        f"digits, {cfg.patch} x {cfg.patch} patches (P = {cfg.P}), gamma = {cfg.mask_ratio}, "
        f"{cfg.steps} Adam steps of {cfg.batch} images, {cfg.seeds} seeds, "
        f"{cfg.eval_images} evaluation images"
    )
    premises = {
        "supervised": lambda o: mim_claims.trained_supervised(o["accuracy"], cfg.n_test),
        "contrastive": lambda o: mim_claims.trained_contrastive(o["loss_ratio"]),
    }
    found: list = []
    for other in [o for o in cfg.objectives if o != "masked"]:
        if "masked" not in obj:
            found.append(
                not_evaluated(
                    f"Section 6 (masked > {other})",
                    "the masked objective was not run (--objectives)",
                    reading_class="literal",
                    statement=mim_claims.STATEMENT,
                    relation=">",
                )
            )
            continue
        given = [
            mim_claims.trained_masked(obj["masked"]["loss_ratio"]),
            premises[other](obj[other]),
        ] + [
            mim_claims.attention_learned(
                obj[name].get("top_mass", ()), result["random"]["top_mass"], name
            )
            for name in ("masked", other)
        ]
        found.append(
            mim_claims.more_diverse(
                obj["masked"]["diversity"], obj[other]["diversity"], other, given, regime, cfg.k
            )
        )
    for name, o in obj.items():
        for metric, what in (
            ("diversity", f"attention diversity (top-{cfg.k})"),
            ("distance", "average attention distance (grid units)"),
            ("top_mass", f"top-{cfg.k} mass (a query's weight on its {cfg.k} largest keys)"),
        ):
            if metric not in o:  # not measured: the claims' premises say so
                continue
            found.append(
                Measurement(
                    f"{metric} ({name})",
                    f"{what}, mean over seeds and its {mim_claims.CONFIDENCE:.0%} Student-t "
                    "interval",
                    _interval(o[metric])["mean"],
                    {"interval": _interval(o[metric]), "seeds": o[metric]},
                )
            )
    found.append(
        Measurement(
            "diversity (untrained)",
            "Q = 0: uniform attention, the tie rule gives every query the same top-k",
            result["untrained"]["diversity"],
        )
    )
    random = f"independent uniform weights, mean of {RANDOM_DRAWS} maps: no spatial structure"
    found.append(Measurement("diversity (random attention)", random, result["random"]["diversity"]))
    mass = result["random"]["top_mass"]
    found.append(
        Measurement(
            "top_mass (random attention)",
            f"{random}; SD {mass['sd']:.3g} per map: a model's attention learned above "
            f"{mim_claims.structure_threshold(mass):.3f}",
            mass["mean"],
            {"sd": mass["sd"], "threshold": mim_claims.structure_threshold(mass)},
        )
    )
    return found


def summary(result: dict) -> dict:
    """Per objective: the seed intervals of diversity, distance, loss ratio and accuracy."""
    keys = ("diversity", "distance", "top_mass", "loss_ratio", "accuracy")
    return {
        name: {key: _interval(o[key]) if not all(map(math.isnan, o[key])) else None for key in keys}
        for name, o in result["objectives"].items()
    }


__all__ += ["summary", "OBJECTIVES"]
