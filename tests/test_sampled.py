"""Sampled (Monte Carlo) full-matrix GD against the exact reduced dynamics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import full.jsl as fj
import reduced.jsl as rj
from dynsim import JSLConfig, compare
from dynsim.jsl import data
from full.jsl import realistic, sampling
from full.jsl.training import model_for


@pytest.fixture(scope="module")
def sampled():
    cfg = JSLConfig(D=8, C=2, steps=200, record_every=20, N=4096)
    return cfg, fj.simulate(cfg, mode="sampled", replicates=8)


def test_sampled_agrees_with_exact_within_its_band(sampled):
    """The band: Student t (7 dof) at 99.9% family-wise over the recorded steps x standard error of
    the mean of 8 seeded runs. With fixed seeds the test is deterministic; under the null it would
    fail with probability <= 0.1% per observable (plus the O(1/N) bias documented in docs/jsl.md,
    small at N = 4096)."""
    cfg, ful = sampled
    red = rj.simulate(cfg)
    report = compare(red, ful)
    assert report.kind == "statistical"
    assert report.passed, report.table()
    assert all(ful[f"{k}_se"][-1] > 0 for k in ("alpha", "gamma", "rho", "loss"))
    assert ful.meta["replicates"] == 8 and ful.meta["batch_size"] == 4096
    # sampling noise really is present: the full run is not secretly exact
    assert report.errors["alpha"].max_abs > 1e-6 and ful["v_perp"][-1] > 1e-4


def test_band_detects_a_different_dynamics(sampled):
    """The same sampled run against exact dynamics at another learning rate must disagree."""
    cfg, ful = sampled
    other = rj.simulate(cfg.replace(eta=0.04))
    assert not compare(other, ful).passed


def test_sampled_needs_two_replicates():
    with pytest.raises(ValueError, match="replicates"):
        fj.simulate(JSLConfig(D=8, C=2, steps=1), mode="sampled", replicates=1)
    with pytest.raises(ValueError, match="mode = 'other'"):
        fj.simulate(JSLConfig(D=8, C=2, steps=1), mode="other")


def test_sampled_is_reproducible(sampled):
    """The module's sampled run again (its compiled program reused): equal to the last bit; only the
    seed changed (the same replicates, whose keys split the seed's): other numbers."""
    cfg, a = sampled
    b = fj.simulate(cfg, mode="sampled", replicates=8)
    for k in a.observables:
        assert np.array_equal(a[k], b[k]), k
    c = fj.simulate(cfg.replace(seed=1), mode="sampled", replicates=8)
    assert not np.array_equal(a["alpha"], c["alpha"])


# ----------------------------------------------- the batch drawn through its projections (sampling)
SMALL = JSLConfig(D=4, C=2, d=6, N=8, q=0.5)
U = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64


def _point(cfg):
    """A (off the orbit symmetry, softmax far from uniform) and v with parts along w* and off it."""
    w = data.feature(cfg)
    k_A, k_v = jax.random.split(jax.random.key(5))
    A = jnp.where(
        jnp.eye(cfg.D, dtype=bool), cfg.sigma_A, 2.0 * jax.random.normal(k_A, (cfg.D, cfg.D))
    )
    v = 0.3 * w + 0.4 * jax.random.normal(k_v, (cfg.d,))
    return {"params": {"A": A, "v": v}}, w


def test_projections_and_gradient_equal_the_literal_batch():
    """On a literal batch X (data.sample): proj = alpha s + sigma r g with s = <X, w*>, g = <X,
    u>/sigma, the A-gradient and the w*- and u-components of the v-gradient are the literal ones,
    and the rest of the literal v-gradient is orthogonal to w* and u (it is the sum G zeta that
    `sampling.grad` draws as sigma |G| P h). Float64 rounding of sums of a few dozen terms of size
    <= 1e2: 1e-12 relative leaves a wide margin."""
    cfg = SMALL
    params, w = _point(cfg)
    model = model_for(cfg)
    X, y = data.sample(jax.random.key(9), cfg, cfg.N, w)
    v = params["params"]["v"]
    alpha, r, u = sampling.split_v(v, w)
    # as below
    assert (
        abs(float(jnp.dot(u, w))) < 4 * cfg.d * U
        and abs(float(jnp.linalg.norm(u)) - 1) < 4 * cfg.d * U
    )
    s, g = X @ w, (X @ u) / cfg.sigma
    proj = alpha * s + cfg.sigma * r * g
    np.testing.assert_allclose(proj, X @ v, rtol=0, atol=1e-14)
    lit = jax.grad(lambda p: realistic.empirical_loss(model, p, X, y))(params)["params"]
    gA, G = jax.grad(lambda A, pr: sampling.projections_loss(model, A, y, pr), argnums=(0, 1))(
        params["params"]["A"], proj
    )
    scale = float(jnp.max(jnp.abs(lit["v"])))
    np.testing.assert_allclose(gA, lit["A"], rtol=0, atol=1e-12 * float(jnp.max(jnp.abs(lit["A"]))))
    assert abs(float(jnp.dot(lit["v"], w) - jnp.sum(G * s))) < 1e-12 * scale
    assert abs(float(jnp.dot(lit["v"], u) - cfg.sigma * jnp.sum(G * g))) < 1e-12 * scale
    rest = lit["v"] - jnp.dot(lit["v"], w) * w - jnp.dot(lit["v"], u) * u
    # the part drawn as sigma |G| P h is really there
    assert float(jnp.linalg.norm(rest)) > 1e-3 * scale


def _statistics(cfg, params, w, grad_fn, key, M):
    """M batches: (loss, gv.w, gv.u, gv.c (c orthogonal to w* and u), gA[0, 1]) per batch, vmapped
    over the keys."""
    model = model_for(cfg)
    _, _, u = sampling.split_v(params["params"]["v"], w)
    c = jax.random.normal(jax.random.key(1), (cfg.d,))
    c = c - jnp.dot(c, w) * w - jnp.dot(c, u) * u

    def one(k):
        loss, g = grad_fn(model, params, k)
        gv = g["params"]["v"]
        return jnp.stack([loss, gv @ w, gv @ u, gv @ c, g["params"]["A"][0, 1]])

    return np.asarray(jax.jit(jax.vmap(one))(jax.random.split(key, M)))


def test_sampled_gradient_has_the_law_of_the_literal_batch_gradient():
    """Two-sample Kolmogorov-Smirnov tests (4000 batches each) of the loss, three components of the
    v-gradient and an entry of the A-gradient: `sampling` against the literal batch (data.sample +
    jax.grad). Level 1e-6 per statistic (fixed seeds: deterministic; under the null a failure has
    probability <= 5e-6). The same test rejects a draw that drops the factor |G|_F of the h term
    (power check, p < 1e-6)."""
    cfg = SMALL
    params, w = _point(cfg)
    M = 4000

    def literal(model, p, k):
        X, y = data.sample(k, cfg, cfg.N, w)
        return jax.value_and_grad(lambda p: realistic.empirical_loss(model, p, X, y))(p)

    def drawn(model, p, k):
        return sampling.loss(model, p, k, cfg, w, cfg.N), sampling.grad(model, p, k, cfg, w, cfg.N)

    def without_norm(model, p, k):  # the h term without its factor |G|_F: a wrong law along c
        y, s, g, h = sampling.draw(k, cfg, cfg.N, w.dtype)
        alpha, r, u = sampling.split_v(p["params"]["v"], w)
        loss, (gA, G) = jax.value_and_grad(
            lambda A, pr: sampling.projections_loss(model, A, y, pr), argnums=(0, 1)
        )(p["params"]["A"], alpha * s + cfg.sigma * r * g)
        rest = h - jnp.dot(h, w) * w - jnp.dot(h, u) * u
        return loss, {
            "params": {"A": gA, "v": jnp.sum(G * s) * w + cfg.sigma * (jnp.sum(G * g) * u + rest)}
        }

    a = _statistics(cfg, params, w, literal, jax.random.key(2), M)
    b = _statistics(cfg, params, w, drawn, jax.random.key(3), M)
    for i in range(a.shape[1]):
        assert stats.ks_2samp(a[:, i], b[:, i]).pvalue > 1e-6, i
    wrong = _statistics(cfg, params, w, without_norm, jax.random.key(3), M)
    # power: the same test sees the wrong law
    assert stats.ks_2samp(a[:, 3], wrong[:, 3]).pvalue < 1e-6


def test_split_v_on_the_feature_line():
    """v = alpha w* (the idealized start): r is at rounding level and u is still orthogonal to w*
    (the double projection), or exactly 0 when r = 0, so no noise lands on alpha. Bound 4 d u: the
    second projection leaves a w*-component of d u |perp| (a d-term dot product), d u again after
    normalizing, plus d u for the dot product that measures it; a single projection would leave O(1)
    here (u = perp/r with r ~ u |v|)."""
    w = data.feature(SMALL)
    for v in (0.1 * w, jnp.zeros(SMALL.d)):
        alpha, r, u = sampling.split_v(v, w)
        assert float(r) < 1e-16 and abs(float(jnp.dot(u, w))) < 4 * SMALL.d * U
