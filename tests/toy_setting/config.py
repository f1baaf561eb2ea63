"""The toy setting's config: a frozen dataclass with a default for every field (what dynsim's face
needs)."""

from __future__ import annotations

import dataclasses
from typing import ClassVar


@dataclasses.dataclass(frozen=True)
class ToyConfig:
    """Linear teacher-student: dimension d, learning rate eta, GD steps, start w0 = w0_scale * e_1,
    batch N."""

    # the fields no array shape depends on: traced under jit (`dynsim.pytree`)
    NUMBERS: ClassVar[tuple[str, ...]] = ("eta", "w0_scale")

    d: int = dataclasses.field(default=8, metadata={"help": "input dimension"})
    eta: float = dataclasses.field(default=0.1, metadata={"help": "learning rate"})
    steps: int = dataclasses.field(default=50, metadata={"help": "GD steps"})
    record_every: int = dataclasses.field(
        default=5, metadata={"help": "record every this many steps"}
    )
    w0_scale: float = dataclasses.field(default=0.5, metadata={"help": "start w0 = w0_scale * e_1"})
    N: int = dataclasses.field(default=256, metadata={"help": "samples per step in mode sampled"})
    seed: int = dataclasses.field(
        default=0, metadata={"help": "seed of the teacher and the batches"}
    )
    dtype: str = dataclasses.field(default="float64", metadata={"help": "float64 or float32"})

    def __post_init__(self):
        for name, low in (("d", 2), ("steps", 1), ("record_every", 1), ("N", 2)):
            value = getattr(self, name)
            if not isinstance(value, int) or value < low:
                raise ValueError(
                    f"ToyConfig.{name} = {value!r} is invalid: must be an integer >= {low}"
                )
        if not self.eta > 0:
            raise ValueError(f"ToyConfig.eta = {self.eta!r} is invalid: must be > 0")
        if self.dtype not in ("float64", "float32"):
            raise ValueError(
                f"ToyConfig.dtype = {self.dtype!r} is invalid: must be float64 or float32"
            )

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def replace(self, **changes) -> "ToyConfig":
        return dataclasses.replace(self, **changes)
