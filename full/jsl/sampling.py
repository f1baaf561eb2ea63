"""Mode "sampled" of full JSL without the N D d noise normals: the batch's loss and gradient drawn
exactly in law.

A batch of Assumption 1 is X_nj = s_nj w* + xi_nj with xi_nj ~ N(0, sigma^2 (I - w* w*^T)) iid.
Model (T) reads X only through the projections proj_nj = <v, X_nj>, and the v-gradient of the batch
loss is sum_nj G_nj X_nj with G = dL/dproj (N, D), a function of proj (and A, y). Write v = alpha w*
+ r u (u a unit vector orthogonal to w*, r = |v - alpha w*|; u = 0 when r = 0) and split each noise
vector into its u-component and the rest: xi_nj = sigma g_nj u + zeta_nj, where g_nj = <u,
xi_nj>/sigma ~ N(0, 1) and zeta_nj ~ N(0, sigma^2 P) with P = I - w* w*^T - u u^T, all independent
(orthogonal components of one Gaussian). Then

    proj_nj = alpha s_nj + sigma r g_nj,
    sum_nj G_nj X_nj = (sum_nj G_nj s_nj) w* + sigma (sum_nj G_nj g_nj) u + sum_nj G_nj zeta_nj.

G depends on the batch only through (y, s, g), so, conditionally on them, the last sum is a centred
Gaussian with covariance sigma^2 |G|_F^2 P: it has the law of sigma |G|_F P h for one h ~ N(0, I_d)
(P is a projection, P P^T = P). Drawing (y, s, g, h), that is N D + d normals instead of N D d,
therefore gives the batch's loss and its gradient (A and v) with exactly the joint law of the
literal batch's. Fresh batches are independent across steps, so every GD trajectory, and every
recorded quantity, has the law of the literal run's; only the random stream differs (a seed gives
other, equally distributed samples). If r = 0 (v on the w* line), u = 0 and the formula gives sigma
|G|_F (I - w* w*^T) h, which is again the literal law (G then does not depend on the noise at all).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from dynsim.draws import flat
from dynsim.jsl import JSLConfig, data
from dynsim.jsl.model import forward, logistic_loss

NOISE_TAG = 3  # fold_in tag of the noise draws (the signs use data.sample_signs on fold_in(key, 0))


def split_v(v, w_star):
    """(alpha, r, u): v = alpha w* + r u with u a unit vector orthogonal to w* (u = 0 where r = 0).

    The orthogonal part is projected twice (Gram-Schmidt reorthogonalization): one projection leaves
    a w*-component of order eps |v|, which relative to a small r would tilt u towards w* and put
    noise on alpha.
    """
    alpha = jnp.dot(v, w_star)
    perp = v - alpha * w_star
    perp = perp - jnp.dot(perp, w_star) * w_star
    r = jnp.linalg.norm(perp)
    u = jnp.where(r > 0, perp / jnp.where(r > 0, r, 1.0), 0.0)
    return alpha, r, u


def draw(key, cfg: JSLConfig, n: int, dtype):
    """(y (n,), s (n, D), g (n, D), h (d,)): labels and signs of Assumption 1, the noise along u,
    and the rest."""
    y, s = data.sample_signs(jax.random.fold_in(key, 0), cfg, n, dtype)
    k_g, k_h = jax.random.split(jax.random.fold_in(key, NOISE_TAG))
    g = flat(jax.random.normal, k_g, (n, cfg.D), dtype)
    return y, s, g, jax.random.normal(k_h, (cfg.d,), dtype)


def projections_loss(model, A, y, proj):
    """mean softplus(-y F) with F = model (T) of the projections proj_nj = <v, X_nj> (n, D)."""
    return jnp.mean(logistic_loss(y * forward(A, proj, tau=model.tau, p=model.p, nu=model.nu)))


def loss(model, params, key, cfg: JSLConfig, w_star, n: int):
    """The loss of a fresh batch of n samples of Assumption 1 (in law: module docstring)."""
    A, v = params["params"]["A"], params["params"]["v"]
    y, s, g, _ = draw(key, cfg, n, v.dtype)
    alpha, r, _ = split_v(v, w_star)
    return projections_loss(model, A, y, alpha * s + cfg.sigma * r * g)


def grad(model, params, key, cfg: JSLConfig, w_star, n: int):
    """The gradient in (A, v) of the loss of a fresh batch of n samples (in law: module docstring),
    as params."""
    A, v = params["params"]["A"], params["params"]["v"]
    y, s, g, h = draw(key, cfg, n, v.dtype)
    alpha, r, u = split_v(v, w_star)
    gA, G = jax.grad(lambda A, proj: projections_loss(model, A, y, proj), argnums=(0, 1))(
        A, alpha * s + cfg.sigma * r * g
    )
    rest = h - jnp.dot(h, w_star) * w_star - jnp.dot(h, u) * u  # P h
    gv = jnp.sum(G * s) * w_star + cfg.sigma * (jnp.sum(G * g) * u + jnp.linalg.norm(G) * rest)
    return {"params": {"A": gA, "v": gv}}
