"""The reduced observables within/between attention, patch association and the exact 0-1 error."""

import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
import sympy as sp

import full.jsl as fj
import reduced.jsl as rj
from dynsim import JSLConfig
from dynsim.jsl import association, data, partition, reference
from dynsim.jsl.model import attention
from reduced.jsl.configurations import set_types
from tests.conftest import U64

# None: idealized start
STATES = [None, (0.3, 0.5, -0.2), (0.15, 1.2, -0.4), (-0.2, -1.5, 2.0), (0.25, 1.0, 1.0)]


def _reduced_at(cfg, state):
    """The observables of the state, recorded by `simulate` with zero steps (the same `observe` as
    every run)."""
    tr = rj.simulate(cfg.replace(steps=0), init=state)
    return {k: float(v[0]) for k, v in tr.observables.items()}


def _full_F(cfg, state):
    """F of the full model (T) on every (signal set, delta) configuration, y = +1, and their
    probabilities."""
    w_star = data.feature(cfg)
    alpha, gamma, rho = rj.initial_state(cfg, state)
    params = fj.initial_params(cfg, w_star, {"alpha": alpha, "gamma": gamma, "rho": rho})
    configs = fj.population.enumerate_configurations(cfg)
    model = fj.model_for(cfg)
    F = model.apply(params, configs.s, w_star, method=model.on_feature_line)
    return np.asarray(F), np.asarray(configs.w), np.asarray(params["params"]["A"])


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize(
    "shape, q, temperature",
    [
        ((8, 2), 0.3, "sqrt_d"),
        ((9, 3), 0.5, "unit"),
        ((8, 4), 0.4, "unit"),
        ((12, 3), 0.5, "sqrt_d"),
    ],
)
def test_error_equals_full_model_brute_force(shape, q, temperature, state):
    """The reduced `error` against sign(F) of the full D x D model on all L 3^(D-C) configurations.

    The brute force decides ties on its own: every |F| is either <= 1e-12 (zero in exact arithmetic,
    rounding of O(1) terms at u = 1.1e-16 times a few hundred operations) or >= 1e-6; the test
    asserts that gap, so the classification does not depend on where the cut is. Both sides then add
    the same weights with the same factors (0, 1/2, 1); each weight errs by relative <= u (|log w| +
    D + K + 4) (a product of D factors, or an exp of a sum of K + 2 logs), so the sums differ by <=
    that, with a factor 4 margin.
    """
    D, C = shape
    cfg = JSLConfig(D=D, C=C, q=q, temperature=temperature, nu=1e-3)
    F, w, _ = _full_F(cfg, state)
    absF = np.abs(F)
    assert not np.any((absF > 1e-12) & (absF < 1e-6)), (
        "the brute force's tie decision would be ambiguous"
    )
    ties = absF <= 1e-12
    brute = np.sum(w * np.where(ties, 0.5, np.where(F < 0, 1.0, 0.0)))
    K = len(set_types(C))
    tol = 4 * U64 * (np.max(np.abs(np.log(w))) + D + K + 4)
    got = _reduced_at(cfg, state)["error"]
    assert got == pytest.approx(brute, abs=tol)
    if state is None or C == D // 2:
        # exact zeros are present: T = 0 at gamma = rho, or the L = 2 mirror configuration
        assert ties.any()


def test_error_at_idealized_start_is_the_glm_error():
    """Default A (docs/derivations/jsl.md §5): at gamma = rho = 0, sign F = sign T, so the error is
    P(T<0) + 1/2 P(T=0), computed independently by `reference.glm_error` from binomial counts. Two
    sums of the same 680 positive weights: relative 1e-13 covers the weights' relative error u (|log
    w| + K + 2) <= 100 u (|log w| <= 60)."""
    cfg = JSLConfig(D=16, C=4, q=0.5, nu=1e-3, temperature="unit")
    got = _reduced_at(cfg, None)["error"]
    assert got == pytest.approx(reference.glm_error(cfg), rel=1e-13)
    # the published value, half a unit in the last digit
    assert got == pytest.approx(0.0539, abs=5e-5)


def _symmetric(counts, C):
    """Is the configuration mapped to its negation by a set permutation? (docs/derivations/jsl.md
    §2.4)

    It must contain an all-(-1) random set (the image of the signal set), and the other random sets
    must be invariant, as a multiset of types, under (a, b) -> (b, a)."""
    types = set_types(C)
    index = {t: k for k, t in enumerate(types)}
    n = list(counts)
    if n[index[(0, C)]] < 1:
        return False
    n[index[(0, C)]] -= 1
    return all(n[index[(a, b)]] == n[index[(b, a)]] for a, b in types)


@pytest.mark.parametrize("state", [(0.3, 0.5, -0.2), (0.15, 1.2, -0.4), (-0.2, -1.5, 2.0)])
@pytest.mark.parametrize("shape", [(16, 4), (12, 2), (8, 4)])
def test_tie_tolerance_separates_exact_zeros(shape, state):
    """|F| <= tie_tolerance exactly on the configurations where F = 0 in exact arithmetic, with room
    on both sides.

    At a generic state those are the set-symmetric ones; at gamma = rho (checked on the idealized
    start) the ones with T = 0 (docs/derivations/jsl.md §3e). The margins (the tolerance is >= 10x
    the largest zero and <= 1e-6 x the smallest nonzero |F|) show the classification is robust, not
    a coincidence of the cut."""
    D, C = shape
    cfg = JSLConfig(D=D, C=C, q=0.5, nu=1e-3, temperature="unit")
    # the multiset reference's rule (classes: tests/test_moments.py)
    table = rj.dynamics.Table(cfg, None, "multisets")
    der = rj.symbolic.derive(C, cfg.p)
    types = set_types(C)
    counts = np.asarray(table.n).T.astype(int)  # (M, K)
    for theta, zero in (
        (jnp.asarray(state), np.array([_symmetric(n, C) for n in counts])),
        (jnp.asarray(rj.initial_state(cfg)), C + counts @ np.array([a - b for a, b in types]) == 0),
    ):
        F = np.abs(
            np.asarray(der.compiled_F(*theta, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n)))
        )
        tol = float(rj.dynamics.tie_tolerance(cfg, theta))
        assert zero.any() and (~zero).any()
        assert np.max(F[zero]) * 10 <= tol <= 1e-6 * np.min(F[~zero])


@pytest.mark.parametrize("state", STATES)
@pytest.mark.parametrize("shape", [(9, 3), (16, 4), (12, 2)])
def test_attention_observables_equal_full_matrix(shape, state):
    """within/between/own-set attention and patch association from the D x D matrices, against the
    reduced values.

    S = softmax(A/tau) of the orbit-constant A, row means over the partition's masks; patch
    association from `dynsim.jsl.association` (strict Top_C on every row). Row sums of D softmax
    terms: 16 u covers the rounding.
    """
    D, C = shape
    cfg = JSLConfig(D=D, C=C, q=0.5, temperature="unit" if D == 16 else "sqrt_d")
    got = _reduced_at(cfg, state)
    alpha, gamma, rho = rj.initial_state(cfg, state)
    within, between = partition.orbit_masks(cfg)
    A = cfg.sigma_A * np.eye(D) + gamma * within + rho * between
    S = np.asarray(attention(jnp.asarray(A), cfg.tau))
    want = {
        "within_attention": np.mean(np.sum(np.where(within, S, 0.0), axis=1)),
        "between_attention": np.mean(np.sum(np.where(between, S, 0.0), axis=1)),
        "own_set_attention": np.mean(np.sum(np.where(~between, S, 0.0), axis=1)),
    }
    for name, value in want.items():
        assert got[name] == pytest.approx(value, abs=16 * U64), name
    diagonal = got["own_set_attention"] - got["within_attention"]
    assert diagonal + got["within_attention"] + got["between_attention"] == pytest.approx(
        1.0, abs=8 * U64
    )
    assert diagonal == pytest.approx(np.mean(np.diag(S)), abs=16 * U64)
    assert got["patch_association"] == float(association.patch_association(jnp.asarray(A), cfg))


def test_patch_association_ties_fail():
    """Strict Top_C (Definition 2.2 as `dynsim.jsl.association`): gamma = rho or beta = rho is not
    association."""
    cfg = JSLConfig(D=9, C=3, sigma_A=1.0)
    cases = {
        (0.2, 0.0, 0.0): 0.0,
        (0.2, 0.5, 0.5): 0.0,
        (0.2, 2.0, 1.0): 0.0,
        (0.2, 0.5, 0.4): 1.0,
        (0.2, 2.0, 0.9): 1.0,
        (0.2, -0.1, -0.2): 1.0,
        (0.2, -0.2, -0.1): 0.0,
    }
    for state, want in cases.items():
        assert _reduced_at(cfg, state)["patch_association"] == want, state


def test_patch_association_of_a_nan_state_is_nan_not_zero():
    """A diverged run ranks nothing: its association is NaN at both levels, not 0 (which would read
    as 'not associated' in a sweep's table beside NaN losses)."""
    cfg = JSLConfig(D=9, C=3, sigma_A=1.0)
    nan = float("nan")
    # a run cannot start from NaN: the observable `derived_observables` records, at such states
    for state in ((0.2, nan, 0.4), (0.2, 0.5, nan)):
        assert np.isnan(float(rj.dynamics.association(cfg, jnp.array(state)))), state
    assert float(rj.dynamics.association(cfg, jnp.array((nan, 0.5, 0.4)))) == 1.0  # alpha: unranked
    A = np.where(np.asarray(partition.same_set_mask(cfg)), 1.0, 0.0)  # every row associated
    assert float(association.patch_association(jnp.asarray(A), cfg)) == 1.0
    A[4, 7] = nan
    assert np.isnan(float(association.patch_association(jnp.asarray(A), cfg)))


def test_tie_tolerance_per_configuration_decides_a_small_genuine_F():
    """The issue-13 case (D=12, C=3, q=0.4, p=5, nu=0.01, sigma_A=2, sqrt_d, step 4): one
    configuration has F = 1.849e-10, nonzero in 60-digit arithmetic. The uniform bound (every patch
    at |u_i| = D|alpha|, 3.7e-10) called it a tie; the per-configuration bound (each patch at its
    own y_i) is 4.6e-12, still above the computed F's actual rounding error (checked against 60
    digits for every |F| < 1e-6), so F's sign decides it, as the class sum does."""
    cfg = JSLConfig(
        D=12, C=3, q=0.4, p=5, nu=0.01, sigma_A=2.0, temperature="sqrt_d", steps=4, record_every=4
    )
    tr = rj.simulate(cfg, enumeration="multisets")
    theta = jnp.asarray([tr.observables[k][-1] for k in ("alpha", "gamma", "rho")])
    table = rj.dynamics.Table(cfg, None, "multisets")
    der = rj.symbolic.derive(3, 5)
    F = np.asarray(der.compiled_F(*theta, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n)))
    per = np.asarray(rj.dynamics.tie_tolerance(cfg, theta, table.n))
    uniform = float(rj.dynamics.tie_tolerance(cfg, theta))
    mpmath.mp.dps = 60
    sub = {
        rj.symbolic.alpha: sp.Float(float(theta[0]), 60),
        rj.symbolic.gamma: sp.Float(float(theta[1]), 60),
        rj.symbolic.rho: sp.Float(float(theta[2]), 60),
        rj.symbolic.beta: 2,
        rj.symbolic.tau: sp.sqrt(12),
        rj.symbolic.nu: sp.Rational(1, 100),
        rj.symbolic.D: 12,
    }
    exact = sp.lambdify(list(der.n), der.F.subs(sub), "mpmath")
    counts = np.asarray(table.n).T.astype(int)
    small = np.flatnonzero(np.abs(F) < 1e-6)
    decided = 0
    for i in small:
        e = exact(*[int(v) for v in counts[i]])
        assert abs(F[i] - float(e)) <= per[i]  # the bound holds
        # genuinely nonzero: decided by its sign under the per-configuration rule
        if abs(e) > mpmath.mpf(10) ** -50:
            assert abs(F[i]) > per[i] and np.sign(F[i]) == np.sign(float(e))
            decided += abs(F[i]) <= uniform
    assert decided == 1  # the 1.849e-10 configuration, a tie under the uniform rule
    err_class = float(rj.simulate(cfg).observables["error"][-1])
    # both sums add the same weights times (0, 1/2, 1): rounding of a sum of <= 1e3 terms, 1e-13
    # relative is ample
    assert float(tr.observables["error"][-1]) == pytest.approx(err_class, rel=1e-13)
