"""The realistic runs' GD stability premise (docs/jsl.md §13): the sharpness it reads, and the
verdicts it makes "not applicable" when GD is past its stability edge."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dynsim import JSLConfig
from dynsim.jsl import claims_realistic as cr
from dynsim.jsl import data, realistic_runs
from full.engine import LOSS_RISE
from full.jsl import realistic
from full.jsl.training import model_for

CFG = JSLConfig(D=9, C=3, q=0.5, temperature="unit", eta=0.1, N=300, n_test=64, steps=1)


def _after(cfg, steps, r):
    """Seed r's training set and its GD state after `steps` steps (`realistic.train`)."""
    w_star = data.feature(cfg)
    key = realistic.seed_key(cfg, r)
    train_set, test_set = realistic.datasets(cfg, key, w_star)
    params0 = realistic.initial_params(cfg, jax.random.fold_in(key, 2), w_star)
    params, _ = jax.jit(
        lambda p: realistic.train(
            cfg.replace(steps=steps, record_every=steps), p, w_star, train_set, test_set
        )
    )(params0)
    return params, *train_set


def test_sharpness_is_the_most_positive_eigenvalue_of_the_hessian():
    """Against numpy's eigvalsh of the exact Hessian (jax.hessian) over what GD moves (off-diagonal
    A, v), at a state where a negative eigenvalue is by far the largest in magnitude (2 steps into
    the loss's drop at N = 128: power iteration would return it, about -57, for lambda_max, about
    5e-4). Lanczos' largest Ritz value is a lower bound on lambda_max; after 30 steps from a
    generic start at this size (81 dimensions) its error is at the rounding of the Hessian's
    products, a few hundred float64 operations deep: 1e-10 of the spectral radius."""
    cfg = CFG.replace(N=128)
    params, X, y = _after(cfg, 2, 0)
    model = model_for(cfg)
    A = params["params"]["A"]
    off = np.flatnonzero(~np.eye(cfg.D, dtype=bool))

    def loss(z):
        A_z = A.ravel().at[off].set(z[: off.size]).reshape(A.shape)
        return realistic.empirical_loss(model, {"params": {"A": A_z, "v": z[off.size :]}}, X, y)

    z0 = jnp.concatenate([A.ravel()[off], params["params"]["v"]])
    # jitted: one program, where run op by op the Hessian compiled about 120 small ones
    ev = np.linalg.eigvalsh(np.asarray(jax.jit(jax.hessian(loss))(z0)))
    assert -ev[0] > ev[-1] > 0, ev[[0, -1]]  # the case power iteration gets wrong
    lam = float(realistic.sharpness(model, params, X, y))
    scale = 1e-10 * -ev[0]
    assert ev[-1] - scale <= lam <= ev[-1] + scale, (lam, ev[-3:])


def _records(sharpness, rise):
    """Records of one run as `realistic_runs.run` returns them: per-seed (records, seeds) arrays."""
    return {
        "sharpness_seeds": np.asarray(sharpness, float),
        LOSS_RISE + "_seeds": np.asarray(rise, float),
    }, {}


STABLE = _records(
    [[5.0, 5.0], [10.0, 12.0], [15.0, 19.0]], [[-1.0, -1.0], [-0.3, -0.2], [-1e-3, 0.0]]
)


def test_stability_premises_are_met_on_a_descending_run_within_the_edge():
    edge, descent = cr.stability_premises(CFG, {300: STABLE})  # eta = 0.1: max eta lambda = 1.9
    assert edge.met and edge.measured == pytest.approx(1.9) and descent.met


@pytest.mark.parametrize(
    "sharpness, rise, which",
    [
        ([[5.0], [21.0]], [[-1.0], [-0.1]], 0),  # eta lambda = 2.1 at one record
        ([[5.0], [np.nan]], [[-1.0], [-0.1]], 0),  # diverged: not finite counts as past the edge
        (
            [[5.0], [10.0]],
            [[-1.0], [2e-4]],
            1,
        ),  # one step raised the loss by 2e-4 >> N eps = 2.2e-13
        ([[5.0], [10.0]], [[-1.0], [np.nan]], 1),  # a loss went non-finite
    ],
)
def test_stability_premises_come_out_false(sharpness, rise, which):
    premises = cr.stability_premises(CFG, {300: STABLE, 1000: _records(sharpness, rise)})
    assert not premises[which].met and not premises[which].missing
    assert premises[1 - which].met or which == 0


def test_theorem_4_2_and_lemma_4_2_are_not_applicable_past_the_edge():
    """eta = 0.6 at D = 9: the start's sharpness is about 7.7 (eta lambda about 4.6), so GD is past
    its edge from the first step; neither claim is judged."""
    rc = CFG.replace(eta=0.6, N=500, steps=40, record_every=10)
    run = realistic_runs.run(rc, 2)
    theorem = cr.theorem_4_2(rc, {500: run}, 2)
    lemma = cr.lemma_4_2(rc, run[1], 2, premises=cr.stability_premises(rc, {500: run}))
    for claim in (theorem, lemma):
        assert claim.verdict == "not applicable", (claim.claim, claim.regime)
        assert "stability edge" in claim.regime
