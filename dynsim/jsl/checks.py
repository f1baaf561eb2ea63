"""What the checker judges for JSL: (alpha, gamma, rho, loss, own-set attention), the residuals of
Lemmas 4.1-4.2, and the extra tolerance a truncated configuration sum earns (its rigorous
bounds)."""

from __future__ import annotations

import numpy as np

from dynsim.setting import Checks

RESIDUALS = {
    "gamma_spread": "Lemma 4.1: max - min of the within-set entries of A",
    "rho_spread": "Lemma 4.1: max - min of the between-set entries of A",
    "v_perp": "Lemma 4.2: norm of the part of v orthogonal to w*",
}
EXACT_NOTES = {
    "v_perp": "; in exact mode v's gradient lies in span(w*) by construction, so this measures "
    "rounding only: mode 'sampled' tests Lemma 4.2 with real noise"
}


def truncation_allowance(a, b, common: np.ndarray) -> dict[str, np.ndarray]:
    """If a reduced run truncated its sum, the per-entry gradient bounds times eta times steps (and
    the loss bound).

    First order: per-step parameter errors are added up, not propagated through the dynamics.
    """
    for t in (a, b):
        trunc = t.meta.get("truncation") or {}
        if trunc.get("dropped_probability"):
            bounds, eta = trunc["bounds"], t.meta["config"]["eta"]
            steps = common.astype(float)
            return {
                "alpha": eta * steps * bounds["grad_alpha"],
                "gamma": eta * steps * bounds["grad_gamma_per_entry"],
                "rho": eta * steps * bounds["grad_rho_per_entry"],
                "loss": np.full(steps.shape, bounds["loss"]),
            }
    return {}


CHECKS = Checks(
    compared=("alpha", "gamma", "rho", "loss", "own_set_attention"),
    residuals=RESIDUALS,
    residual_scale=("alpha", "gamma", "rho"),
    exact_notes=EXACT_NOTES,
    allowance=truncation_allowance,
)
