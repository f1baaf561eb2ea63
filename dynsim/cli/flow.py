"""`compare --method flow`: the reduced level as the gradient flow, saved at GD's recorded times."""

from __future__ import annotations

from dynsim.validation import check_positive
from reduced import flow  # the generic flow engine: save times, option checks


def flow_keywords(cfg, t_max=None) -> dict:
    """What the reduced simulate takes for the gradient flow: method="flow", t_max (default eta *
    steps; a finite number > 0, at most eta * 2^53: `flow.check_horizon`) and the save times, GD's
    recorded times (beyond eta * steps, log-spaced up to t_max). Checked before any work."""
    t_max = cfg.eta * cfg.steps if t_max is None else t_max
    check_positive("--t-max", t_max, f" (default eta * steps; steps = {cfg.steps})")
    flow.check_horizon("--t-max", t_max, cfg.eta)  # before the save times are laid out
    times = flow.gd_times(cfg.eta, cfg.steps, cfg.record_every, t_max)
    flow.Flow(t_max=t_max, times=times).resolved(cfg.eta, t_max)  # validate before any work
    return {"method": "flow", "t_max": t_max, "times": times}


def reduced_flow_or_gd(args, cfg, simulate, **kw):
    """The reduced level of `compare`: GD, or with --method flow the flow (`flow_keywords`). Checks
    --t-max before any work."""
    if args.method == "gd":
        if args.t_max is not None:
            raise ValueError(
                f"--t-max = {args.t_max} is invalid with --method gd: it is the flow's end time "
                "(use --method flow)"
            )
        return lambda: simulate(cfg, **kw)
    keywords = flow_keywords(cfg, args.t_max)
    return lambda: simulate(cfg, **keywords, **kw)
