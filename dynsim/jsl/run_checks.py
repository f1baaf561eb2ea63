"""The checks of a JSL run's options before any work, light (the standard library, numpy and the
config): the full level's modes, replicates and seeds (`validate_run_options`), the exact sum's size
(`check_exact`), the reduced level's int64 moments (`check_moments_fit`) and the two levels' hooks
that `compare jsl` calls (`validate_reduced`, `validate_full`). The levels keep these names
(`full.jsl.validate_run_options`, `full.jsl.population.check_exact`,
`reduced.jsl.classes.check_moments_fit`, ...) by importing them from here."""

from __future__ import annotations

from typing import Optional

from dynsim.validation import DEFAULT_REPLICATES, check_int, check_setting, mode_replicates

from .config import JSLConfig

MODES = ("exact", "sampled", "realistic")  # the full level's
# independent realistic runs (problem (E)) when not given: as many as a sampled mode's replicates
DEFAULT_SEEDS = DEFAULT_REPLICATES
MAX_EXACT_CONFIGURATIONS = 4 * 3**12  # D - C = 12 with L = 4: about 2.1 million rows of D numbers


def exact_count(cfg: JSLConfig) -> int:
    """L * 3^(D-C): signal sets times sign patterns of the random patches."""
    return cfg.L * 3 ** (cfg.D - cfg.C)


def check_exact(cfg: JSLConfig, cli: bool = False) -> None:
    """Raise ValueError, pointing to mode='sampled', when the exact sum is too large to
    enumerate. cli: name the command line's options (--mode, --D, --C)."""
    M = exact_count(cfg)
    if M > MAX_EXACT_CONFIGURATIONS:
        mode = "--mode {}" if cli else "mode='{}'"
        sizes = f"--D = {cfg.D}, --C = {cfg.C}" if cli else f"D = {cfg.D}, C = {cfg.C}"
        raise ValueError(
            f"{mode.format('exact')} would enumerate L * 3^(D-C) = {M:,} configurations "
            f"({sizes}); the limit is {MAX_EXACT_CONFIGURATIONS:,} (about D - C = 12). Use "
            f"{mode.format('sampled')}."
        )


def check_seeds(seeds) -> int:
    """seeds must be an integer >= 1."""
    if not isinstance(seeds, int) or isinstance(seeds, bool) or seeds < 1:
        raise ValueError(
            f"seeds = {seeds!r} is invalid: must be an integer >= 1 (independent realistic runs)"
        )
    return seeds


def validate_run_options(
    cfg: JSLConfig,
    mode: str = "exact",
    replicates: Optional[int] = None,
    seeds: Optional[int] = None,
    cli: bool = False,
) -> int:
    """Validate the run arguments before any work; return the number of replicate runs (seeds in
    mode 'realistic'). cli: the messages name the command line's options (--replicates, --mode,
    --D, --C)."""
    check_setting(cfg, JSLConfig, mode, MODES)
    if mode == "realistic":
        if replicates is not None:
            raise ValueError(
                f"replicates = {replicates!r} is invalid in mode 'realistic': it takes seeds "
                "(independent training sets and starts), not replicates"
            )
        return check_seeds(DEFAULT_SEEDS if seeds is None else seeds)
    if seeds is not None:
        raise ValueError(
            f"seeds = {seeds!r} is invalid in mode {mode!r}: seeds are for mode 'realistic' "
            "(mode 'sampled' takes replicates)"
        )
    R = mode_replicates(mode, replicates, name="--replicates" if cli else "replicates")
    if mode == "exact":
        check_exact(cfg, cli)
    return R


def validate_realistic(cfg: JSLConfig, opts: dict) -> int:
    """`compare jsl --mode realistic`'s options before any work: --seeds (default DEFAULT_SEEDS, at
    least 2 for a standard error), not --replicates, every N of --ladder; returns the seeds."""
    if opts["replicates"] is not None:
        raise ValueError("--replicates is for --mode sampled; --mode realistic takes --seeds")
    seeds = DEFAULT_SEEDS if opts["seeds"] is None else opts["seeds"]
    validate_run_options(cfg, "realistic", seeds=seeds)
    if seeds < 2:
        raise ValueError(
            f"--seeds = {seeds} is invalid in compare: the standard error needs at least 2 seeds"
        )
    for n in opts.get("ladder") or ():
        cfg.replace(N=n)  # validates every size
    return seeds


def check_moments_fit(D: int, C: int, p: int) -> None:
    """Refuse a p whose class monomials overflow int64 (`moments.monomials` multiplies them exactly
    in int64: |mono_r| <= D^p)."""
    if D**p < 2**63:
        return
    fits = max([e for e in range(3, p, 2) if D**e < 2**63], default=None)
    raise ValueError(
        f"JSLConfig.p = {p} is invalid for the reduced level at D = {D}: its exact sum multiplies "
        f"moments up to D^p in int64, which holds less than 2^63; "
        + (f"p <= {fits} fits" if fits else "no p fits")
        + " (the full level runs any p)"
    )


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


def validate_full(cfg: JSLConfig, opts: dict) -> None:
    """The full level's run options on the command line (`validate_run_options`), before any
    work."""
    validate_run_options(cfg, opts["mode"], opts["replicates"], cli=True)
