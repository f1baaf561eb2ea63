"""What a setting declares for the verbs the core runs once for every setting (`compare`,
`check-theorems`, `derive`, and the level options of `sweep`): its two levels (`Level`), their
options (`Option`), its claims (`Claims`) and its derivation (`Derivation`).

A setting declares only what differs; `dynsim.cli.runs` reads these records and does the rest (the
config options, validation before any work, progress, the checker, the outputs). Every field that
names code may be a "module:attr" reference (`dynsim.setting.Ref`), loaded when a run needs it, so
`--help` reads the declarations without importing a level.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, NamedTuple, Optional, Sequence

from dynsim.setting import Lazy


@dataclasses.dataclass(frozen=True)
class Option:
    """One command-line option: its flag, argparse's keywords, the verbs that take it, the --help
    group it is shown in, for a full-level option the modes that read it (a value other than the
    default given in another mode is refused, by compare and sweep; empty: every mode), and whether
    its value goes to the checker (`dynsim.checker.compare`'s keyword of the same name) rather than
    to a level."""

    flag: str
    help: str
    type: Optional[Callable[[str], Any]] = None
    default: Any = None
    choices: Optional[Sequence] = None
    metavar: Optional[str] = None
    action: Optional[str] = None
    verbs: tuple[str, ...] = ("compare",)
    group: str = "run"
    modes: tuple[str, ...] = ()
    checker: bool = False

    @property
    def dest(self) -> str:
        """The option's name in the parsed arguments (and in `opts`): --t-max -> t_max."""
        return self.flag.lstrip("-").replace("-", "_")

    def add(self, group) -> None:
        """Add the option to an argparse group."""
        keys = ("type", "default", "choices", "metavar", "action")
        kwargs = {k: getattr(self, k) for k in keys if getattr(self, k) is not None}
        group.add_argument(self.flag, help=self.help, **kwargs)


@dataclasses.dataclass(frozen=True)
class Level(Lazy):
    """One level of a setting as `compare` runs it.

    simulate(cfg, **keywords) -> Trajectory. options: the level's run options; keywords(cfg, opts)
    -> simulate's keywords from the parsed options `opts` (None: each option of the level by its
    name, and the full level's mode). modes / mode_help: the full level's modes (`--mode`, first is
    the default). flow: simulate also takes method="flow", t_max, times (`--method flow`). unread:
    mode -> {config field: why the mode does not read it} (a warning when given). validate(cfg,
    opts) raises ValueError before any work. describe(cfg, opts) -> the line logged before the run.
    post(trajectory, cfg, opts) -> the trajectory compared and saved. report(cfg, opts, reduced,
    full) -> ({key: value} added to report.json, [lines printed under the table]). joint: mode ->
    (cfg, opts, timings) -> `Joint`, for a mode whose two levels run together (each reduced run from
    a full run's start); it validates its options before any work."""

    LAZY = ("simulate", "options", "keywords", "validate", "describe", "post", "report")

    simulate: Callable
    options: tuple[Option, ...] = ()
    keywords: Optional[Callable[[Any, dict], dict]] = None
    modes: tuple[str, ...] = ()
    mode_help: str = ""
    flow: bool = False
    unread: Mapping[str, Mapping[str, str]] = dataclasses.field(default_factory=dict)
    validate: Optional[Callable[[Any, dict], None]] = None
    describe: Optional[Callable[[Any, dict], str]] = None
    post: Optional[Callable] = None
    report: Optional[Callable] = None
    joint: Mapping[str, Callable] = dataclasses.field(default_factory=dict)


class Joint(NamedTuple):
    """What a joint mode's run gives `compare`: the pair compared, its report, every trajectory
    saved, the entries placed first in report.json and the lines printed first under the table."""

    reduced: Any
    full: Any
    report: Any
    trajectories: dict
    extra: dict
    lines: list


class Plan(NamedTuple):
    """A `check-theorems` run, validated: its total work (`unit`s, for the progress bar), the config
    written to theorems.json and evaluate(log) -> [Claim | Measurement]."""

    total: int
    unit: str
    config: dict
    evaluate: Callable


@dataclasses.dataclass(frozen=True)
class Claims(Lazy):
    """A setting's `check-theorems`.

    plan(cfg, opts) -> `Plan`, validating before any work; `opts` holds its options by name, "only",
    "out", the cluster's options and "given" (the config fields given with a value other than the
    default: `dynsim.cli.options.changed`). options: its own options; defaults / why
    / exclude: config defaults that differ from the config's and why, and fields the command sets
    itself (`dynsim.cli.options.config_options`); names: the claims' names (--only, when given);
    cluster: what runs on a Dask cluster (adds --scheduler, --security, --workers; "": none);
    json_help / out_help: the --json and --out help; precheck(values) raises ValueError for the
    command line's config values before the config is built (to name an option, not a field)."""

    LAZY = ("plan", "options", "names", "precheck")

    plan: Callable[[Any, dict], Plan]
    options: tuple[Option, ...] = ()
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    why: str = ""
    exclude: Mapping[str, str] = dataclasses.field(default_factory=dict)
    names: Optional[Sequence[str]] = None
    cluster: str = ""
    json_help: str = 'print {"config": {...}, "claims": [...], "measurements": [...]} as JSON'
    out_help: str = "output directory"
    precheck: Optional[Callable[[dict], None]] = None


def claims_of(fn: Callable) -> Claims:
    """A `Claims` from a plain claims function fn(cfg, log) -> [Claim]: one run of `cfg.steps`."""

    def plan(cfg, opts) -> Plan:
        steps = getattr(cfg, "steps", 0)
        return Plan(steps, "steps", cfg.to_dict(), lambda log: fn(cfg, log=log))

    return Claims(plan=plan)


@dataclasses.dataclass(frozen=True)
class Derivation(Lazy):
    """A setting's `derive`: render(cfg, opts) -> the text printed (cfg None when `config` is
    False: the derivation reads only its own options); options: its own options besides
    --latex."""

    LAZY = ("render", "options")

    render: Callable
    options: tuple[Option, ...] = ()
    config: bool = True


def derivation_of(fn: Callable) -> Derivation:
    """A `Derivation` from a plain function fn(cfg, latex) -> str."""
    return Derivation(render=lambda cfg, opts: fn(cfg, latex=opts["latex"]))


def level(setting, name: str) -> Level:
    """The setting's `name` level ("reduced" or "full") as a `Level`, loading nothing: a simulate
    function (or reference) is a Level that declares only it (the full level's modes are then the
    setting's `modes`)."""
    value = setting.ref(name)
    if isinstance(value, Level):
        return value
    return Level(simulate=value, modes=setting.modes if name == "full" else ())


def claims(setting) -> Optional[Claims]:
    """The setting's `Claims` (a plain claims function made one), or None; loads nothing else."""
    value = setting.ref("claims")
    return value if value is None or isinstance(value, Claims) else claims_of(value)


def derivation(setting) -> Optional[Derivation]:
    """The setting's `Derivation` (a plain function made one), or None."""
    value = setting.ref("derive")
    return value if value is None or isinstance(value, Derivation) else derivation_of(value)


def modes(setting) -> tuple[str, ...]:
    """The full level's modes (the first is the default)."""
    return level(setting, "full").modes or ("exact",)


def compare_options(setting) -> list[Option]:
    """The options `compare` takes from the two levels, reduced first."""
    return [
        o
        for name in ("reduced", "full")
        for o in level(setting, name).options
        if "compare" in o.verbs
    ]


def refusal(declared, values: dict, mode: str) -> Optional[str]:
    """Why options given in a mode that does not read them are refused (None: none is): each
    declared option with `modes` whose value in `values` differs from its default (a value equal to
    the default cannot be told apart from one left out, and changes nothing)."""
    given = [
        o for o in declared if o.modes and mode not in o.modes and values.get(o.dest) != o.default
    ]
    if not given:
        return None
    modes = " or ".join(f"--mode {m}" for m in given[0].modes)
    verb = "is" if len(given) == 1 else "are"
    return f"{' and '.join(o.flag for o in given)} {verb} for {modes}, not --mode {mode}"


def mode_refusal(setting, args) -> Optional[str]:
    """Why `compare`'s command line is refused in its --mode (None: it is not): in a joint mode (its
    own plan) the flow's --method / --t-max, else each declared option the mode does not read
    (`refusal`). Checked before the estimate and the levels' checks: the mode's reason first."""
    mode, red, full = args.mode, level(setting, "reduced"), level(setting, "full")
    if mode in full.joint:
        if red.flow and (args.method != "gd" or args.t_max is not None):
            others = " or ".join(m for m in modes(setting) if m not in full.joint)
            return f"--method {args.method} / --t-max are for --mode {others}, not --mode {mode}"
        return None
    declared = compare_options(setting)
    return refusal(declared, {o.dest: getattr(args, o.dest) for o in declared}, mode)


def sweep_options(setting) -> list[Option]:
    """The options `sweep` takes from the two levels (declared once, with "sweep" in their verbs),
    reduced first."""
    return [
        o
        for name in ("reduced", "full")
        for o in level(setting, name).options
        if "sweep" in o.verbs
    ]
