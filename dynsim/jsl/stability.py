"""The realistic runs' GD stability premise (docs/jsl.md §13): GD at step eta follows its gradient
flow only inside its stability edge and while it descends."""

from __future__ import annotations

import numpy as np

from dynsim.claims import Premise
from full.engine import LOSS_RISE

from .config import JSLConfig


STABILITY_EDGE = 2.0  # GD at step eta is linearly stable iff eta lambda_max < 2


def stability_premises(rc: JSLConfig, runs: dict) -> list[Premise]:
    """Parametrization 3.1 asks eta < 1/poly(d): GD must follow its gradient flow, not oscillate.
    Two measurements over every seed of `runs` ({N: (records, finals)} of `realistic_runs.run` at
    rc.eta), each of which can come out false: eta lambda_max < 2 at every record
    (`full.jsl.realistic.sharpness`), and the training loss never rising over one GD step by more
    than the rounding of its mean (relative N eps of the dtype: a sum of N positive terms;
    `full.engine.LOSS_RISE`, every step). A non-finite value (GD diverged) is past the edge."""
    eps = float(np.finfo(np.dtype(rc.dtype)).eps)
    edge, rise = [], []
    for N, (records, _) in runs.items():
        lam = rc.eta * np.asarray(records["sharpness_seeds"], float)
        edge.append(np.max(np.where(np.isfinite(lam), lam, np.inf)))
        worst = np.asarray(records[LOSS_RISE + "_seeds"], float)[-1] / (N * eps)
        rise.append(np.max(np.where(np.isfinite(worst), worst, np.inf)))
    return [
        Premise(
            "GD within its stability edge at every record (eta lambda_max)",
            max(edge),
            "<",
            STABILITY_EDGE,
            "lambda_max of the training loss's Hessian by Lanczos at every record of every seed",
            dynamics=True,
        ),
        Premise(
            "GD descends at every step (largest one-step relative rise of the training "
            "loss / (N eps))",
            max(rise),
            "<=",
            1.0,
            f"N eps, eps = {eps:.3g}: the rounding bound of a mean of N positive terms",
            dynamics=True,
        ),
    ]
