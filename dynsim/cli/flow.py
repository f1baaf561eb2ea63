"""`compare --method flow`: the reduced level as the gradient flow, saved at GD's recorded times."""

from __future__ import annotations

from reduced import flow  # the generic flow engine: save times, option checks


def reduced_flow_or_gd(args, cfg, simulate, **kw):
    """The reduced level of `compare`: GD, or with --method flow the flow saved at GD's recorded
    times (beyond eta * steps, log-spaced up to --t-max). Checks --t-max before any work."""
    if args.method == "gd":
        if args.t_max is not None:
            raise ValueError(
                f"--t-max = {args.t_max} is invalid with --method gd: it is the flow's end time "
                "(use --method flow)"
            )
        return lambda: simulate(cfg, **kw)
    t_max = cfg.eta * cfg.steps if args.t_max is None else args.t_max
    if not t_max > 0:
        raise ValueError(
            f"--t-max = {t_max} is invalid: must be > 0 (default eta * steps; steps = {cfg.steps})"
        )
    times = flow.gd_times(cfg.eta, cfg.steps, cfg.record_every, t_max)
    flow.options(cfg.eta, t_max, times=times, default_t_max=t_max)  # validate before any work
    return lambda: simulate(cfg, method="flow", t_max=t_max, times=times, **kw)
