"""A config's numbers are traced (`dynsim.pytree`): a second run of one shape with other numbers
compiles nothing, and its numbers are the new ones, not the first run's frozen into the program."""

import jax
import numpy as np
import pytest
from jax import monitoring

import full.jsl
import full.mim
import reduced.jsl
import reduced.mim
from dynsim import JSLConfig, MIMConfig, pytree
from reduced.jsl import dynamics, tables

COMPILED = {"count": 0}


def _count(name: str, seconds: float, **kwargs) -> None:
    # a program lowered anew: XLA then compiles it, or reads it from the persistent cache the suite
    # keeps (tests/conftest.py); either way the in-memory cache missed
    if name == "/jax/core/compile/jaxpr_to_mlir_module_duration":
        COMPILED["count"] += 1


monitoring.register_event_duration_secs_listener(_count)


def compilations(run) -> int:
    """How many programs were lowered (to be compiled or read from disk) while `run()` ran."""
    before = COMPILED["count"]
    run()
    return COMPILED["count"] - before


BASE = JSLConfig(steps=20, record_every=5)
OTHER_NUMBERS = ({"eta": 0.07}, {"q": 0.2, "nu": 0.02, "sigma_A": 1.5})
# each level's run, and a run of another shape (the recording grid; the flow's saves), which must
# compile
LEVELS = {
    "reduced gd": (lambda c: reduced.jsl.simulate(c), dict(steps=25)),
    "reduced flow": (lambda c, **o: reduced.jsl.simulate(c, method="flow", **o), dict(saves=7)),
    "full exact": (lambda c: full.jsl.simulate(c), dict(steps=25)),
    "full sampled": (lambda c: full.jsl.simulate(c, mode="sampled", replicates=2), dict(steps=25)),
    "mim reduced": (lambda c: reduced.mim.simulate(c), dict(steps=25)),
    "mim full exact": (lambda c: full.mim.simulate(c), dict(steps=25)),
}
MIM_BASE = MIMConfig(steps=20)


@pytest.mark.parametrize("level", list(LEVELS))
def test_other_numbers_of_one_shape_compile_nothing(level):
    run, other_shape = LEVELS[level]
    base, changes = (MIM_BASE, [{"eta": 0.5}]) if level.startswith("mim") else (BASE, OTHER_NUMBERS)
    first = run(base)  # compiles this shape's programs
    for change in changes:
        assert compilations(lambda: run(base.replace(**change))) == 0, change
    # the new numbers count the counter counts: another shape compiles again
    assert not np.array_equal(run(base.replace(**changes[0]))["loss"], first["loss"])
    if level == "reduced flow":
        assert compilations(lambda: run(base, **other_shape)) > 0
    else:
        assert compilations(lambda: run(base.replace(**other_shape))) > 0


def test_the_compiled_run_reads_the_new_numbers():
    """The program compiled at eta = 0.05 and run at eta = 0.07 equals a program compiled with eta =
    0.07 as a constant (the config static, as before configs were pytrees). Same float64 operations;
    constant folding may round a fold of the config's numbers differently, by an ulp per operation:
    1e-13 relative is ~1000 ulps over 20 steps of a handful of operations each, and a frozen eta =
    0.05 misses by 30% of the increments."""
    table = tables.table(BASE, None).weights
    theta0 = dynamics.initial_state(BASE)
    dynamics.run_jit(BASE, table, theta0)
    new = BASE.replace(eta=0.07)
    traced_rec, _ = dynamics.run_jit(new, table, theta0)
    static_rec, _ = jax.jit(dynamics.run, static_argnums=0)(new, table, theta0)
    for name in ("alpha", "gamma", "rho", "loss"):
        np.testing.assert_allclose(
            traced_rec[name], static_rec[name], rtol=1e-13, atol=0, err_msg=name
        )
    old_rec, _ = dynamics.run_jit(BASE, table, theta0)
    assert not np.allclose(traced_rec["gamma"][1:], old_rec["gamma"][1:], rtol=1e-3)


def test_stack_refuses_configs_of_two_shapes():
    with pytest.raises(ValueError, match="one shape"):
        pytree.stack([BASE, BASE.replace(D=8, C=2)], "float64")
    stacked = pytree.stack([BASE, BASE.replace(eta=0.07)], "float64")
    np.testing.assert_array_equal(stacked.eta, [0.05, 0.07])
    assert stacked.D == BASE.D
