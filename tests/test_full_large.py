"""The full levels' large-size paths against the literal model: the realistic JSL gradient, the
masked-query MIM batch (loss, gradient, area attention), and the precision guard."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import full.jsl as fj
import full.mim
from dynsim import JSLConfig, MIMConfig, environment
from dynsim.jsl import data as jsl_data
from dynsim.mim import model as mim_model
from dynsim.mim.embedding import basis as mim_basis
from dynsim.mim.partition import area_of
from full.jsl import realistic
from full.jsl.training import model_for
from full.mim import batch

U = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64


def _rel(a, b):
    return float(jnp.max(jnp.abs(a - b)) / jnp.max(jnp.abs(b)))


def test_realistic_gradient_equals_jax_grad():
    """`empirical_grad` (the v-gradient contracted per sample) against jax.grad of the loss, at a
    point far from the near-linear start so every term counts. Both are the same chain rule summed
    in another order: the v-gradient sums N D = 768 products, whose rounding is bounded by N D u
    relative to the sum of their absolute values (<= a few times the largest entry here), 1e-12 is
    ten times that."""
    cfg = JSLConfig(D=8, C=2, d=12, N=96, q=0.5)
    w = jsl_data.feature(cfg)
    X, y = jsl_data.sample(jax.random.key(7), cfg, cfg.N, w)
    params = jax.tree.map(lambda a: 30.0 * a, realistic.initial_params(cfg, jax.random.key(3), w))
    model = model_for(cfg)
    # jitted (one program each, not one per operation; the bound is rounding's either way)
    ref = jax.jit(lambda p: jax.grad(realistic.empirical_loss, argnums=1)(model, p, X, y))(params)
    new = jax.jit(lambda p: realistic.empirical_grad(model, p, X, y))(params)
    ref, new = ref["params"], new["params"]
    assert _rel(new["A"], ref["A"]) < 1e-12 and _rel(new["v"], ref["v"]) < 1e-12
    assert float(jnp.max(jnp.abs(ref["v"]))) > 1e-3  # a gradient that is not trivially zero


# ---------------------------------------------------------------------------------------- MIM batch
MIM = MIMConfig(P=16, K=2, N=12)


def _generic_batch(cfg, n, key):
    """n dense random images (not the setting's contents: the rewrite must hold for every X) and
    random masks."""
    k_x, k_m = jax.random.split(key)
    X = jax.random.normal(k_x, (n, cfg.P, cfg.d))
    ranks = jnp.argsort(jax.random.uniform(k_m, (n, cfg.P)), axis=1)
    return X, jnp.argsort(ranks, axis=1) < cfg.masked


def _literal_mean(cfg, basis, X, masked):
    """The literal model's mean loss as a function of Q, jitted (as are the tests' gradients: one
    program each instead of one per operation)."""
    return jax.jit(
        lambda Q: jnp.mean(
            jax.vmap(lambda x, m: mim_model.masked_loss(Q, x, m, basis.E))(X, masked)
        )
    )


def test_masked_query_loss_and_gradient_equal_the_literal_model():
    """chunk_loss (G = E Q, B = G E^T, exp(B) 1_M, masked queries only, Gram form) against
    `model.masked_loss` on every image, for a dense random Q (not only the rows that GD moves) and
    dense random X. The Gram form adds and subtracts terms of size |x|^2 ~ d = 33 per query: 12 P
    |x|^2 u ~ 1e-12 absolute on a loss of ~1e2, so 1e-12 relative holds with room; the gradients are
    sums of a few thousand such products: 1e-11 relative to their largest entry."""
    cfg = MIM
    basis = mim_basis(cfg)
    X, masked = _generic_batch(cfg, cfg.N, jax.random.key(1))
    Q = 0.2 * jax.random.normal(jax.random.key(2), (cfg.d, cfg.d))
    literal = _literal_mean(cfg, basis, X, masked)

    @jax.jit
    def new(Q):
        return batch.chunk_loss(cfg, basis.E, batch.shared(Q, basis.E), X, masked) / cfg.N

    assert abs(float(new(Q) - literal(Q))) < 1e-12 * float(literal(Q))
    g_lit, g_new = jax.jit(jax.grad(literal))(Q), jax.jit(jax.grad(new))(Q)
    assert _rel(g_new, g_lit) < 1e-11 and float(jnp.max(jnp.abs(g_lit))) > 1e-3


def test_masked_query_softmax_is_stable_at_large_scores():
    """Position scores differing by thousands (far past exp's range): the shift keeps every term
    finite, and the attention equals the literal softmax's (entries in [0, 1], sums of P terms:
    1e-13 absolute). Q = 3000 E^T R E puts B = E Q E^T at +-1e4 with its row maxima on unmasked and
    on masked keys alike; a shift by the unmasked scores alone overflows. The contents are taken
    orthogonal to the positions (as the setting's are), so the scores' content part G_p x_q stays
    O(1): the shift's documented range (`batch.attention`)."""
    cfg = MIM
    basis = mim_basis(cfg)
    X, masked = _generic_batch(cfg, 4, jax.random.key(6))
    X = X - (X @ basis.E.T) @ basis.E
    R = jax.random.normal(jax.random.key(7), (cfg.P, cfg.P))
    Q = 3000.0 * basis.E.T @ R @ basis.E + 0.1 * jax.random.normal(
        jax.random.key(8), (cfg.d, cfg.d)
    )
    attn, iU, _ = jax.jit(
        lambda Q: batch.attention(cfg, basis.E, batch.shared(Q, basis.E), X, masked)
    )(Q)
    lit = jax.jit(
        jax.vmap(lambda x, m: mim_model.attention(Q, mim_model.masked_input(x, m), basis.E))
    )(X, masked)
    lit_U = jax.vmap(lambda a, i: a[:, i])(lit, iU)
    rows = np.asarray(masked)
    assert np.all(np.isfinite(np.asarray(attn)))
    np.testing.assert_allclose(np.asarray(attn)[rows], np.asarray(lit_U)[rows], rtol=0, atol=1e-13)
    # saturated rows: the regime where a naive exp overflows
    assert float(jnp.max(lit_U[masked])) > 0.5
    g_new = jax.jit(
        jax.grad(lambda Q: batch.chunk_loss(cfg, basis.E, batch.shared(Q, basis.E), X, masked))
    )(Q)
    g_lit = jax.jit(jax.grad(lambda Q: 4 * _literal_mean(cfg, basis, X, masked)(Q)))(Q)
    # saturated softmax: both gradients are rounding noise around exp(-gap) ~ 0, of order u |x|^2
    # |E|: 1e-12 absolute
    assert np.all(np.isfinite(np.asarray(g_new))) and float(jnp.max(jnp.abs(g_new - g_lit))) < 1e-12


def test_batch_step_is_the_literal_batch_of_its_chunks():
    """`batch.loss`, `batch.grad` and `batch.area_attention` draw chunk c from fold_in(key, c); on
    those same images the literal module gives the same loss and gradient, and the same area
    attention (eq. 3.1) averaged per cluster over the images that mask p. Sums of a few hundred
    terms of size <= 1: 1e-13 relative (area attention in [0, 1]: 1e-13 absolute)."""
    cfg = MIM.replace(N=48)  # 3 chunks of 16 images
    basis = mim_basis(cfg)
    key = jax.random.key(4)
    count, c, draw = batch.chunks(cfg, basis, key, cfg.N)
    parts = [draw(i) for i in range(count)]
    X, masked, ks = (jnp.concatenate(z) for z in zip(*parts))
    assert X.shape[0] == cfg.N and count == 3
    Q = 0.3 * jax.random.normal(jax.random.key(5), (cfg.d, cfg.d))
    literal = _literal_mean(cfg, basis, X, masked)
    assert abs(float(batch.loss(cfg, basis, Q, key, cfg.N) - literal(Q))) < 1e-13 * float(
        literal(Q)
    )
    assert _rel(batch.grad(cfg, basis, Q, key, cfg.N), jax.jit(jax.grad(literal))(Q)) < 1e-13
    area_index = jnp.asarray(area_of(cfg.areas, cfg.P))
    attn = jax.jit(
        jax.vmap(lambda x, m: mim_model.attention(Q, mim_model.masked_input(x, m), basis.E))
    )(X, masked)
    per = jax.jit(
        jax.vmap(
            lambda a, m, k: (
                mim_model.area_attention(a, m, area_index[k], cfg.max_areas) * m[:, None]
            )
        )
    )(attn, masked, ks)
    onehot = jax.nn.one_hot(ks, cfg.K)
    ref = (
        jnp.einsum("nk,npj->pkj", onehot, per)
        / jnp.einsum("nk,np->pk", onehot, masked.astype(float))[..., None]
    )
    new = batch.area_attention(cfg, basis, Q, key, cfg.N, area_index)
    np.testing.assert_allclose(new, ref, rtol=0, atol=1e-13)
    # a nonuniform attention, so the comparison can fail
    assert float(jnp.std(ref[~jnp.isnan(ref)])) > 1e-2


def test_chunk_size_divides_the_batch():
    for n in (1, 7, 64, 96, 1024, 1031):
        c = batch.chunk_size(n)
        assert n % c == 0 and 1 <= c <= batch.MAX_CHUNK
        # the largest such divisor
        assert all(n % k for k in range(c + 1, min(n, batch.MAX_CHUNK) + 1))


def test_sampled_mim_runs_the_batch_path():
    """A short sampled run with clusters of different area counts: finite loss, and area attention
    NaN exactly where an area does not exist in its cluster (the batch path leaves 0 there; the run
    masks it)."""
    parts = [
        [list(range(8)), [8, 9], [10, 11], [12, 13], [14, 15]],
        [list(range(8)), [8, 9, 10, 11], [12, 13, 14, 15]],
    ]
    cfg = MIMConfig(P=16, K=2, N=64, steps=2, record_every=1, partitions=parts)
    assert cfg.areas_per_cluster == (5, 3)
    t = full.mim.simulate(cfg, mode="sampled", replicates=2)
    assert np.all(np.isfinite(t["loss"]))
    aa = np.asarray(t["area_attention"])
    valid = full.mim.training.valid_areas(cfg)
    assert np.all(np.isnan(aa[:, :, ~valid])) and np.all(np.isfinite(aa[:, :, valid]))


# ---------------------------------------------------------------------------------- precision guard
def test_float32_only_when_asked_and_recorded():
    """float64 is refused when JAX would silently compute in float32 (x64 off); float32 runs when
    the config asks, in float32, and meta records dtype and the matmul precision in effect
    ("highest" unless another was asked)."""
    cfg = JSLConfig(D=8, C=2, steps=4, record_every=2)
    with jax.enable_x64(False):
        with pytest.raises(ValueError, match="jax_enable_x64"):
            fj.simulate(cfg)
        t32 = fj.simulate(cfg.replace(dtype="float32"))
    assert t32["alpha"].dtype == np.float32
    assert (t32.meta["dtype"], t32.meta["matmul_precision"]) == ("float32", "highest")
    t64 = fj.simulate(cfg)
    assert t64["alpha"].dtype == np.float64 and t64.meta["matmul_precision"] == "highest"
    with jax.default_matmul_precision("tensorfloat32"):
        asked = full.mim.simulate(
            MIMConfig(steps=1, record_every=1, dtype="float32"), mode="sampled", replicates=2
        )
    assert (asked.meta["dtype"], asked.meta["matmul_precision"]) == ("float32", "tensorfloat32")


def test_precision_guard_sets_highest_products():
    """Inside the guard a float32 product is traced at precision HIGHEST (what an accelerator then
    computes), unless the caller asked for another precision."""
    x = jnp.ones((3, 3), jnp.float32)

    def traced():
        return jax.jit(lambda a: a @ a).lower(x).as_text()

    assert "HIGHEST" not in traced()  # outside the guard: JAX's default
    with environment.precision("float32"):
        assert "HIGHEST" in traced()
    with jax.default_matmul_precision("tensorfloat32"), environment.precision("float32"):
        assert "HIGHEST" not in traced()
