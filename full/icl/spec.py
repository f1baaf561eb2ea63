"""What the full ICL level accepts, and its checks before any work: the modes (exact, sampled), the
replicates (`check_full`), and `compare icl`'s full-level options (`FullOptions`, `UNREAD`,
`validate_full`)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from dynsim import runoptions, validation
from dynsim.icl.config import MODES, ICLConfig

MODE_HELP = (
    "full level: GD on the exact population loss (closed form from the Gaussian moments) or on a "
    "fresh batch of --batch prompts each step, R replicate runs judged with a Student-t band "
    "(default: exact)"
)
UNREAD = {
    "exact": {
        "batch": "--mode exact takes the population loss (batch is --mode sampled's prompts)",
        "seed": "--mode exact draws nothing (seed is --mode sampled's prompts)",
    }
}


@dataclasses.dataclass(frozen=True)
class FullOptions(runoptions.Options):
    """`compare icl`'s and `sweep icl`'s full-level options (`validate_full`)."""

    replicates: Optional[int] = runoptions.replicates()


def check_full(cfg: ICLConfig, mode: str = "exact", replicates: Optional[int] = None) -> int:
    """The mode and the replicates, as every full level checks them (`dynsim.validation`); returns
    the number of replicate runs (1 in mode exact)."""
    validation.check_setting(cfg, ICLConfig, mode, MODES)
    return validation.mode_replicates(mode, replicates, name="replicates")


def validate_full(cfg: ICLConfig, opts: dict) -> None:
    """`compare icl`'s full-level options (`check_full`, then each one's kind: `FullOptions`)."""
    check_full(cfg, opts["mode"], opts.get("replicates"))
    FullOptions.of(opts)
