"""Shared test setup: float64 everywhere (importing dynsim enables jax_enable_x64), and JAX's
persistent compilation cache in one git-ignored folder, shared by the pytest-xdist workers and the
fresh processes the tests start, and kept between runs."""

import gc
import os
from pathlib import Path

# Set before JAX is imported (it reads them then; the processes tests start inherit them). A program
# that calls back to the host (progress and Ctrl-C checks: every training scan; the flow's vector
# field) is never written, since JAX bakes the callback into it; the others are. The threshold skips
# only programs that compile faster than an entry is read back (docs/benchmarks.md m).
CACHE = Path(__file__).resolve().parent.parent / ".jax-cache"
os.environ.setdefault("JAX_COMPILATION_CACHE_DIR", str(CACHE))
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS", "0.02")
os.environ.setdefault("JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES", "-1")

import dynsim  # noqa: E402, F401  (enables float64)
import numpy as np  # noqa: E402
import pytest  # noqa: E402

U64 = float(np.finfo(np.float64).eps) / 2  # unit roundoff of float64, 2^-53


def pytest_collection_finish(session):
    """Fewer full garbage collections in the test process: what collection built (the test modules,
    sympy and JAX) is frozen out of them, and a collection runs after 10,000 net allocations instead
    of 700 (the oldest generation after 100 younger ones instead of 10). Tracing and sympy make
    millions of objects, and each full collection scanned them all: 4.4 s of 99 s in
    tests/test_moments.py, test_reduced_observables.py and test_mim.py (one process), 1.1 s after
    (docs/benchmarks.md m). Nothing a test checks depends on when cycles are freed."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(10_000, 50, 100)


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


# Compiled programs are dropped at the end of a module only past either bound: a third of the
# kernel's map limit and 2.5 GB resident. Kept below them, a later module reuses what an earlier one
# compiled (the same small configs and the element-wise programs of eager jnp calls recur across
# modules).
MAX_MAPS = 20_000
# 2.5 GB for one process; pytest-xdist's workers share a budget of about twice that between them
WORKERS = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
MAX_RESIDENT_BYTES = 2.5e9 * 2 / (WORKERS + 1)


def _maps_and_resident_bytes() -> tuple[int, float]:
    """This process's memory maps (lines of /proc/self/maps) and resident bytes; (0, 0) where /proc
    is absent."""
    try:
        with open("/proc/self/maps") as fh:
            maps = sum(1 for _ in fh)
        with open("/proc/self/statm") as fh:
            resident = int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0, 0.0
    return maps, float(resident)


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drop JAX's compiled programs after a test module once the process holds MAX_MAPS memory maps
    or MAX_RESIDENT_BYTES (where /proc cannot be read: after every module). One process runs the
    whole suite, and every jitted function with a new static config compiles anew: kept, the
    executables grew the process to 7 GB and past the kernel's memory-map limit (vm.max_map_count =
    65530), and XLA then crashed compiling (SIGSEGV in backend_compile, tests/test_sweep.py, seen
    twice). No test relies on a program compiled by another module."""
    yield
    import jax

    maps, resident = _maps_and_resident_bytes()
    if maps == 0 or maps >= MAX_MAPS or resident >= MAX_RESIDENT_BYTES:
        jax.clear_caches()
