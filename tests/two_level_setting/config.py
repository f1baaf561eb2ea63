"""The two-block quadratic's config: a frozen dataclass with a default for every field, its numbers
named in NUMBERS (traced under jit: levels.py registers it as a pytree)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar

DTYPES = ("float64", "float32")
MODES = ("exact", "noisy")  # the full level's
# the reduced level's: iterated, closed form, or the named first-order approximation
FORMS = ("recurrence", "closed", "first_order")


@dataclasses.dataclass(frozen=True)
class TwoBlockConfig:
    """GD on L(w) = 1/2 sum_i k_i (w_i - 1)^2 from w0 = 0: k = 1 on the first d // 2 coordinates
    (block a), k = lam on the others (block b)."""

    NUMBERS: ClassVar[tuple[str, ...]] = ("lam", "eta", "sigma")

    d: int = dataclasses.field(
        default=6, metadata={"help": "dimension: block a is the first d // 2 coordinates"}
    )
    lam: float = dataclasses.field(default=3.0, metadata={"help": "curvature of block b"})
    eta: float = dataclasses.field(default=0.1, metadata={"help": "learning rate"})
    steps: int = dataclasses.field(default=40, metadata={"help": "GD steps"})
    record_every: int = dataclasses.field(
        default=5, metadata={"help": "record every this many steps"}
    )
    sigma: float = dataclasses.field(
        default=0.5, metadata={"help": "gradient noise per coordinate in mode noisy"}
    )
    seed: int = dataclasses.field(default=0, metadata={"help": "seed of the gradient noise"})
    dtype: str = dataclasses.field(default="float64", metadata={"help": "float64 or float32"})

    def __post_init__(self):
        for name, low in (("d", 2), ("steps", 1), ("record_every", 1)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < low:
                raise ValueError(
                    f"TwoBlockConfig.{name} = {value!r} is invalid: must be an integer >= {low}"
                )
        for name in ("lam", "eta"):
            if not getattr(self, name) > 0:
                raise ValueError(
                    f"TwoBlockConfig.{name} = {getattr(self, name)!r} is invalid: must be > 0"
                )
        if not self.sigma >= 0:
            raise ValueError(f"TwoBlockConfig.sigma = {self.sigma!r} is invalid: must be >= 0")
        if self.dtype not in DTYPES:
            raise ValueError(
                f"TwoBlockConfig.dtype = {self.dtype!r} is invalid: must be float64 or float32"
            )

    @property
    def blocks(self) -> tuple[int, int]:
        """(n_a, n_b): the sizes of block a (curvature 1) and block b (curvature lam)."""
        return self.d // 2, self.d - self.d // 2

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "TwoBlockConfig":
        return dataclasses.replace(self, **changes)
