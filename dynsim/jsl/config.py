"""`JSLConfig`: every parameter of the JSL setting (Assumption 1, model (T), Parametrization
3.1)."""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType
from typing import Any, ClassVar, Mapping, Optional

from dynsim.validation import check_int64, check_seed, lower_bounds, shown
from dynsim.validation import is_int as _is_int, is_real as _is_real

TEMPERATURES = ("sqrt_d", "unit")
PARTITIONS = ("grid", "contiguous", "random")
DTYPES = ("float64", "float32")
# p at most 1023: x^p overflows float64 (max 1.8e308 = 2^1024) from |x| = 2 on beyond it, and D <v,
# X_j> reaches 2 at the problems dynsim runs; sympy's derivation is symbolic but its lambdified loss
# is not
MAX_P = 1023
# derive jsl --C: sympy's time grows with the (C+1)(C+2)/2 set types (docs/benchmarks.md l)
MAX_DERIVE_C = 16


@dataclasses.dataclass(frozen=True)
class JSLConfig:
    """One JSL problem, shared by the reduced and the full level.

    Defaults are a small problem (D=9, C=3) on which both levels run in seconds.
    `partition=None` and `d=None`, `sigma=None` are resolved on construction:
    "grid" where the shapes allow it (else "contiguous"), d = D, sigma = 1/sqrt(d).
    """

    D: int = 9  # number of patches
    C: int = 3  # patches per set S_l; L = D / C sets
    p: int = 3  # activation sigma(x) = x^p + nu x, p odd >= 3
    q: float = 0.3  # probability that a random-set patch carries +-w* (q/2 each)
    # linear part of the activation (nu = 0 makes alpha0 = 0 a fixed point: nothing moves)
    nu: float = 0.01
    sigma_A: float = 1.0  # the fixed diagonal beta of A
    eta: float = 0.05  # learning rate
    steps: int = 20000  # gradient-descent steps
    record_every: int = 50  # record observables every this many steps (and at the last step)
    d: Optional[int] = None  # patch dimension, default D
    temperature: str = "sqrt_d"  # "sqrt_d": softmax(A/sqrt(d)) (model (T)); "unit": softmax(A)
    N: int = 4096  # samples per step (sampled mode) or training-set size (realistic mode)
    omega: float = 0.01  # std of the random initialization (realistic mode)
    n_test: int = 4096  # held-out test-set size (realistic mode)
    sigma: Optional[float] = None  # noise std, default 1/sqrt(d)
    partition: Optional[str] = None  # "grid", "contiguous" or "random"
    seed: int = 0
    dtype: str = "float64"

    # The numbers: no shape depends on them, so they are the leaves of JSLConfig as a pytree
    # (`dynsim.pytree`), traced by jit and vmap; one compiled program serves every value of them at
    # one shape.
    NUMBERS: ClassVar[tuple[str, ...]] = ("q", "nu", "eta", "sigma_A", "sigma", "omega")
    # What the gradient flow does not depend on, with the value its compiled solve's static config
    # carries.
    FLOW_IGNORES: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"eta": 1.0, "steps": 0, "record_every": 1}
    )

    def __post_init__(self) -> None:
        _validate(self)
        if self.d is None:
            object.__setattr__(self, "d", self.D)
        if self.sigma is None:
            object.__setattr__(self, "sigma", 1.0 / math.sqrt(self.d))
        if self.partition is None:
            object.__setattr__(
                self, "partition", "grid" if grid_fits(self.D, self.C) else "contiguous"
            )

    @property
    def L(self) -> int:
        """Number of sets S_l (Definition 2.1)."""
        return self.D // self.C

    @property
    def tau(self) -> float:
        """Logit temperature: S = softmax(A / tau); tau = sqrt(d) for model (T), 1 for "unit"."""
        return math.sqrt(self.d) if self.temperature == "sqrt_d" else 1.0

    @property
    def alpha0(self) -> float:
        """Idealized initial alpha = nu^(1/(p-1)) (Parametrization 3.1)."""
        return self.nu ** (1.0 / (self.p - 1))

    def replace(self, **changes: Any) -> "JSLConfig":
        """A copy with some fields changed (validated again)."""
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def grid_fits(D: int, C: int) -> bool:
    """True when sqrt(C) x sqrt(C) blocks tile a sqrt(D) x sqrt(D) grid (Figure 1b(1))."""
    side, block = math.isqrt(D), math.isqrt(C)
    return side * side == D and block * block == C and side % block == 0


def _fail(field: str, value: Any, allowed: str) -> None:
    raise ValueError(f"JSLConfig.{field} = {shown(value)} is invalid: {allowed}")


def _validate(c: JSLConfig) -> None:
    for name in ("D", "C", "p", "steps", "record_every", "N", "n_test", "seed"):
        if not _is_int(getattr(c, name)):
            _fail(name, getattr(c, name), "must be an integer")
    check_int64(_fail, c, ("D", "C", "p", "steps", "record_every", "N", "n_test", "d"))
    for name in ("q", "nu", "sigma_A", "eta", "omega"):
        if not _is_real(getattr(c, name)):
            _fail(name, getattr(c, name), "must be a finite real number")
    if c.C < 2:
        _fail(
            "C",
            c.C,
            "must be >= 2 (with C = 1 a set has no within-set pair, so gamma does not exist)",
        )
    if c.D < 1 or c.D % c.C:
        _fail("D", c.D, f"must be a positive multiple of C = {c.C}")
    if c.D // c.C < 2:
        _fail("D", c.D, f"needs at least L = D/C = 2 sets; D/C = {c.D // c.C} with C = {c.C}")
    if c.p < 3 or c.p % 2 == 0 or c.p > MAX_P:
        _fail(
            "p",
            c.p,
            f"must be an odd integer >= 3 and <= {MAX_P} (the activation x^p + nu x must be "
            f"odd; beyond {MAX_P} x^p overflows float64 from |x| = 2 on)",
        )
    if not 0.0 <= c.q <= 1.0:
        _fail("q", c.q, "must lie in [0, 1]")
    if c.nu < 0:
        _fail("nu", c.nu, "must be >= 0")
    if c.sigma_A <= 0:
        _fail(
            "sigma_A",
            c.sigma_A,
            "must be > 0: with sigma_A = 0 the idealized attention starts uniform "
            "and its gradient is exactly zero there, so attention can never leave uniform",
        )
    lower_bounds(
        _fail,
        c,
        {
            "eta": (0, True),
            "steps": (0, False),
            "record_every": (1, False),
            "N": (1, False),
            "n_test": (1, False),
            "omega": (0, False),
            "seed": (0, False),
        },
    )
    check_seed(_fail, c.seed)
    if c.d is not None and (not _is_int(c.d) or c.d < 1):
        _fail("d", c.d, "must be an integer >= 1 (or None for d = D)")
    if c.sigma is not None and (not _is_real(c.sigma) or c.sigma < 0):
        _fail("sigma", c.sigma, "must be a finite real number >= 0 (or None for 1/sqrt(d))")
    if c.temperature not in TEMPERATURES:
        _fail("temperature", c.temperature, f"must be one of {', '.join(TEMPERATURES)}")
    if c.partition is not None and c.partition not in PARTITIONS:
        _fail("partition", c.partition, f"must be one of {', '.join(PARTITIONS)}")
    if c.partition == "grid" and not grid_fits(c.D, c.C):
        _fail(
            "partition",
            c.partition,
            f"'grid' needs D and C perfect squares with sqrt(C) dividing sqrt(D) "
            f"(D = {c.D}, C = {c.C}); use 'contiguous' or 'random'",
        )
    if c.dtype not in DTYPES:
        _fail("dtype", c.dtype, f"must be one of {', '.join(DTYPES)}")


FIELD_HELP = {
    "D": "number of patches D",
    "C": "patches per set S_l (C divides D, L = D/C >= 2)",
    "p": f"activation degree: sigma(x) = x^p + nu x, p odd, 3 <= p <= {MAX_P}",
    "q": "probability that a random-set patch carries +w* or -w* (q/2 each), 0 <= q <= 1",
    "nu": "linear coefficient of the activation, >= 0",
    "sigma_A": "fixed diagonal beta of A, > 0",
    "eta": "learning rate, > 0",
    "steps": "gradient-descent steps, >= 0",
    "record_every": "record the observables every this many steps (and at the last step)",
    "d": "patch dimension (default D)",
    "temperature": "sqrt_d: softmax(A/sqrt(d)), model (T); unit: softmax(A), the paper's "
    "Lambda/Gamma/Xi",
    "N": "samples per step in --mode sampled; training-set size in --mode realistic (unused by "
    "--mode exact)",
    "omega": "std of the random initialization A_ij, v_k ~ N(0, omega^2) in --mode realistic "
    "(unused otherwise)",
    "n_test": "held-out test-set size in --mode realistic",
    "sigma": "noise std (default 1/sqrt(d))",
    "partition": "grid (default when sqrt(C) x sqrt(C) blocks tile the sqrt(D) x sqrt(D) "
    "grid), contiguous or random",
    "seed": "random seed (feature w*, random partition, samples)",
    "dtype": "float64 or float32",
}
