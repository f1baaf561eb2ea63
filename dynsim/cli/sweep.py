"""`dynsim sweep NAME`: every config option of `compare` as one value or a comma-separated list; the
grid of their product (times --seeds) runs through `dynsim.sweeps.sweep`, stored and resumable in
--out. The options are declared here, the work is in `dynsim.cli.sweep_run`, loaded when the command
runs."""

from __future__ import annotations

import dataclasses
import itertools
import time

from dynsim import runoptions, verbs
from dynsim.setting import Command, Ref, Setting
from dynsim.validation import check_positive

from . import options

DESCRIPTION = (
    "Run every point of a grid at one level and summarize each: event times, final loss and "
    "error, and with --level both the checker's verdict and largest error. Finished points are "
    "stored in --out (keyed by a versioned hash of their configuration) and skipped when the "
    "command runs again, so an interrupted sweep resumes where it stopped. Writes table.csv, "
    "sweep.json, heatmap-*.png and points/. Several processes running one sweep may share one "
    "--out: they split the points (claims in locks/) and each prints the whole table. A --out "
    "holding another sweep's outputs (another setting, level or option, or a grid without all of "
    "its points) is refused; a grid holding all of them extends it. Exit 0 when done (and, with "
    "--level both, every point agrees), 1 when a point disagrees, 2 on invalid input, 130 when "
    "interrupted (143 by SIGTERM). --method flow runs the reduced level as the gradient flow "
    "(point by point, saved as `dynsim compare --method flow` saves it); event times are given in "
    "recorded steps and in time t = eta * steps (a flow's censored at --t-max)."
)

NEEDS = Ref("dynsim.cli.sweep_run:estimate")
# the grid's configs checked before the heavy imports: the first CHECKED, for at most CHECK_SECONDS
# (a large config, e.g. MIMConfig at P = 10^6, takes long to build); dynsim.sweeps.points checks
# every one before any work
CHECKED, CHECK_SECONDS = 256, 1.0


def sweep_arguments(parser, setting: Setting) -> None:
    """Every config field as one value or a list, the sweep's own options and the levels'
    options."""
    spec = setting.sweep
    options.axis_options(parser, setting)
    run = parser.add_argument_group("sweep")
    options.seeds_option(run, 1, "each grid point runs at seed, seed+1, ..., one row per seed")
    run.add_argument(
        "--level",
        choices=("reduced", "full", "both"),
        default="reduced",
        help="reduced dynamics, full-matrix GD, or both and the checker (default: reduced)",
    )
    run.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help=f"results store and outputs (default: ./{options.OUT_ROOT}/sweep-{setting.name})",
    )
    run.add_argument(
        "--resume",
        action="store_true",
        help="skip the points already stored in --out (the default; the flag only says so)",
    )
    run.add_argument(
        "--force", action="store_true", help="recompute points already stored (default: resume)"
    )
    run.add_argument(
        "--chunk-size",
        type=int,
        default=16,
        help="points per unit of work, written when it finishes: the most an interruption loses "
        "(default: 16)",
    )
    run.add_argument(
        "--batch-size",
        type=int,
        default=8,
        help="points per vmapped batch inside a chunk; bounds memory (default: 8)",
    )
    options.cluster_options(run, "the chunks", "in this process")
    run.add_argument(
        "--dashboard",
        action="store_true",
        help="with --workers: start the Dask dashboard, on 127.0.0.1 only (any user of this "
        "machine can read it); its address is printed. Needs bokeh (default: no dashboard)",
    )
    run.add_argument(
        "--heatmap",
        type=options.list_of(str),
        default=None,
        metavar="NAME,...",
        help="summaries to draw as heatmaps over two swept axes (default: "
        + ", ".join(spec.table.heatmaps)
        + " of the level run)",
    )
    run.add_argument(
        "--heatmap-axes",
        type=options.list_of(str),
        default=None,
        metavar="X,Y",
        help="the two swept axes of the heatmaps (default: the first two with several values)",
    )
    run.add_argument(
        "--heatmap-unit",
        choices=("steps", "time"),
        default=None,
        help="event times drawn in recorded steps (a column T...) or in time t = eta * steps (its "
        "twin t...); other summaries are drawn as they are (default: time with --method flow, "
        "else steps)",
    )
    levels = parser.add_argument_group("levels")
    if verbs.level(setting, "reduced").flow:
        options.method_options(levels)
    modes = verbs.modes(setting)
    levels.add_argument(
        "--mode",
        choices=modes,
        default=modes[0],
        help=f"full level: as in `dynsim compare` (default: {modes[0]})",
    )
    declared = verbs.sweep_options(setting)
    if "replicates" in spec.full_options and all(o.dest != "replicates" for o in declared):
        # a setting whose sweep passes replicates on without declaring them: the core's
        options.option_of("replicates", runoptions.replicates().metadata["option"]).add(levels)
    levels.add_argument(
        "--confidence",
        type=float,
        default=runoptions.CONFIDENCE,
        help=f"checker's Monte Carlo band (default: {runoptions.CONFIDENCE})",
    )
    for o in declared:
        o.add(levels)


def commands(setting: Setting) -> list[Command]:
    """`sweep NAME` for a setting that declares a sweep."""
    if not setting.declares("sweep"):
        return []
    return [
        Command(
            "sweep",
            setting.name,
            sweep_arguments,
            "dynsim.cli.sweep_run:run",
            help=setting.sweep.table.example or setting.description,
            description=DESCRIPTION,
            estimate="dynsim.cli.sweep:estimate",
        )
    ]


def run_options(args, setting: Setting) -> dict:
    """The levels' options of the command line that the sweep passes on: a declared option
    (`dynsim.verbs.sweep_options`) when given (not its default: the setting's sweep defaults fill
    in, so a point's key does not change with the spelling), --mode, --confidence and --replicates
    when set, --method flow and --t-max when given."""
    declared = {o.dest: o for o in verbs.sweep_options(setting)}
    out = {}
    for k in setting.sweep.reduced_options + setting.sweep.full_options:
        value = getattr(args, k, None)
        if value is not None and (k not in declared or value != declared[k].default):
            out[k] = value
    # --method and --t-max where the reduced level has a flow (the method only when not gd)
    flow = {"method": getattr(args, "method", "gd"), "t_max": getattr(args, "t_max", None)}
    return {**out, **{k: v for k, v in flow.items() if v not in ("gd", None)}}


def chosen_options(args) -> dict:
    """The levels' options the sweep passes on (`run_options`), normalized by the setting's sweep
    and refused where a declared option does not apply (the mode's, --replicates outside --mode
    sampled); --resume with --force, --confidence outside (0, 1) and a --t-max that is not a finite
    number > 0 refused too."""
    setting: Setting = args.setting_record
    chosen = run_options(args, setting)
    if setting.sweep.normalize is not None:
        chosen = setting.sweep.normalize(chosen)
    declared = verbs.sweep_options(setting)
    why = verbs.refusal(declared, chosen, args.mode)
    if why is not None:
        raise ValueError(why)
    if args.resume and args.force:
        raise ValueError(
            "--resume and --force are exclusive: resume skips stored points, force recomputes them"
        )
    if getattr(args, "t_max", None) is not None:
        check_positive("--t-max", args.t_max, " (the flow's end time)")
    if not 0.0 < args.confidence < 1.0:
        raise ValueError(
            f"--confidence = {args.confidence} is invalid: must lie strictly between 0 and 1"
        )
    core_replicates = all(o.dest != "replicates" for o in declared)
    if core_replicates and chosen.get("replicates") is not None and args.mode != "sampled":
        raise ValueError(
            f"--replicates = {args.replicates} is invalid with --mode {args.mode}: it is for "
            f"--mode sampled"
        )
    return chosen


def check_points(args) -> None:
    """Build the grid's first configs in the order `dynsim.sweeps.points` builds them (the product
    of the axes, first axis slowest, at the base seed) and check each at --level with the sweep's
    options (the setting's point check): a value the config or its levels refuse is refused with
    its message."""
    cls = args.config_class
    given = {
        f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)
    }
    if len(given.get("seed", ())) > 1:
        return  # refused by the run, which names --seed
    chosen = chosen_options(args)
    spec = args.setting_record.sweep
    # a point's check, with the options as the sweep passes them (the flow's are checked by the run
    # first: dynsim.sweeps.choices.flow_options)
    check = None if {"method", "t_max"} & set(chosen) else spec.check
    point_options = {**spec.defaults, **chosen}
    start = time.monotonic()
    for values in itertools.islice(itertools.product(*given.values()), CHECKED):
        cfg = cls(**dict(zip(given, values)))
        if check is not None:
            check(cfg, point_options, args.level)
        if time.monotonic() - start > CHECK_SECONDS:
            return


def estimate(args) -> list:
    """The grid's configs checked (`check_points`), then what the sweep would need
    (`dynsim.cli.sweep_run.estimate`)."""
    check_points(args)
    return NEEDS(args)
