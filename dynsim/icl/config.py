"""`ICLConfig`: one in-context linear regression problem of Zhang, Frei and Bartlett (2024), shared
by the reduced and the full level (docs/icl.md §2-§3)."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType
from typing import Any, ClassVar, Mapping

from dynsim.validation import check_int64, check_seed, is_int, is_real, shown

DTYPES = ("float64", "float32")
MODES = ("exact", "sampled")  # the full level's: exact population loss, or fresh prompts per step
# the largest d and N a run takes: the full level holds (d + 1) x (d + 1) matrices and, in mode
# sampled, batch prompts of N + 1 tokens; past these a default run would take minutes
MAX_D, MAX_N = 64, 100_000
# test prompts of a Monte Carlo error (check-theorems icl, figure icl-error): past this it would
# take minutes
MAX_TESTS = 1 << 24


def _fail(name: str, value: Any, why: str) -> None:
    raise ValueError(f"ICLConfig.{name} = {shown(value)} is invalid: {why}")


@dataclasses.dataclass(frozen=True)
class ICLConfig:
    """Prompts of N examples (x_i ~ N(0, Lambda), y_i = <w, x_i>, w ~ N(0, I_d)) and a query; a
    linear self-attention layer trained by GD from the paper's initialization (docs/icl.md §3),
    Lambda = diag(kappa^((k - 1) / (d - 1))), k = 1..d."""

    NUMBERS: ClassVar[tuple[str, ...]] = ("kappa", "sigma", "eta")
    # what the gradient flow does not read, with the value its compiled solve's config carries
    FLOW_IGNORES: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"eta": 1.0, "steps": 0, "record_every": 1}
    )

    d: int = dataclasses.field(default=3, metadata={"help": "covariate dimension d"})
    N: int = dataclasses.field(default=10, metadata={"help": "training prompt length N"})
    kappa: float = dataclasses.field(
        default=1.0,
        metadata={
            "help": "condition number of Lambda: eigenvalues kappa^((k-1)/(d-1)), 1 = isotropic"
        },
    )
    sigma: float = dataclasses.field(
        default=0.1,
        metadata={"help": "initialization scale sigma (docs/icl.md §3)"},
    )
    eta: float = dataclasses.field(default=0.05, metadata={"help": "learning rate"})
    steps: int = dataclasses.field(default=200, metadata={"help": "GD steps"})
    record_every: int = dataclasses.field(
        default=10, metadata={"help": "record every this many steps (and at the last step)"}
    )
    batch: int = dataclasses.field(
        default=2048, metadata={"help": "prompts per step in mode sampled"}
    )
    seed: int = dataclasses.field(
        default=0, metadata={"help": "seed of the sampled prompts and the claims' test prompts"}
    )
    dtype: str = dataclasses.field(default="float64", metadata={"help": "float64 or float32"})

    def __post_init__(self) -> None:
        for name, low, high in (
            ("d", 1, MAX_D),
            ("N", 1, MAX_N),
            ("steps", 0, None),
            ("record_every", 1, None),
            ("batch", 2, None),
            ("seed", 0, None),
        ):
            value = getattr(self, name)
            if not is_int(value) or value < low:
                _fail(name, value, f"must be an integer >= {low}")
            if high is not None and value > high:
                _fail(name, value, f"must be at most {high}")
        check_int64(_fail, self, ("steps", "record_every", "batch"))
        check_seed(_fail, self.seed)
        for name in ("kappa", "eta"):
            value = getattr(self, name)
            if not is_real(value) or not value > 0:
                _fail(name, value, "must be a finite number > 0")
        # sigma <= 0 is accepted: the initialization's sigma > 0 is a premise the claims measure
        if not is_real(self.sigma):
            _fail("sigma", self.sigma, "must be a finite number")
        if self.dtype not in DTYPES:
            _fail("dtype", self.dtype, "must be float64 or float32")

    @property
    def spectrum(self) -> tuple[float, ...]:
        """The eigenvalues of Lambda: kappa^((k - 1) / (d - 1)), k = 1..d (1 when d = 1)."""
        if self.d == 1:
            return (1.0,)
        return tuple(float(self.kappa) ** (k / (self.d - 1)) for k in range(self.d))

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "ICLConfig":
        return dataclasses.replace(self, **changes)
