"""A setting: one paper's problem as dynsim runs it, declared as a record and found as a plugin.

A `Setting` names its config dataclass, the reduced and full `simulate` entry points, what the
checker compares and judges (`Checks`), its claims (`check-theorems`), its sweep description
(`SweepSpec`) and any extra commands (`Command`). dynsim's face (the CLI, sweeps, the checker) reads
these records and names no setting itself.

Settings are discovered through the Python entry-point group ``dynsim.settings`` (as pytest and Dask
find plugins): a package declares, in its pyproject.toml,

    [project.entry-points."dynsim.settings"]
    toy = "mypackage.setting:SETTING"

and gets `dynsim compare toy`, `dynsim sweep toy`, ... with no edit to dynsim. JSL and MIM register
the same way. `register(setting)` does in-process what an entry point does (tests, notebooks).

Finding the settings must stay cheap (`dynsim --help` reads every setting): a record's heavy parts
may be given as "module:attr" references (`Ref`), imported on first use. Any field may hold a `Ref`,
and those in the record's `LAZY` (fields that are never plain strings) a "module:attr" string as
well. Reading such a field returns the loaded object; `ref(name)` returns it unloaded (a `Ref` is
callable: it loads on its first call) and `declares(name)` says whether it is set, loading nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import importlib.metadata
import importlib.util
import os
import sys
import warnings
from typing import Any, Callable, Mapping, Optional, Sequence

from dynsim import interrupt
from dynsim.validation import did_you_mean

GROUP = "dynsim.settings"  # the entry-point group
# the entry points pyproject.toml declares (tests/test_lazy_settings.py holds them equal): what a
# source tree that is not installed finds
BUILTIN = {
    "jsl": "dynsim.jsl.setting:SETTING",
    "mim": "dynsim.mim.setting:SETTING",
    "icl": "dynsim.icl.setting:SETTING",
}


def load(target: str) -> Any:
    """The object a "module:attr" reference names ("module" alone: the module), importing the
    module; a safe point for Ctrl-C after the import (`interrupt.raise_if_interrupted`: importing a
    level's modules takes seconds), except while an exception is being handled (the CLI's handlers
    load what they need: the exception they handle must not be replaced)."""
    module, _, attr = target.partition(":")
    value = importlib.import_module(module)
    if sys.exc_info()[1] is None:
        interrupt.raise_if_interrupted()
    for part in attr.split(".") if attr else ():
        value = getattr(value, part)
    return value


class Ref:
    """A "module:attr" reference, loaded on use: `load()`, or a call, which calls the loaded object.
    Each use reads the attribute again (the module is imported once), so a function replaced in its
    module (a test's monkeypatch, a user's wrapper) is the one called."""

    __slots__ = ("target",)

    def __init__(self, target: str):
        module, colon, attr = target.partition(":")
        if not colon or not all(p.isidentifier() for p in [*module.split("."), *attr.split(".")]):
            raise ValueError(
                f'reference = {target!r} is invalid: must read "package.module:attribute"'
            )
        self.target = target

    def load(self) -> Any:
        return load(self.target)

    def __call__(self, *args, **kwargs):
        return self.load()(*args, **kwargs)

    def __eq__(self, other):
        return isinstance(other, Ref) and other.target == self.target

    def __hash__(self):
        return hash(self.target)

    def __repr__(self):
        return f"Ref({self.target!r})"


class Lazy:
    """A record whose fields may hold `Ref`s, and whose `LAZY` fields "module:attr" strings too
    (made `Ref`s): reading such a field loads it (once)."""

    LAZY: tuple[str, ...] = ()

    def __post_init__(self):
        for name in self.LAZY:
            value = object.__getattribute__(self, name)
            if isinstance(value, str):
                object.__setattr__(self, name, Ref(value))

    def __getattribute__(self, name: str):
        value = object.__getattribute__(self, name)
        if type(value) is Ref and name in type(self).__dataclass_fields__:
            try:
                return value.load()
            except Exception as exc:
                raise ImportError(
                    f"{type(self).__name__}.{name} = {value.target!r} failed to load: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
        return value

    def ref(self, name: str) -> Any:
        """Field `name` as declared, loading nothing: a `Ref` for a reference (callable: it loads on
        its first call)."""
        return object.__getattribute__(self, name)

    def declares(self, name: str) -> bool:
        """Whether field `name` is set (not None), loading nothing."""
        return self.ref(name) is not None


@dataclasses.dataclass(frozen=True)
class Command(Lazy):
    """A CLI subcommand: `dynsim VERB NAME [options]`, e.g. `figure jsl-fig4` or `compare toy`.

    add_arguments(parser, setting) adds the options (`setting`: the Setting that declares the
    command); run(args) does the work and returns the exit code. verb_help: the verb's one-line help
    in `dynsim --help`, taken from the first command that gives one. estimate(args) ->
    [dynsim.resources.Need]: what the command would hold and do, checked before it runs (None:
    nothing to estimate)."""

    LAZY = ("add_arguments", "run", "estimate")

    verb: str
    name: str
    add_arguments: Callable[[argparse.ArgumentParser, Any], None]
    run: Callable[[argparse.Namespace], int]
    help: str = ""
    description: str = ""
    verb_help: str = ""
    estimate: Optional[Callable[[argparse.Namespace], list]] = None


@dataclasses.dataclass(frozen=True)
class Checks(Lazy):
    """What `dynsim.compare` judges for a setting.

    compared: observables held to a tolerance, in report order. residuals: full-level observables
    the reduction says are zero (name -> what it tests), judged by rounding in deterministic runs
    and reported otherwise; residual_scale: observables whose largest magnitude scales the
    residuals' rounding tolerance; exact_notes: words added to a residual's reason in a
    deterministic run. Hooks (None: nothing): skip(a, b) -> names not judged for this pair;
    allowance(a, b, common_steps) -> {name: per-step extra tolerance} (e.g. a truncated sum's
    bound); reported(a, b, approximation) -> {name: checker.Residual} quantities reported beside the
    verdict."""

    LAZY = ("skip", "allowance", "reported")

    compared: tuple[str, ...]
    residuals: Mapping[str, str] = dataclasses.field(default_factory=dict)
    residual_scale: tuple[str, ...] = ()
    exact_notes: Mapping[str, str] = dataclasses.field(default_factory=dict)
    skip: Optional[Callable[[Any, Any], set]] = None
    allowance: Optional[Callable[[Any, Any, Any], dict]] = None
    reported: Optional[Callable[[Any, Any, Optional[str]], dict]] = None


# the columns every sweep's table has: a point's verdict (`dynsim.sweeps.common.verdict`) and a
# level's stability (`dynsim.sweeps.common.stability`)
VERDICT = ("verdict", "max_error", "worst_observable", "check_kind")
STABILITY = ("loss_sign_changes", "non_monotone", "unstable")


def time_name(event: str) -> str:
    """The column of an event's time t = eta * steps, twin of the column in recorded steps: the
    papers' T counts steps, t is the flow's time (T1_attention -> t1_attention)."""
    return event[:1].lower() + event[1:]


@dataclasses.dataclass(frozen=True)
class SweepTable:
    """What a sweep prints and draws: heatmaps, the summaries drawn by default; columns, name
    endings of the summaries printed in the terminal table (table.csv has all); extra_columns,
    further columns printed when present; example, the help line of `dynsim sweep NAME`;
    level_summaries / point_summaries, every name the summary can give, per level (prefixed
    "reduced_" / "full_" in the row) and per point (a --heatmap outside them is refused before any
    work; empty: checked after the points run); not_offered: a prefixed summary
    ("reduced_patch_association") -> why that level does not offer it as a heatmap (a --heatmap of
    it is refused with that reason before any point runs)."""

    heatmaps: tuple[str, ...] = ("final_loss",)
    columns: tuple[str, ...] = ("final_loss",)
    extra_columns: tuple[str, ...] = ()
    example: str = ""
    level_summaries: tuple[str, ...] = ()
    point_summaries: tuple[str, ...] = ()
    not_offered: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class SweepSpec(Lazy):
    """How `dynsim.sweep` computes a setting's points (what it prints: `table`, a `SweepTable`).

    reduced / full: (cfgs of one group, options, batch_size) -> [Trajectory]; group(cfg, options,
    level) -> a hashable key (points with equal keys share their compiled programs); check(cfg,
    options, level) raises ValueError for a point its levels cannot run, before any work;
    summary(cfg, reduced, full, report) -> dict (one table row); reduced_options / full_options: the
    run options each level takes (a point's key records them), with `defaults`; normalize(options)
    -> options, after parsing (the command line's level options are the levels' declared
    `dynsim.verbs.Option`s with "sweep" in their verbs, and --mode from the full level's modes);
    traced: the config fields a group's compiled program takes as traced numbers (the others are
    shapes: points that differ in them fall in different groups); seeded(cfg, options, level) ->
    whether the seed changes the point's numbers at `level` beyond rounding (None: always); a point
    it does not is run once for all its seeds."""

    LAZY = ("reduced", "full", "group", "check", "summary", "normalize", "seeded")

    reduced: Callable
    full: Callable
    group: Callable
    check: Callable
    summary: Callable
    reduced_options: tuple[str, ...] = ()
    full_options: tuple[str, ...] = ("mode", "replicates", "confidence")
    defaults: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    normalize: Optional[Callable[[dict], dict]] = None
    traced: tuple[str, ...] = ()
    seeded: Optional[Callable] = None
    table: SweepTable = SweepTable()


@dataclasses.dataclass(frozen=True)
class Frames(Lazy):
    """How a setting's trajectories become labelled arrays and tables (`Trajectory.to_xarray`,
    `to_dataframe`; docs/data.md).

    dims: observable name -> the names of its axes after "step" (an observable left out, or one
    whose rank differs, keeps <name>_dim1, ...; `<name>_se` takes the dims of `<name>`,
    `<name>_seeds` adds "seed"). coords(trajectory) -> {coordinate: (axis names, values)}:
    coordinates over those axes (a coordinate whose axes the trajectory lacks is left out). present:
    names of boolean coordinates among them that say which entries exist; an entry where one is
    False is padding (NaN by construction) and `to_dataframe` drops its row."""

    LAZY = ("coords",)

    dims: Mapping[str, tuple[str, ...]] = dataclasses.field(default_factory=dict)
    coords: Optional[Callable[[Any], dict]] = None
    present: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class Setting(Lazy):
    """One setting: its name, config dataclass, two levels and everything the face needs to run and
    judge them. dynsim runs `compare`, `check-theorems`, `derive` and `sweep` for every setting from
    this record (`dynsim.cli.runs`); `commands` adds the setting's own (figures, transfer).

    reduced / full: each level as a `dynsim.verbs.Level` (its simulate, options, modes,
    post-processing, report lines) or as a bare simulate(cfg, **options) returning Trajectories
    whose meta["setting"] is the config class's name. claims: a `dynsim.verbs.Claims` or a function
    (cfg, log) -> [dynsim.claims.Claim], backing `check-theorems NAME`; derive: a
    `dynsim.verbs.Derivation` or a function (cfg, latex) -> str, backing `derive NAME`. modes: the
    full level's modes when it is a bare function. plot(cfg, opts, reduced, full, path, report)
    draws compare.png, report being their `dynsim.checker.Report` (None: every compared observable
    against steps and their difference). descriptions / estimates: per verb,
    the --help description and estimate(args) -> [dynsim.resources.Need] (checked before any work;
    default for compare and check-theorems: `resources` for both levels). field_help /
    field_parsers / field_choices: per config field, the --help text, an argparse type for fields
    with their own syntax, and the allowed values. resources(values, level, options) ->
    [dynsim.resources.Need]: what one run at `level` ("reduced" or "full") of the config field
    `values` (a dict, not yet validated) with the run `options` (mode, replicates, ...) would hold
    in memory and do (None: no estimate). frames: the names of the observables' axes and their
    coordinates (`Frames`; None: <name>_dim1, ...). mutations: the setting's planted defects and
    the runs that should catch them (`dynsim.mutation.Catalogue`, usually a "module:attr"
    reference: `python -m dynsim.detection NAME`, docs/claims.md "Detection matrix")."""

    LAZY = (
        "config",
        "reduced",
        "full",
        "checks",
        "claims",
        "derive",
        "sweep",
        "field_help",
        "field_parsers",
        "field_choices",
        "resources",
        "plot",
        "frames",
        "mutations",
    )

    name: str
    description: str
    config: type
    reduced: Any
    full: Any
    checks: Checks
    modes: tuple[str, ...] = ("exact",)
    claims: Optional[Any] = None
    derive: Optional[Any] = None
    sweep: Optional[SweepSpec] = None
    commands: tuple[Command, ...] = ()
    field_help: Mapping[str, str] = dataclasses.field(default_factory=dict)
    field_parsers: Mapping[str, Callable[[str], Any]] = dataclasses.field(default_factory=dict)
    field_choices: Mapping[str, Sequence] = dataclasses.field(default_factory=dict)
    resources: Optional[Callable[[dict, str, dict], list]] = None
    plot: Optional[Callable] = None
    descriptions: Mapping[str, str] = dataclasses.field(default_factory=dict)
    estimates: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    frames: Optional[Frames] = None
    mutations: Optional[Any] = None

    def command(self, verb: str) -> Optional[Command]:
        """The setting's own command for `verb` under its name (e.g. its `compare`), or None."""
        return next((c for c in self.commands if c.verb == verb and c.name == self.name), None)


_registered: dict[str, Setting] = {}
_discovered: Optional[dict[str, Setting]] = None


def register(setting: Setting) -> Setting:
    """Make `setting` known in this process (what an entry point in the group `dynsim.settings`
    does); returns it."""
    if not isinstance(setting, Setting):
        raise TypeError(f"register takes a dynsim.setting.Setting, got {type(setting).__name__}")
    if not setting.name or not setting.name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(
            f"Setting.name = {setting.name!r} is invalid: letters, digits, '-' and '_' only"
        )
    _registered[setting.name] = setting
    return setting


def _load(name: str, target: str) -> Setting:
    value = importlib.metadata.EntryPoint(name, target, GROUP).load()
    if not isinstance(value, Setting):
        raise TypeError(
            f"entry point {name} = {target!r} of group {GROUP!r} is a {type(value).__name__}, "
            f"not a "
            "dynsim.setting.Setting"
        )
    return value


# dynsim's own top-level packages beside `dynsim`: the levels
LEVEL_PACKAGES = ("reduced", "full")


class Shadowed(ImportError):
    """A module of a level package's name (a user's full.py on the path) hides dynsim's own."""


def check_own_packages() -> None:
    """Refuse, naming the file, a `reduced` or `full` that is not the one installed beside dynsim
    (a full.py or reduced/ in the working folder or on PYTHONPATH comes first on sys.path): every
    setting would otherwise fail to load, each with an unrelated error."""
    home = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))  # links resolved
    for name in LEVEL_PACKAGES:
        module = sys.modules.get(name)
        try:
            spec = module.__spec__ if module is not None else importlib.util.find_spec(name)
        except (ImportError, ValueError):
            spec = None
        where = getattr(spec, "origin", None) or str(
            getattr(spec, "submodule_search_locations", "")
        )
        expected = os.path.join(home, name, "__init__.py")
        if spec is None or os.path.realpath(str(where)) != expected:
            raise Shadowed(
                f"the module {name!r} is imported from {where or 'nowhere'}, not from dynsim's own "
                f"package {os.path.dirname(expected)}: a {name}.py or {name}/ in the working "
                "folder or on PYTHONPATH hides it; rename it or run from another folder"
            )


def _discover() -> dict[str, Setting]:
    """The settings of the entry-point group, loaded once; from a source tree that is not installed,
    the built-in ones (the entry points pyproject.toml declares). A shadowed level package is
    refused first (`check_own_packages`)."""
    global _discovered
    if _discovered is None:
        check_own_packages()
        points = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=GROUP)}
        try:
            importlib.metadata.distribution("dynsim")
        except importlib.metadata.PackageNotFoundError:
            points = {**BUILTIN, **points}
        _discovered = {}
        for name, target in sorted(points.items()):
            try:
                _discovered[name] = _load(name, target)
            # a broken plugin must not take the other settings (or the CLI) down with it
            except Exception as exc:
                warnings.warn(
                    f"dynsim: the setting {name!r} ({target}) of the entry-point group "
                    f"{GROUP!r} failed to load and is skipped: {type(exc).__name__}: {exc}",
                    RuntimeWarning,
                    stacklevel=2,
                )
    return _discovered


def settings() -> dict[str, Setting]:
    """Every known setting by name: the entry points' (JSL, MIM and any installed plugin), then
    `register`'s."""
    found = _discover()
    order = [n for n in BUILTIN if n in found or n in _registered]
    order += sorted((set(found) | set(_registered)) - set(order))
    return {n: _registered.get(n, found.get(n)) for n in order}


def get(name: str) -> Setting:
    """The setting called `name`; a ValueError names the known ones."""
    known = settings()
    if name not in known:
        raise ValueError(
            f"setting = {name!r} is invalid: must be one of {', '.join(known)}"
            + did_you_mean(known, name)
        )
    return known[name]


def for_config(config_name: str) -> Optional[Setting]:
    """The setting whose config class is called `config_name` (a Trajectory's meta["setting"]), or
    None."""
    return next((s for s in settings().values() if s.config.__name__ == config_name), None)
