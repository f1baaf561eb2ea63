"""What the checker judges for MIM: the loss and the FP, PP and area-attention arrays entry by entry
(NaN marks padding); under pp_frozen (B = 0) pp_corr is reported, not judged, and the PP magnitude
is reported."""

from __future__ import annotations

import math

import numpy as np

from dynsim.checker import Residual
from dynsim.setting import Checks

from .records import per_class_only


def frozen_pp(a, b) -> set:
    """pp_corr is not judged when a run comes from pp_frozen (it sets B = 0): its size is reported
    (pp_max)."""
    frozen = any("pp_frozen" in str(t.meta.get("approximation", "")) for t in (a, b))
    return {"pp_corr"} if frozen else set()


def pp_magnitude(a, b, approx) -> dict[str, Residual]:
    """max |B_{p,q}| (PP correlation) of the full run (else of a reduced run with B free) and its
    ratio to max |A_{p,v}| (FP), reported, not judged; and the compared observables a reduced run
    holds only per class (not compared: `records.with_per_patch` expands them), so that a missing
    comparison is said, not silent."""
    out: dict[str, Residual] = {}
    for t in (a, b):
        missing = (
            [n for n in per_class_only(t) if n in CHECKS.compared] if t.level == "reduced" else []
        )
        if missing:
            out["per_class_only"] = Residual(
                float(len(missing)),
                None,
                None,
                f"not compared: {', '.join(missing)} recorded per class only (above "
                "the expansion budget); dynsim.mim.records.with_per_patch(reduced, cfg) "
                "expands them for the checker",
            )
    # B's size from the full run, else from a reduced run with B free (pp_frozen against B free)
    full = [t for t in (a, b) if t.level == "full"]
    for t in full or [t for t in (a, b) if "pp_frozen" not in str(t.meta.get("approximation", ""))]:
        if "pp_corr" not in t.observables:
            continue
        pp = float(np.nanmax(np.abs(t["pp_corr"])))
        fp = float(np.nanmax(np.abs(t["fp_corr"])))
        what = "max |B_{p,q}| over the run (PP correlation, Lemma 5.2)"
        if approx is not None and "pp_frozen" in approx:
            what += "; the pp_frozen reduction sets it to 0"
        out["pp_max"] = Residual(pp, None, None, what + "; reported, not judged")
        out["pp_over_fp"] = Residual(
            pp / fp if fp > 0 else math.nan,
            None,
            None,
            "max |B| / max |A| over the run (the theory: PP small against FP); reported",
        )
    return out


CHECKS = Checks(
    compared=("loss", "fp_corr", "pp_corr", "area_attention"), skip=frozen_pp, reported=pp_magnitude
)
