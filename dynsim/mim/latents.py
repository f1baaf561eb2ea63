"""What both MIM levels check about the latent law: the law of one area's z (`z_law`, which refuses
the continuous "uniform" an exact expectation cannot enumerate), its text as --z spells it
(`z_text`), the size of an exact expectation (`exact_size`, `exact_digits`), and how a check's
messages name the options (`Caller`: the library's keywords or a command's flags)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np


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
