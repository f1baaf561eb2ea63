"""`dynsim experiment mim-images`: the command's run (MIM Section 6 in miniature on the digits;
docs/images.md section 2); its options, their checks and its estimate are the light
`dynsim.images.mim_options`."""

from __future__ import annotations

import dataclasses

from dynsim import environment
from dynsim.cli import output

from . import mim_claims, mim_experiment, mim_plotting, report
from .mim_options import DESCRIPTION, NAME, arguments, estimate, sizes

__all__ = ["arguments", "run", "estimate", "DESCRIPTION", "NAME"]


def config(args) -> mim_experiment.Config:
    """The Config of `args`, refused (ValueError naming the option) when the sizes do not fit
    (`mim_options.sizes`)."""
    return mim_experiment.Config(**dataclasses.asdict(sizes(args)))


COLUMNS = ("diversity", "distance", "top_mass", "loss_ratio", "accuracy")


def _table(summary: dict, result: dict) -> str:
    def cell(v):
        if isinstance(v, float):
            return f"{v:.3f}"
        return "-" if v is None else f"{v['mean']:.3f} [{v['low']:.3f}, {v['high']:.3f}]"

    names = ("diversity", "distance", f"top-{result['k']} mass", "loss / base", "accuracy")
    head = f"{'model':<12} " + " ".join(f"{n:>24}" for n in names)
    rows = [head, "-" * len(head)]
    references = {
        "untrained": result["untrained"],
        "random": {**result["random"], "top_mass": result["random"]["top_mass"]["mean"]},
    }
    for name, s in {**summary, **references}.items():
        rows.append(f"{name:<12} " + " ".join(f"{cell(s.get(k)):>24}" for k in COLUMNS))
    mass = result["random"]["top_mass"]
    rows.append(
        f"attention learned: top-{result['k']} mass above random attention's "
        f"{mim_claims.structure_threshold(mass):.3f} (its mean {mass['mean']:.3f} + "
        f"{mim_claims.STRUCTURE_MARGIN:g} SD per map)"
    )
    return "\n".join(rows)


def run(args) -> int:
    """`dynsim experiment mim-images`."""
    cfg = config(args)
    report.prepare(args, cfg.patch)
    timings: dict = {}

    def runner(label, steps, fn):
        return output.run_logged(f"{label} ({cfg.seeds} seeds)", steps, fn, timings, label)

    with environment.precision(cfg.dtype):
        result = mim_experiment.run(cfg, runner)
    summary = mim_experiment.summary(result)
    meta = report.provenance(cfg.dtype)
    title = (
        f"MIM Section 6 in miniature: digits, P = {cfg.P}, gamma = {cfg.mask_ratio}, "
        f"{cfg.steps} steps, {cfg.seeds} seeds"
    )
    return report.write(
        args,
        NAME,
        lambda path: mim_plotting.figure(result, path, title, meta),
        mim_experiment.items(cfg, result),
        {**vars(cfg), "objectives": list(cfg.objectives), "k": cfg.k, "P": cfg.P},
        {"results": result, "summary": summary, "provenance": meta, "timings": timings},
        _table(summary, result),
    )
