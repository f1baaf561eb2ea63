"""What the checker judges for JSL: (alpha, gamma, rho, loss, own-set attention), the residuals of
Lemmas 4.1-4.2, the extra tolerance a truncated configuration sum earns (its rigorous bounds), and
against the realistic level its own definition (`full.jsl.selfcheck`): Assumption 1's data law
by exact sampling tests and the gradient identity to rounding."""

from __future__ import annotations

import numpy as np

from dynsim.comparison import Residual
from dynsim.setting import Checks

# family-wise confidence of the data-law tests of `self_check` (the checker's default)
SELF_CHECK_CONFIDENCE = 0.999

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


def _tested(estimate: float, expected: float, lo: float, hi: float, what: str) -> Residual:
    """A data-law residual: |estimate - expected|, judged by the exact interval [lo, hi]."""
    side = (expected - lo) if estimate < expected else (hi - expected)
    passed, why = bool(lo <= estimate <= hi), f"{what} (expected {expected:.6g})"
    return Residual(abs(estimate - expected), side, passed, why)


SELF_CHECK_KEYS = (
    "gradient_identity",
    "noise_sum_squares",
    "noise_dof",
    "random_nonzero",
    "random_patches",
    "set_whole_y",
    "samples",
)


def _totals(found) -> dict[str, np.ndarray]:
    """Each statistic summed over seeds; a ValueError naming what is wrong when `found` (a
    trajectory's meta, possibly read back from a file) is not what `full.jsl.selfcheck.run`
    writes."""
    why = "not a dict" if not isinstance(found, dict) else ""
    missing = [] if why else [k for k in SELF_CHECK_KEYS if k not in found]
    why = why or (f"lacks {missing}" if missing else "")
    out = {}
    if not why:
        try:
            arrays = {k: np.asarray(found[k], dtype=float) for k in SELF_CHECK_KEYS}
        except (TypeError, ValueError) as exc:
            arrays, why = {}, f"holds a non-number ({exc})"
        for k, a in arrays.items():
            if a.ndim == 0 or a.shape[0] == 0 or not np.all(np.isfinite(a)) or np.any(a < 0):
                why = f"{k} is not a nonempty list of finite numbers >= 0"
                break
            out[k] = np.sum(a, axis=0)
    if why:
        raise ValueError(f"meta['self_check'] of the realistic trajectory {why}")
    return out


def self_check(found: dict, config: dict) -> dict[str, Residual]:
    """The realistic level's `full.jsl.selfcheck` statistics over all seeds, judged: the gradient
    identity to rounding (its ratio to the bound at most 1), and Assumption 1's law of the training
    sets by exact tests, each two-sided at the family-wise SELF_CHECK_CONFIDENCE (Bonferroni over
    the noise variance, the random patches' feature rate and each set's rate of carrying y
    wholly): sum |xi|^2 / sigma^2 ~ chi^2 with the noise's degrees of freedom; the nonzero random
    patches ~ Bin(patches, q); the samples whose set l is wholly y ~ Bin(samples, 1/L + (1 - 1/L)
    (q/2)^C) (the signal set is uniform on [L]; a random set is wholly y with (q/2)^C)."""
    from scipy import stats  # noqa: PLC0415  (compare's realistic mode only)

    total = _totals(found)
    sigma2, q, C, D = config["sigma"] ** 2, config["q"], config["C"], config["D"]
    L = D // C
    level = 1 - (1 - SELF_CHECK_CONFIDENCE) / (2 + L)
    worst = float(np.max(found["gradient_identity"]))
    out = {
        "gradient_identity": Residual(
            worst,
            1.0,
            bool(worst <= 1.0),
            "the step GD takes against jax.grad of (E) at each seed's start, in units of its "
            "rounding bound (full.jsl.selfcheck.gradient_identity)",
        )
    }
    dof = total["noise_dof"]
    lo, hi = stats.chi2(dof).interval(level)
    out["noise_variance"] = _tested(
        total["noise_sum_squares"] / dof,
        sigma2,
        lo * sigma2 / dof,
        hi * sigma2 / dof,
        "Assumption 1: mean squared noise per direction orthogonal to w*",
    )
    patches = total["random_patches"]
    lo, hi = stats.binom(patches, q).interval(level)
    out["feature_rate"] = _tested(
        total["random_nonzero"] / patches,
        q,
        lo / patches,
        hi / patches,
        "Assumption 1: share of the patches outside the signal set carrying +-w*",
    )
    n = total["samples"]
    p_set = 1 / L + (1 - 1 / L) * (q / 2) ** C
    lo, hi = stats.binom(n, p_set).interval(level)
    for ell, count in enumerate(np.atleast_1d(total["set_whole_y"])):
        out[f"set_{ell}_wholly_y"] = _tested(
            count / n,
            p_set,
            lo / n,
            hi / n,
            f"Assumption 1: share of samples whose set {ell} carries y on every patch",
        )
    return out


def reported(a, b, approx) -> dict[str, Residual]:
    """Against the realistic level: its `self_check` (data law and gradient identity)."""
    for t in (a, b):
        found = t.meta.get("self_check") if t.level == "full" else None
        if found:
            return self_check(found, t.meta["config"])
    return {}


CHECKS = Checks(
    compared=("alpha", "gamma", "rho", "loss", "own_set_attention"),
    residuals=RESIDUALS,
    residual_scale=("alpha", "gamma", "rho"),
    exact_notes=EXACT_NOTES,
    allowance=truncation_allowance,
    reported=reported,
)
