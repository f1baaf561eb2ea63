"""The run options of MIM's two levels, checked on the config before any work, light (the standard
library and NumPy: a refusal imports no level): the latent law of an exact expectation (`z_law`),
the full level's mode exact size (`exact_size`, `MAX_EXACT`), the reduced level's approximations,
its Monte Carlo draws and its method (`check_reduced`), the full level's mode and replicates
(`check_full`). The levels call them (`reduced.mim.validate_run_options`,
`full.mim.validate_run_options`) and so do the commands' checks on the command line
(`dynsim.mim.level_checks`). One check stays in the reduced level: the exact joint-type
expectation's size (`reduced.mim.joint.check_size`, a dynamic program), wanted only where
`exact_joint` says. Each check names the options for its caller (`Caller`): the library's keywords
by default (`LIBRARY`), a command's flags as typed where the command checks them (`COMPARE`,
`FIGURE`)."""

from __future__ import annotations

import math
from typing import NamedTuple, Optional, Sequence, Union

import numpy as np

from dynsim import validation

from .config import MIMConfig

APPROXIMATIONS = ("pp_frozen", "mean_field")
MODES = ("exact", "sampled")  # the full level's
MAX_EXACT = 300_000  # (cluster, latent vector, mask) triples per step in mode "exact"
# a refused size with more digits is said as a power of ten: never counted (P = 10^6 has C(P, P/2)
# masks, 300,000 digits, past what Python prints)
SHOWN_DIGITS = 30

Approximation = Union[None, str, Sequence[str]]


class Caller(NamedTuple):
    """How a check's messages name the run options: the library's keywords (`approximation =
    'bogus'`, `method='gd'`, `mode 'sampled'`, `P = 64`) or, with cli, a command's flags as typed
    (`--approximation = 'bogus'`, `--method gd`, `--mode sampled`, `--P 64`); a message offers
    `--mode` and `--samples` only where the caller takes them (`takes`)."""

    cli: bool = False
    takes: tuple = ("mode",)

    def name(self, option: str) -> str:
        """The option: `samples` or `--samples`."""
        return f"--{option.replace('_', '-')}" if self.cli else option

    def said(self, option: str, value, typed=None) -> str:
        """The option at a value, in a message's context: `K = 2` or `--K 2` (`typed`: the value
        as the command line spells it, where that differs)."""
        if self.cli:
            return f"{self.name(option)} {value if typed is None else typed}"
        return f"{option} = {value!r}"

    def use(self, option: str, value) -> str:
        """The option at a value, as a message recommends it: `method='gd'` or `--method gd`."""
        return f"{self.name(option)} {value}" if self.cli else f"{option}={value!r}"

    def mode(self, value: str) -> str:
        """The full level's mode: `mode 'exact'` or `--mode exact`."""
        return f"--mode {value}" if self.cli else f"mode {value!r}"


LIBRARY = Caller()  # reduced.mim / full.mim's validate_run_options, dynsim.sweep's points
COMPARE = Caller(cli=True, takes=("mode", "samples"))  # `compare mim`: every level option
FIGURE = Caller(cli=True, takes=())  # `figure mim-phases`, `mim-attention`: no --mode, --samples


def z_text(z) -> str:
    """A latent law as --z spells it: const, uniform:L:U or V1:P1,V2:P2,..."""
    if z == "const":
        return z
    if z[0] == "uniform":
        return f"uniform:{z[1]:g}:{z[2]:g}"
    return ",".join(f"{v:g}:{p:g}" for v, p in z)


def z_law(cfg, caller: Caller = LIBRARY) -> tuple[np.ndarray, np.ndarray]:
    """(values, probabilities) of the latent z of one area; refuses the continuous law
    ("uniform"), which no exact expectation can enumerate."""
    if cfg.z == "const":
        return np.array([1.0]), np.array([1.0])
    if cfg.z[0] == "uniform":
        modes = "mode" in caller.takes
        raise ValueError(
            (f"--z = {z_text(cfg.z)}" if caller.cli else f"MIMConfig.z = {cfg.z!r}")
            + " is continuous: an exact expectation"
            + (f" (the reduced level, the full level's {caller.mode('exact')})" if modes else "")
            + " needs a finite law"
            + (
                ", const or V1:P1,V2:P2,..."
                if caller.cli
                else " ('const' or (value, probability) pairs)"
            )
            + (f"; the full level's {caller.mode('sampled')} runs the uniform law" if modes else "")
        )
    values, probs = zip(*cfg.z)
    return np.array(values), np.array(probs)


def exact_size(cfg) -> int:
    """Number of (cluster, latent vector, mask) triples an exact expectation enumerates."""
    values, _ = z_law(cfg)
    return sum(values.size**n for n in cfg.areas_per_cluster) * math.comb(cfg.P, cfg.masked)


def exact_digits(cfg) -> float:
    """log10 of `exact_size`, from log-gamma (nothing as large as the size itself is built)."""
    values, _ = z_law(cfg)
    terms = [n * math.log10(values.size) for n in cfg.areas_per_cluster]
    top = max(terms)
    P, m = cfg.P, cfg.masked
    masks = (math.lgamma(P + 1) - math.lgamma(m + 1) - math.lgamma(P - m + 1)) / math.log(10)
    return top + math.log10(sum(10 ** (t - top) for t in terms)) + masks


def approximations(approximation: Approximation, caller: Caller = LIBRARY) -> tuple[str, ...]:
    """Normalize None, "pp_frozen", "mean_field", "pp_frozen+mean_field" or a list of names to a
    tuple in APPROXIMATIONS order."""
    if approximation is None:
        return ()
    names = approximation.split("+") if isinstance(approximation, str) else list(approximation)
    bad = [n for n in names if n not in APPROXIMATIONS]
    if bad or not names:
        raise ValueError(
            f"{caller.name('approximation')} = {approximation!r} is invalid: must be None (exact), "
            f"one of {', '.join(APPROXIMATIONS)}, or both ('pp_frozen+mean_field')"
        )
    return tuple(n for n in APPROXIMATIONS if n in names)  # canonical order: "pp_frozen+mean_field"


def label(approx: tuple[str, ...]) -> str:
    """ "exact" or the approximations joined by '+' (every output carries it)."""
    return "+".join(approx) if approx else "exact"


def joint(cfg: MIMConfig, approx: tuple) -> bool:
    """Whether a run needs the joint-type engine (`reduced.mim.joint`): several clusters with B
    free. (With B = 0 the clusters decouple and the query classes hold the state.)"""
    return cfg.K > 1 and "pp_frozen" not in approx


def exact_joint(cfg: MIMConfig, approx: tuple, samples=None) -> bool:
    """Whether the reduced run enumerates the joint types' count vectors exactly (several clusters,
    B free, not mean field, no Monte Carlo samples): the one case whose size
    `reduced.mim.joint.check_size` must check."""
    return joint(cfg, approx) and "mean_field" not in approx and samples is None


def check_monte_carlo(
    approximation, approx: tuple, method: str, samples, replicates, caller: Caller = LIBRARY
) -> None:
    """The reduced level by Monte Carlo over the counts: B free, GD, samples >= 1 count vectors per
    query, replicates >= 2 draws (or None: the default)."""
    if approx:
        raise ValueError(
            f"{caller.name('approximation')} = {approximation!r} is invalid with "
            f"{caller.name('samples')}: the Monte Carlo expectation keeps B free and draws the "
            "counts (leave "
            f"{caller.said('approximation', None, 'none')})"
        )
    if method != "gd":
        raise ValueError(
            f"{caller.name('method')} = {method!r} is invalid with {caller.name('samples')}: the "
            "Monte Carlo level runs GD"
        )
    if not (validation.is_int(samples) and samples >= 1):
        raise ValueError(
            f"{caller.name('samples')} = {samples!r} is invalid: must be an integer >= 1 (count "
            "vectors per query)"
        )
    if replicates is not None and not (validation.is_int(replicates) and replicates >= 2):
        raise ValueError(
            f"{caller.name('replicates')} = {replicates!r} is invalid: must be an integer >= 2 (a "
            "standard error needs two independent draws)"
        )


def check_reduced(
    cfg: MIMConfig,
    approximation: Approximation = None,
    method: str = "gd",
    samples=None,
    replicates=None,
    caller: Caller = LIBRARY,
) -> tuple[str, ...]:
    """The reduced level's run options but the exact joint-type size (`exact_joint`); return the
    normalized approximations."""
    if not isinstance(cfg, MIMConfig):
        raise TypeError(f"cfg must be a MIMConfig, got {type(cfg).__name__}")
    approx = approximations(approximation, caller)
    if samples is not None or replicates is not None:
        check_monte_carlo(approximation, approx, method, samples, replicates, caller)
    if joint(cfg, approx) and method != "gd":
        raise ValueError(
            f"{caller.name('method')} = {method!r} is invalid with {caller.said('K', cfg.K)} and "
            f"B free ({caller.said('approximation', approximation, approximation or 'none')}): the "
            "gradient flow holds the per-class state of K = 1 or pp_frozen; use "
            f"{caller.use('method', 'gd')}, or {caller.use('approximation', 'pp_frozen')}"
        )
    z_law(cfg, caller)  # the reduced level's expectation is exact over the latents
    return approx


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
        count = f"{size:,}" if size is not None else f"about 10^{digits:.0f}"
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
