"""What the full MIM level accepts, and its checks before any work: the modes (exact, sampled), the
replicates and mode exact's size (`check_full`, `MAX_EXACT`), and `compare mim`'s full-level
options (`FullOptions`, `UNREAD`, `validate_full`)."""

from __future__ import annotations

import dataclasses
from typing import Optional

from dynsim import runoptions, validation
from dynsim.mim.config import MIMConfig
from dynsim.mim.latents import COMPARE, LIBRARY, Caller, exact_digits, exact_size, z_law, z_text
from dynsim.validation import text_count

MODES = ("exact", "sampled")
MAX_EXACT = 300_000  # (cluster, latent vector, mask) triples per step in mode "exact"
# a refused size with more digits is said as a power of ten: never counted (P = 10^6 has C(P, P/2)
# masks, 300,000 digits, past what Python prints)
SHOWN_DIGITS = 30
MODE_HELP = (
    "full level: exact population loss (every cluster, latent vector and mask) or a fresh batch of "
    "N samples each step (default: exact)"
)
UNREAD = {
    "exact": {
        "N": "--mode exact takes every cluster, latent vector and mask (N is --mode sampled's "
        "batch)"
    }
}


@dataclasses.dataclass(frozen=True)
class FullOptions(runoptions.Options):
    """`compare mim`'s and `sweep mim`'s full-level options (`validate_full`)."""

    replicates: Optional[int] = runoptions.replicates(
        ", and in compare the independent Monte Carlo draws of the reduced level with --samples "
        "(default: 4)",
        modes=(),
    )


def check_full(
    cfg: MIMConfig, mode: str = "exact", replicates: Optional[int] = None, caller: Caller = LIBRARY
) -> int:
    """The full level's run options (the mode and the replicates as every full level checks them,
    `dynsim.validation`, and mode exact's size); return the number of replicate runs."""
    validation.check_setting(cfg, MIMConfig, mode, MODES)
    R = validation.mode_replicates(mode, replicates, name=caller.name("replicates"))
    if mode != "exact":
        return R
    z_law(cfg, caller)
    digits = exact_digits(cfg)
    size = exact_size(cfg) if digits < SHOWN_DIGITS else None  # else far past the limit
    if size is None or size > MAX_EXACT:
        count = text_count(size) if size is not None else f"about {text_count(log10=digits)}"
        modes = "mode" in caller.takes
        at = f" at --P {cfg.P}, --K {cfg.K}, --z {z_text(cfg.z)}" if caller.cli else ""
        lower = "--P, --K or the number of values of --z" if caller.cli else "P, K or the z support"
        raise ValueError(
            (caller.mode("exact") if modes else "the full level's exact expectation")
            + f" would enumerate {count} (cluster, z, mask) triples per step (limit "
            f"{MAX_EXACT:,}){at}: lower {lower}"
            + (f", or use {caller.mode('sampled')}" if modes else "")
        )
    return 1


def full_replicates(opts: dict):
    """--replicates of the full level: with --samples in mode exact it counts the reduced level's
    draws, not the full level's (which takes none)."""
    if opts["mode"] == "exact" and opts["samples"] is not None:
        return None
    return opts["replicates"]


def validate_full(cfg, opts: dict) -> None:
    """The full level's options (`check_full`, then each one's kind: `FullOptions`)."""
    check_full(cfg, opts["mode"], full_replicates(opts), COMPARE)
    FullOptions.of(opts)
