"""The realistic problem (E) (full.jsl.realistic), the new full-level observables and the exact 0-1
error."""

import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import full.jsl as fj
from dynsim.jsl import JSLConfig, data, partition
from full.jsl import population, realistic
from full.jsl.observables import reduction

U = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64

# One small problem shared by the tests below (each new shape costs a compile of several seconds).
# q = 0.9: test error > 0
CFG = JSLConfig(D=4, C=2, q=0.9, N=96, n_test=80, steps=30, record_every=10, eta=0.05, omega=0.1)
SEEDS = 3


@pytest.fixture(scope="module")
def runs():
    """The same seeded run twice."""
    return realistic.run(CFG, seeds=SEEDS), realistic.run(CFG, seeds=SEEDS)


def numpy_F(cfg, A, v, X):
    """Model (T) in plain numpy: F = sum_i sigma(D sum_j softmax(A/tau)_ij <v, X_j>)."""
    logits = np.asarray(A) / cfg.tau
    S = np.exp(logits - logits.max(axis=1, keepdims=True))
    S /= S.sum(axis=1, keepdims=True)
    pre = cfg.D * np.einsum("ij,nj->ni", S, np.asarray(X) @ np.asarray(v))
    return np.sum(pre**cfg.p + cfg.nu * pre, axis=1)


def test_run_is_reproducible(runs):
    (t1, f1), (t2, f2) = runs
    assert t1.observables.keys() == t2.observables.keys()
    for k in t1.observables:
        np.testing.assert_array_equal(t1[k], t2[k])
    for k in f1:
        np.testing.assert_array_equal(f1[k], f2[k])


def test_run_shapes_and_meta(runs):
    traj, final = runs[0]
    R, n_rec = SEEDS, len(traj.steps)
    for name in (
        "alpha",
        "gamma",
        "rho",
        "loss",
        "test_loss",
        "test_error",
        "cos_v",
        "within_attention",
        "between_attention",
        "patch_association",
        "gamma_std",
        "rho_std",
        "own_set_attention",
        "v_perp",
    ):
        assert traj[name].shape == (n_rec,) and traj[f"{name}_se"].shape == (n_rec,)
        assert traj[f"{name}_seeds"].shape == (n_rec, R)
        np.testing.assert_allclose(traj[name], traj[f"{name}_seeds"].mean(axis=1), rtol=0, atol=0)
    assert final["A"].shape == final["A0"].shape == (R, CFG.D, CFG.D) and final["v"].shape == final[
        "v0"
    ].shape == (R, CFG.d)
    np.testing.assert_array_equal(final["w_star"], np.asarray(data.feature(CFG)))
    m = traj.meta
    assert (m["level"], m["mode"], m["seeds"], m["replicates"], m["N"], m["n_test"]) == (
        "full",
        "realistic",
        R,
        R,
        96,
        80,
    )
    np.testing.assert_array_equal(m["initial_projection"]["alpha"], final["v0"] @ final["w_star"])
    within, between = partition.orbit_masks(CFG)
    np.testing.assert_array_equal(
        m["initial_projection"]["gamma"], final["A0"][:, within].mean(axis=1)
    )
    np.testing.assert_array_equal(
        m["initial_projection"]["rho"], final["A0"][:, between].mean(axis=1)
    )
    # the recorded start is the returned start
    np.testing.assert_array_equal(traj["alpha_seeds"][0], final["v0"] @ final["w_star"])


def test_diagonal_fixed_and_off_diagonal_moves(runs):
    _, final = runs[0]
    off = ~np.eye(CFG.D, dtype=bool)
    # the frozen diagonal is multiplied by an exact 0 mask every step: it stays sigma_A bit for bit
    np.testing.assert_array_equal(np.diagonal(final["A"], axis1=1, axis2=2), CFG.sigma_A)
    np.testing.assert_array_equal(np.diagonal(final["A0"], axis1=1, axis2=2), CFG.sigma_A)
    assert np.all(final["A"][:, off] != final["A0"][:, off]) and np.all(final["v"] != final["v0"])


def test_initialization_statistics():
    """A_ij (i != j) and v_k iid N(0, omega^2) (Parametrization 3.1, realistic): chi-square and mean
    tests.

    Two-sided level 1e-6 each: a correct init fails with probability < 4e-6 over the key; with n =
    9900 and n = 4000 entries a std off by 10% already leaves the chi-square band (its half-width is
    ~7% and ~11%).
    """
    cfg = JSLConfig(D=100, C=2, d=4000, omega=0.03, sigma_A=1.7)
    p = realistic.initial_params(cfg, jax.random.key(11), data.feature(cfg))["params"]
    A, v = np.asarray(p["A"]), np.asarray(p["v"])
    np.testing.assert_array_equal(np.diag(A), cfg.sigma_A)
    level = 1e-6
    for x in (A[~np.eye(cfg.D, dtype=bool)], v):
        n = x.size
        chi2 = np.sum(x**2) / cfg.omega**2
        assert stats.chi2.ppf(level / 2, n) < chi2 < stats.chi2.ppf(1 - level / 2, n), (n, chi2)
        z = x.mean() / (cfg.omega / math.sqrt(n))
        assert abs(z) < stats.norm.ppf(1 - level / 2), z
    # different keys give different draws; omega = 0 gives the idealized A = sigma_A I, v = 0
    q = realistic.initial_params(cfg.replace(omega=0.0), jax.random.key(11), None)["params"]
    np.testing.assert_array_equal(np.asarray(q["A"]), cfg.sigma_A * np.eye(cfg.D))
    np.testing.assert_array_equal(np.asarray(q["v"]), 0.0)


def plain_loss(cfg, A, v, X, y):
    """Problem (E) written independently in plain jnp (no flax, no dynsim.jsl.model)."""
    logits = A / math.sqrt(cfg.d)
    S = jnp.exp(logits - jnp.max(logits, axis=1, keepdims=True))
    S = S / jnp.sum(S, axis=1, keepdims=True)
    proj = jnp.einsum("nkd,d->nk", X, v)
    pre = cfg.D * proj @ S.T
    F = jnp.sum(pre**cfg.p + cfg.nu * pre, axis=1)
    return jnp.mean(jnp.log1p(jnp.exp(-y * F)))


def test_gradient_and_one_gd_step_match_plain_loss():
    """jax.grad of (E) through flax equals jax.grad of an independent plain-jnp (E); one `train`
    step is GD on it.

    Rounding: both compute every per-sample gradient entry g_n by a chain of K <= 2 (D + d + p) + 20
    roundings (dot products of length D or d, softmax, power) in a different order, so each differs
    by <= 2 K u |g_n| up to cancellation inside the softmax Jacobian S (delta - S), at most a factor
    2; the mean over n adds n u mean|g_n|. So |difference| <= (8 K + n) u mean_n |g_n| entrywise.
    """
    cfg = JSLConfig(D=6, C=3, d=5, N=50, n_test=10, steps=1, record_every=1, omega=0.3, eta=0.05)
    w = data.feature(cfg)
    X, y = data.sample(jax.random.key(3), cfg, cfg.N, w)
    params = realistic.initial_params(cfg, jax.random.key(4), w)
    A, v = params["params"]["A"], params["params"]["v"]
    model = fj.model_for(cfg)
    g = jax.jit(jax.grad(lambda p: realistic.empirical_loss(model, p, X, y)))(params)["params"]
    plain_grad = jax.grad(lambda A, v, X, y: plain_loss(cfg, A, v, X, y), argnums=(0, 1))
    gA, gv = jax.jit(plain_grad)(A, v, X, y)
    per = jax.jit(jax.vmap(lambda x, t: plain_grad(A, v, x[None], t[None])))(X, y)
    K = 2 * (cfg.D + cfg.d + cfg.p) + 20
    for mine, ref, each in ((g["A"], gA, per[0]), (g["v"], gv, per[1])):
        tol = (8 * K + cfg.N) * U * np.mean(np.abs(np.asarray(each)), axis=0)
        assert np.all(np.abs(np.asarray(mine) - np.asarray(ref)) <= tol)
    assert np.all(
        np.abs(np.asarray(gv))
        > 1e3 * (8 * K + cfg.N) * U * np.mean(np.abs(np.asarray(per[1])), axis=0)
    )
    # one GD step of `train`: params - eta grad with the diagonal of A frozen (an update adds <= u
    # |A| more)
    final, rec = jax.jit(lambda p: realistic.train(cfg, p, w, (X, y), (X[:10], y[:10])))(params)
    want_A = np.asarray(A) - cfg.eta * np.asarray(gA) * (1 - np.eye(cfg.D))
    want_v = np.asarray(v) - cfg.eta * np.asarray(gv)
    tol_A = cfg.eta * (8 * K + cfg.N) * U * np.mean(
        np.abs(np.asarray(per[0])), axis=0
    ) + 2 * U * np.abs(want_A)
    tol_v = cfg.eta * (8 * K + cfg.N) * U * np.mean(
        np.abs(np.asarray(per[1])), axis=0
    ) + 2 * U * np.abs(want_v)
    assert np.all(np.abs(np.asarray(final["params"]["A"]) - want_A) <= tol_A)
    assert np.all(np.abs(np.asarray(final["params"]["v"]) - want_v) <= tol_v)
    # the recorded training loss at step 0 is (E) at the start (the same few roundings per sample:
    # 64 u relative)
    assert abs(float(rec["loss"][0]) - float(plain_loss(cfg, A, v, X, y))) <= 64 * U * float(
        rec["loss"][0]
    )


def test_test_error_is_a_direct_count(runs):
    """test_error = mean over the test set of 1[yF < 0] + 1/2 1[yF = 0], recounted in numpy at the
    final params.

    numpy's F differs from jax's by rounding; a margin within 1e-9 max|F| of 0 could flip, so the
    counts may differ by at most those (their number is printed by the assertion; at these sizes it
    is 0). The mean of halves and ones is an exact sum and one division (XLA may multiply by a
    rounded 1/n: 2 u relative).
    """
    traj, final = runs[0]
    w = final["w_star"]
    for r in range(SEEDS):
        _, (X, y) = realistic.datasets(CFG, realistic.seed_key(CFG, r), jnp.asarray(w))
        F = numpy_F(CFG, final["A"][r], final["v"][r], X)
        m = np.asarray(y) * F
        count = np.mean(np.where(m < 0, 1.0, np.where(m == 0, 0.5, 0.0)))
        ambiguous = np.sum(np.abs(F) <= 1e-9 * np.abs(F).max())
        assert (
            abs(traj["test_error_seeds"][-1, r] - count) <= ambiguous / CFG.n_test + 2 * U * count
        ), (r, ambiguous)
        assert 0 < count < 1  # the count is not trivially 0 or 1, so it checks something


def test_vmapped_seeds_equal_single_runs(runs):
    """Seed r of the vmapped run equals `one_seed` on k_r alone (a separate program).

    Both run the same per-seed arithmetic; vmap only adds a batch axis. XLA on CPU may still reorder
    a batched reduction, so we allow rounding growth along the run: |diff| <= 1e-9 max(1, |x|) after
    30 steps (measured: final params bit-identical, recorded observables within 2.2e-16).
    """
    traj, final = runs[0]
    w = jnp.asarray(final["w_star"])
    single = jax.jit(lambda k: realistic.one_seed(CFG, k, w))
    for r in range(SEEDS):
        p0, p, rec = single(realistic.seed_key(CFG, r))
        np.testing.assert_allclose(
            np.asarray(p["params"]["A"]), final["A"][r], rtol=1e-9, atol=1e-9
        )
        np.testing.assert_allclose(
            np.asarray(p["params"]["v"]), final["v"][r], rtol=1e-9, atol=1e-9
        )
        np.testing.assert_array_equal(np.asarray(p0["params"]["A"]), final["A0"][r])
        for name in ("alpha", "gamma", "rho", "test_error", "loss"):
            np.testing.assert_allclose(
                np.asarray(rec[name]), traj[f"{name}_seeds"][:, r], rtol=1e-9, atol=1e-9
            )


def test_new_observables_against_numpy():
    """within/between attention, gamma_std, rho_std, cos_v, patch_association of `reduction` at a
    random A, v."""
    cfg = JSLConfig(D=9, C=3, d=5)
    rng = np.random.default_rng(0)
    A = rng.normal(size=(9, 9))
    np.fill_diagonal(A, 1.0)
    v = rng.normal(size=5)
    w = np.asarray(data.feature(cfg))
    obs = reduction(cfg, jnp.asarray(A), jnp.asarray(v), jnp.asarray(w))
    sets = partition.set_of(cfg)
    e = np.exp(A / cfg.tau)
    S = e / e.sum(axis=1, keepdims=True)
    within = np.mean(
        [sum(S[i, j] for j in range(9) if sets[j] == sets[i] and j != i) for i in range(9)]
    )
    between = np.mean([sum(S[i, j] for j in range(9) if sets[j] != sets[i]) for i in range(9)])
    g = [A[i, j] for i in range(9) for j in range(9) if sets[i] == sets[j] and i != j]
    b = [A[i, j] for i in range(9) for j in range(9) if sets[i] != sets[j]]
    assoc = np.mean(
        [set(np.argsort(-A[i])[:3]) == set(np.flatnonzero(sets == sets[i])) for i in range(9)]
    )
    # rounding: sums of <= 9 terms of size <= 1 (attention) or 81 terms of size <= 4 (stds): 1e-13
    # is wide
    for name, want in (
        ("within_attention", within),
        ("between_attention", between),
        ("gamma_std", np.std(g)),
        ("rho_std", np.std(b)),
        ("cos_v", v @ w / np.linalg.norm(v)),
        ("patch_association", assoc),
    ):
        assert abs(float(obs[name]) - want) <= 1e-13, name
    zero = reduction(cfg, jnp.asarray(A), jnp.zeros(5), jnp.asarray(w))
    assert float(zero["cos_v"]) == 0.0
    assert float(reduction(cfg, jnp.eye(9), jnp.asarray(v), jnp.asarray(w))["gamma_std"]) == 0.0


def test_named_errors():
    cfg = JSLConfig(D=4, C=2, steps=1)
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match=r"seeds = .* is invalid"):
            fj.validate_run_options(cfg, "realistic", seeds=bad)
        with pytest.raises(ValueError, match=r"seeds = .* is invalid"):
            realistic.run(cfg, seeds=bad)
    assert (
        fj.validate_run_options(cfg, "realistic") == 8
        and fj.validate_run_options(cfg, "realistic", seeds=1) == 1
    )
    with pytest.raises(ValueError, match=r"replicates = 2 is invalid in mode 'realistic'"):
        fj.validate_run_options(cfg, "realistic", replicates=2)
    for mode in ("exact", "sampled"):
        with pytest.raises(ValueError, match=rf"seeds = 2 is invalid in mode '{mode}'"):
            fj.validate_run_options(cfg, mode, seeds=2)
    with pytest.raises(ValueError, match=r"init = .* is invalid in mode 'realistic'"):
        fj.simulate(cfg, mode="realistic", init={"alpha": 0.1})
    with pytest.raises(ValueError, match=r"mode = 'other' is invalid"):
        fj.validate_run_options(cfg, "other")


def _tie(cfg, s, equal_orbits):
    """F = 0 in exact arithmetic (docs/derivations/jsl.md §2.4): a set permutation maps the
    configuration to its negation.

    With gamma != rho, F depends on the multiset of per-set count vectors (n+, n-, n0); with gamma =
    rho only on the multiset of the s_i, which is symmetric iff T = sum_i s_i = 0.
    """
    if equal_orbits:
        return s.sum() == 0
    counts = sorted((int(np.sum(s[m] == 1)), int(np.sum(s[m] == -1))) for m in partition.sets(cfg))
    return counts == sorted((b, a) for a, b in counts)


@pytest.mark.parametrize("alpha,gamma,rho", [(0.4, 0.3, -0.2), (0.1, 0.0, 0.0), (0.7, -0.1, 0.25)])
def test_exact_error_against_numpy(alpha, gamma, rho):
    """population.exact_error = sum w (1[F < 0] + 1/2 1[tie]) with ties found combinatorially, F in
    numpy.

    The probabilities of L 3^(D-C) configurations summed in another order: 64 u is wide (the weights
    sum to 1).
    """
    cfg = JSLConfig(D=9, C=3, q=0.4)
    w = data.feature(cfg)
    params = fj.initial_params(cfg, w, {"alpha": alpha, "gamma": gamma, "rho": rho})
    configs = population.enumerate_configurations(cfg)
    s, prob = np.asarray(configs.s), np.asarray(configs.w)
    X = s[:, :, None] * np.asarray(w)[None, None, :]
    F = numpy_F(cfg, params["params"]["A"], params["params"]["v"], X)
    ties = np.array([_tie(cfg, row, gamma == rho) for row in s])
    assert ties.any() and (~ties).any()
    want = np.sum(prob * np.where(ties, 0.5, (F < 0).astype(float)))
    got = float(population.exact_error(fj.model_for(cfg), params, configs, w))
    assert abs(got - want) <= 64 * U, (got, want)
    # the ties are genuine zeros up to rounding and the rest are far from zero
    tol = float(population.tie_tolerance(fj.model_for(cfg), params, w))
    assert np.all(np.abs(F[ties]) <= tol) and np.all(np.abs(F[~ties]) > 1e3 * tol)
