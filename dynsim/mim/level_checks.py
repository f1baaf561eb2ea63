"""The checks of MIM's level options on the command line, light (no level is imported): the Level
records' `validate` hooks (`dynsim.mim.arguments`) and `compare mim`'s estimate, which runs them
before the levels' modules load, so that a bad option value is refused at once, in `compare mim`'s
flags (`run_checks.COMPARE`). The checks themselves: `dynsim.mim.run_checks`."""

from __future__ import annotations

from dynsim.cli import options
from dynsim.setting import Ref

from . import checks, run_checks
from .run_checks import COMPARE, LIBRARY, Caller

# the exact joint-type expectation's size: a dynamic program of the reduced level (its module
# imports JAX), loaded only where it is wanted (`run_checks.exact_joint`: K > 1, B free, exact,
# no samples)
JOINT_SIZE = Ref("reduced.mim.joint:check_size")
# what `compare mim` would need, once its options are checked (its module imports the levels)
NEEDS = Ref("dynsim.mim.resources:estimate_compare")


def approx_option(value):
    """--approximation none is the exact reduction (None)."""
    return None if value in (None, "none") else value


def monte_carlo(opts: dict) -> dict:
    """The reduced level's Monte Carlo keywords: with --samples, its samples and replicates."""
    if opts["samples"] is None:
        return {}
    return {"samples": opts["samples"], "replicates": opts["replicates"]}


def full_replicates(opts: dict):
    """--replicates of the full level: with --samples in mode exact it counts the reduced level's
    draws, not the full level's (which takes none)."""
    if opts["mode"] == "exact" and opts["samples"] is not None:
        return None
    return opts["replicates"]


def reduced_options(cfg, opts: dict) -> tuple:
    """The reduced level's options but the exact joint-type size (`run_checks.check_reduced`) and
    the approximation's tolerance; return the normalized approximations."""
    approx = approx_option(opts["approximation"])
    names = run_checks.check_reduced(
        cfg, approx, opts["method"], **monte_carlo(opts), caller=COMPARE
    )
    checks.check_tolerance(opts["approximation_tolerance"])
    return names


def joint_size(cfg, approx: tuple, samples=None, caller: Caller = LIBRARY) -> None:
    """The exact joint-type expectation's size (`reduced.mim.joint.check_size`, its message in the
    caller's names), where the run takes it (`run_checks.exact_joint`); else nothing is loaded."""
    if run_checks.exact_joint(cfg, approx, samples):
        JOINT_SIZE(cfg, caller=caller)


def validate_reduced(cfg, opts: dict) -> None:
    """The reduced level's options (as `reduced.mim.validate_run_options`) and the approximation's
    tolerance."""
    joint_size(cfg, reduced_options(cfg, opts), opts["samples"], COMPARE)


def validate_full(cfg, opts: dict) -> None:
    """The full level's options (`run_checks.check_full`)."""
    run_checks.check_full(cfg, opts["mode"], full_replicates(opts), COMPARE)


def estimate_compare(args) -> list:
    """`compare mim`'s estimate: the levels' light checks first, then what the run would need
    (`dynsim.mim.resources.estimate_compare`). Where the reduced level enumerates the joint types
    exactly (`run_checks.exact_joint`) the run checks their size after the estimate (for a large P
    the joint types take long to build: an oversized run is refused first), and then the full
    level's options, in the order of `validate_reduced` and `validate_full`."""
    cfg, opts = options.config(args), vars(args)
    approx = reduced_options(cfg, opts)
    if not run_checks.exact_joint(cfg, approx, opts["samples"]):
        validate_full(cfg, opts)
    return NEEDS(args)
