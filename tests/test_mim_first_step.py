"""`reduced.mim.simulate_with_first_step`: one compiled program gives a run and its first GD step,
as two runs of their own give them (the ladder reads both for every rung)."""

import jax.numpy as jnp
import numpy as np
import pytest

import reduced.mim
from dynsim import MIMConfig, recording

# the class engine (K = 1, exact), per query and joint type (K = 2, exact) and per joint cell
# (K = 2, mean field): the three engines of a population run, at sizes other tests run too
K1 = MIMConfig(P=16, K=1, steps=20, record_every=10)
K2 = MIMConfig(
    P=9, K=2, kappa_c=0.7, kappa_s=0.3, partition="random", mask_ratio=0.5, steps=30,
    record_every=10, seed=3,
)  # fmt: skip
# Both programs evaluate the same operations on the same inputs, but XLA may fuse two programs
# differently: a few ulps of values of order 10 at most (measured: bit for bit)
ROUNDING = 1e-13


def _same(a, b):
    assert np.array_equal(a.steps, b.steps) and a.meta == b.meta
    assert set(a.observables) == set(b.observables)
    for k in a.observables:
        np.testing.assert_allclose(a[k], b[k], rtol=0, atol=ROUNDING, err_msg=k)


@pytest.mark.parametrize("cfg, approximation", [(K1, None), (K2, "mean_field")])
def test_the_run_equals_a_run_of_its_own(cfg, approximation, monkeypatch):
    """The extra record at step 1 leaves the run's records as they are (`dynsim.recording` places
    it alike for every engine), also where the run's records just fit the per-patch budget and one
    more would not (K = 2, mean field: 4 records of 2 x 9 x 2 x 3 + 81 entries; the run's choice
    of records is made on its own records)."""
    monkeypatch.setattr(reduced.mim.dynamics, "PATCH_BUDGET", 4 * (2 * 9 * 2 * 3 + 81))
    run, _ = reduced.mim.simulate_with_first_step(cfg, approximation, every_step=True)
    _same(run, reduced.mim.simulate(cfg, approximation, every_step=True))
    assert cfg.K == 1 or "pp_corr" in run.observables


@pytest.mark.parametrize(
    "cfg, approximation",
    [(K1, None), (K2, None), (K2, "mean_field")],
    ids=["classes", "joint types", "joint cells"],
)
def test_the_first_step_equals_a_one_step_run(cfg, approximation):
    run, first = reduced.mim.simulate_with_first_step(cfg, approximation, every_step=True)
    alone = reduced.mim.simulate(
        cfg.replace(steps=1, record_every=1), approximation, every_step=True
    )
    _same(first, alone)
    assert first.final == {} and run.final.keys() == alone.final.keys()


def test_a_run_without_steps_has_no_first_step():
    with pytest.raises(ValueError, match="no first step"):
        reduced.mim.simulate_with_first_step(K1.replace(steps=0))


def test_records_at_the_run_s_steps_and_step_1():
    """`dynsim.recording.run(first=True)` records at `with_first_step`: y after t unit steps is t,
    exactly."""
    out = recording.run(
        lambda y, t: y + 1.0, lambda y, t: {"y": y}, jnp.zeros(()), 5, 2, False, True
    )
    assert out[1]["y"].tolist() == [0, 1, 2, 4, 5]
    with pytest.raises(ValueError, match="no first step"):
        recording.run(lambda y, t: y, lambda y, t: {"y": y}, jnp.zeros(()), 0, 2, False, True)
