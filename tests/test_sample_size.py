"""dynsim.jsl.sample_size: the exact population Hessian of (P) in (A, v) on the flow's line, from
one configuration per orbit and the group average, against the plain sum over every
configuration; the group average is a projection that leaves that Hessian as it is."""

import jax
import jax.numpy as jnp
import numpy as np

from dynsim.jsl import JSLConfig, data, partition, sample_size
from dynsim.jsl.model import forward, logistic_loss
from full.jsl import population
from full.jsl.training import model_for

# D = 9, C = 3: 3 x 3^6 = 2187 configurations (y = +1), 55 orbits
CFG = JSLConfig(D=9, C=3, q=0.5, temperature="unit", dtype="float64", eta=0.08, steps=5300)
STATE = (0.5, 1.0, -0.3)  # (alpha, gamma, rho): off the start, the two orbits of A distinct


def enumerated_hessian(cfg, alpha, gamma, rho):
    """The Hessian in (A's off-diagonal entries, v) of (P) at v = alpha w*, A = gamma within the
    sets and rho between, summed over every configuration: the (A, alpha) part from
    `population.exact_loss` (the noise integrated out on the line), v's orthogonal part from the
    noise's second moment, sigma^2 sum_j d^2 L / d proj_j^2 on that subspace."""
    w_star = np.asarray(data.feature(cfg, jnp.float64))
    configs = population.enumerate_configurations(cfg)
    within, between = (jnp.asarray(m, float) for m in partition.orbit_masks(cfg))
    off = ~np.eye(cfg.D, dtype=bool)
    n = int(off.sum())
    model = model_for(cfg)
    entries = (gamma * within + rho * between)[off]

    def matrix(e):
        return jnp.zeros((cfg.D, cfg.D)).at[off].set(e) + cfg.sigma_A * jnp.eye(cfg.D)

    def line(theta):  # v = theta[n] w*
        params = {"params": {"A": matrix(theta[:n]), "v": theta[n] * jnp.asarray(w_star)}}
        return population.exact_loss(model, params, configs, jnp.asarray(w_star))

    def loss_of(proj):
        return logistic_loss(forward(matrix(entries), proj, tau=cfg.tau, p=cfg.p, nu=cfg.nu))

    H_line = np.asarray(jax.hessian(line)(jnp.concatenate([entries, jnp.array([alpha])])))
    traces = jax.vmap(lambda s: jnp.trace(jax.hessian(loss_of)(alpha * s)))(configs.s)
    curvature = float(jnp.sum(configs.w * traces))
    perp = np.eye(cfg.d) - np.outer(w_star, w_star)
    H = np.zeros((n + cfg.d, n + cfg.d))
    H[:n, :n] = H_line[:n, :n]
    H[:n, n:] = np.outer(H_line[:n, n], w_star)
    H[n:, :n] = H[:n, n:].T
    H[n:, n:] = H_line[n, n] * np.outer(w_star, w_star) + cfg.sigma**2 * curvature * perp
    return H, w_star


def test_orbit_hessian_is_the_enumerated_one():
    """55 orbit representatives and the group average give the Hessian of the sum over all 2187
    configurations. Tolerance 1e-12 of its largest entry: both are float64 sums of a few thousand
    terms of that size (rounding about 2187 x 1.1e-16 = 2.4e-13 relative, a factor 4 of room)."""
    reference, _ = enumerated_hessian(CFG, *STATE)
    _, H = sample_size._program(CFG)(*STATE)
    scale = np.max(np.abs(reference))
    assert np.max(np.abs(H - reference)) <= 1e-12 * scale


def test_the_group_average_is_a_projection_leaving_the_exact_hessian():
    """Averaging twice is averaging once, the result is symmetric, and the enumerated Hessian (which
    has the symmetry: Lemma 4.1's group maps the data law to itself) is left as it is, to the
    rounding of an average (1e-14 of its scale); a matrix without the symmetry is moved."""
    reference, w_star = enumerated_hessian(CFG, *STATE)
    average = sample_size.symmetrize(CFG, w_star)
    scale = np.max(np.abs(reference))
    assert np.max(np.abs(average(reference) - reference)) <= 1e-14 * scale
    noise = np.random.default_rng(0).standard_normal(reference.shape)
    once = average(noise)
    assert np.max(np.abs(average(once) - once)) <= 1e-14 * np.max(np.abs(once))
    # symmetric to rounding: a transposed entry's orbit sums the same entries in another order
    assert np.max(np.abs(once - once.T)) <= 1e-14 * np.max(np.abs(once))
    assert np.max(np.abs(once - noise)) > 0.5


def test_orbit_representatives_carry_the_whole_law():
    """The orbit probabilities sum to 1 (to rounding), every representative has its signal set at
    +1, and the count of each random patch value matches the orbit's count types."""
    s, w = sample_size.representatives(CFG)
    assert len(w) == 55 and abs(w.sum() - 1) <= 1e-13
    signal = partition.sets(CFG)[0]
    assert np.all(s[:, signal] == 1.0)
    q = CFG.q
    expected_nonzero = (CFG.D - CFG.C) * q  # E[number of nonzero random patches]
    others = np.setdiff1d(np.arange(CFG.D), signal)
    assert abs(np.dot(w, np.sum(s[:, others] != 0, axis=1)) - expected_nonzero) <= 1e-12


def test_the_association_probability_rises_with_n_and_n_min_is_where_it_crosses(monkeypatch):
    """End to end at a small size (D = 8, C = 2, a short horizon, a coarse time grid): P_assoc is
    a probability, does not fall as N grows (the sample term's scale 1 / sqrt(N) shrinks on fixed
    draws), and n_min(target) is within its 1% search of where it crosses the target."""
    monkeypatch.setattr(sample_size, "LOG_TIMES", 12)
    monkeypatch.setattr(sample_size, "WINDOW_TIMES", 3)
    monkeypatch.setattr(sample_size, "DRAWS", 2000)
    cfg = JSLConfig(D=8, C=2, q=0.5, temperature="unit", eta=0.1, steps=4000)
    law = sample_size.fluctuation(cfg, 0.25)
    assert law.t.shape == (3,) and law.start.shape[1:] == (2000, 8 * 1 * 6)
    Ns = np.geomspace(10, 1e7, 13)
    P = np.array([np.min(law.probability(N)) for N in Ns])
    assert np.all((P >= 0) & (P <= 1)) and np.all(np.diff(P) >= 0)
    assert P[0] < 0.05 and P[-1] > 0.95  # 10 samples associate almost never, 10^7 almost surely
    target = 0.5
    n = law.n_min(target)
    assert np.min(law.probability(n)) >= target > np.min(law.probability(n / 1.02))
