"""The sympy-derived reduced loss: against the full model, against jax.grad, and at uniform
attention."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import sympy as sp

import reduced.jsl as rj
from dynsim import JSLConfig
from dynsim.jsl import data, model, partition
from reduced.jsl import symbolic as S
from reduced.jsl.configurations import set_types

STATES = [(0.0316, 0.0, 0.0), (0.3, 0.8, -0.4), (-0.2, -1.5, 2.0)]


@pytest.mark.parametrize("temperature", ["sqrt_d", "unit"])
@pytest.mark.parametrize("state", STATES)
def test_sympy_gradients_match_jax_grad(state, temperature):
    """d/d(alpha, gamma, rho) from sympy.diff against jax.grad of the same lambdified loss: relative
    1e-12.

    Both evaluate the same function with differently ordered float64 operations over 680
    configurations; forward and reverse rounding differ by far less than 1e-12 relative (measured
    ~1e-15).
    """
    cfg = JSLConfig(D=16, C=4, q=0.5, temperature=temperature)
    table = rj.dynamics.Table(cfg, None).weights

    def loss(theta):
        return rj.loss_and_gradients(cfg, theta, table)[0]

    theta = jnp.array(state)
    symbolic = np.asarray(rj.loss_and_gradients(cfg, theta, table)[1:])
    autodiff = np.asarray(jax.grad(loss)(theta))
    scale = np.max(np.abs(autodiff))
    assert scale > 0
    np.testing.assert_allclose(symbolic, autodiff, rtol=1e-12, atol=1e-12 * scale)


def _realize(cfg, counts, rng):
    """A concrete s vector (y = +1, signal set 0) whose random sets have the given type counts."""
    sets = partition.sets(cfg)
    s = np.zeros(cfg.D)
    s[sets[0]] = 1.0
    kinds = [k for k, c in enumerate(counts) for _ in range(c)]
    for ell, k in zip(range(1, cfg.L), kinds):
        a, b = set_types(cfg.C)[k]
        vals = np.array([1.0] * a + [-1.0] * b + [0.0] * (cfg.C - a - b))
        s[sets[ell]] = rng.permutation(vals)
    return s


@pytest.mark.parametrize("temperature", ["sqrt_d", "unit"])
def test_per_configuration_loss_equals_full_model(temperature):
    """The sympy loss of a count configuration equals model (T) on a concrete noisy X realizing it.

    Independent paths: `dynsim.jsl.model.forward` on a D x D matrix A with orbit values and noisy
    patches, against the sympy construction. Both sum O(D^2) float64 terms: F agrees to relative
    1e-13 (100 u x 10), and the loss to that times max(1, |F|).
    """
    cfg = JSLConfig(D=12, C=3, q=0.4, temperature=temperature, partition="random", seed=4)
    rng = np.random.default_rng(0)
    der = S.derive(cfg.C, cfg.p)
    w_star = np.asarray(data.feature(cfg))
    within, between = partition.orbit_masks(cfg)
    K = len(set_types(cfg.C))
    for alpha, gamma, rho in STATES:
        A = cfg.sigma_A * np.eye(cfg.D) + gamma * within + rho * between
        for _ in range(5):
            counts = np.bincount(rng.integers(0, K, cfg.L - 1), minlength=K)
            s = _realize(cfg, counts, rng)
            noise = rng.normal(size=(cfg.D, cfg.d)) * cfg.sigma
            noise -= np.outer(noise @ w_star, w_star)
            X = s[:, None] * w_star + noise
            F = model.forward(
                jnp.asarray(A), jnp.asarray(X @ (alpha * w_star)), tau=cfg.tau, p=cfg.p, nu=cfg.nu
            )
            want = float(model.logistic_loss(F))
            got = float(
                der.compiled(
                    alpha,
                    gamma,
                    rho,
                    cfg.sigma_A,
                    cfg.tau,
                    cfg.nu,
                    cfg.D,
                    [float(c) for c in counts],
                )[0]
            )
            # softplus(-F) ~ exp(-F) for large F: a relative error e of F becomes |F| e in the loss.
            assert got == pytest.approx(want, rel=1e-13 * max(1.0, abs(float(F))), abs=1e-300)


@pytest.mark.parametrize("C", [2, 3])
def test_uniform_attention_gradient_is_exactly_zero_symbolically(C):
    """With beta = gamma = rho (uniform S) d/dgamma and d/drho vanish identically per configuration
    once D = C (1 + sum_k n_k) (docs/derivations/jsl.md §3e): checked by exact symbolic
    expansion."""
    der = S.derive(C, 3)
    for g in der.gradients[1:]:
        e = g.subs({S.gamma: S.beta, S.rho: S.beta}).subs(S.D, C * (1 + sum(der.n)))
        e = e.replace(S.sigmoid, lambda x: sp.Symbol("ell"))
        assert sp.expand(sp.together(e)) == 0


def test_render_shows_definitions_and_gradients():
    text = S.render(3, 3)
    for piece in (
        "Lambda =",
        "Gamma =",
        "Xi =",
        "T =",
        "m_signal =",
        "F =",
        "softplus(-F)",
        "d loss / d alpha",
        "d loss / d gamma",
        "d loss / d rho",
    ):
        assert piece in text
    assert "\\frac" in S.render(3, 3, latex=True)
