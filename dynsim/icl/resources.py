"""What an ICL run would hold in memory and do, from the config's field values before the config
is built (the Setting's resources hook): the reduced level's d numbers, the full level's layer and,
in mode sampled, each step's batch of prompts for every replicate at once (they are vmapped). Rough
on purpose: the point is to refuse a run that cannot fit, not to predict its peak."""

from __future__ import annotations

from dynsim.resources import Need, record_need
from dynsim.validation import DEFAULT_REPLICATES

# float64 copies of a sampled batch alive at once: the covariates x (batch, N + 1, d), the prompts E
# (batch, d + 1, N + 1), the product E E^T's operands and their gradients in the backward pass
BATCH_COPIES = 6
# operations a prompt entry and step, per d + 1, counted at `dynsim.resources.FLOP_RATE`: E E^T
# alone is d + 1 per entry, but the default sampled compare (8 x 2048 prompts of 11 x 4, 200 steps)
# took 27 s on 2 cores, about 47 (d + 1) at that rate: the sampling and the small products' overhead
OPS_PER_ENTRY = 50


def _int(v: dict, name: str, default: int = 1) -> int:
    """An integer field as given (the config refuses a bad one before any work), at least 1."""
    try:
        return max(int(v[name]), 1)
    except (TypeError, ValueError, KeyError, OverflowError):
        return default


def needs(v: dict, level: str, opts: dict) -> list:
    """One run at `level` ("reduced" or "full") with the run options `opts` (mode, replicates)."""
    d, n = _int(v, "d"), _int(v, "N")
    steps = max(_int(v, "steps", 0), 0)
    layer = 2 * (d + 1) ** 2  # W^PV and W^KQ
    if level == "reduced":
        main = Need(f"reduced: u and {d} diagonal entries", {"--d": d}, bytes=8.0 * 4 * (d + 1))
        return [main, record_need(steps, v["record_every"], d + 4, f"{d + 4} numbers")]
    if opts.get("mode", "exact") == "exact":
        main = Need(
            f"full exact: the layer, 2 x {d + 1}^2 entries",
            {"--d": d},
            bytes=8.0 * 4 * layer,
            flops=20.0 * layer * (d + 1) * steps,
            instead="a smaller --d",
            work_options={"--steps": steps},
        )
        return [main, record_need(steps, v["record_every"], layer, f"{layer:,} numbers")]
    R = opts.get("replicates") or DEFAULT_REPLICATES
    batch = _int(v, "batch")
    entries = float(batch) * (n + 1) * (d + 1)
    main = Need(
        f"full sampled: replicates {R} x --batch {batch:,} prompts x (N + 1) {n + 1:,} x "
        f"(d + 1) {d + 1}",
        {"--replicates": R, "--batch": batch, "--N": n},
        bytes=8.0 * BATCH_COPIES * R * entries,
        flops=OPS_PER_ENTRY * (d + 1) * R * entries * steps,
        instead="a smaller --batch, fewer --replicates or a smaller --N",
        work_options={"--steps": steps},
    )
    grows = {"--replicates": R}
    return [main, record_need(steps, v["record_every"], R * layer, f"{R * layer:,} numbers", grows)]
