"""The commands every setting gets from its `Setting` record alone: `compare NAME`, `check-theorems NAME` (when it
declares claims) and `derive NAME` (when it declares a derivation). A setting's own command replaces them."""

from __future__ import annotations

import os

from dynsim import plotting
from dynsim.checker import compare
from dynsim.setting import Command, Setting

from . import options, output


def compare_arguments(parser, setting: Setting) -> None:
    """Every config field, the full level's mode, the checker's band and the outputs."""
    options.config_options(parser, setting)
    run = parser.add_argument_group("run")
    run.add_argument("--mode", choices=setting.modes, default=setting.modes[0],
                     help=f"full level (default: {setting.modes[0]})")
    run.add_argument("--confidence", type=float, default=0.999,
                     help="confidence of the Monte Carlo band when a level carries standard errors (default: 0.999)")
    output.out_options(run)
    output.report_options(run)


def run_compare(args) -> int:
    """Run both levels on the config of the command line, compare them and write the outputs."""
    setting: Setting = args.setting_record
    cfg = options.config(args)
    output.check_confidence(args.confidence)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    steps = getattr(cfg, "steps", 0)
    red = output.run_logged("reduced", steps, lambda: setting.reduced(cfg), timings, "reduced_seconds")
    ful = output.run_logged("full", steps, lambda: setting.full(cfg, mode=args.mode), timings, "full_seconds")
    report = compare(red, ful, confidence=args.confidence)
    out = {**report.to_dict(), "timings": timings, "reduced_meta": red.meta, "full_meta": ful.meta}
    runs = {"reduced": red, "full": ful}
    return output.emit_compare(args, report, out, runs,
                               lambda path: plotting.compare_plot(runs, path, title=f"{setting.name}: {cfg}"), [])


def estimate_levels(args) -> list:
    """Both levels' needs (the setting's resources hook; none without one), checked before any work (issue 16)."""
    hook = args.setting_record.resources
    if hook is None:
        return []
    values = options.values(args)
    return hook(values, "reduced", {}) + hook(values, "full", {"mode": getattr(args, "mode", "exact")})


def check_arguments(parser, setting: Setting) -> None:
    """Every config field, --json and --out."""
    options.config_options(parser, setting)
    g = parser.add_argument_group("output")
    g.add_argument("--json", action="store_true", help="print {\"claims\": [...]} as JSON instead of the table")
    output.out_options(g)


def run_check(args) -> int:
    """Evaluate the setting's claims; exit 0 only when every claim holds (dynsim.claims.exit_code)."""
    setting: Setting = args.setting_record
    cfg = options.config(args)
    return output.run_claims(args, getattr(cfg, "steps", 0), lambda log: setting.claims(cfg, log=log),
                             cfg.to_dict(), unit="steps")


def derive_arguments(parser, setting: Setting) -> None:
    """Every config field and --latex."""
    options.config_options(parser, setting)
    parser.add_argument("--latex", action="store_true", help="print LaTeX instead of plain text")


def run_derive(args) -> int:
    """Print the setting's symbolic derivation."""
    print(args.setting_record.derive(options.config(args), latex=args.latex))
    return output.EXIT_AGREE


def commands(setting: Setting) -> list[Command]:
    """The generated commands of `setting` that it does not declare itself."""
    out = []
    if setting.command("compare") is None:
        out.append(Command("compare", setting.name, compare_arguments, run_compare, help=setting.description,
                           description=f"Compare the reduced and the full level of {setting.description}.",
                           estimate=estimate_levels))
    if setting.claims is not None and setting.command("check-theorems") is None:
        out.append(Command("check-theorems", setting.name, check_arguments, run_check,
                           description=f"Evaluate the claims of {setting.description} on runs. Exit 0 only when every "
                                       "claim holds; 1 when one fails, is not applicable or was not evaluated; 2 on "
                                       "invalid input.", estimate=estimate_levels))
    if setting.derive is not None and setting.command("derive") is None:
        out.append(Command("derive", setting.name, derive_arguments, run_derive,
                           description=f"Print the symbolic reduced loss of {setting.description} and its gradients."))
    return out
