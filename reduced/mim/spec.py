"""What the reduced MIM level accepts, and its checks before any work: the approximations
(`approximations`, `label`), the Monte Carlo draws and the method (`check_reduced`), the
approximation's tolerance (`check_tolerance`), the exact joint-type expectation's size where a run
takes it (`joint_size`: a dynamic program of `joint`, loaded then), and `compare mim`'s reduced
options (`ReducedOptions`, `validate_reduced`). Each check names the options for its caller
(`dynsim.mim.latents.Caller`)."""

from __future__ import annotations

import dataclasses
from typing import Optional, Sequence, Union

from dynsim import validation
from dynsim.mim.config import MIMConfig
from dynsim.mim.latents import COMPARE, LIBRARY, Caller, z_law
from dynsim.runoptions import Options, option
from dynsim.validation import check_positive

APPROXIMATIONS = ("pp_frozen", "mean_field")
APPROX_CHOICES = ("none", "pp_frozen", "mean_field", "pp_frozen+mean_field")

Approximation = Union[None, str, Sequence[str]]


@dataclasses.dataclass(frozen=True)
class ReducedOptions(Options):
    """`compare mim`'s and `sweep mim`'s reduced-level options (`validate_reduced`)."""

    approximation: Optional[str] = option(
        "reduced level: none (exact, B free; K > 1 runs per query and joint type), pp_frozen "
        "(B = 0), mean_field (counts at their means) or both (default: none)",
        choices=APPROX_CHOICES,
        verbs=("compare", "sweep"),
    )
    samples: Optional[int] = option(
        "reduced level by Monte Carlo over the masked counts: S count vectors per query (B "
        "free, any K; for the P where the exact enumeration does not fit and mean field is too "
        "coarse; its bias is O(1/S), docs/mim.md §3b) (default: exact)",
        metavar="S",
    )
    approximation_tolerance: float = option(
        "with an approximation: allowed |difference| as a fraction of each observable's "
        "largest magnitude, > 0 (a stated choice, not a derived bound) (default: 0.05)",
        0.05,
        parse=("float",),
        verbs=("compare", "sweep"),
        checker=True,
    )
    versus_frozen: bool = option(
        "also run each point's reduced level with B = 0 (pp_frozen) and report the FP "
        "deviation max|A(B free) - A(B = 0)| / max|A| (fp_deviation_from_pp_frozen); "
        "doubles the reduced cost",
        False,
        parse=("flag",),
        verbs=("sweep",),
    )


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


def check_tolerance(tol) -> None:
    """--approximation-tolerance: a finite fraction > 0 (zero would ask an approximation to agree
    exactly, which by definition it does not; inf would accept any gap)."""
    check_positive(
        "--approximation-tolerance", tol, " (a fraction of each observable's largest magnitude)"
    )


def approx_option(value):
    """--approximation none is the exact reduction (None)."""
    return None if value in (None, "none") else value


def monte_carlo(opts: dict) -> dict:
    """The reduced level's Monte Carlo keywords: with --samples, its samples and replicates."""
    if opts["samples"] is None:
        return {}
    return {"samples": opts["samples"], "replicates": opts["replicates"]}


def reduced_options(cfg, opts: dict) -> tuple:
    """The reduced level's options but the exact joint-type size (`check_reduced`) and
    the approximation's tolerance; return the normalized approximations."""
    approx = approx_option(opts["approximation"])
    names = check_reduced(cfg, approx, opts["method"], **monte_carlo(opts), caller=COMPARE)
    check_tolerance(opts["approximation_tolerance"])
    return names


def joint_size(cfg, approx: tuple, samples=None, caller: Caller = LIBRARY) -> None:
    """The exact joint-type expectation's size (`reduced.mim.joint.check_size`, its message in the
    caller's names), where the run takes it (`exact_joint`); else nothing is loaded."""
    if exact_joint(cfg, approx, samples):
        from . import joint

        joint.check_size(cfg, caller=caller)


def validate_reduced(cfg, opts: dict) -> None:
    """The reduced level's options (as `reduced.mim.validate_run_options`) and the approximation's
    tolerance, then each one's kind (`ReducedOptions`)."""
    joint_size(cfg, reduced_options(cfg, opts), opts["samples"], COMPARE)
    ReducedOptions.of(opts)
