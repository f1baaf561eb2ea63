"""The MIM sweep's record (`dynsim.setting.SweepSpec`), light: what `sweep mim --help` and the
sweep's checks read (options, defaults, table, the points' check and the options' normalization),
with the work as references to `dynsim.mim.sweep`, loaded when the sweep runs. Each point is its
own group (`one_point`)."""

from __future__ import annotations

from dynsim.setting import Ref, SweepSpec, SweepTable

from . import checks, run_checks
from .level_checks import joint_size

WORK = "dynsim.mim.sweep"
# the flow's end time and save times, checked as `compare --method flow` checks them (its module
# imports JAX; a sweep has imported it before it checks the points)
FLOW_KEYWORDS = Ref("dynsim.sweeps.common:flow_keywords")
# the names dynsim.sweeps.common gives (spelled here: importing it imports JAX; tests check they
# agree): STABILITY, VERDICT
STABILITY = ("loss_sign_changes", "non_monotone", "unstable")
VERDICT = ("verdict", "max_error", "worst_observable", "check_kind")
REDUCED_OPTIONS = ("approximation", "versus_frozen")
FULL_OPTIONS = ("mode", "replicates", "confidence", "approximation_tolerance")
DEFAULT_OPTIONS = {
    "approximation": None,
    "versus_frozen": False,
    "mode": "exact",
    "replicates": None,
    "confidence": 0.999,
    "approximation_tolerance": None,
}


def approximation(cfg, options: dict):
    """The reduced level's approximation: the option, else None (exact, B free, any K; as `dynsim
    compare mim`)."""
    return options.get("approximation")


def validate_point(cfg, options: dict, level: str) -> None:
    """Refuse, before any work, a point its levels cannot run (`run_checks`; the exact joint-type
    size and the flow's times load modules of the levels, only where they are checked). One check
    for `dynsim.sweep` and `sweep mim`: its messages name the library's keywords
    (`run_checks.LIBRARY`)."""
    method = options.get("method", "gd")
    if level != "full":
        approx = run_checks.check_reduced(cfg, approximation(cfg, options), method)
        joint_size(cfg, approx)
        if method == "flow":
            FLOW_KEYWORDS(cfg, options)  # checks t_max
    if level != "reduced":
        run_checks.check_full(cfg, options.get("mode", "exact"), options.get("replicates"))


def normalize(options: dict) -> dict:
    """--approximation none is the exact reduction (None); --approximation-tolerance checked as in
    compare mim (`checks.check_tolerance`)."""
    tol = options.get("approximation_tolerance")
    if tol is not None:
        checks.check_tolerance(tol)
    return {**options, "approximation": None} if options.get("approximation") == "none" else options


def one_point(cfg, options: dict, level: str):
    """A MIM point's group key: its config (P, the kappas and the mask ratio are all shapes)."""
    return cfg


SWEEP = SweepSpec(
    reduced=f"{WORK}:reduced_group",
    full=f"{WORK}:full_group",
    group=one_point,
    check=validate_point,  # light: `dynsim sweep mim` checks points before the levels load
    summary=f"{WORK}:point_summary",
    reduced_options=REDUCED_OPTIONS,
    full_options=FULL_OPTIONS,
    defaults=DEFAULT_OPTIONS,
    normalize=normalize,
    seeded=f"{WORK}:seeded",
    table=SweepTable(
        heatmaps=("two_phase_local", "own_area_attention_min", "final_loss"),
        columns=("final_loss", "two_phase_local", "own_area_attention_min"),
        example="MIM grid, e.g. --P 16,64 --kappa-c 0.6,0.9 --kappa-s 0.4 --mask-ratio 0.5,0.75",
        level_summaries=(
            "final_loss",
            "own_area_attention_min",
            "pp_max",
            "pp_over_fp",
            "fp_deviation_from_pp_frozen",
            "two_phase_local",
            "one_phase_local",
            "local_patches",
            "nonfinite_from_step",
        )
        + STABILITY,
        point_summaries=("delta", "reduced_approximation") + VERDICT,
    ),
)
