"""Section 5 (problem (Ẽ), Theorems 5.1/5.2): the downstream feature, the mask trick, and transfer
with a pretrained A."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

import reduced.jsl as rj
from dynsim import JSLConfig
from dynsim.jsl import data, partition
from full.jsl import glm, transfer

from .conftest import U64

# Default A of docs/derivations/jsl.md §5 shrunk to D = 9, C = 3 (55 reduced configurations): unit
# temperature, nu = 1e-3.
SMALL = JSLConfig(D=9, C=3, q=0.3, nu=1e-3, temperature="unit", eta=0.05, n_test=2048)


@pytest.mark.parametrize("overlap", [0.0, 0.3, -0.7, 0.999, 1.0, -1.0])
def test_downstream_feature_is_unit_with_the_requested_overlap(overlap):
    """Rounding tolerance: u is normalized with a d-term norm (relative error <= ~(d + 2) u,
    Higham's bound for a sum of d squares and a sqrt), then combined with w* in two more roundings;
    4 (d + 4) u covers it with a factor ~4."""
    cfg = JSLConfig(D=16, C=4)
    w_star = np.asarray(data.feature(cfg))
    w = np.asarray(transfer.downstream_feature(cfg, overlap))
    tol = 4 * (cfg.d + 4) * U64
    assert abs(np.linalg.norm(w) - 1.0) <= tol
    assert abs(w @ w_star - overlap) <= tol
    # the part orthogonal to w* has norm sqrt(1 - overlap^2); the cancellation in w - overlap w*
    # only adds absolute error
    assert abs(np.linalg.norm(w - overlap * w_star) - np.sqrt(1 - overlap**2)) <= tol
    # a genuinely new direction, seeded: the same key gives the same w~, another key another
    if abs(overlap) < 1:
        again = np.asarray(transfer.downstream_feature(cfg, overlap))
        other = np.asarray(transfer.downstream_feature(cfg, overlap, jax.random.key(7)))
        assert np.array_equal(w, again) and not np.allclose(w, other)


@pytest.mark.parametrize(
    "bad,error",
    [(1.5, ValueError), (-1.01, ValueError), (float("nan"), ValueError), (float("inf"), ValueError)]
    + [("0.5", TypeError), (True, TypeError), (None, TypeError)],  # not a real number: its type
)
def test_downstream_feature_rejects_bad_overlap(bad, error):
    with pytest.raises(error, match="overlap"):
        transfer.downstream_feature(JSLConfig(), bad)


def test_downstream_feature_needs_a_second_dimension():
    cfg = JSLConfig(D=4, C=2, d=1)
    with pytest.raises(ValueError, match="d = 1"):
        transfer.downstream_feature(cfg, 0.5)
    assert np.allclose(
        np.asarray(transfer.downstream_feature(cfg, -1.0)), -np.asarray(data.feature(cfg))
    )


def test_mask_trick_equals_training_on_the_first_samples_alone():
    """Weighting the first N~ of n_max samples by 1 and the rest by 0 is GD on the first N~ samples
    alone.

    The zero-weighted terms add exact zeros, so the two runs differ only by the order in which the
    N~ nonzero terms of each sum are added. Tolerance (rounding): a sum of n terms reassociated
    moves by <= n u times the sum of |terms| (Higham, recursive summation); GD carries each step's
    discrepancy forward (stable steps, as in the checker's rounding model), so after `steps` steps
    10 * steps * n * u * max(1, |param|), the 10 covering the few roundings per term.
    """
    cfg = SMALL.replace(n_test=256)
    w = transfer.downstream_feature(cfg, 0.0)
    key = jax.random.key(3)
    train = data.sample(jax.random.fold_in(key, 1), cfg, 64, w)
    test = data.sample(jax.random.fold_in(key, 2), cfg, cfg.n_test, w)
    A = (
        cfg.sigma_A * np.eye(cfg.D)
        + 0.5 * partition.orbit_masks(cfg)[0]
        - 0.2 * partition.orbit_masks(cfg)[1]
    )
    v0 = cfg.omega * jax.random.normal(jax.random.fold_in(key, 3), (cfg.d,))
    steps = 200
    for n in (13,):  # not a power of two: the reduction trees of 13 and 64 terms differ
        mask = (jnp.arange(64) < n).astype(float)
        subset = (train[0][:n], train[1][:n])
        vm, rm = transfer.finetune_v(
            cfg, A, v0, train, test, steps=steps, eta=cfg.eta, weights=mask, record_every=50
        )
        vs, rs = transfer.finetune_v(
            cfg, A, v0, subset, test, steps=steps, eta=cfg.eta, record_every=50
        )
        tol = 10 * steps * n * U64 * max(1.0, float(np.abs(vs).max()))
        assert np.abs(np.asarray(vm - vs)).max() <= tol
        assert np.abs(np.asarray(rm["loss"] - rs["loss"])).max() <= tol
        assert np.array_equal(np.asarray(rm["test_error"]), np.asarray(rs["test_error"]))
        assert float(np.linalg.norm(vs)) > 10 * cfg.omega * np.sqrt(cfg.d)  # v really moved
        Wm, gm = glm.train_glm(
            cfg, train, test, steps=steps, eta=1.0, key=key, weights=mask, record_every=50
        )
        Ws, gs = glm.train_glm(cfg, subset, test, steps=steps, eta=1.0, key=key, record_every=50)
        tol = 10 * steps * n * U64 * max(1.0, float(np.abs(Ws).max()))
        assert np.abs(np.asarray(Wm - Ws)).max() <= tol
        assert np.abs(np.asarray(gm["loss"] - gs["loss"])).max() <= tol
    # and the mask does select: training on all 64 is a different run
    v_all, _ = transfer.finetune_v(cfg, A, v0, train, test, steps=steps, eta=cfg.eta)
    assert np.abs(np.asarray(v_all - vs)).max() > 1e-3


@pytest.fixture(scope="module")
def idealized_pretrained():
    """A cheap pretrained A: the idealized one, A = sigma_A I + gamma (within) + rho (between), from
    a reduced run.

    Justification: under GD on (P) A stays constant on the orbits (Lemma 4.1), so this matrix IS the
    pretrained A of the idealized problem, and Theorem 4.2 says the realistic A approaches it. A0 =
    sigma_A I is its initialization (Parametrization 3.1, idealized case): no patch association
    (every off-diagonal entry ties).
    """
    cfg = SMALL.replace(steps=4000, record_every=4000)
    red = rj.simulate(cfg)
    gamma, rho = float(red["gamma"][-1]), float(red["rho"][-1])
    within, between = partition.orbit_masks(cfg)
    return {
        "A": cfg.sigma_A * np.eye(cfg.D) + gamma * within + rho * between,
        "A0": cfg.sigma_A * np.eye(cfg.D),
        "gamma": gamma,
        "rho": rho,
    }


def test_pretrained_attention_transfers_better_than_initial_attention(idealized_pretrained):
    """Theorem 5.1 vs 5.2 at a small setting: with few downstream samples, fine-tuning v under the
    pretrained A beats fine-tuning v under A0. Statistical test: one-sided paired t-test over 8
    seeds (7 dof) of error(A0) - error(A), at family-wise 99% over the two N~ (Bonferroni: 99.5%
    each). Seeds are fixed, so the test is deterministic; if the two learners were equally good it
    would pass with probability <= 1%."""
    pre = idealized_pretrained
    assert pre["gamma"] > 0 > pre["rho"]  # the reduced run did learn patch association
    res = transfer.transfer(
        SMALL, pretrained=pre, n_tilde=(8, 16), seeds=8, steps=300, record_every=100
    )
    t_crit = stats.t.ppf(1 - 0.01 / 2, df=7)
    diff = res.final["initial"] - res.final["pretrained"]  # (seeds, 2)
    t = diff.mean(axis=0) / (diff.std(axis=0, ddof=1) / np.sqrt(8))
    assert np.all(t > t_crit), (t, res.table())
    assert res.association == {"pretrained": 1.0, "initial": 0.0}
    text = res.table()
    assert "pretrained" in text and "glm" in text and len(text.splitlines()) >= 5
    d = res.to_dict()
    assert d["n_tilde"] == [8, 16] and set(d["mean"]) == set(transfer.LEARNERS)


def test_transfer_rejects_bad_input(idealized_pretrained):
    pre = {"A": idealized_pretrained["A"], "A0": idealized_pretrained["A0"]}
    with pytest.raises(ValueError, match="n_tilde"):
        transfer.transfer(SMALL, pretrained=pre, n_tilde=(8, 0))
    with pytest.raises(ValueError, match="n_tilde"):
        transfer.transfer(SMALL, pretrained=pre, n_tilde=())
    with pytest.raises(ValueError, match="seeds"):
        transfer.transfer(SMALL, pretrained=pre, seeds=1)
    with pytest.raises(ValueError, match="eta"):
        transfer.transfer(SMALL, pretrained=pre, eta=-0.1)
    with pytest.raises(ValueError, match="steps"):
        transfer.transfer(SMALL, pretrained=pre, steps=-1)
    with pytest.raises(ValueError, match="overlap"):
        transfer.transfer(SMALL, pretrained=pre, overlap=2.0)
    with pytest.raises(ValueError, match="A0"):
        transfer.transfer(SMALL, pretrained={"A": pre["A"]})
    with pytest.raises(ValueError, match="shape"):
        transfer.transfer(SMALL, pretrained={"A": np.eye(4), "A0": pre["A0"]})
    with pytest.raises(ValueError, match="non-finite"):
        transfer.transfer(SMALL, pretrained={"A": pre["A"] * np.nan, "A0": pre["A0"]})
