"""Correctness of the NumPy reference implementations that benchmarks/ times against dynsim (not
their speed)."""

import jax
import numpy as np
import pytest

import reduced.jsl as rj
from benchmarks.full_frameworks import config as full_config, numpy_loss_and_grads
from benchmarks.reduced_numpy import HandReduced, LambdifiedReduced, config as reduced_config
from full.jsl import realistic
from full.jsl.training import model_for
from dynsim.jsl import data

# off the idealized start, so all three variables move at once
START = {"alpha": 0.3, "gamma": 0.5, "rho": -0.2}


@pytest.fixture(scope="module")
def reduced_reference():
    cfg = reduced_config(steps=200, record_every=20)
    return cfg, rj.simulate(cfg, init=START)


@pytest.mark.parametrize("impl", [HandReduced, LambdifiedReduced])
def test_numpy_reduced_reproduces_dynsim(reduced_reference, impl):
    """Benchmark a's NumPy GD in (alpha, gamma, rho) follows dynsim's trajectory (D=16, C=4, q=0.5,
    unit, eta=0.02).

    Tolerance 1e-12 absolute: both evaluate the same exact configuration sum in float64, only in a
    different order (hand-derived columns, or the same sympy expression under NumPy instead of XLA);
    a per-step rounding difference of a few ulps of |theta| <= 1 (~1e-15), accumulated over 200
    contracting GD steps, stays ~1e-14.
    """
    cfg, ref = reduced_reference
    expected = np.stack([ref["alpha"], ref["gamma"], ref["rho"]], axis=1)
    theta0 = rj.initial_state(cfg, START)
    _, got = impl(cfg).run(theta0, cfg.steps, cfg.record_every)
    assert got.shape == expected.shape
    assert np.max(np.abs(got - expected)) <= 1e-12
    # the check is not vacuous: every variable moved by far more than the tolerance
    assert np.all(np.abs(expected[-1] - expected[0]) > 1e-3)


@pytest.mark.parametrize("impl", [HandReduced, LambdifiedReduced])
def test_numpy_reduced_loss_and_gradients(impl):
    """Loss and gradients at one state equal reduced.jsl.loss_and_gradients (relative 1e-13:
    summation order only)."""
    cfg = reduced_config(steps=1)
    theta = np.array([0.4, 1.3, -0.7])
    table = rj.tables.table(cfg, None).weights
    expected = np.asarray(rj.loss_and_gradients(cfg, theta, table))
    got = impl(cfg).loss_and_gradients(theta)
    assert np.max(np.abs(got - expected)) <= 1e-13 * np.max(np.abs(expected))


@pytest.mark.parametrize("D,C", [(16, 4)])
def test_numpy_full_gradient_matches_jax_grad(D, C):
    """Benchmark c's hand-derived NumPy loss and gradients (every A_ij, v) equal jax.grad of the
    library loss (E).

    Tolerance 1e-12 relative to the largest gradient entry: the same float64 arithmetic in another
    summation order (matmuls vs XLA dots), i.e. a few ulps per sum of N D terms; measured ~1e-15.
    """
    cfg = full_config(D, C=C, N=64)
    w = data.feature(cfg)
    X, y = data.sample(jax.random.key(7), cfg, 64, w)
    params = realistic.initial_params(cfg, jax.random.key(3), w)
    # larger entries: the cubic term and the softmax both matter
    params = jax.tree.map(lambda a: 30.0 * a, params)
    model = model_for(cfg)
    loss_ref, g = jax.value_and_grad(lambda p: realistic.empirical_loss(model, p, X, y))(params)
    ref_A, ref_v = np.asarray(g["params"]["A"]), np.asarray(g["params"]["v"])
    loss, gA, gv = numpy_loss_and_grads(
        np.asarray(params["params"]["A"]),
        np.asarray(params["params"]["v"]),
        np.asarray(X),
        np.asarray(y),
        cfg,
    )
    assert abs(loss - float(loss_ref)) <= 1e-12 * abs(float(loss_ref))
    # dL/dA = S (G - rowsum(G S))/tau cancels terms of the size of G = dL/dS ~ the v-gradient, so
    # its rounding error scales with that, not with |dL/dA| (the diagonal entries, frozen by GD,
    # cancel most): one common scale
    scale = max(np.abs(ref_A).max(), np.abs(ref_v).max())
    assert np.max(np.abs(gA - ref_A)) <= 1e-12 * scale
    assert np.max(np.abs(gv - ref_v)) <= 1e-12 * scale
    # not vacuous: off-diagonal A entries get distinct gradients
    off = ref_A[~np.eye(D, dtype=bool)]
    assert np.std(off) > 1e-2 * np.abs(off).max()
