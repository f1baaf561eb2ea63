"""Moment classes: F as a polynomial in the configuration's moments, the class table, and the class
sum against the multiset reference (trajectories to 1e-12), truncation and Monte Carlo on top of
classes, the exact tie decision."""

import math

import jax
import jax.numpy as jnp
import mpmath
import numpy as np
import pytest
import sympy as sp

import reduced.jsl as rj
from dynsim import JSLConfig
from reduced.jsl import class_sums, classes, configurations, moments, sums, symbolic, tables

TYPES4 = [(a, b) for a in range(5) for b in range(5 - a)]


def _class_variables(counts, C, p):
    """T, S_2..S_p, Z_0..Z_{p-2} of type counts (M, K), written out here from the definitions (not
    the module's)."""
    types = [(a, b) for a in range(C + 1) for b in range(C + 1 - a)]
    t = np.array([a - b for a, b in types])
    z = np.array([a + b for a, b in types])
    cols = (
        [C + counts @ t]
        + [counts @ t**e for e in range(2, p + 1)]
        + [counts @ (z * t**e) for e in range(p - 1)]
    )
    return np.stack(cols, axis=1)


@pytest.mark.parametrize("p", [3, 5, 7])
def test_moment_F_equals_per_type_F(p):
    """sum_r phi_r mono_r equals F of `symbolic` (one sigma term per patch type) on random
    configurations and states. Both are O(10) sums of O(F) terms in float64: 1e-12 relative to the
    largest term covers their rounding."""
    rng = np.random.default_rng(p)
    der, old = moments.derive(4, p), symbolic.derive(4, p)
    for D in (16, 36):
        n = rng.multinomial(D // 4 - 1, np.ones(15) / 15, size=20)
        mono = moments.monomials(der.exponents, _class_variables(n, 4, p))
        for theta in ([0.03, 0.4, -0.2], [-0.02, -1.0, 0.7]):
            want = np.asarray(old.compiled_F(*theta, 1.0, math.sqrt(D), 0.01, D, list(n.T)))
            phi = np.asarray(
                moments.coefficients(der, jnp.asarray(theta), 1.0, math.sqrt(D), 0.01, D)[0]
            )
            np.testing.assert_allclose(
                mono @ phi, want, rtol=0, atol=1e-12 * np.max(np.abs(mono) @ np.abs(phi))
            )


def test_chain_rule_equals_sympy_diff():
    """dphi/dtheta through z = (y, A, B, Xi) equals sympy.diff of phi_r(theta) written out, at a
    state (1e-12: both are float64 evaluations of the same rational expression of O(1) terms)."""
    der = moments.derive(4, 3)
    theta, beta, tau, nu, D = (0.05, 0.3, -0.1), 1.0, 4.0, 0.01, 16
    jac = np.asarray(moments.coefficients(der, jnp.asarray(theta), beta, tau, nu, D)[1])
    sub = {symbolic.beta: beta, symbolic.tau: tau, symbolic.nu: sp.Rational(1, 100), symbolic.D: D}
    for r, phi in enumerate(der.phi):
        expr = phi.subs(der.state).subs(sub)
        for i, x in enumerate(symbolic.STATE):
            want = float(sp.diff(expr, x).subs(dict(zip(symbolic.STATE, theta))))
            assert jac[i, r] == pytest.approx(want, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("D, p", [(12, 3), (16, 3), (16, 5), (20, 7)])
def test_classes_group_the_multisets(D, p):
    """The class table equals the multisets grouped by their moment vector (computed here from the
    definitions): the same distinct vectors and, per class, the summed probability at q = 0.4
    (relative 1e-12: sums of <= 680 positive terms, each an exp of a sum of logs, err by u (|log w|
    + K + 4) <= 1e-13)."""
    cls = classes.moment_classes(D, 4, p)
    n, w = configurations.enumerate_configurations(D, 4, 0.4)
    want = {}
    for row, weight in zip(map(tuple, _class_variables(n, 4, p)), w):
        want[row] = want.get(row, 0.0) + weight
    got_w = np.asarray(
        class_sums.class_weights(cls.log_count, cls.variables[:, p], cls.random_patches, 0.4)
    )
    got = dict(zip(map(tuple, cls.variables), got_w))
    assert set(got) == set(want)
    for key, value in want.items():
        assert got[key] == pytest.approx(value, rel=1e-12)
    assert len(got) <= configurations.count(D, 4)
    assert math.fsum(np.exp(cls.log_count)) == pytest.approx(3.0**cls.random_patches, rel=1e-13)


def test_class_limit_refuses_early():
    """A limit below the class count refuses (TooManyClasses), and the count at or above it is
    returned."""
    total = classes.count(16, 4, 3)
    assert total == classes.moment_classes(16, 4, 3).variables.shape[0]
    assert classes.count(16, 4, 3, limit=total - 1) is None
    assert classes.count(16, 4, 3, limit=total) == total
    with pytest.raises(classes.TooManyClasses, match="more than 100 moment classes"):
        classes.moment_classes(24, 4, 3, limit=100)


def _relative_gap(a, b):
    """max |a - b| / max |b| over a recorded series (the series' scale: gamma and rho start at
    0)."""
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize(
    "p, temperature",
    [(3, "sqrt_d"), (3, "unit"), (5, "sqrt_d"), (5, "unit"), (7, "sqrt_d"), (7, "unit")],
)
def test_class_trajectory_equals_multiset_reference(p, temperature):
    """GD over moment classes equals GD over every multiset to 1e-12 relative (alpha, gamma, rho,
    loss).

    Both sum the same probabilities of the same F; the class form evaluates F as a dot product of
    moment monomials whose terms are larger than F (cancellation), which costs about two digits
    against an 80-bit reference (1e-14 to 2e-13 relative, docs/jsl.md); 1e-12 is that loss with a
    factor 5 margin. The 0-1 error is compared at the records where neither form's tie rule is in
    doubt (`test_class_ties_are_exact` covers the others)."""
    eta = {3: 0.05, 5: 0.01, 7: 0.002}[p]
    cfg = JSLConfig(
        D=16, C=4, q=0.5, p=p, temperature=temperature, steps=1500, record_every=100, eta=eta
    )
    a = rj.simulate(cfg)
    b = rj.simulate(cfg, enumeration="multisets")
    assert a.meta["truncation"]["enumeration"] == "classes" and a.meta["truncation"][
        "configurations"
    ] == 665 - 2 * (p == 3)
    assert np.all(np.isfinite(a.observables["loss"]))
    for name in ("alpha", "gamma", "rho", "loss"):
        assert _relative_gap(a.observables[name], b.observables[name]) <= 1e-12, name
    # The error: the rules differ only on configurations whose |F| lies between 1e-3 of the multiset
    # rule's own per-configuration tolerance (exact zeros compute below it) and the uniform bound
    # (genuine for every rule): at most half their weight each way. Where no weight is in doubt both
    # sum the same weights times (0, 1/2, 1): u (|log w| + K + 4) relative per weight, below 1e-13
    # (as in test_reduced_observables). Genuine |F| of 1e-14..1e-11 (p = 5, 7 at sqrt_d, every
    # record) are decided by the multiset rule, 60-digit exact, and are ties under the class rule,
    # whose own rounding cannot resolve them (docs/jsl.md §4).
    table = tables.table(cfg, None, "multisets")
    der = symbolic.derive(4, p)
    exact_records = 0
    for i in range(len(a.steps)):
        theta = jnp.asarray([b.observables[k][i] for k in ("alpha", "gamma", "rho")])
        F = np.abs(
            np.asarray(der.compiled_F(*theta, cfg.sigma_A, cfg.tau, cfg.nu, cfg.D, list(table.n)))
        )
        tol = float(rj.dynamics.tie_tolerance(cfg, theta))  # uniform: the loosest bound
        # the multiset rule's own
        tight = np.asarray(rj.dynamics.tie_tolerance(cfg, theta, table.n))
        doubt = float(np.sum(np.asarray(table.w)[(F > 1e-3 * tight) & (F <= tol)]))
        gap = abs(float(a.observables["error"][i]) - float(b.observables["error"][i]))
        assert gap <= 0.5 * doubt + 1e-13 * float(b.observables["error"][i]) + 1e-13, (
            i,
            gap,
            doubt,
        )
        exact_records += doubt == 0
    assert exact_records >= (1 if temperature == "unit" else 0)


def test_class_ties_are_exact():
    """The per-class tolerance bounds the rounding error of F against 60-digit arithmetic on every
    class with |F| < 1e-8 (D = 16, p = 5, after 100 steps): so exact zeros are ties and every F
    above its tolerance has the exact sign. Genuine |F| of 1e-11 to 1e-10 there lie below the
    multiset rule's uniform tolerance (6e-10, which calls them ties) and above the per-class one,
    which decides them."""
    cfg = JSLConfig(D=16, C=4, q=0.5, p=5, steps=100, record_every=100, eta=0.05)
    tr = rj.simulate(cfg)
    theta = jnp.asarray([tr.observables[k][-1] for k in ("alpha", "gamma", "rho")])
    table = tables.table(cfg, None).weights
    F = np.asarray(class_sums.F_of(cfg, theta, table))
    tol = np.asarray(class_sums.tie_tolerance(cfg, theta, table))
    der = moments.derive(4, 5)
    cls = classes.moment_classes(16, 4, 5)
    mpmath.mp.dps = 60
    sub = {
        symbolic.alpha: sp.Float(float(theta[0]), 60),
        symbolic.gamma: sp.Float(float(theta[1]), 60),
        symbolic.rho: sp.Float(float(theta[2]), 60),
        symbolic.beta: 1,
        symbolic.tau: 4,
        symbolic.nu: sp.Rational(1, 100),
        symbolic.D: 16,
    }
    exact_F = sp.lambdify(list(der.variables), der.F.subs(der.state).subs(sub), "mpmath")
    small = np.flatnonzero(np.abs(F) < 1e-8)
    assert small.size > 10
    zeros = 0
    for i in small:
        exact = exact_F(*[int(v) for v in cls.variables[i]])
        assert abs(F[i] - float(exact)) <= tol[i]
        zeros += abs(exact) < mpmath.mpf(10) ** -50
    assert 0 < zeros < small.size
    uniform = float(rj.dynamics.tie_tolerance(cfg, theta))
    # decided here, a tie under the uniform rule
    assert np.any((np.abs(F) > tol) & (np.abs(F) < uniform))


def test_truncated_classes_equal_truncated_multisets():
    """Cut at max_nonzero = 6, both forms sum the same configurations: loss and gradients agree to
    1e-12 relative."""
    cfg = JSLConfig(D=24, C=4, q=0.3, temperature="unit")
    theta = jnp.asarray([0.2, 0.5, -0.3])
    got = np.asarray(rj.loss_and_gradients(cfg, theta, tables.table(cfg, 6).weights))
    want = np.asarray(rj.loss_and_gradients(cfg, theta, tables.table(cfg, 6, "multisets").weights))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert tables.table(cfg, 6).dropped == tables.table(cfg, 6, "multisets").dropped > 0


def test_monte_carlo_on_classes_within_its_standard_error():
    """The Monte Carlo sum (20,000 sampled configurations as classes) against the exact class sum at
    D = 36: the loss within 4.5 of its reported standard errors (two-sided normal tail 7e-6), which
    are positive and small."""
    cfg = JSLConfig(D=36, C=4, q=0.3, temperature="unit")
    theta = jnp.asarray([0.15, 0.4, -0.2])
    exact = float(rj.loss_and_gradients(cfg, theta, tables.table(cfg, None).weights)[0])
    mc = sums.monte_carlo_table(cfg, jax.random.key(3), cfg.q, 20_000)
    got = float(rj.loss_and_gradients(cfg, theta, mc)[0])
    se = float(sums.standard_errors(cfg, theta[None], mc)["loss_se_mc"][0])
    assert abs(got - exact) <= 4.5 * se
    assert 0 < se < 0.05 * exact


def test_enumeration_is_checked():
    with pytest.raises(ValueError, match="enumeration = 'sets' is invalid"):
        rj.simulate(JSLConfig(steps=1), enumeration="sets")


def test_simulate_falls_back_to_monte_carlo(monkeypatch):
    """When `sums.choose` says Monte Carlo (here forced at D = 36, where the exact class sum exists
    to compare with), `simulate` runs GD on the fixed sample, labels the run an approximation and
    records the sample's standard errors; its loss at every record lies within 4.5 of them of the
    exact run's (two-sided normal tail 7e-6 per record, 3 records: family-wise 2e-5; the states
    differ by O(se) too, which the exact run's loss slope turns into a much smaller loss difference
    at these 20 small steps)."""
    cfg = JSLConfig(D=36, C=4, q=0.3, steps=20, record_every=10, eta=0.001, temperature="unit")
    exact = rj.simulate(cfg)
    monkeypatch.setattr(
        sums,
        "choose",
        lambda cfg: sums.SumChoice(
            "monte_carlo", None, 20_000, 0, float("nan"), "forced by the test"
        ),
    )
    mc = rj.simulate(cfg)
    assert mc.meta["sum_method"] == "monte_carlo" and mc.meta["approximation"] == "monte_carlo_sum"
    se = mc.observables["loss_se_mc"]
    assert np.all(se > 0)
    assert np.all(np.abs(mc.observables["loss"] - exact.observables["loss"]) <= 4.5 * se)
