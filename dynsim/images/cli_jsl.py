"""`dynsim experiment jsl-images`: the command's run (JSL Section 6 in miniature on the digits;
docs/images.md section 1); its options, config and estimate are `dynsim.images.jsl_options`."""

from __future__ import annotations

import numpy as np

from dynsim import environment
from dynsim.cli import output

from . import jsl_experiment, jsl_plotting, report, seeds
from .jsl_options import NAME, config

__all__ = ["run"]


def _cell(values) -> str:
    """The seed mean and its 95 % interval, 'mean [low, high]'."""
    stat = seeds.mean(values)
    return f"{stat.value:.3f} [{stat.low:.3f}, {stat.high:.3f}]"


def _table(result: dict) -> str:
    conditions = list(result["conditions"])
    head = f"{'learner':<12}" + "".join(f"{c:>26}" for c in conditions)
    rows = [head, "-" * len(head)]
    for m in ("positional", "standard", "cnn", "frozen"):
        cells = []
        for c in conditions:
            if (m, c) not in result["accuracy"]:
                cells.append(f"{'-':>26}")
                continue
            cells.append(f"{_cell(result['accuracy'][(m, c)]):>26}")
        rows.append(f"{m:<12}" + "".join(cells))
    local = result["localization"]
    rows.append(
        f"localization (top-{result['config']['k']} distance, grid cells; shuffled "
        f"baseline {local['positional']['baseline']:.3f}):"
    )
    for m in ("positional", "frozen"):
        for key in ("after", "before"):
            rows.append(f"  {m:<10} {key:<6} inverse permutation: {_cell(local[m][key])}")
    return "\n".join(rows)


def _record(result: dict) -> dict:
    """The JSON-ready numbers: per learner, condition and seed."""
    return {
        "conditions": result["conditions"],
        "grid": result["grid"],
        "accuracy": {f"{m}/{c}": [float(v) for v in a] for (m, c), a in result["accuracy"].items()},
        "final_minibatch_loss": {
            f"{m}/{c}": [float(v) for v in a] for (m, c), a in result["loss"].items()
        },
        "localization": {
            m: {k: (v if np.isscalar(v) else [float(x) for x in v]) for k, v in s.items()}
            for m, s in result["localization"].items()
        },
        "permutation": {c: p.tolist() for c, p in result["perms"].items()},
        "random_sd": result["random_sd"],
    }


def run(args) -> int:
    """`dynsim experiment jsl-images`."""
    cfg = config(args)
    report.prepare(args, cfg.patch)
    timings: dict = {}
    total = len(jsl_experiment.runs(range(3 if cfg.patch == 2 else 4)))
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
