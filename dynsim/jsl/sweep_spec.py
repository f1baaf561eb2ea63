"""The JSL sweep's record (`dynsim.setting.SweepSpec`), light: what `sweep jsl --help` and the
sweep's checks on the command line read (options, table), with the work as references to
`dynsim.jsl.sweep`, loaded when the sweep runs."""

from __future__ import annotations

from dynsim.setting import Ref, SweepSpec, SweepTable

from . import run_checks
from .config import JSLConfig
from .events import EVENTS

WORK = "dynsim.jsl.sweep"
# the names these heavy modules give (spelled here: importing them imports JAX; tests check they
# agree): reduced.jsl.many.SUM_OPTIONS, dynsim.sweeps.common.STABILITY, .VERDICT, .time_name
SUM_OPTIONS = ("max_configurations", "tail_target", "mc_samples")
STABILITY = ("loss_sign_changes", "non_monotone", "unstable")
VERDICT = ("verdict", "max_error", "worst_observable", "check_kind")
TIMES = tuple(e[:1].lower() + e[1:] for e in EVENTS)  # t0, t1_attention, ...: eta * steps
FULL_OPTIONS = ("mode", "replicates", "confidence")
DEFAULT_OPTIONS = {"mode": "exact", "replicates": None, "confidence": 0.999}
NOT_OFFERED = {
    "reduced_patch_association": "Definition 2.2 at the reduced state is one 0/1 flag for every "
    "row (Lemma 4.1), min(sigma_A, gamma) > rho: 1 from the first step wherever gamma >= rho "
    "(Lemma 4.3), 0 where the attention anti-associates (q = 0.9 at D = 9), so a phase diagram of "
    "it is one colour; final_attention_ratio grades it ((C-1) Gamma / ((D-C) Xi) = (C-1)/(D-C) "
    "exp((gamma - rho)/tau) at the end: below (C-1)/(D-C) when anti-associated, above 1 once the "
    "sets are learned, T1_attention); full_patch_association is the full level's",
}

# the flow's refusals need the reduced sums (JAX): loaded only for --method flow
CHECK_FLOW = Ref(f"{WORK}:check_flow_point")


def validate_point(cfg: JSLConfig, options: dict, level: str) -> None:
    """Refuse, before any work, a point its levels cannot run: the reduced sum's options and its
    int64 moments, the flow's sum and t_max, the full level's mode, replicates and exact size
    (`run_checks`)."""
    if level != "full":
        run_checks.check_sum_options(**{k: options.get(k) for k in SUM_OPTIONS})
        run_checks.check_moments_fit(cfg.D, cfg.C, cfg.p)
        if options.get("method") == "flow":
            CHECK_FLOW(cfg, options)
    if level != "reduced":
        mode, replicates = options.get("mode", "exact"), options.get("replicates")
        run_checks.validate_run_options(cfg, mode, replicates)


SWEEP = SweepSpec(
    reduced=f"{WORK}:reduced_group",
    full=f"{WORK}:full_group",
    group=f"{WORK}:level_group",
    check=validate_point,  # light: `dynsim sweep jsl` checks points before the levels load
    summary=f"{WORK}:point_summary",
    reduced_options=SUM_OPTIONS,
    full_options=FULL_OPTIONS,
    defaults=DEFAULT_OPTIONS,
    traced=tuple(JSLConfig.NUMBERS) + ("seed",),
    seeded=f"{WORK}:seeded",
    table=SweepTable(
        heatmaps=("T1_attention", "final_error", "final_attention_ratio"),
        columns=("final_loss", "final_error", "T1_attention"),
        extra_columns=("sum_method",),
        example="JSL grid, e.g. --D 16,36 --C 4 --p 3,5 --q 0.2,0.3,0.4 --seeds 4",
        level_summaries=tuple(k for e in EVENTS + TIMES for k in (e, e + "_censored"))
        + (
            "final_loss",
            "final_error",
            "patch_association",
            "final_attention_ratio",
            "final_alpha",
            "final_gamma",
            "final_rho",
            "nonfinite_from_step",
        )
        + STABILITY,
        point_summaries=(
            "sum_method",
            "configurations",
            "dropped_probability",
            "loss_bound",
            "loss_se_mc",
        )
        + VERDICT,
        not_offered=NOT_OFFERED,
    ),
)
