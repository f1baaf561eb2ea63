"""The realistic level held to its own definition (full.jsl.selfcheck, judged by
dynsim.jsl.checks.self_check): the gradient identity and Assumption 1's data law, each passing on
the healthy code and failing on a planted slip."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dynsim.jsl import JSLConfig, data
from dynsim.jsl.checks import SELF_CHECK_CONFIDENCE, SELF_CHECK_KEYS, self_check
from full.jsl import realistic, selfcheck

# small and cheap: D = 6 in L = 3 sets of C = 2, d = 5, N = 400 training rows per seed
CFG = JSLConfig(D=6, C=2, d=5, q=0.4, N=400, n_test=16, steps=1, record_every=1)
SEEDS = 3


@pytest.fixture(scope="module")
def healthy():
    return selfcheck.run(CFG, SEEDS)


def _start():
    w_star = data.feature(CFG)
    key = realistic.seed_key(CFG, 0)
    (X, y), _ = realistic.datasets(CFG, key, w_star)
    return realistic.initial_params(CFG, jax.random.fold_in(key, 2), w_star), X[:64], y[:64]


def test_the_healthy_realistic_level_passes_every_self_check(healthy):
    residuals = self_check(healthy, CFG.to_dict())
    assert set(residuals) == {
        "gradient_identity",
        "noise_variance",
        "feature_rate",
        "set_0_wholly_y",
        "set_1_wholly_y",
        "set_2_wholly_y",
    }
    assert all(r.passed for r in residuals.values()), residuals
    # the sufficient statistics count what they say: 3 seeds of N rows, D(d - 1) noise directions
    assert healthy["samples"] == [400.0] * SEEDS
    assert healthy["noise_dof"] == [400.0 * 6 * 4] * SEEDS
    assert healthy["random_patches"] == [400.0 * 4] * SEEDS


def test_a_halved_A_gradient_breaks_the_gradient_identity(monkeypatch):
    params, X, y = _start()
    assert float(selfcheck.gradient_identity(CFG, params, X, y)) <= 1.0
    original = realistic.empirical_value_and_grad

    def halved(model, p, X, y, Xt=None):
        loss, g = original(model, p, X, y, Xt)
        return loss, {"params": {"A": g["params"]["A"] / 2, "v": g["params"]["v"]}}

    monkeypatch.setattr(realistic, "empirical_value_and_grad", halved)
    # |g/2 - g| / (bound S) with S >= |g|: far above 1 wherever the A-gradient is not tiny
    assert float(selfcheck.gradient_identity(CFG, params, X, y)) > 1e3


def test_a_reshape_for_a_transpose_breaks_the_gradient_identity(monkeypatch):
    params, X, y = _start()
    monkeypatch.setattr(realistic, "transposed", lambda X: X.reshape(X.shape[-1], -1))
    assert float(selfcheck.gradient_identity(CFG, params, X, y)) > 1e3


def _law(cfg, X, y):
    stats = selfcheck.data_law(cfg, X, y, data.feature(cfg))
    return {k: [np.asarray(v).tolist()] for k, v in stats.items()} | {"gradient_identity": [0.0]}


def test_data_drawn_with_the_wrong_noise_fails_the_noise_variance():
    """The noise std sqrt(sigma) for sigma: the mean square is sigma, not sigma^2 = 1/5."""
    w_star = data.feature(CFG)
    X, y = data.sample(jax.random.key(1), CFG, 2000, w_star)
    assert self_check(_law(CFG, X, y), CFG.to_dict())["noise_variance"].passed
    s = data.signs(X, w_star)
    wrong = s[..., None] * w_star + (X - s[..., None] * w_star) * jnp.sqrt(1 / CFG.sigma)
    found = self_check(_law(CFG, wrong, y), CFG.to_dict())
    assert not found["noise_variance"].passed
    assert found["feature_rate"].passed


def test_set_rates_follow_the_uniform_signal_set():
    """Counts at the law's rate pass, a set that never carries the signal fails; the rate by hand:
    1/3 + (2/3)(0.4/2)^2 = 0.36 (L = 3, q = 0.4, C = 2)."""
    n = 30_000.0
    found = {
        "gradient_identity": [0.0],
        "noise_sum_squares": [0.2 * 1000.0],
        "noise_dof": [1000.0],
        "random_nonzero": [0.4 * 5000.0],
        "random_patches": [5000.0],
        "set_whole_y": [[0.36 * n, 0.36 * n, 0.36 * n]],
        "samples": [n],
    }
    assert all(r.passed for r in self_check(found, CFG.to_dict()).values())
    # a set never the signal set: wholly y only by chance, (0.4/2)^2 = 0.04 of the samples
    found["set_whole_y"] = [[0.52 * n, 0.44 * n, 0.04 * n]]
    judged = self_check(found, CFG.to_dict())
    assert not judged["set_2_wholly_y"].passed and not judged["set_0_wholly_y"].passed
    # one sample off the expectation is inside a 0.999 interval of 30,000 draws (sd 83 samples)
    found["set_whole_y"] = [[0.36 * n + 1, 0.36 * n, 0.36 * n - 1]]
    assert all(r.passed for r in self_check(found, CFG.to_dict()).values())
    assert SELF_CHECK_CONFIDENCE == 0.999


@pytest.mark.parametrize(
    "found",
    [None, {}, {"gradient_identity": ["x"]}, {k: [float("nan")] for k in SELF_CHECK_KEYS}],
)
def test_a_malformed_self_check_is_refused_in_one_line(found):
    with pytest.raises(ValueError, match=r"meta\['self_check'\] of the realistic trajectory"):
        self_check(found, CFG.to_dict())
