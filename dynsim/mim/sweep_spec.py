"""The MIM sweep's record (`dynsim.setting.SweepSpec`), light: what `sweep mim --help` and the
sweep's checks on the command line read (options, table), with the work as references to
`dynsim.mim.sweep`, loaded when the sweep runs. Each point is its own group (`one_point`)."""

from __future__ import annotations

from dynsim.setting import SweepSpec, SweepTable

WORK = "dynsim.mim.sweep"
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


def one_point(cfg, options: dict, level: str):
    """A MIM point's group key: its config (P, the kappas and the mask ratio are all shapes)."""
    return cfg


SWEEP = SweepSpec(
    reduced=f"{WORK}:reduced_group",
    full=f"{WORK}:full_group",
    group=one_point,
    check=f"{WORK}:validate_point",
    summary=f"{WORK}:point_summary",
    reduced_options=REDUCED_OPTIONS,
    full_options=FULL_OPTIONS,
    defaults=DEFAULT_OPTIONS,
    normalize=f"{WORK}:normalize",
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
