"""Section 6's attention diversity of a trained reduced model beside reference maps: a measurement,
not a claim.

The paper compares trained ViT-B/16 models (MAE against MoCo v3, DINO and DeiT); it makes no
comparison with random attention, and the top-k metric is largest for scattered top-k sets, so
dynsim reports the numbers and judges none. The trained model's attention for query p on an image
of cluster k with mask M (z = 1; with K clusters image i is from cluster i mod K) has the logits
z A_{p,v_{k,a_k(q)}} 1{q not in M} + B_{p,q}
(docs/derivations/mim-model.md §2, the score of key q for the positional query row of p), rebuilt
per patch from a reduced run's last class state (`records.expand`, `records.pp_rows`). Each image is
a uniform random mask of |M| patches; its diversity is the top-k metric over all P queries. Beside
it, on the same images:
  - "Thm 4.1 ideal": every query uniform on the unmasked patches of its own area (the theorem's
    solution; an area with no unmasked patch: uniform on the area);
  - "collapse": the same map for every query (a softmax of one N(0, 1) logit row shared by all
    queries, so no two weights tie): every query has the same top-k under either tie rule, and it
    scores 0;
  - "random logits": i.i.d. N(0, 1) logits.
Ties decide many top-k sets (a global query's weights are equal across its area), so each map is
scored with the metric's deterministic rule (ties to the lower patch index,
`metrics.attention_diversity`) and with ties broken uniformly at random per query.
"""

from __future__ import annotations

import math

import jax
import numpy as np
from scipy.spatial.distance import pdist

from dynsim import metrics

from . import records
from .config import MIMConfig

MAPS = ("trained", "Thm 4.1 ideal", "collapse", "random logits")
RULES = (
    "lowest index",
    "random",
)  # the tie rules: the metric's deterministic one, and uniform at random


def final_state(t, cfg: MIMConfig) -> tuple[np.ndarray, np.ndarray]:
    """A (P, K, N): A_{p, v_{k,j}} and B (P, P): B_{p,q} at the last step, from the class records
    (K = 1) or from the joint cells' final state, `t.final` (K > 1, `reduced.mim.cells`)."""
    if "fp_cell" in t.observables:
        cell = records.cell_index(cfg).cell
        A_cell, B_cell, B_self = (t.final[name] for name in ("A", "B", "B_self"))
        B = np.asarray(B_cell)[cell[:, None], cell[None, :]]
        B[np.arange(cfg.P), np.arange(cfg.P)] = np.asarray(B_self)[cell]
        return np.nan_to_num(np.asarray(A_cell)[cell]), B
    index = records.class_index(cfg)
    A = records.expand(index, np.asarray(t["fp_class"])[-1:])[0]
    B = records.pp_rows(index, np.asarray(t["pp_class"])[-1:], np.asarray(t["pp_self"])[-1:])[0]
    return np.nan_to_num(A), B


def logits(
    cfg: MIMConfig, A: np.ndarray, B: np.ndarray, unmasked: np.ndarray, k: int = 0
) -> np.ndarray:
    """(P, P): the score of key q for query p on an image of cluster k, z A_{p, v_{k,a_k(q)}} 1{q
    unmasked} + B_{p,q} (z = 1); A is (P, N), cluster k's."""
    area = records.class_index(cfg).area[k]
    return A[:, area] * unmasked[None, :] + B


def ideal(cfg: MIMConfig, unmasked: np.ndarray, k: int = 0) -> np.ndarray:
    """(P, P): Theorem 4.1's solution on an image of cluster k, every query uniform on its own
    area's unmasked patches (on the whole area when none of them is unmasked)."""
    area = records.class_index(cfg).area[k]
    same = area[:, None] == area[None, :]
    w = same * unmasked[None, :]
    w = np.where(w.sum(axis=1, keepdims=True) > 0, w, same)
    return w / w.sum(axis=1, keepdims=True)


def collapse(P: int, rng: np.random.Generator) -> np.ndarray:
    """(P, P): one map for every query, a softmax of one N(0, 1) logit row (no ties)."""
    return np.broadcast_to(_softmax(rng.standard_normal(P)), (P, P))


def random_ties(attn: np.ndarray, side: int, k: int, rng: np.random.Generator) -> float:
    """The top-k diversity with ties (weights equal to metrics.TIE_DECIMALS) broken uniformly at
    random per query."""
    rounded = -np.round(attn, metrics.TIE_DECIMALS)
    order = np.lexsort((rng.random(attn.shape), rounded), axis=-1)[:, :k]
    coords = metrics.grid_coordinates((side, side))
    return float(pdist(coords[order].reshape(attn.shape[0], 2 * k), "euclidean").mean())


def diversities(
    cfg: MIMConfig, t, images: int, k: int, seed: int = 0
) -> dict[tuple[str, str], np.ndarray]:
    """Per image: the diversity of every map in MAPS under every rule in RULES (same masks), shape
    (images,)."""
    side = math.isqrt(cfg.P)
    if side * side != cfg.P:
        raise ValueError(
            f"MIMConfig.P = {cfg.P} is invalid for the diversity: must be a perfect square (a grid)"
        )
    A, B = final_state(t, cfg)
    if not (
        np.all(np.isfinite(np.asarray(t["loss"])))
        and np.all(np.isfinite(A))
        and np.all(np.isfinite(B))
    ):
        # a diverged run: nothing to measure
        return {(m, r): np.full(images, np.nan) for m in MAPS for r in RULES}
    rng = np.random.default_rng(seed)
    out: dict[tuple[str, str], list] = {(m, r): [] for m in MAPS for r in RULES}
    for i in range(images):
        c = i % cfg.K  # the clusters in turn: image i is drawn from cluster i mod K
        unmasked = np.ones(cfg.P)
        unmasked[rng.choice(cfg.P, cfg.masked, replace=False)] = 0.0
        maps = {
            "trained": _softmax(logits(cfg, A[:, c], B, unmasked, c)),
            "Thm 4.1 ideal": ideal(cfg, unmasked, c),
            "collapse": collapse(cfg.P, rng),
            "random logits": _softmax(rng.standard_normal((cfg.P, cfg.P))),
        }
        for name, attn in maps.items():
            det = metrics.attention_diversity(attn[None], (side, side), k=k)[0]
            out[name, RULES[0]].append(float(det))
            out[name, RULES[1]].append(random_ties(np.asarray(attn), side, k, rng))
    return {key: np.array(v) for key, v in out.items()}


def _softmax(x: np.ndarray) -> np.ndarray:
    return np.asarray(jax.nn.softmax(x, axis=-1))
