"""Section 5: fine-tune v on a downstream task with a new feature, A frozen (problem (Ẽ), Theorems
5.1 and 5.2).

The downstream distribution D~ is Assumption 1 with a new unit feature w~ and the SAME partition:
the spatial structure transfers, the feature does not. Three learners see the same N~ downstream
samples:

- "pretrained": model (T) with the pretrained A frozen, v fine-tuned from N(0, omega^2 I) (Theorem
  5.1);
- "initial":    model (T) with A at its initialization A0 (no patch association), v fine-tuned the
  same way;
- "glm":        the GLM g(X) = sum_j <w_j, X_j> of Theorems 3.1/5.2 from N(0, omega^2), logistic
  loss.

All three run full-batch GD on the logistic loss. One compiled program covers every N~ and every
seed: each seed draws max(N~) samples once, and N~ enters only as a 0/1 weight on the first N~ of
them.
"""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from typing import Any, Mapping, Optional

import jax
import jax.numpy as jnp
import numpy as np

from dynsim import environment, recording
from dynsim.jsl import JSLConfig, data, error, partition, reference
from dynsim.jsl.association import chance, patch_association
from dynsim.jsl.model import attention, forward, logistic_loss

from . import glm, realistic
from .spec import Finetune, check_overlap

LEARNERS = ("pretrained", "initial", "glm")


def downstream_feature(cfg: JSLConfig, overlap: float, key=None, name: str = "overlap"):
    """The downstream feature w~ = overlap w* + sqrt(1 - overlap^2) u, u a seeded unit vector
    orthogonal to w* (Section 5).

    ||w~|| = 1 and <w~, w*> = overlap. `key` seeds u (default: derived from cfg.seed); `name`: what
    a refusal calls the overlap.
    """
    overlap = check_overlap(cfg, overlap, name)
    dtype = jnp.dtype(cfg.dtype)
    w_star = data.feature(cfg, dtype)
    if abs(overlap) == 1.0:
        return overlap * w_star
    key = jax.random.fold_in(jax.random.key(cfg.seed), 0xD0) if key is None else key
    z = jax.random.normal(key, (cfg.d,), dtype)
    u = z - jnp.dot(z, w_star) * w_star
    u = u / jnp.linalg.norm(u)
    return overlap * w_star + math.sqrt(1.0 - overlap**2) * u


def model_logits(cfg: JSLConfig, A, v, X):
    """Model (T) F(X) for a frozen A and value vector v, X (..., D, d)."""
    return forward(A, X @ v, tau=cfg.tau, p=cfg.p, nu=cfg.nu)


def finetune_v(
    cfg: JSLConfig,
    A,
    v0,
    train,
    test,
    *,
    steps: int,
    eta,
    weights=None,
    record_every: Optional[int] = None,
    w_star=None,
):
    """GD on (Ẽ) in v only, A frozen, from v0; traceable. Records loss (training), test_error,
    test_loss, v_norm and, given the task's feature `w_star`, cos_v = <v, w_star>/|v| and
    f_star_error (the test error against the task's f*, `dynsim.jsl.error.f_star_error`).

    train = (X (n, D, d), y (n,)), test = (X_test, y_test); `weights` (n,) weighs the training
    samples (a 0/1 mask trains on a subset with static shapes). Returns (final v, records).
    """
    X, y = train
    X_test, y_test = test

    def loss(v):
        return glm.weighted_loss(y * model_logits(cfg, A, v, X), weights)

    def observe(v):
        F = model_logits(cfg, A, v, X_test)
        margins = y_test * F
        out = {
            "loss": loss(v),
            "test_error": error.margin_error(margins),
            "test_loss": jnp.mean(logistic_loss(margins)),
            "v_norm": jnp.linalg.norm(v),
        }
        if w_star is not None:
            out["cos_v"] = jnp.dot(v, w_star) / out["v_norm"]
            out["f_star_error"] = error.f_star_error(cfg, F, data.signs(X_test, w_star))
        return out

    record_every = steps if record_every is None else record_every
    return glm.gd(loss, v0, steps, eta, observe, max(1, record_every))


def _one_seed(
    cfg: JSLConfig,
    n_max: int,
    steps: int,
    record_every: int,
    eta,
    eta_glm,
    A_pre,
    A_init,
    w_tilde,
    n_tilde,
    key,
):
    """All learners and every N~ for one seed: max(N~) samples drawn once, the first N~ weighted 1
    and the rest 0."""
    dtype = jnp.dtype(cfg.dtype)
    k_train, k_test, k_v, k_w = jax.random.split(key, 4)
    train = data.sample(k_train, cfg, n_max, w_tilde, dtype)
    test = data.sample(k_test, cfg, cfg.n_test, w_tilde, dtype)
    v0 = cfg.omega * jax.random.normal(k_v, (cfg.d,), dtype)
    masks = (jnp.arange(n_max)[None, :] < n_tilde[:, None]).astype(dtype)

    def per_n(mask):
        kw = dict(steps=steps, weights=mask, record_every=record_every, w_star=w_tilde)
        return {
            "pretrained": finetune_v(cfg, A_pre, v0, train, test, eta=eta, **kw)[1],
            "initial": finetune_v(cfg, A_init, v0, train, test, eta=eta, **kw)[1],
            "glm": glm.train_glm(cfg, train, test, eta=eta_glm, key=k_w, **kw)[1],
        }

    return jax.vmap(per_n)(masks)


def _all_seeds(
    cfg, n_max, steps, record_every, eta, eta_glm, A_pre, A_init, w_tilde, n_tilde, keys
):
    return jax.vmap(
        lambda a, b, k: _one_seed(
            cfg, n_max, steps, record_every, eta, eta_glm, a, b, w_tilde, n_tilde, k
        )
    )(A_pre, A_init, keys)


_all_seeds_jit = jax.jit(_all_seeds, static_argnums=(1, 2, 3))  # cfg a pytree: numbers traced


@dataclasses.dataclass
class TransferResult:
    """Downstream test error per learner and N~ (mean and standard error over seeds), with the
    curves behind it.

    final[learner]: (seeds, len(n_tilde)) test error at the last step (against y), final_f_star
    likewise against the task's f*; mean/se[learner]: (len(n_tilde),) of final.
    curves[learner][name]: (len(steps), len(n_tilde)) seed mean of each recorded observable
    (test_error, f_star_error, test_loss, loss, ...) at the recorded fine-tuning `steps`.
    """

    n_tilde: list[int]
    seeds: int
    overlap: float
    steps: np.ndarray
    final: dict[str, np.ndarray]
    mean: dict[str, np.ndarray]
    se: dict[str, np.ndarray]
    curves: dict[str, dict[str, np.ndarray]]
    # patch_association of the pretrained A and of A0 (Definition 2.2)
    association: dict[str, float]
    own_set_attention: dict[str, float]
    # glm_error, bayes_error of the downstream task (the same sizes as upstream)
    reference: dict[str, float]
    meta: dict[str, Any]
    final_f_star: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def table(self) -> str:
        """Plain-text table: test error mean +- s.e. per N~ and learner."""
        head = f"{'N~':>6} " + " ".join(f"{name:>20}" for name in LEARNERS)
        lines = [
            f"Transfer (Section 5): overlap <w~, w*> = {self.overlap:g}, {self.seeds} seeds, "
            f"{self.meta['finetune_steps']} GD steps (eta {self.meta['eta']:g}, GLM eta "
            f"{self.meta['eta_glm']:g}), test error on {self.meta['n_test']} held-out samples",
            "patch association: "
            + ", ".join(f"{k} A {v:.3f}" for k, v in self.association.items())
            + f" (chance {self.meta['association_chance']:.3g})",
            head,
        ]
        for i, n in enumerate(self.n_tilde):
            lines.append(
                f"{n:>6} "
                + " ".join(f"{self.mean[k][i]:>11.4f} +- {self.se[k][i]:<6.4f}" for k in LEARNERS)
            )
        if self.reference:
            lines.append(
                "reference: " + ", ".join(f"{k} {v:.4f}" for k, v in self.reference.items())
            )
        return "\n".join(lines)

    def to_dict(self) -> dict:
        """JSON-able dict of every field."""

        def plain(x):
            if isinstance(x, dict):
                return {k: plain(v) for k, v in x.items()}
            if isinstance(x, (np.ndarray, np.generic)):
                return x.tolist()
            return x

        return json.loads(
            json.dumps(
                {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)},
                default=str,
            )
        )


def _matrices(cfg: JSLConfig, pretrained: Mapping, seeds: int) -> tuple[np.ndarray, np.ndarray]:
    """The pretrained A and A0 as (seeds, D, D): a (D, D) or (1, D, D) array is shared by every
    seed."""
    out = []
    for name in ("A", "A0"):
        if name not in pretrained:
            raise ValueError(
                f"pretrained has keys {sorted(pretrained)}; it needs 'A' (the pretrained "
                f"attention matrix) "
                "and 'A0' (its initialization)"
            )
        M = np.asarray(pretrained[name], dtype=float)
        if M.shape == (cfg.D, cfg.D):
            M = M[None]
        if M.ndim != 3 or M.shape[1:] != (cfg.D, cfg.D) or M.shape[0] not in (1, seeds):
            raise ValueError(
                f"pretrained[{name!r}] has shape {M.shape}, expected ({cfg.D}, {cfg.D}) or (R, "
                f"{cfg.D}, {cfg.D}) with R = 1 or R = seeds = {seeds}"
            )
        if not np.all(np.isfinite(M)):
            raise ValueError(
                f"pretrained[{name!r}] has non-finite entries (did the pretraining diverge?)"
            )
        out.append(np.broadcast_to(M, (seeds, cfg.D, cfg.D)))
    return out[0], out[1]


def _reference(cfg: JSLConfig) -> dict[str, float]:
    return {
        "glm_error": float(reference.glm_error(cfg)),
        "bayes_error": float(reference.bayes_error(cfg)),
    }


def pretrain(cfg: JSLConfig) -> dict:
    """Pretrain on D (Section 4.2, realistic problem (E)) with `full.jsl.realistic.run(cfg,
    seeds=1)`; returns {"A", "A0"}."""
    _, final = realistic.run(cfg, seeds=1)
    return {"A": np.asarray(final["A"])[0], "A0": np.asarray(final["A0"])[0]}


def transfer(
    cfg: JSLConfig,
    finetune: Optional[Finetune] = None,
    *,
    pretrained: Optional[Mapping] = None,
    **fields,
) -> TransferResult:
    """Fine-tune on N~ downstream samples for every N~ and seed (one vmapped program) and test on
    cfg.n_test (Section 5).

    finetune: the fine-tuning (`full.jsl.spec.Finetune`: overlap, n_tilde, seeds, steps, eta,
    eta_glm, record_every), or its fields as keywords (`transfer(cfg, seeds=4)`). pretrained: {"A":
    (D, D) or (R, D, D), "A0": likewise}; None pretrains with realistic.run(cfg, seeds=1). The
    defaults, measured with the idealized pretrained A (sigma_A I + gamma within + rho between from
    the reduced run) at D = 16, C = 4, q = 0.5, nu = 1e-3, unit temperature (cfg.eta 0.02) and at D
    = 9, C = 3, q = 0.3 (cfg.eta 0.05), 8 seeds, N~ = 8..256, overlaps 0, 0.3, 0.8:
    - eta = cfg.eta / 2 (Section 5 keeps Parametrization 3.1's rate; halved because at D = 16
      cfg.eta itself diverged in 2 of 144 fine-tuning runs of the pretrained learner at small N~,
      cfg.eta / 2 and cfg.eta / 4 in none, with the same errors within one s.e.);
    - steps = 2000: every curve is flat by ~200 steps, and 8000 steps moved no mean by more than one
      s.e.;
    - eta_glm = 1: the GLM's logistic loss has curvature <= ~0.35, and its curves are flat by ~200
      steps too.
    A run that diverges leaves NaN in its test error (so in the mean) and is listed in
    meta["diverged"].
    """
    if finetune is not None and fields:
        raise TypeError(f"transfer takes a Finetune or its fields, not both: {sorted(fields)}")
    ft = (finetune or Finetune(**fields)).resolved(cfg)
    overlap, n_tilde, seeds, steps = ft.overlap, ft.n_tilde, ft.seeds, ft.steps
    eta, eta_glm, record_every = ft.eta, ft.eta_glm, ft.record_every
    w_tilde = downstream_feature(cfg, overlap)
    if pretrained is None:
        pretrained = pretrain(cfg)
    A_pre, A_init = _matrices(cfg, pretrained, seeds)
    dtype = jnp.dtype(cfg.dtype)
    keys = jax.random.split(jax.random.fold_in(jax.random.key(cfg.seed), 0x7A5F), seeds)
    rec = _all_seeds_jit(
        cfg,
        max(n_tilde),
        steps,
        record_every,
        float(eta),
        float(eta_glm),
        jnp.asarray(A_pre, dtype),
        jnp.asarray(A_init, dtype),
        w_tilde,
        jnp.asarray(n_tilde),
        keys,
    )
    final, final_f_star, mean, se, curves = {}, {}, {}, {}, {}
    for learner in LEARNERS:
        # (seeds, len(n_tilde), recorded steps)
        r = {k: np.asarray(v) for k, v in rec[learner].items()}
        final[learner] = r["test_error"][:, :, -1]
        final_f_star[learner] = r["f_star_error"][:, :, -1]
        mean[learner] = final[learner].mean(axis=0)
        se[learner] = final[learner].std(axis=0, ddof=1) / np.sqrt(seeds)
        curves[learner] = {k: v.mean(axis=0).T for k, v in r.items()}
    association = {
        "pretrained": float(np.mean(patch_association(jnp.asarray(A_pre), cfg))),
        "initial": float(np.mean(patch_association(jnp.asarray(A_init), cfg))),
    }
    same = partition.same_set_mask(cfg)
    own = {
        "pretrained": float(
            np.mean(
                np.sum(np.where(same, np.asarray(attention(jnp.asarray(A_pre), cfg.tau)), 0), -1)
            )
        ),
        "initial": float(
            np.mean(
                np.sum(np.where(same, np.asarray(attention(jnp.asarray(A_init), cfg.tau)), 0), -1)
            )
        ),
    }
    bad = {
        k: int(np.sum(~np.isfinite(final[k])))
        for k in LEARNERS
        if not np.all(np.isfinite(final[k]))
    }
    if bad:
        warnings.warn(
            f"transfer: fine-tuning diverged in {bad} (seed, N~) runs; lower eta (now {eta})",
            RuntimeWarning,
            stacklevel=2,
        )
    meta = environment.meta(
        "full",
        "transfer",
        cfg,
        finetune_steps=steps,
        eta=float(eta),
        eta_glm=float(eta_glm),
        record_every=record_every,
        n_test=cfg.n_test,
        association_chance=chance(cfg),
        w_tilde=np.asarray(w_tilde).tolist(),
        diverged=bad,
    )
    return TransferResult(
        list(n_tilde),
        seeds,
        float(overlap),
        recording.recorded_steps(steps, record_every),
        final,
        mean,
        se,
        curves,
        association,
        own,
        _reference(cfg),
        meta,
        final_f_star,
    )
