"""What the reduced JSL level accepts, and its checks before any work: how a sweep evaluates the
population sum (`ReducedOptions`, `check_sum_options`, read by `sums.choose`) and the int64 moments
and float64 set-type counts of its exact sums (`check_moments_fit`)."""

from __future__ import annotations

import dataclasses
import math
import sys
from typing import Optional

from dynsim.jsl.config import JSLConfig
from dynsim.runoptions import Options, option
from dynsim.validation import check_int


@dataclasses.dataclass(frozen=True)
class ReducedOptions(Options):
    """How a sweep's reduced level evaluates the population sum (`reduced.jsl.sums.choose`)."""

    max_configurations: Optional[int] = option(
        "reduced level: most moment classes summed; above it the sum is truncated or sampled "
        "(default: 20,000,000; D = 64, C = 4, p = 3 has 15.1 million)",
        verbs=("sweep",),
    )
    tail_target: Optional[float] = option(
        "reduced level: largest probability a truncation may drop (default: 1e-12)",
        parse=("float",),
        verbs=("sweep",),
    )
    mc_samples: Optional[int] = option(
        "reduced level: sampled configurations when neither fits (default: 1000000)",
        verbs=("sweep",),
    )

    def check(self) -> None:
        check_sum_options(self.max_configurations, self.tail_target, self.mc_samples)


SUM_OPTIONS = tuple(f.name for f in dataclasses.fields(ReducedOptions))  # `sums.choose`'s keywords


def check_moments_fit(D: int, C: int, p: int) -> None:
    """Refuse a C whose set types' counts overflow float64 (`set_types_fit`), and a p whose class
    monomials overflow int64 (`moments.monomials` multiplies them exactly in int64: |mono_r| <=
    D^p)."""
    if not set_types_fit(C):
        largest = next(c for c in range(min(C, GROWN), 1, -1) if set_types_fit(c))
        raise ValueError(
            f"JSLConfig.C = {C} is invalid for the reduced level: its exact sum counts a set's "
            f"patch types C! / (a! b! (C - a - b)!) ways each in float64, past float64's largest "
            f"number for C > {largest} (the full level runs any C)"
        )
    if D**p < 2**63:
        return
    fits = max([e for e in range(3, p, 2) if D**e < 2**63], default=None)
    raise ValueError(
        f"JSLConfig.p = {p} is invalid for the reduced level at D = {D}: its exact sum multiplies "
        f"moments up to D^p in int64, which holds less than 2^63; "
        + (f"p <= {fits} fits" if fits else "no p fits")
        + " (the full level runs any p)"
    )


# Past this C no set type's count is a float64 (the largest that is: C = 652)
GROWN = 1000


def set_types_fit(C: int) -> bool:
    """Whether the largest count of a set type, C! / (a! b! c!) at the most even split a + b + c =
    C (`classes.build`'s ways), is a finite float64."""
    if C > GROWN:  # the count grows with C
        return False
    a = C // 3
    b = (C - a) // 2
    ways = math.factorial(C) // (math.factorial(a) * math.factorial(b) * math.factorial(C - a - b))
    return ways <= sys.float_info.max


def check_sum_options(max_configurations=None, tail_target=None, mc_samples=None) -> None:
    """The reduced sum's options (`reduced.jsl.sums.choose`), those given: max_configurations and
    mc_samples integers >= 1, tail_target in (0, 1)."""
    if max_configurations is not None:
        check_int("max_configurations", max_configurations, 1)
    if mc_samples is not None:
        check_int("mc_samples", mc_samples, 1)
    if tail_target is not None and not (
        isinstance(tail_target, (int, float)) and 0 < tail_target < 1
    ):
        raise ValueError(
            f"tail_target = {tail_target!r} is invalid: must lie strictly between 0 and 1"
        )


def validate_reduced(cfg: JSLConfig, opts: dict) -> None:
    """The reduced level's exact sums hold cfg.p's moments (`check_moments_fit`)."""
    check_moments_fit(cfg.D, cfg.C, cfg.p)
