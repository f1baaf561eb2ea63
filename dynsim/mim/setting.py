"""The MIM setting (Huang, Wen, Chi, Liang 2024) as a plugin: registered through the entry point
`mim = "dynsim.mim.setting:SETTING"` of the group `dynsim.settings` (pyproject.toml)."""

from __future__ import annotations

import full.mim
import reduced.mim
from dynsim.cli.options import json_option
from dynsim.setting import Command, Setting
from reduced.mim.symbolic import render

from . import cli, cli_figures, theorems
from .checks import CHECKS
from .config import DTYPES, FIELD_HELP, PARTITIONS, MIMConfig
from .sweep import SWEEP


def claims(cfg: MIMConfig, log=lambda s: None) -> list:
    """The MIM claims (`theorems.check_theorems`) on the default Delta > 0 / Delta < 0 pair at cfg's P, steps, eta
    and mask ratio."""
    base = theorems.default_configs()["pos"].replace(P=cfg.P, steps=cfg.steps, eta=cfg.eta, mask_ratio=cfg.mask_ratio,
                                                    record_every=max(1, cfg.steps // 100))
    neg = theorems.default_configs()["neg"]
    return theorems.check_theorems(base, base.replace(kappa_c=neg.kappa_c, kappa_s=neg.kappa_s), log=log)


def derive(cfg: MIMConfig, latex: bool = False) -> str:
    """The sympy per-query loss (own-area and other-area views) and its partial derivatives (any P)."""
    return render(latex=latex)


COMMANDS = (
    Command("compare", "mim", cli.compare_arguments, cli.run_compare,
            help="Huang, Wen, Chi, Liang (2024): masked image modeling, FP and PP correlations",
            description="Compare the reduced per-query MIM dynamics (FP correlations A, PP correlations B, Lemmas "
                        "5.1-5.2) with full-matrix GD on the literal d x d matrix Q. With K = 1 the reduction is exact "
                        "and both levels agree to float rounding; with K > 1 the reduced level needs the 'pp_frozen' "
                        "approximation and the report gives its deviation from full and the PP magnitude it drops."),
    Command("figure", "mim-phases", cli_figures.phases_arguments, cli_figures.run_phases,
            help="MIM: FP and PP trajectories for Delta > 0 (two phases) and Delta < 0 (one phase)",
            description=cli_figures.PHASES_DESCRIPTION),
    Command("figure", "mim-attention", cli_figures.attention_arguments, cli_figures.run_attention,
            help="MIM: attention maps of the trained full model and its attention diversity",
            description=cli_figures.ATTENTION_DESCRIPTION),
    Command("check-theorems", "mim", cli.check_arguments, cli.run_check,
            description="Evaluate the MIM claims on runs: Theorem 4.1 (area-wide attention at convergence), two "
                        "phases for local patches when Delta > 0 with the switch point (Lemma 5.3), one phase when "
                        "Delta < 0 and for global patches, the initial rate ratio against (1 - gamma) P^Delta, PP small "
                        "against FP, and the trained model's attention diversity against collapsed attention (Section "
                        "6). About 25 s. Prints a table (claim, measured, threshold, holds or fails); exit 0 when every "
                        "claim holds, 1 when one fails, 2 on invalid input."),
    Command("derive", "mim", cli.derive_arguments, cli.run_derive,
            description="Print the per-query MIM loss built in sympy (own-area and other-area views) and its "
                        "derivatives in A_n, B_n, B_self, A_i, B_i."),
)

SETTING = Setting(
    name="mim", description="Huang, Wen, Chi, Liang (2024): masked image modeling, FP and PP correlations",
    config=MIMConfig, reduced=reduced.mim.simulate, full=full.mim.simulate, checks=CHECKS, modes=("exact", "sampled"),
    claims=claims, derive=derive, sweep=SWEEP, commands=COMMANDS, field_help=FIELD_HELP,
    field_parsers={"z": cli.z_option, "partitions": json_option}, field_choices={"partition": PARTITIONS, "dtype": DTYPES})
