"""The work of the generated commands (`dynsim.cli.generic`), one implementation for every setting:
compare both levels, evaluate the claims, print the derivation. Each reads the setting's
declarations (`dynsim.verbs`) for what differs. Loaded when one of them runs."""

from __future__ import annotations

import os

from dynsim import figtext, plotting, verbs
from dynsim.checker import compare
from dynsim.setting import Setting

from . import flow, options, output


def parsed(args, declared) -> dict:
    """The values of the declared options on the command line, by name."""
    return {o.dest: getattr(args, o.dest) for o in declared}


def compare_options(args, setting: Setting) -> dict:
    """What `compare`'s hooks read: the levels' options, the mode, the band, the method and
    --explain."""
    core = ("mode", "confidence", "method", "t_max", "explain")
    return {
        **{k: getattr(args, k) for k in core if hasattr(args, k)},
        **parsed(args, verbs.compare_options(setting)),
    }


def keywords(level: verbs.Level, cfg, opts: dict, full: bool) -> dict:
    """The keywords of the level's simulate: its `keywords` hook, else each of its `compare` options
    the mode reads (and the full level's mode)."""
    if level.keywords is not None:
        return level.keywords(cfg, opts)
    out = {"mode": opts["mode"]} if full else {}
    for o in level.options:
        wanted = "compare" in o.verbs and not o.checker
        if wanted and (not o.modes or opts["mode"] in o.modes):
            out[o.dest] = opts[o.dest]
    return out


def run_level(name: str, level: verbs.Level, cfg, opts: dict, run, timings: dict, flow=False):
    """One level under a progress bar (of its steps; of the save times the flow reaches), logged,
    then its post-processing."""
    if level.describe is not None:
        output.log(level.describe(cfg, opts))
    steps = None if flow else getattr(cfg, "steps", 0)
    traj = output.run_logged(name, steps, run, timings, f"{name}_seconds")
    return traj if level.post is None else level.post(traj, cfg, opts)


def run_pair(args, setting: Setting, cfg, opts: dict, timings: dict) -> verbs.Joint:
    """Validate both levels before any work, then run reduced, then full, and compare them."""
    red_level, full_level = verbs.level(setting, "reduced"), verbs.level(setting, "full")
    for level in (red_level, full_level):
        if level.validate is not None:
            level.validate(cfg, opts)
    output.check_confidence(args.confidence)
    red_kw, full_kw = keywords(red_level, cfg, opts, False), keywords(full_level, cfg, opts, True)
    if red_level.flow:  # --method flow: checks --t-max before any work
        reduced_run = flow.reduced_flow_or_gd(args, cfg, red_level.simulate, **red_kw)
    else:
        reduced_run = lambda: red_level.simulate(cfg, **red_kw)  # noqa: E731
    os.makedirs(args.out, exist_ok=True)
    flows = red_level.flow and args.method == "flow"
    red = run_level("reduced", red_level, cfg, opts, reduced_run, timings, flows)
    ful = run_level(
        "full", full_level, cfg, opts, lambda: full_level.simulate(cfg, **full_kw), timings
    )
    checker = {o.dest: opts[o.dest] for o in verbs.compare_options(setting) if o.checker}
    report = compare(red, ful, confidence=args.confidence, **checker)
    return verbs.Joint(red, ful, report, {"reduced": red, "full": ful}, {}, [])


def run_compare(args) -> int:
    """Run both levels on the config of the command line (or a joint mode's runs), compare them and
    write the outputs: the report, each level's report entries and lines, the plot. (Options its
    --mode does not read were refused by `dynsim.cli` before the estimate: `verbs.mode_refusal`.)"""
    setting: Setting = args.setting_record
    cfg = options.config(args)
    opts = compare_options(args, setting)
    mode = args.mode
    red_level, full_level = verbs.level(setting, "reduced"), verbs.level(setting, "full")
    output.warn_unread(args, {**red_level.unread.get(mode, {}), **full_level.unread.get(mode, {})})
    timings: dict = {}
    if mode in full_level.joint:
        pair = full_level.joint[mode](cfg, opts, timings)
    else:
        pair = run_pair(args, setting, cfg, opts, timings)
    out, lines = {**pair.report.to_dict(), **pair.extra}, list(pair.lines)
    for level in (red_level, full_level):
        if level.report is not None:
            entries, more = level.report(cfg, opts, pair.reduced, pair.full)
            out.update(entries)
            lines += more
    out.update(timings=timings, reduced_meta=pair.reduced.meta, full_meta=pair.full.meta)

    def plot(path):
        if setting.plot is not None:
            return setting.plot(cfg, opts, pair.reduced, pair.full, path, pair.report)
        runs = {"reduced": pair.reduced, "full": pair.full}
        title = figtext.config_title(setting.name, setting.description, cfg)
        return plotting.compare_plot(runs, path, title, report=pair.report)

    return output.emit_compare(args, pair.report, out, pair.trajectories, plot, lines)


def estimate_levels(args) -> list:
    """Both levels' needs (the setting's resources hook; none without one), checked before any
    work."""
    hook = args.setting_record.resources
    if hook is None:
        return []
    values = options.values(args)
    return hook(values, "reduced", {}) + hook(
        values, "full", {"mode": getattr(args, "mode", "exact")}
    )


def run_check(args) -> int:
    """Evaluate the setting's claims as its `Claims` plans them (validated before any run); the
    exit status is dynsim.claims.exit_code's (0 all hold, 1 some fails, 3 some not judged)."""
    spec = verbs.claims(args.setting_record)  # its precheck ran in `dynsim.cli.main`, first
    cfg = options.config(args)
    core = ("only", "out", "scheduler", "workers", "security", "insecure_scheduler")
    opts = {
        **{k: getattr(args, k) for k in core if hasattr(args, k)},
        **parsed(args, spec.options),
        "given": options.changed(args),
    }
    plan = spec.plan(cfg, opts)
    return output.run_claims(args, plan.total, plan.evaluate, plan.config, unit=plan.unit)


def run_derive(args) -> int:
    """Print the setting's symbolic derivation."""
    spec = verbs.derivation(args.setting_record)
    cfg = options.config(args) if spec.config else None
    print(spec.render(cfg, {**parsed(args, spec.options), "latex": args.latex}))
    return options.EXIT_AGREE
