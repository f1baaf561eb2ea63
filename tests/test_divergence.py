"""Divergence is reported at the step the state stopped being finite, not at the next record (issue
16: "100" when it happened at step 2). The reference is independent of the code under test: the same
run recorded at every step, where the first non-finite alpha, gamma or rho (the state itself in the
reduced level, projections of A and v in the full one: a NaN or an infinity in the state reaches
them) is found by `divergence.nonfinite` alone. The loss can overflow one step earlier, at the state
whose gradient overflows; the flag is the state's step whatever the record interval."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import full.jsl
import full.jsl.fig2
import full.jsl.realistic
import full.mim
import reduced.jsl
from dynsim import divergence
from dynsim.jsl.config import JSLConfig
from dynsim.mim import MIMConfig
from dynsim.trajectory import seed_statistics


def _quiet(f, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return f(*args, **kwargs)


def _first_recorded(t, names=("alpha", "gamma", "rho")) -> int:
    """The first recorded step where one of `names` is not finite: at record_every = 1, the step of
    divergence."""
    bad = divergence.nonfinite({k: t[k] for k in names}, t.steps)
    assert bad.any()
    return int(t.steps[np.argmax(bad)])


@pytest.mark.parametrize(
    "level", ["reduced", "full exact", "full sampled", "full realistic", "full Figure 2"]
)
def test_divergence_is_reported_at_its_step(level):
    # D = 9: overflows within a few steps (5 or 6 at every level), so 100 steps hold the divergence
    # and the sparse run's first record after it; N = n_test = 256 samples (the batch, training and
    # test sets) keep the runs small
    cfg = JSLConfig(eta=1000.0, steps=100, record_every=100, N=256, n_test=256)
    run = {
        "reduced": reduced.jsl.simulate,
        "full exact": full.jsl.simulate,
        "full sampled": lambda c: full.jsl.simulate(c, mode="sampled", replicates=2),
        "full realistic": lambda c: full.jsl.realistic.run(c, seeds=2)[0],
        "full Figure 2": lambda c: full.jsl.fig2.run_fig2(
            c.replace(D=16, C=4, d=16, partition="grid"), seeds=2
        )[0],
    }[level]
    sparse, dense = _quiet(run, cfg), _quiet(run, cfg.replace(record_every=1))
    exact = sparse.meta["nonfinite_from_step"]
    assert exact == dense.meta["nonfinite_from_step"] == _first_recorded(dense)
    # negative control: the first non-finite *record* of the sparse run is step 100
    assert 0 < exact < 100
    assert _first_recorded(sparse) == 100
    # the loss may overflow one step first; a seed standard error (which squares the values) earlier
    # still
    measured = tuple(k for k in dense.observables if not k.endswith("_se"))
    assert _first_recorded(dense, measured) in (exact - 1, exact)
    assert (
        divergence.NONFINITE not in sparse.observables
        and divergence.NONFINITE not in dense.observables
    )


def test_a_finite_run_has_no_divergence_step():
    cfg = MIMConfig(steps=40, record_every=20)
    t = full.mim.simulate(cfg)
    assert "nonfinite_from_step" not in t.meta and divergence.NONFINITE not in t.observables


def test_take_and_seed_statistics_report_the_earliest_run():
    # (R, records)
    runs = {divergence.NONFINITE: np.array([[-1, -1, 7, 7], [-1, 3, 3, 3]]), "x": np.zeros((2, 4))}
    stats = seed_statistics(runs)
    assert stats[divergence.NONFINITE].tolist() == [-1, 3, 3, 3]
    assert (
        f"{divergence.NONFINITE}_se" not in stats and f"{divergence.NONFINITE}_seeds" not in stats
    )
    assert divergence.take(stats) == 3 and divergence.NONFINITE not in stats
    assert divergence.take({divergence.NONFINITE: np.array([-1, -1])}) is None
    assert divergence.take({"x": np.zeros(2)}) is None
