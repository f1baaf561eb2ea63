"""The work of the generated commands (`dynsim.cli.generic`): compare both levels, evaluate the
claims, print the derivation. Loaded when one of them runs."""

from __future__ import annotations

import os

from dynsim import plotting
from dynsim.checker import compare
from dynsim.setting import Setting

from . import options, output


def run_compare(args) -> int:
    """Run both levels on the config of the command line, compare them and write the outputs."""
    setting: Setting = args.setting_record
    cfg = options.config(args)
    output.check_confidence(args.confidence)
    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    steps = getattr(cfg, "steps", 0)
    red = output.run_logged(
        "reduced", steps, lambda: setting.reduced(cfg), timings, "reduced_seconds"
    )
    ful = output.run_logged(
        "full", steps, lambda: setting.full(cfg, mode=args.mode), timings, "full_seconds"
    )
    report = compare(red, ful, confidence=args.confidence)
    out = {**report.to_dict(), "timings": timings, "reduced_meta": red.meta, "full_meta": ful.meta}
    runs = {"reduced": red, "full": ful}
    return output.emit_compare(
        args,
        report,
        out,
        runs,
        lambda path: plotting.compare_plot(runs, path, title=f"{setting.name}: {cfg}"),
        [],
    )


def estimate_levels(args) -> list:
    """Both levels' needs (the setting's resources hook; none without one), checked before any
    work."""
    hook = args.setting_record.resources
    if hook is None:
        return []
    values = options.values(args)
    return hook(values, "reduced", {}) + hook(
        values, "full", {"mode": getattr(args, "mode", "exact")}
    )


def run_check(args) -> int:
    """Evaluate the setting's claims; exit 0 only when every claim holds
    (dynsim.claims.exit_code)."""
    setting: Setting = args.setting_record
    cfg = options.config(args)
    return output.run_claims(
        args,
        getattr(cfg, "steps", 0),
        lambda log: setting.claims(cfg, log=log),
        cfg.to_dict(),
        unit="steps",
    )


def run_derive(args) -> int:
    """Print the setting's symbolic derivation."""
    print(args.setting_record.derive(options.config(args), latex=args.latex))
    return options.EXIT_AGREE
