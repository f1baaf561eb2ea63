"""`dynsim experiment jsl-images`: the command's run (JSL Section 6 in miniature on the digits;
docs/images.md section 1); its options, config and estimate are `dynsim.images.jsl_options`."""

from __future__ import annotations

import dataclasses

from dynsim import environment
from dynsim.cli import output

from . import jsl_claims, jsl_experiment, jsl_plotting, report, seeds
from .jsl_options import NAME, config, runs

__all__ = ["run"]


def _cell(values) -> str:
    """The seed mean and its 95 % interval, 'mean [low, high]'."""
    stat = seeds.mean(values)
    return f"{stat.value:.3f} [{stat.low:.3f}, {stat.high:.3f}]"


def _table(result: dict) -> str:
    cfg = result["config"]
    rows = ["accuracy (test, seed mean [95 % interval])"]
    for r, values in result["accuracy"].items():
        rows.append(f"  {r.label:<40} {_cell(values)}")
    rows.append(
        f"localization of P trained on permuted digits: rho (Spearman, p_i^T p_j against minus "
        f"the grid distance; random encodings 0 +- {result['random_sd']:.3f}) and top-"
        f"{cfg['k']} distance (shuffled baseline {result['baseline']:.3f}), after / before the "
        "inverse permutation"
    )
    for r, v in result["localization"].items():
        cells = " ".join(f"{_cell(v[k]):>24}" for k in ("rho_after", "rho_before", "top_after"))
        rows.append(f"  {r.label:<40} {cells}")
    if not cfg["translations"]:
        rows.append(jsl_claims.WHY_TRANSLATIONS)
    return "\n".join(rows)


def _record(result: dict) -> dict:
    """The JSON-ready numbers: per training (its label) and seed."""
    per_run = lambda d: {r.label: [float(v) for v in a] for r, a in d.items()}  # noqa: E731
    return {
        "runs": [dataclasses.asdict(r) | {"label": r.label} for r in result["accuracy"]],
        "grid": result["grid"],
        "accuracy": per_run(result["accuracy"]),
        "final_minibatch_loss": per_run(result["loss"]),
        "localization": {
            r.label: {k: [float(x) for x in v] for k, v in s.items()}
            for r, s in result["localization"].items()
        },
        "top_k_baseline": result["baseline"],
        "random_sd": result["random_sd"],
        "permutation": {c: p.tolist() for c, p in result["perms"].items()},
    }


def run(args) -> int:
    """`dynsim experiment jsl-images`."""
    cfg = config(args)
    report.prepare(args, cfg.patch)
    timings: dict = {}
    total = len(runs(cfg))
    with environment.precision(cfg.dtype):
        result = output.run_logged(
            f"training ({cfg.seeds} seeds per learner and condition)", total,
            lambda: jsl_experiment.run(cfg), timings, "seconds", unit="runs",
        )  # fmt: skip
    meta = report.provenance(cfg.dtype)
    return report.write(
        args,
        NAME,
        lambda path: jsl_plotting.figure(result, path, meta),
        result["items"],
        cfg.to_dict(),
        {"results": _record(result), "provenance": meta, "timings": timings},
        _table(result),
    )
