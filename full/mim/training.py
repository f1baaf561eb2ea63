"""Full-matrix MIM: gradient descent on Q (d x d) with optax, exact population loss or fresh
batches."""

from __future__ import annotations

from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import divergence, environment, progress, recording
from dynsim.mim import MIMConfig, data, model
from dynsim.mim.embedding import Basis
from dynsim.mim.embedding import basis as make_basis
from dynsim.mim.latents import exact_size
from dynsim.mim.partition import area_of
from dynsim.trajectory import Trajectory, seed_statistics
from dynsim.mim import traced  # noqa: F401 (MIMConfig as a pytree: its numbers traced)

from .. import engine
from . import batch, spec
from .module import MaskedAttention


def validate_run_options(
    cfg: MIMConfig, mode: str = "exact", replicates: Optional[int] = None
) -> int:
    """Validate the run arguments before any work (`spec.check_full`);
    return the number of replicate runs."""
    return spec.check_full(cfg, mode, replicates)


def correlations(cfg: MIMConfig, Q, basis) -> dict:
    """fp_corr A_{p,v_{k,j}} = e_p^T Q v_{k,j} (P, K, max N_k; NaN where j >= N_k) and pp_corr B = E
    Q E^T (Def. 3.1)."""
    fp = jnp.einsum("pa,ab,kjb->pkj", basis.E, Q, basis.V)
    fp = jnp.where(valid_areas(cfg)[None], fp, jnp.nan)
    pp = basis.E @ Q @ basis.E.T
    return {"fp_corr": fp, "pp_corr": pp, "pp_max": jnp.max(jnp.abs(pp))}


def valid_areas(cfg: MIMConfig) -> np.ndarray:
    """(K, max N_k) True where area j exists in cluster k."""
    return np.arange(cfg.max_areas)[None, :] < np.array(cfg.areas_per_cluster)[:, None]


def _area_attention_sums(cfg, net, params, x, masked, k, area_index, E):
    """For one image x of cluster k, summed over the masks `masked` (n, P): 1{p in M}
    Attn_{p->P_{k,j} cap U} (P, max N) and 1{p in M} (P,)."""

    def one(x, m):
        attn = net.apply(params, x, m, E, method=MaskedAttention.attention)
        return model.area_attention(attn, m, area_index[k], cfg.max_areas) * m[:, None]

    return jnp.sum(jax.vmap(one, in_axes=(None, 0))(x, masked), axis=0), jnp.sum(
        masked, axis=0
    ).astype(E.dtype)


def _by_cluster(cfg, num, den, ks, w):
    """Weighted sums per cluster: num (n, P, N), den (n, P), weights w (n,) -> E[... | p in M, k] as
    (P, K, N)."""
    onehot = jax.nn.one_hot(ks, cfg.K, dtype=w.dtype) * w[:, None]
    aa = jnp.einsum("nk,npj->pkj", onehot, num) / jnp.einsum("nk,np->pk", onehot, den)[..., None]
    return jnp.where(valid_areas(cfg)[None], aa, jnp.nan)


def train(cfg: MIMConfig, mode: str, basis, key, tables=None):
    """GD from Q = 0 in one lax.scan. `tables` (mode exact): (images, their probabilities, clusters,
    masks), passed as arguments rather than closed over, so that XLA does not constant-fold tens of
    thousands of masks."""
    net = MaskedAttention(cfg.d, cfg.dtype)
    opt = optax.sgd(cfg.eta)
    area_index = jnp.asarray(area_of(cfg.areas, cfg.P))
    E = basis.E
    if mode == "exact":
        images, w_img, k_img, masks = tables
        w_mask = 1.0 / masks.shape[0]

        def per_image(params, x):
            return jnp.sum(jax.vmap(lambda m: net.apply(params, x, m, E))(masks)) * w_mask

        # vmap, not lax.map: with jax 0.10.2 on the CPU a lax.map here returned garbage in the first
        # record (outside the scan) once steps >= 1 (NaN loss, wrong area attention); vmap is exact
        # (tests/test_mim.py).
        def loss(params, k):
            return jnp.sum(w_img * jax.vmap(lambda x: per_image(params, x))(images))

        def area_attention(params, k):
            num, den = jax.vmap(
                lambda x, kk: _area_attention_sums(cfg, net, params, x, masks, kk, area_index, E)
            )(images, k_img)
            return _by_cluster(cfg, num, den, k_img, w_img * w_mask)
    # masked queries only, chunks of images (`batch`): the literal batch loss, its gradient, its
    # area attention
    else:

        def loss(params, k):
            return batch.loss(cfg, basis, params["params"]["Q"], k, cfg.N)

        def area_attention(params, k):
            aa = batch.area_attention(cfg, basis, params["params"]["Q"], k, cfg.N, area_index)
            return jnp.where(valid_areas(cfg)[None], aa, jnp.nan)

    if mode == "exact":
        grad = jax.grad(loss)
    else:

        def grad(params, k):
            return {"params": {"Q": batch.grad(cfg, basis, params["params"]["Q"], k, cfg.N)}}

    eval_key = engine.eval_key(key)  # recorded quantities use their own samples

    def observe(params, t):
        k = jax.random.fold_in(eval_key, t)
        obs = correlations(cfg, params["params"]["Q"], basis)
        obs["loss"] = loss(params, k)
        obs["area_attention"] = area_attention(params, jax.random.fold_in(k, 1))
        return obs

    params0 = net.init(
        jax.random.key(0), jnp.zeros((cfg.P, cfg.d), cfg.dtype), jnp.zeros((cfg.P,), bool), E
    )
    params, rec = engine.train(
        grad, opt, params0, observe, cfg.steps, cfg.record_every, key, nonfinite=True
    )
    return rec, params["params"]["Q"]


def exact_tables(cfg: MIMConfig, basis):
    """Every (cluster, latent vector) image with its probability and cluster, and every mask (mode
    exact)."""
    images, w_img, k_img = data.exact_images(cfg, basis)
    return images, w_img, k_img, jnp.asarray(data.all_masks(cfg.P, cfg.masked))


train_jit = jax.jit(train, static_argnums=1)  # cfg a pytree: its numbers (eta) traced
train_replicates_jit = jax.jit(
    lambda cfg, mode, basis, keys: jax.vmap(lambda k: train(cfg, mode, basis, k))(keys),
    static_argnums=1,
)


@environment.guarded
@progress.tracked("full MIM", lambda cfg, *a, **k: getattr(cfg, "steps", None))
def simulate(cfg: MIMConfig, mode: str = "exact", replicates: Optional[int] = None) -> Trajectory:
    """Train the literal d x d matrix Q by GD from Q = 0 and record fp_corr, pp_corr,
    area_attention, loss, pp_max.

    mode="exact": GD on the population loss (2.8), every (cluster, latent vector, mask) enumerated.
    mode="sampled": GD on a fresh batch of cfg.N samples each step (`full.mim.batch`: the literal
    loss through the masked queries, in chunks of images); `replicates` independent runs (default 8,
    vmapped) give each observable's mean and standard error `<name>_se`. The trained matrices Q (R,
    d, d) and the embedding E, V are the trajectory's final arrays, saved with it (`trained` reads
    them). progress: None (a bar once the run has taken a few seconds), True or False
    (`dynsim.progress.tracked`).
    """
    R = validate_run_options(cfg, mode, replicates)
    basis = make_basis(cfg)
    if mode == "exact":
        rec, Q = train_jit(cfg, mode, basis, engine.base_key(cfg), exact_tables(cfg, basis))
        observables = {k: np.asarray(v) for k, v in rec.items()}
        finals = np.asarray(Q)[None]
    else:
        rec, Q = train_replicates_jit(cfg, mode, basis, engine.replicate_keys(cfg, R))
        observables = seed_statistics({k: np.asarray(v) for k, v in rec.items()}, keep_seeds=False)
        finals = np.asarray(Q)
    exact = divergence.take(observables)
    steps = recording.recorded_steps(cfg.steps, cfg.record_every)
    meta = environment.meta(
        "full",
        mode,
        cfg,
        replicates=R,
        configurations=exact_size(cfg) if mode == "exact" else None,
        batch_size=cfg.N if mode == "sampled" else None,
        areas=[[list(a) for a in cl] for cl in cfg.areas],
        delta=cfg.delta,
    )
    divergence.flag(
        divergence.nonfinite({"loss": observables["loss"]}, steps),
        steps,
        meta,
        "full",
        cfg.eta,
        2,
        exact,
    )
    # Q (R, d, d): the trained matrices (R = 1 in mode exact), for attention maps
    return Trajectory(steps, observables, meta, {"Q": finals, **basis._asdict()})


def trained(t: Trajectory) -> tuple[np.ndarray, Basis]:
    """The trained matrices Q (R, d, d) of a full run (`simulate`, or one loaded from its file)
    and the embedding they were trained on."""
    if not {"Q", *Basis._fields} <= t.final.keys():
        raise ValueError(
            f"the trajectory holds no trained Q and embedding (final arrays: "
            f"{sorted(t.final)}): a full MIM run's (simulate, its file) has them"
        )
    return t.final["Q"], Basis(*(jnp.asarray(t.final[f]) for f in Basis._fields))


def attention_maps(cfg: MIMConfig, Q, basis) -> jax.Array:
    """attn_{p->q} (K, P, P) of a trained Q on one unmasked image per cluster, z = 1 on every area
    (eq. 2.6).

    Query p's scores are (x_p + e_p)^T Q (x_q + e_q) = e_p^T Q (x_q + e_q), since x_p^T Q = 0 (only
    the rows e_p of Q move, Lemma A.1): row p is what a masked p would see if no other patch were
    masked, except that p's own key is x_p + e_p instead of e_p.
    """
    area_index = jnp.asarray(area_of(cfg.areas, cfg.P))
    ones = jnp.ones((cfg.max_areas,), basis.E.dtype)
    X = jnp.stack([data.content(basis, area_index, k, ones) for k in range(cfg.K)])
    return jax.vmap(lambda x: model.attention(jnp.asarray(Q, basis.E.dtype), x, basis.E))(X)
