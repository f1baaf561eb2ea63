"""The arguments of the transfer experiment (Section 5, `full.jsl.transfer`) and of the GLM baseline
(`full.jsl.glm`): their defaults and checks, light (the standard library, numpy and the config), so
`dynsim transfer jsl` refuses a bad value before any level is imported. The levels keep these names
(`full.jsl.transfer.validate_transfer_args`, `full.jsl.glm.validate_glm_args`, ...) by importing
them from here. names: {keyword: what the messages call it} (a command line's option names, e.g.
{"n_tilde": "--n-tilde"}; default the keywords)."""

from __future__ import annotations

from typing import Mapping, Optional, Sequence

import numpy as np

from dynsim import validation

from .config import JSLConfig

DEFAULT_N_TILDE = (8, 16, 32, 64, 128, 256)
DEFAULT_SEEDS = 8
DEFAULT_STEPS = 2000  # see `transfer`: the measured test-error curves are flat well before this
# see `transfer`: the GLM's logistic loss has curvature <= ~0.35 at D = 16, so eta = 1 is stable
DEFAULT_ETA_GLM = 1.0
DEFAULT_RECORD_EVERY = 100


def check_overlap(cfg: JSLConfig, overlap, name: str = "overlap") -> float:
    """overlap = <w~, w*> of two unit vectors: a real number in [-1, 1], and +-1 when d = 1 (no
    direction is orthogonal to w*); returned as a float."""
    if not validation.is_real(overlap) or not 0.0 <= abs(float(overlap)) <= 1.0:
        raise ValueError(
            f"{name} = {overlap!r} is invalid: must be a real number with 0 <= |overlap| <= 1 "
            "(it is <w~, w*> of two unit vectors)"
        )
    if abs(float(overlap)) != 1.0 and cfg.d < 2:
        raise ValueError(
            f"{name} = {overlap!r} is invalid for d = 1: there is no direction orthogonal to w*; "
            "only overlap = +-1 is possible"
        )
    return float(overlap)


def check_n_tilde(n_tilde, name: str = "n_tilde") -> tuple[int, ...]:
    """The downstream sample sizes N~: a non-empty sequence of integers >= 1, as a tuple."""
    values = tuple(n_tilde) if isinstance(n_tilde, Sequence) else None
    if not values or not all(validation.is_int(n) and n >= 1 for n in values):
        raise ValueError(
            f"{name} = {n_tilde!r} is invalid: must be a non-empty sequence of integers >= 1"
        )
    return tuple(int(n) for n in values)


def validate_glm_args(cfg: JSLConfig, seeds, steps, eta, names=None) -> None:
    """Validate `run_glm`'s arguments (seeds >= 2 for a standard error, steps >= 0, eta > 0)."""
    name = (names or {}).get
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 2:
        raise ValueError(
            f"{name('seeds', 'seeds')} = {seeds!r} is invalid: must be an integer >= 2 (the "
            f"standard error needs two runs)"
        )
    if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
        raise ValueError(
            f"{name('steps', 'steps')} = {steps!r} is invalid: must be an integer >= 0"
        )
    if not (
        isinstance(eta, (int, float)) and not isinstance(eta, bool) and np.isfinite(eta) and eta > 0
    ):
        raise ValueError(
            f"{name('eta', 'eta')} = {eta!r} is invalid: must be a finite real number > 0"
        )


def check_finetune_args(cfg, seeds, steps, eta, eta_glm, record_every, names=None) -> None:
    """The fine-tuning's arguments: `validate_glm_args`' (seeds >= 2, steps >= 0, eta > 0),
    record_every >= 1, eta_glm > 0."""
    validate_glm_args(cfg, seeds, steps, eta, names)
    if not isinstance(record_every, int) or isinstance(record_every, bool) or record_every < 1:
        raise ValueError(f"record_every = {record_every!r} is invalid: must be an integer >= 1")
    if not validation.is_real(eta_glm) or eta_glm <= 0:
        raise ValueError(f"eta_glm = {eta_glm!r} is invalid: must be a finite real number > 0")


def validate_transfer_args(
    cfg: JSLConfig,
    *,
    overlap: float = 0.0,
    n_tilde: Sequence[int] = DEFAULT_N_TILDE,
    seeds: int = DEFAULT_SEEDS,
    steps: int = DEFAULT_STEPS,
    eta: Optional[float] = None,
    eta_glm: float = DEFAULT_ETA_GLM,
    record_every: int = DEFAULT_RECORD_EVERY,
    names: Optional[Mapping[str, str]] = None,
) -> tuple[tuple[int, ...], float]:
    """Validate `transfer`'s arguments before any work (named ValueErrors); return (n_tilde, eta)
    with defaults resolved (eta: cfg.eta / 2)."""
    names = dict(names or {})
    n_tilde = check_n_tilde(n_tilde, names.get("n_tilde", "n_tilde"))
    eta = cfg.eta / 2 if eta is None else eta
    check_finetune_args(cfg, seeds, steps, eta, eta_glm, record_every, names)
    check_overlap(cfg, overlap, names.get("overlap", "overlap"))
    return n_tilde, eta
