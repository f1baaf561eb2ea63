"""MIM: configuration errors, areas, embedding, sympy gradients against jax.grad, reduced against
full exact."""

import dynsim  # noqa: F401  (float64)
import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import full.mim
import reduced.mim
from dynsim import compare
from dynsim.mim import MIMConfig, data, model
from dynsim.mim.embedding import basis
from dynsim.mim.partition import area_of
from reduced.mim import dynamics
from reduced.mim.symbolic import derive

# --- configuration
#   -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "changes, field",
    [
        (dict(P=3), "P"),
        (dict(P=16.0), "P"),
        (dict(K=0), "K"),
        (dict(mask_ratio=1.0), "mask_ratio"),
        (dict(mask_ratio=0.01), "mask_ratio"),
        (dict(kappa_c=0.3, kappa_s=0.5), "kappa_s"),
        (dict(kappa_c=1.2), "kappa_c"),
        (dict(kappa_s=None), "kappa_s"),
        (dict(eta=0.0), "eta"),
        (dict(eta=float("nan")), "eta"),
        (dict(steps=-1), "steps"),
        (dict(record_every=0), "record_every"),
        (dict(d=20), "d"),
        (dict(P=15, partition="grid"), "partition"),
        (dict(partition="hex"), "partition"),
        (dict(z="normal"), "z"),
        (dict(z=[(1.0, 0.5), (2.0, 0.4)]), "z"),
        (dict(z=[(-1.0, 1.0)]), "z"),
        (dict(z=("uniform", 2.0, 1.0)), "z"),
        (dict(dtype="float16"), "dtype"),
        (dict(partitions=[[[0, 1], [2, 3]]]), "partitions"),
        (dict(partitions=[[list(range(16))]]), "partitions"),
        (dict(K=2, partitions=[[list(range(8)), list(range(8, 16))]]), "partitions"),
        (dict(seed=-1), "seed"),
        (dict(N=0), "N"),
        (dict(P=16, kappa_c=0.999, kappa_s=0.5), "kappa_c"),
    ],
)
def test_invalid_config_names_the_field(changes, field):
    with pytest.raises(ValueError, match=rf"MIMConfig\.{field} = "):
        MIMConfig(**changes)


def test_defaults_and_derived_fields():
    cfg = MIMConfig()
    # global round(16^0.75) = 8, locals round(16^0.25) = 2
    assert [len(a) for a in cfg.areas[0]] == [8, 2, 2, 2, 2]
    assert cfg.d == 16 + 5 and cfg.masked == 12  # d = P + N_1; round(0.75 * 16)
    # log(8)/log(16) = 0.75 exactly up to rounding
    assert cfg.delta == pytest.approx(2 * 0.75 - 0.25 - 1, abs=1e-12)
    explicit = MIMConfig(
        P=9, kappa_c=None, kappa_s=None, partitions=[[[0, 1, 2, 3, 4], [5, 6], [7, 8]]]
    )
    assert explicit.areas == (((0, 1, 2, 3, 4), (5, 6), (7, 8)),) and explicit.d == 12


@pytest.mark.parametrize("partition, K", [("grid", 1), ("grid", 4), ("random", 3)])
def test_areas_partition_the_patches(partition, K):
    cfg = MIMConfig(P=64, K=K, kappa_c=0.75, kappa_s=0.4, partition=partition)
    for cluster in cfg.areas:
        assert sorted(q for a in cluster for q in a) == list(range(64))
        assert len(cluster[0]) == max(len(a) for a in cluster)  # the global area is the largest
    if K > 1:
        assert len({c for c in cfg.areas}) > 1  # the clusters do not all share one layout
    if partition == "random":
        # seeded
        assert (
            MIMConfig(P=64, K=K, kappa_c=0.75, kappa_s=0.4, partition="random").areas == cfg.areas
        )


def test_grid_areas_are_rectangles():
    cfg = MIMConfig(P=64, K=2, kappa_c=0.75, kappa_s=0.4)
    for cluster in cfg.areas:
        for area in cluster:
            r, c = np.divmod(np.array(area), 8)
            # fills its bounding box
            assert len(area) == (r.max() - r.min() + 1) * (c.max() - c.min() + 1)


def test_embedding_is_orthonormal_and_rotated():
    cfg = MIMConfig(K=2, d=30)
    b = basis(cfg)
    vecs = np.concatenate(
        [np.asarray(b.E)] + [np.asarray(b.V[k, :n]) for k, n in enumerate(cfg.areas_per_cluster)]
    )
    # Gram matrix of a rounded orthogonal matrix's columns: entries of order d u = 30 x 1.1e-16,
    # 1e-13 is wide
    np.testing.assert_allclose(vecs @ vecs.T, np.eye(vecs.shape[0]), atol=1e-13)
    assert np.mean(np.abs(vecs) > 1e-3) > 0.9  # not axis aligned: almost every coordinate is used


# --- sympy gradients against jax.grad on the literal model
#   -----------------------------------------------------


def _structured_Q(cfg, b, A, B, Bs, p):
    """Q whose row e_p^T Q = sum_j A_j v_{0,j} + sum_q B_{a(q)} e_q (B_self at q = p); other rows
    random."""
    rng = np.random.default_rng(1)
    E, V = np.asarray(b.E), np.asarray(b.V[0])
    a = area_of(cfg.areas, cfg.P)[0]
    Bq = np.array([Bs if q == p else B[a[q]] for q in range(cfg.P)])
    row = A[: V.shape[0]] @ V + Bq @ E
    Q = rng.normal(size=(cfg.d, cfg.d)) * 0.3
    Q = Q - np.outer(E[p], E[p] @ Q) + np.outer(E[p], row)  # replace the e_p row
    return jnp.asarray(Q)


@pytest.mark.parametrize("p, scale", [(0, 1.0), (8, 1.0), (0, 1000.0), (8, 1000.0)])
def test_sympy_partials_equal_jax_grad_of_the_literal_model(p, scale):
    """`dynamics.terms` (sympy's partials in (S_n, R, Z) and the chain rule) against jax.grad of the
    literal model, for a global query (p = 0) and a local one (p = 8). scale = 1000 puts the largest
    score near 900, where e^score overflows float64 (issue 16: the reduced level said "diverged"
    there while the full model, a stable softmax, did not)."""
    cfg = MIMConfig(
        P=9, kappa_c=None, kappa_s=None, partitions=[[[0, 1, 2, 3], [4, 5], [6, 7, 8]]], d=14
    )
    b = basis(cfg)
    rng = np.random.default_rng(0)
    A, B, Bs = rng.normal(size=3) * scale, rng.normal(size=3) * 0.5 * scale, 0.3 * scale
    zvec = np.array([0.7, 1.3, 1.1])
    a = area_of(cfg.areas, cfg.P)[0]
    X = data.content(b, jnp.asarray(area_of(cfg.areas, cfg.P)), 0, jnp.asarray(zvec))
    der = derive()
    n = a[p]
    order = [n] + [j for j in range(3) if j != n]  # `terms` takes the own area first
    for masked_set in itertools.islice(itertools.combinations(range(9), 4), 0, 126, 9):
        if p not in masked_set:
            continue
        masked = np.zeros(9, bool)
        masked[list(masked_set)] = True
        Q = _structured_Q(cfg, b, A, B, Bs, p)

        def loss_p(Q):  # query p's term of the per-sample loss
            Xt = model.masked_input(X, jnp.asarray(masked))
            F = model.reconstruct(model.attention(Q, Xt, b.E), Xt)
            return 0.5 * jnp.sum((F[p] - X[p]) ** 2)

        G = np.asarray(jax.grad(loss_p)(Q))
        E, V = np.asarray(b.E), np.asarray(b.V[0])
        u = np.array([np.sum(~masked & (a == j)) for j in range(3)], float)
        C = np.array([np.sum(a == j) - (j == n) for j in range(3)], float)
        l_, gA, gB, gBs, _ = (
            np.asarray(x)
            for x in dynamics.terms(
                der,
                *(jnp.asarray(v[order]) for v in (A, B)),
                Bs,
                *(jnp.asarray(v[order]) for v in (u, C, zvec)),
            )
        )
        # e_p^T G v_j: the derivative along A_{p,v_j}; the sum over q in area j (q != p) of e_p^T G
        # e_q along B_j
        exp_A = (E[p] @ G @ V.T)[order]
        exp_B = np.array(
            [sum(E[p] @ G @ E[q] for q in range(9) if a[q] == j and q != p) for j in order]
        )
        # a few dozen roundings of O(1) numbers on each side: 1e-12 leaves a margin of ~100 over u =
        # 1.1e-16. At scale 1000 the scores (~1e3) carry absolute errors ~1e3 u on both sides, so
        # each e^(score - max) a relative ~1e-13: 1e-10 keeps the margin of ~100 over a few dozen
        # such terms.
        tol = 1e-12 if scale == 1.0 else 1e-10
        assert (
            np.all(np.isfinite([l_, gBs])) and np.all(np.isfinite(gA)) and np.all(np.isfinite(gB))
        )
        np.testing.assert_allclose(gA, exp_A, rtol=0, atol=tol)
        np.testing.assert_allclose(gB, exp_B, rtol=0, atol=tol)
        assert float(gBs) == pytest.approx(E[p] @ G @ E[p], abs=tol)
        assert float(l_) == pytest.approx(float(loss_p(Q)), abs=tol)


def test_sympy_partials_match_lemma_5_1_closed_form():
    """With B = 0 the FP partials are Lemma 5.1's brackets (docs/derivations/mim-model.md §6), an
    independent derivation."""
    der = derive()
    rng = np.random.default_rng(3)
    for _ in range(20):
        N = 4
        A, z = rng.normal(size=N), rng.uniform(0.5, 1.5, N)
        u, C = rng.integers(0, 4, N).astype(float), np.full(N, 4.0)
        u[0] = max(u[0], 1.0)
        Z = np.sum(u * np.exp(z * A) + (C - u)) + 1.0
        att = u * np.exp(z * A) / Z
        n = 0
        bracket_n = z[n] ** 2 * (1 - att[n]) ** 2 + np.sum(z[1:] ** 2 * att[1:] ** 2)
        gA = np.asarray(
            dynamics.terms(
                der,
                *(jnp.asarray(x) for x in (A, np.zeros(N))),
                0.0,
                *(jnp.asarray(x) for x in (u, C, z)),
            )[1]
        )
        # Lemma 5.1, m = n: A_n grows by eta z_n Attn_n (bracket); so dl/dA_n = -z_n Attn_n
        # (bracket). Rounding: 1e-12.
        assert float(gA[0]) == pytest.approx(-z[0] * att[0] * bracket_n, abs=1e-12)
        for m in range(1, N):
            rest = [j for j in range(1, N) if j != m]
            bracket_m = (
                z[m] ** 2 * att[m] * (1 - att[m])
                + z[n] ** 2 * att[n] * (1 - att[n])
                - np.sum(z[rest] ** 2 * att[rest] ** 2)
            )
            assert float(gA[m]) == pytest.approx(z[m] * att[m] * bracket_m, abs=1e-12)


# --- reduced against full
#   ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def default_runs():
    cfg = MIMConfig(steps=120, record_every=6)
    return cfg, reduced.mim.simulate(cfg), full.mim.simulate(cfg, mode="exact")


def test_reduced_equals_full_exact_default(default_runs):
    cfg, red, ful = default_runs
    # Issue contract: 1e-10. Each level sums <= 1820 masks (full) or 80 count rows (reduced) per
    # step of O(1) terms; rounding grows like sqrt(M) u per step and at most linearly over 120
    # stable steps: ~120 x 43 x 1.1e-16 x 10 (scale of fp_corr) = 6e-12.
    for name in ("fp_corr", "pp_corr", "area_attention", "loss", "pp_max"):
        x, y = red[name], ful[name]
        assert np.array_equal(np.isnan(x), np.isnan(y))
        assert np.nanmax(np.abs(x - y)) < 1e-10, name
    report = compare(red, ful)
    assert report.passed and report.kind == "rounding"
    assert (
        red.meta["level"] == "reduced"
        and red.meta["approximation"] == "exact"
        and ful.meta["level"] == "full"
    )


def test_the_run_learns(default_runs):
    cfg, red, _ = default_runs
    aa = red["area_attention"]
    # (steps, P)
    own = np.array([aa[:, p, 0, a] for p, a in enumerate(area_of(cfg.areas, cfg.P)[0])]).T
    # every query's attention on its own area's unmasked patches has grown
    assert np.all(own[-1] > 2 * own[0])
    assert red["loss"][-1] < 0.6 * red["loss"][0]
    # a local query's global FP correlation falls (Lemma 5.1, item 2)
    glob = red["fp_corr"][:, 8, 0, 0]
    assert np.all(np.diff(glob) < 0)


@pytest.mark.parametrize(
    "cfg",
    [
        MIMConfig(
            P=9,
            kappa_c=0.6,
            kappa_s=0.3,
            partition="random",
            mask_ratio=0.4,
            z=[(0.5, 0.3), (1.5, 0.7)],
            steps=60,
            record_every=10,
        ),
        # areas of size 1
        MIMConfig(P=9, kappa_c=0.6, kappa_s=0.3, mask_ratio=0.5, steps=60, record_every=10),
    ],
)
def test_reduced_equals_full_exact_other_settings(cfg):
    red, ful = reduced.mim.simulate(cfg), full.mim.simulate(cfg)
    for name in ("fp_corr", "pp_corr", "area_attention", "loss"):
        # sums of <= 126 masks x 32 latent vectors; 60 steps: 60 x 64 x 1.1e-16 x 10 ~ 4e-12 < 1e-10
        assert np.nanmax(np.abs(red[name] - ful[name])) < 1e-10, name


def test_pp_frozen_is_labelled_and_deviates_by_the_pp_magnitude():
    cfg = MIMConfig(K=2, steps=40, record_every=10)
    red = reduced.mim.simulate(cfg, approximation="pp_frozen")
    ful = full.mim.simulate(cfg)
    assert red.meta["approximation"] == "pp_frozen" and np.all(red["pp_corr"] == 0)
    report = compare(red, ful)
    assert report.kind == "approximation" and report.levels[0] == "reduced[pp_frozen]"
    # B = 0 by construction: reported, not judged
    assert "pp_corr" not in report.errors and "fp_corr" in report.errors
    assert report.residuals["pp_max"].value == pytest.approx(np.max(np.abs(ful["pp_corr"])))
    # Q = 0 at step 0: both levels start identical
    assert np.nanmax(np.abs(red["area_attention"][0] - ful["area_attention"][0])) < 1e-14


def test_mean_field_counts_at_means():
    cfg = MIMConfig(steps=20, record_every=10)
    exact = reduced.mim.simulate(cfg)
    mf = reduced.mim.simulate(cfg, approximation="mean_field")
    assert (
        mf.meta["approximation"] == "mean_field"
        and mf.meta["configurations"] < exact.meta["configurations"]
    )
    # At Q = 0 Attn_j = u_j / P is linear in the counts, so the expectation equals its value at the
    # mean counts
    np.testing.assert_allclose(mf["area_attention"][0], exact["area_attention"][0], atol=1e-14)
    # later the nonlinearity shows
    assert not np.allclose(mf["fp_corr"][-1], exact["fp_corr"][-1], atol=1e-6)


# --- named errors of the runs
#   ------------------------------------------------------------------------------------


def test_run_errors_are_named():
    with pytest.raises(ValueError, match="approximation = 'frozen'"):
        reduced.mim.simulate(MIMConfig(steps=1), approximation="frozen")
    with pytest.raises(ValueError, match="method = 'flow' is invalid with K = 2"):
        reduced.mim.simulate(MIMConfig(K=2, steps=1), method="flow")
    with pytest.raises(ValueError, match="continuous"):
        reduced.mim.simulate(MIMConfig(z=("uniform", 0.5, 1.5), steps=1))
    with pytest.raises(ValueError, match="mode 'exact' would enumerate"):
        full.mim.simulate(MIMConfig(P=36, kappa_c=0.7, kappa_s=0.3, mask_ratio=0.5, steps=1))
    with pytest.raises(ValueError, match="mode = 'exactly'"):
        full.mim.simulate(MIMConfig(steps=1), mode="exactly")
    with pytest.raises(ValueError, match="replicates = 1"):
        full.mim.simulate(MIMConfig(steps=1), mode="sampled", replicates=1)
    with pytest.raises(TypeError, match="MIMConfig"):
        reduced.mim.simulate(object())


def test_sampled_mode_agrees_statistically_at_the_start():
    cfg = MIMConfig(steps=3, record_every=1, N=256, z=("uniform", 0.8, 1.2))
    ful = full.mim.simulate(cfg, mode="sampled", replicates=4)
    assert ful.meta["mode"] == "sampled" and "loss_se" in ful.observables
    # at Q = 0 the loss is 1/2 E[sum_{p in M} z_p^2] (F = 0 is impossible: F is the mean of the
    # unmasked contents, orthogonal to x_p except in its own area); just check it is finite and
    # positive, and fp_corr moved
    assert np.all(np.isfinite(ful["loss"])) and ful["loss"][0] > 0
    assert np.nanmax(np.abs(ful["fp_corr"][-1])) > 0


def test_first_record_does_not_depend_on_the_run_length():
    """Guards a miscompilation seen with lax.map in the exact observe (jax 0.10.2, CPU): step 0 must
    be Q = 0's values."""
    cfg = MIMConfig(K=2, steps=0, record_every=1)
    alone = full.mim.simulate(cfg)
    longer = full.mim.simulate(cfg.replace(steps=2))
    for name in ("loss", "area_attention", "fp_corr"):
        np.testing.assert_array_equal(alone[name][0], longer[name][0])
    # at Q = 0 the loss is 1/2 E[sum_{p in M} ||F_p - x_p||^2] with uniform attention: F_p = (1/P)
    # sum_{q in U} x_q, so ||F_p - x_p||^2 = 1 - 2 u_{a(p)} / P + sum_j u_j^2 / P^2 over the areas'
    # unmasked counts u_j (z = 1, orthonormal features); the expectation is taken here by brute
    # force over all C(16, 12) masks
    from dynsim.mim.data import all_masks

    a = area_of(cfg.areas, cfg.P)[0]
    masks = all_masks(16, 12)
    per_mask = []
    for m in masks:
        u = np.array([np.sum(~m & (a == j)) for j in range(5)])
        per_mask.append(
            0.5 * sum(1 - 2 * u[a[p]] / 16 + np.sum(u**2) / 256 for p in np.flatnonzero(m))
        )
    # 1820 terms summed: ~1820 u << 1e-13
    assert alone["loss"][0] == pytest.approx(np.mean(per_mask), rel=1e-13)


def test_pp_frozen_fp_dynamics_are_exact_to_first_order_with_clusters():
    """K = 2: the pp_frozen reduction drops B, which is O(eta t) and moves A only at O((eta t)^2)
    (Lemma 5.1's brackets depend on B through the attention). So its FP deviation from full must
    scale like eta^2: doubling eta multiplies it by 4 (measured 4.0008 and 4.0016 for eta 0.01 ->
    0.02 -> 0.04). A first-order error in the K > 1 path (a wrong 1/K, a wrong cluster mapping)
    would give a ratio near 2 or no scaling; the band 3.8-4.2 leaves room for the O(eta) relative
    correction of the next order."""
    devs = []
    for eta in (0.01, 0.02):
        cfg = MIMConfig(K=2, eta=eta, steps=4, record_every=4)
        red, ful = reduced.mim.simulate(cfg, approximation="pp_frozen"), full.mim.simulate(cfg)
        devs.append(np.nanmax(np.abs(red["fp_corr"][-1] - ful["fp_corr"][-1])))
        assert devs[-1] < 1e-4 * np.nanmax(np.abs(ful["fp_corr"][-1]))  # and small against A itself
    assert 3.8 < devs[1] / devs[0] < 4.2
