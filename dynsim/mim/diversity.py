"""Section 6's attention diversity of a trained reduced model against baselines that can beat it.

The trained model's attention for query p on an image with mask M (K = 1, z = 1) has the logits
z A_{p,v_{a(q)}} 1{q not in M} + B_{p,q} (docs/derivations/mim-model.md §2, the score of key q for the positional query row of p), rebuilt per
patch from a reduced run's last class state (`records.expand`, `records.pp_rows`). Each image is a uniform random mask
of |M| patches; its diversity is `metrics.attention_diversity` over all P queries (top-k). The baselines use the same
images: i.i.d. N(0, 1) logits; every query's attention uniform on the global area plus
1e-9 uniform noise on the weights (the noise breaks the ties at random); and
the trained model's PP part alone (logits B_{p,q}: the positional model without the reconstruction-driven FP part).
"""

from __future__ import annotations

import math

import jax
import numpy as np

from dynsim import metrics

from . import records
from .config import MIMConfig

BASELINES = ("random logits", "collapsed + noise", "PP only")


def final_state(t, cfg: MIMConfig) -> tuple[np.ndarray, np.ndarray]:
    """A (P, N): A_{p, v_{0,j}} and B (P, P): B_{p,q} at the last recorded step (cluster 0)."""
    index = records.class_index(cfg)
    A = records.expand(index, np.asarray(t["fp_class"])[-1:])[0, :, 0, :]
    B = records.pp_rows(index, np.asarray(t["pp_class"])[-1:], np.asarray(t["pp_self"])[-1:])[0]
    return np.nan_to_num(A), B


def logits(cfg: MIMConfig, A: np.ndarray, B: np.ndarray, unmasked: np.ndarray) -> np.ndarray:
    """(P, P): the score of key q for query p, z A_{p, v_{a(q)}} 1{q unmasked} + B_{p,q} (z = 1)."""
    area = records.class_index(cfg).area[0]
    return A[:, area] * unmasked[None, :] + B


def diversities(cfg: MIMConfig, t, images: int, k: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Per image: the diversity of the trained model and of each baseline (same masks), shape (images,) each."""
    side = math.isqrt(cfg.P)
    if side * side != cfg.P:
        raise ValueError(f"MIMConfig.P = {cfg.P} is invalid for the diversity: must be a perfect square (a grid)")
    A, B = final_state(t, cfg)
    if not (np.all(np.isfinite(np.asarray(t["loss"]))) and np.all(np.isfinite(A)) and np.all(np.isfinite(B))):
        # a diverged run: nothing to measure (the diversity claim is then not evaluated)
        return {name: np.full(images, np.nan) for name in ("trained",) + BASELINES}
    rng = np.random.default_rng(seed)
    glob = records.class_index(cfg).area[0] == 0
    out: dict[str, list] = {name: [] for name in ("trained",) + BASELINES}
    for _ in range(images):
        unmasked = np.ones(cfg.P)
        unmasked[rng.choice(cfg.P, cfg.masked, replace=False)] = 0.0
        collapsed = np.broadcast_to(glob / glob.sum(), (cfg.P, cfg.P))
        maps = {"trained": _softmax(logits(cfg, A, B, unmasked)),
                "random logits": _softmax(rng.standard_normal((cfg.P, cfg.P))),
                "collapsed + noise": collapsed + 1e-9 * rng.random((cfg.P, cfg.P)), "PP only": _softmax(B)}
        for name, attn in maps.items():
            out[name].append(float(metrics.attention_diversity(attn[None], (side, side), k=k)[0]))
    return {name: np.array(v) for name, v in out.items()}


def _softmax(x: np.ndarray) -> np.ndarray:
    return np.asarray(jax.nn.softmax(x, axis=-1))
