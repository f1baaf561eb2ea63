"""The data distribution of Assumption 1."""

import jax
import numpy as np
import pytest

import full.jsl as fj
import reduced.jsl as rj
from dynsim import JSLConfig
from dynsim.jsl import data, partition

N_SAMPLES = 20_000


@pytest.fixture(scope="module")
def batch():
    cfg = JSLConfig(D=16, C=4, q=0.3, seed=2)
    w = data.feature(cfg)
    X, y = data.sample(jax.random.key(7), cfg, N_SAMPLES, w)
    return cfg, np.asarray(w), np.asarray(X), np.asarray(y)


def test_feature_is_a_unit_vector_off_the_axes(batch):
    cfg, w, _, _ = batch
    assert np.linalg.norm(w) == pytest.approx(1.0, abs=1e-15)  # one division by the norm: a few u
    assert np.max(np.abs(w)) < 0.99  # a generic direction, nothing may rely on axis alignment


def test_features_lie_on_the_w_star_line_and_noise_is_orthogonal(batch):
    cfg, w, X, y = batch
    s = X @ w  # (n, D)
    # projecting out w* leaves <xi, w*> of order d u |z|, about 1e-15; 1e-12 is a wide margin
    assert np.max(np.abs(s - np.round(s))) < 1e-12
    s = np.round(s)
    sets = partition.sets(cfg)
    set_sums = np.stack([s[:, members].sum(axis=1) for members in sets], axis=1)
    # some set carries y on all of its C patches (the signal set)
    assert np.all(np.any(set_sums == cfg.C * y[:, None], axis=1))


def test_sign_frequencies_and_noise_scale(batch):
    """Frequencies against their expectation within 5 standard errors (two-sided 5 sigma: 6e-7 false
    alarm)."""
    cfg, w, X, y = batch
    s = np.round(X @ w)
    # patches outside the signal set: drop the first set that equals y on every patch
    sets = partition.sets(cfg)
    full_y = np.stack([np.all(s[:, m] == y[:, None], axis=1) for m in sets], axis=1)
    signal = np.argmax(full_y, axis=1)
    mask = np.ones_like(s, dtype=bool)
    for i, ell in enumerate(signal):
        mask[i, sets[ell]] = False
    delta = s[mask]
    m = delta.size
    for value, p in ((1.0, cfg.q / 2), (-1.0, cfg.q / 2), (0.0, 1 - cfg.q)):
        freq = np.mean(delta == value)
        assert abs(freq - p) <= 5 * np.sqrt(p * (1 - p) / m), value
    # labels: uniform prior
    assert abs(np.mean(y == 1) - 0.5) <= 5 * np.sqrt(0.25 / y.size)
    # noise: E |xi|^2 = sigma^2 (d - 1); the mean of n D chi-square(d-1) values has relative std
    # sqrt(2/((d-1) n D))
    xi = X - s[..., None] * w
    mean_sq = np.mean(np.sum(xi**2, axis=-1)) / (cfg.sigma**2 * (cfg.d - 1))
    assert abs(mean_sq - 1) <= 5 * np.sqrt(2 / ((cfg.d - 1) * xi.shape[0] * xi.shape[1]))


def test_invalid_init_is_named():
    cfg = JSLConfig(D=8, C=2, steps=1)
    with pytest.raises(ValueError, match="unknown keys"):
        rj.simulate(cfg, init={"alpha": 0.1, "beta": 2.0})
    with pytest.raises(ValueError, match=r"\(alpha, gamma, rho\)"):
        rj.simulate(cfg, init=(0.1, 0.2))
    with pytest.raises(ValueError, match="finite"):
        rj.simulate(cfg, init=(0.1, float("nan"), 0.0))
    with pytest.raises(ValueError, match="unknown keys"):
        fj.simulate(cfg, init={"w": 1})
    with pytest.raises(ValueError, match="shape"):
        fj.simulate(cfg, init={"A": np.zeros((3, 3))})
    with pytest.raises(ValueError, match="max_nonzero"):
        rj.simulate(cfg, max_nonzero=-1)
    with pytest.raises(TypeError, match="JSLConfig"):
        rj.simulate({"D": 8})


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_signs_recover_the_latent_signs_exactly_and_f_star_zero_stays_zero(dtype):
    """data.signs(X, w*) equals the latent s of the same key (sample draws its signs from the first
    split key), so f* = 0 stays exactly 0 and counts as an error of every F; the unrounded product
    does not (a negative control: f* then carries rounding residue of either sign)."""
    from dynsim.jsl import error

    cfg = JSLConfig(D=21, C=3, q=0.5, dtype=dtype)
    key = jax.random.key(5)
    w = data.feature(cfg, np.dtype(dtype))
    X, _ = data.sample(key, cfg, 4000, w, np.dtype(dtype))
    _, s = data.sample_signs(jax.random.split(key)[0], cfg, 4000, np.dtype(dtype))
    assert np.array_equal(np.asarray(data.signs(X, w)), np.asarray(s))
    f = np.asarray(error.f_star(cfg, s))
    assert np.mean(f == 0) > 0.05  # P[f* = 0] = 0.080 exactly here (reference.bayes_error_fstar)
    raw = np.asarray(error.f_star(cfg, X @ w))
    # without rounding many f* = 0 points are lost (this key: 48% in float64, over half in float32)
    assert np.mean(raw == 0) < 0.75 * np.mean(f == 0)
