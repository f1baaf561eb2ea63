"""Shared test setup: float64 everywhere (importing dynsim enables jax_enable_x64)."""

import dynsim  # noqa: F401  (enables float64)
import numpy as np
import pytest

U64 = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64, 2^-53


@pytest.fixture(scope="session")
def small_runs():
    """Reduced and full exact trajectories on the two settings of the issue, computed once."""
    import full.jsl
    import reduced.jsl
    from dynsim import JSLConfig

    out = {}
    for D, C in ((8, 2), (9, 3)):
        cfg = JSLConfig(D=D, C=C, steps=600, record_every=20, eta=0.05)
        out[(D, C)] = (cfg, reduced.jsl.simulate(cfg), full.jsl.simulate(cfg, mode="exact"))
    return out


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after each test module. One process runs the whole suite, and every jitted
    function with a new static config compiles anew: kept, the executables grew the process to 7 GB and past the
    kernel's memory-map limit (vm.max_map_count = 65530), and XLA then crashed compiling (SIGSEGV in
    backend_compile, tests/test_sweep.py, seen twice). No test relies on a program compiled by another module."""
    yield
    import jax

    jax.clear_caches()
