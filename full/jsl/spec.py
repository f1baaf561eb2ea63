"""What the full JSL level accepts, and its checks before any work: the modes (exact, sampled,
realistic), the replicates and seeds (`validate_run_options`), the exact sum's size (`check_exact`),
`compare jsl`'s full-level options (`FullOptions`, `UNREAD`, `validate_full`,
`validate_realistic`), and the fine-tuning of the transfer experiment (`Finetune`) and the
arguments of its GLM baseline (`validate_glm_args`)."""

from __future__ import annotations

import dataclasses
import numbers
from typing import Mapping, Optional, Sequence

from dynsim import runoptions, validation
from dynsim.jsl.config import JSLConfig
from dynsim.validation import (
    DEFAULT_REPLICATES,
    INT64_MAX,
    check_setting,
    did_you_mean,
    mode_replicates,
    shown,
    text_count,
)

MODES = ("exact", "sampled", "realistic")
MODE_HELP = (
    "full level: exact population loss by enumeration; a fresh batch of N samples each step; or "
    "realistic (E): N fixed samples, random start (omega), held-out test set (default: exact)"
)
# independent realistic runs (problem (E)) when not given: as many as a sampled mode's replicates
DEFAULT_SEEDS = DEFAULT_REPLICATES
MAX_EXACT_CONFIGURATIONS = 4 * 3**12  # D - C = 12 with L = 4: about 2.1 million rows of D numbers

# config fields a mode of the full level does not read (the reduced level reads none of them)
UNREAD = {
    "exact": {
        "N": "--mode exact enumerates the population (N is --mode sampled's batch and --mode "
        "realistic's training set)",
        "omega": "--mode realistic's random start only",
        "n_test": "--mode realistic's test set only",
    },
    "sampled": {
        "omega": "--mode realistic's random start only",
        "n_test": "--mode realistic's test set only",
    },
    "realistic": {},
}


@dataclasses.dataclass(frozen=True)
class FullOptions(runoptions.Options):
    """`compare jsl`'s and `sweep jsl`'s full-level options (`validate_full`,
    `validate_realistic`)."""

    replicates: Optional[int] = runoptions.replicates()
    seeds: Optional[int] = runoptions.seeds(
        None,
        "--mode realistic only: the runs of each N, one vmapped program, averaged with "
        f"a standard error ({DEFAULT_SEEDS} when left out)",
        modes=("realistic",),
    )
    ladder: Optional[tuple] = runoptions.option(
        "--mode realistic: training-set sizes for the approach table (Theorem 4.2) "
        "(default: N/16, N/4, N)",
        parse=("int_list",),
        metavar="N1,N2,...",
        modes=("realistic",),
    )


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
            f"{mode.format('exact')} would enumerate L * 3^(D-C) = {text_count(M)} configurations "
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


def validate_full(cfg: JSLConfig, opts: dict) -> None:
    """The full level's run options on the command line (`validate_run_options`), before any
    work, then each one's kind (`FullOptions`)."""
    validate_run_options(cfg, opts["mode"], opts["replicates"], cli=True)
    FullOptions.of(opts)


# the transfer experiment (Section 5, `full.jsl.transfer`) and its GLM baseline (`full.jsl.glm`)
DEFAULT_N_TILDE = (8, 16, 32, 64, 128, 256)
DEFAULT_FINETUNE_SEEDS = 8
DEFAULT_STEPS = 2000  # see `transfer`: the measured test-error curves are flat well before this
# see `transfer`: the GLM's logistic loss has curvature <= ~0.35 at D = 16, so eta = 1 is stable
DEFAULT_ETA_GLM = 1.0
DEFAULT_RECORD_EVERY = 100


def _integer(name: str, value, low: int, why: str = "") -> None:
    """TypeError unless `value` is an integer (not a bool); ValueError outside [low, 2^63 - 1]
    (int64, what numpy and JAX take)."""
    if not validation.is_int(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < low:
        raise ValueError(f"{name} = {shown(value)} is invalid: must be an integer >= {low}{why}")
    if value > INT64_MAX:
        raise ValueError(f"{name} = {shown(value)} is invalid: must be at most 2^63 - 1 (int64)")


def _real(name: str, value) -> None:
    """TypeError unless `value` is a real number (not a bool)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")


def check_overlap_range(overlap, name: str = "overlap") -> float:
    """overlap = <w~, w*> of two unit vectors: a real number in [-1, 1]; returned as a float."""
    _real(name, overlap)
    if not validation.is_real(overlap) or not 0.0 <= abs(float(overlap)) <= 1.0:
        raise ValueError(
            f"{name} = {overlap!r} is invalid: must be a real number with 0 <= |overlap| <= 1 "
            "(it is <w~, w*> of two unit vectors)"
        )
    return float(overlap)


def check_overlap(cfg: JSLConfig, overlap, name: str = "overlap") -> float:
    """overlap = <w~, w*> of two unit vectors (`check_overlap_range`), and +-1 when d = 1 (no
    direction is orthogonal to w*); returned as a float."""
    overlap = check_overlap_range(overlap, name)
    if abs(overlap) != 1.0 and cfg.d < 2:
        raise ValueError(
            f"{name} = {overlap!r} is invalid for d = 1: there is no direction orthogonal to w*; "
            "only overlap = +-1 is possible"
        )
    return overlap


def check_n_tilde(n_tilde, name: str = "n_tilde") -> tuple[int, ...]:
    """The downstream sample sizes N~: a non-empty sequence of integers >= 1, as a tuple."""
    if not isinstance(n_tilde, Sequence) or isinstance(n_tilde, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of integers, got {type(n_tilde).__name__}")
    wrong = [type(n).__name__ for n in n_tilde if not validation.is_int(n)]
    if wrong:
        raise TypeError(f"{name} must be a sequence of integers, got a {wrong[0]} in it")
    if not n_tilde or not all(1 <= n <= INT64_MAX for n in n_tilde):
        raise ValueError(
            f"{name} = {validation.Short().repr(n_tilde)} is invalid: must be a non-empty "
            "sequence of integers >= 1 (at most 2^63 - 1, int64)"
        )
    return tuple(int(n) for n in n_tilde)


def check_runs(seeds, steps, eta, names=None) -> None:
    """GD runs with a standard error: seeds >= 2, steps >= 0, eta > 0 (names: {keyword: what the
    messages call it}); a wrong type is a TypeError, a value out of range a ValueError."""
    name = (names or {}).get
    _integer(name("seeds", "seeds"), seeds, 2, " (the standard error needs two runs)")
    _integer(name("steps", "steps"), steps, 0)
    _real(name("eta", "eta"), eta)
    if not (validation.is_real(eta) and eta > 0):
        raise ValueError(
            f"{name('eta', 'eta')} = {shown(eta)} is invalid: must be a finite real number > 0"
        )


def validate_glm_args(cfg: JSLConfig, seeds, steps, eta) -> None:
    """Validate `run_glm`'s arguments (seeds >= 2 for a standard error, steps >= 0, eta > 0)."""
    if not isinstance(cfg, JSLConfig):
        raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
    check_runs(seeds, steps, eta)


@dataclasses.dataclass(frozen=True)
class Finetune:
    """The fine-tuning of `transfer` (Section 5): the downstream feature's overlap <w~, w*>, the
    downstream sample sizes N~, the seeds, GD's steps and rate (None: cfg.eta / 2, set by
    `resolved`), the GLM's rate and the recording interval. Checked on construction, one line
    naming the field: a TypeError for a wrong type, a ValueError for a value out of range; names:
    {field: what the messages call it} (a command line's options, e.g. {"n_tilde": "--n-tilde"};
    default the fields)."""

    overlap: float = 0.0
    n_tilde: Sequence[int] = DEFAULT_N_TILDE
    seeds: int = DEFAULT_FINETUNE_SEEDS
    steps: int = DEFAULT_STEPS
    eta: Optional[float] = None
    eta_glm: float = DEFAULT_ETA_GLM
    record_every: int = DEFAULT_RECORD_EVERY
    names: Mapping[str, str] = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        fields = [f.name for f in dataclasses.fields(self) if f.name != "names"]
        if not isinstance(self.names, Mapping):
            raise TypeError(
                "names must be a mapping of field names to what the messages call them, got "
                f"{type(self.names).__name__}"
            )
        texts = [type(v).__name__ for v in self.names.values() if not isinstance(v, str)]
        if texts:
            raise TypeError(
                "names must map field names to text (what the messages call them), got a "
                f"value of type {texts[0]}"
            )
        unknown = [k for k in self.names if k not in fields]
        if unknown:
            raise ValueError(
                f"names = {self.names!r} is invalid: {unknown[0]!r} is not a field of Finetune "
                f"({', '.join(fields)}){did_you_mean(fields, unknown[0])}"
            )
        name = self.names.get
        object.__setattr__(self, "n_tilde", check_n_tilde(self.n_tilde, name("n_tilde", "n_tilde")))
        check_runs(self.seeds, self.steps, 1.0 if self.eta is None else self.eta, self.names)
        _integer(name("record_every", "record_every"), self.record_every, 1)
        _real(name("eta_glm", "eta_glm"), self.eta_glm)
        if not validation.is_real(self.eta_glm) or self.eta_glm <= 0:
            raise ValueError(
                f"{name('eta_glm', 'eta_glm')} = {shown(self.eta_glm)} is invalid: must be a "
                "finite real number > 0"
            )
        object.__setattr__(
            self, "overlap", check_overlap_range(self.overlap, name("overlap", "overlap"))
        )

    def resolved(self, cfg: JSLConfig) -> "Finetune":
        """This fine-tuning for the pretraining config `cfg`: eta = cfg.eta / 2 when not given, and
        an overlap that d allows (`check_overlap`)."""
        if not isinstance(cfg, JSLConfig):
            raise TypeError(f"cfg must be a JSLConfig, got {type(cfg).__name__}")
        check_overlap(cfg, self.overlap, self.names.get("overlap", "overlap"))
        return dataclasses.replace(self, eta=cfg.eta / 2 if self.eta is None else self.eta)
