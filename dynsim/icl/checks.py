"""What the checker judges for ICL (docs/icl.md §9): u, the product u diag(W11^KQ), the loss and
the distance to Gamma^{-1}, and the residual of the blocks the reduction sets to zero. Against the
sampled full level only the product and the loss are judged: the loss is invariant under u -> c u,
W^KQ -> W^KQ / c, and the sampled gradients' noise moves the runs along that orbit (the balance
u^2 - ||W11^KQ||_F^2, which the exact gradients keep to O(eta^2), drifts), so u is not a quantity
the population dynamics predict there; and the replicates' mean of the distance, a norm, is biased
upward by their spread. Both are reported.

The rounding model (`dynsim.tolerances.rounding`) lets each step's error add up; from the small
start the dynamics pass saddles (one mode of Lambda escapes after another), where GD's map stretches
an error made earlier. The allowance multiplies the rounding model by the reduced run's recorded
`amplification` (the mean stretch, by the GD map's linearization, of an error made at each earlier
step), derived from the reduced trajectory alone."""

from __future__ import annotations

import numpy as np

from dynsim.checker import Residual
from dynsim.icl.config import ICLConfig
from dynsim.setting import Checks
from dynsim.tolerances import rounding_tolerance, term_count

ORBIT = ("u", "gap")
WHY = {
    "u": "u moves along the loss's symmetry u -> c u, W^KQ -> W^KQ / c under sampled gradients",
    "gap": "the replicates' mean of a norm is biased upward by their spread",
}


def sampled(a, b) -> bool:
    """Whether either run is the sampled full level."""
    return any(t.meta.get("mode") == "sampled" for t in (a, b))


def orbit(a, b) -> set:
    """u and gap are reported, not judged, against the sampled full level."""
    return set(ORBIT) if sampled(a, b) else set()


# GD's step map x -> x - eta grad L is stable at a fixed point when eta lambda_max(H) < 2
STABLE = 2.0
UNSTABLE_WHY = (
    "eta x the population Hessian's largest eigenvalue at the full level's end, in every entry of "
    "W^PV and W^KQ: at 2 or more GD's fixed point is unstable, off the reduced manifold too; the "
    "full level starts on the manifold, where the other blocks' gradients are exactly zero, so it "
    "cannot show the departure a run from any perturbed start makes"
)


def end_stability(a, b) -> dict[str, Residual]:
    """The exact full level's end judged by GD's stability, eta lambda_max < 2
    (`dynsim.icl.reading`): the reduced dynamics on the manifold can agree with the full level to
    rounding while the manifold repels GD."""
    from dynsim.icl.reading import hessian_top  # imports JAX

    full = next((t for t in (a, b) if t.level == "full" and t.meta.get("mode") == "exact"), None)
    config = None if full is None else full.meta.get("config")
    if not isinstance(config, dict) or not full.final:
        return {}
    cfg = ICLConfig(**config)
    params = {k: np.asarray(v, np.float64) for k, v in full.final.items()}
    if not all(np.all(np.isfinite(v)) for v in params.values()):
        return {}
    sharp = cfg.eta * hessian_top(params, np.asarray(cfg.spectrum), cfg.N)
    return {"end_sharpness": Residual(sharp, STABLE, bool(sharp < STABLE), UNSTABLE_WHY)}


def reported(a, b, approx) -> dict[str, Residual]:
    """Against the exact full level: GD's stability at its end (`end_stability`). Against the
    sampled full level: the largest |difference| of u and of gap, and why they are not judged."""
    if not sampled(a, b):
        return end_stability(a, b)
    common, ia, ib = np.intersect1d(a.steps, b.steps, return_indices=True)
    out = {}
    for name in ORBIT:
        if name in a.observables and name in b.observables:
            diff = float(np.max(np.abs(np.asarray(a[name])[ia] - np.asarray(b[name])[ib])))
            out[f"{name}_difference"] = Residual(
                diff, None, None, f"max |difference| of {name}; not judged: {WHY[name]}"
            )
    return out


def amplified(a, b, common) -> dict:
    """Per compared observable, the rounding model times (amplification - 1) at the common steps:
    what the stretch of earlier errors adds to it (nothing without a reduced GD run that records
    it)."""
    stretch = next((t for t in (a, b) if "amplification" in t.observables), None)
    if stretch is None:
        return {}
    amp = np.asarray(stretch["amplification"])[np.searchsorted(stretch.steps, common)]
    dtype = "float32" if "float32" in (a.meta.get("dtype"), b.meta.get("dtype")) else "float64"
    terms = max(term_count(a), term_count(b))
    out = {}
    for name in CHECKS.compared:
        if name in a.observables and name in b.observables:
            scale = max(float(np.nanmax(np.abs(np.asarray(t[name])))) for t in (a, b))
            out[name] = rounding_tolerance(common.astype(float), scale, terms, dtype) * (amp - 1)
    return out


CHECKS = Checks(
    compared=("u", "product", "loss", "gap"),
    residuals={
        "offblock": "max |entry| of W^PV and W^KQ outside w22^PV and W11^KQ's diagonal: zero on "
        "the reduced manifold"
    },
    residual_scale=("u", "product"),
    skip=orbit,
    reported=reported,
    allowance=amplified,
)
