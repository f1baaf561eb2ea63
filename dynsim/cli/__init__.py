"""The `dynsim` command line, built from the known settings (`dynsim.setting`): `compare NAME`,
`sweep NAME`, `check-theorems NAME`, `derive NAME` for every setting, and the extra commands
settings declare (`figure ...`, `transfer ...`).

Every command takes `--config FILE.toml` and `--print-config` (`configfile`); `dynsim rerun
REPORT.json` runs a recorded command again (`rerun`).

Exit codes: 0 the levels agree (or every claim holds, or the figure was written), 1 they disagree
(or a claim fails), 2 invalid input (or a run that does not fit, an --out that cannot take the
outputs, a failed write), 130 interrupted by Ctrl-C (SIGINT), 143 by SIGTERM (`dynsim.interrupt`).

Building the parser imports no level and not JAX: `parse` builds in full only the command its
arguments name (the other verbs and names with their one-line help), the commands' work is a `Ref`
loaded when it runs, and so are the modules only a run needs (`outdir`, `output`, `progress`).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Optional

from dynsim import interrupt, resources, verbs
from dynsim import setting as registry
from dynsim import __version__
from dynsim.setting import Ref

from . import configfile, generic, options, sweep
from .options import (
    EXIT_AGREE,
    EXIT_DISAGREE,
    EXIT_INTERRUPTED,
    EXIT_INVALID,
    Parser,
    UsageError,
    without,
)

__all__ = [
    "main",
    "main_entry",
    "build_parser",
    "UsageError",
    "EXIT_AGREE",
    "EXIT_DISAGREE",
    "EXIT_INVALID",
    "EXIT_INTERRUPTED",
]

VERB_HELP = {
    "compare": (
        "run both levels and compare them",
        "Run the reduced dynamics and full-matrix GD on one problem, compare them observable "
        "by observable, print a table and write report.json, trajectories.npz and compare.png. "
        "Exit 0 on agreement, 1 on disagreement, 2 on invalid input.",
    ),
    "figure": ("reproduce a figure of a paper (PNG + data as npz)", None),
    "check-theorems": ("evaluate each lemma and theorem on runs", None),
    "sweep": ("run a grid of configurations: table, phase diagrams, resumable", sweep.DESCRIPTION),
    "derive": ("print the symbolic reduced loss and its gradients", None),
}
# verbs in `dynsim --help`
ORDER = (
    "compare",
    "figure",
    "transfer",
    "experiment",
    "check-theorems",
    "sweep",
    "derive",
    "rerun",
    "export",
)
RERUN_HELP = (
    "run a recorded command again (bit for bit)",
    "Run the command recorded in a report (report.json of compare, theorems.json of "
    "check-theorems) again, with the same options, into --out, and compare the new "
    "trajectories.npz with the original byte for byte. Exit: the command's own code, or 1 when "
    "trajectories.npz differs; 2 on invalid input.",
)
EXPORT_HELP = (
    "write an output folder's data as tidy CSV (or Parquet) tables",
    "Convert a dynsim output folder into tidy tables, one row per value with its labels "
    "(docs/data.md): trajectories.npz (compare) -> tidy-trajectories (run, observable, step, "
    "the observable's named axes, value), report.json -> tidy-report (one row per compared "
    "observable and residual), a sweep's table.csv -> tidy-sweep (one row per point; a censored "
    "event is +inf, its bound in <level>_horizon), theorems.json -> tidy-theorems (one row per "
    "claim and measurement). Written next to the folder's files, or into --to. Exit 0 when "
    "written; 2 on invalid input (no such folder, not a dynsim output, a target that cannot be "
    "written, an export file that exists without --force, --parquet without pyarrow).",
)
# what only a run needs, loaded then: --help and --version import none of it
DEFAULT_OUT, CHECK_OUT = (
    Ref("dynsim.cli.options:default_out"),
    Ref("dynsim.cli.outdir:validate_out_dir"),
)
# the variable XLA (in jaxlib) reads for its C++ log lines' threshold: 3 prints fatal errors only
XLA_LOG_LEVEL, XLA_QUIET = "TF_CPP_MIN_LOG_LEVEL", "3"
WRITE_ERROR, INTERRUPTED = Ref("dynsim.cli.outdir:write_error"), Ref("dynsim.progress:interrupted")
MISSING_FOLDERS, REMOVE_MADE = (
    Ref("dynsim.cli.outdir:missing_folders"),
    Ref("dynsim.cli.outdir:remove_made"),
)


def _commands(sweeps: bool = True) -> list[tuple]:
    """(setting, command) for every command of every known setting: its own, then the generated
    ones. A sweep's command reads the setting's SweepSpec (its help line): without `sweeps`, left
    out."""
    out = []
    for s in registry.settings().values():
        out += [(s, c) for c in s.commands]
        out += [(s, c) for c in generic.commands(s) + (sweep.commands(s) if sweeps else [])]
    return out


def _named(argv: list[str]) -> tuple[Optional[str], Optional[str]]:
    """The verb and the name `argv` gives (None where it gives none): the first two words not
    options."""
    words = [a for a in argv if not a.startswith("-")][:2]
    return tuple(words + [None] * (2 - len(words)))


def build_parser(argv: Optional[list[str]] = None) -> Parser:
    """The whole command line: one subcommand per verb, one sub-subcommand per setting (or figure)
    under it. With `argv`, only what parsing it reads is built in full: every verb, the names under
    its verb (with their help lines) and the options of the command it names."""
    verb, target = _named(argv) if argv is not None else (None, None)
    parser = Parser(
        prog="dynsim",
        allow_abbrev=False,
        description="Run the reduced and the full-matrix training dynamics of a one-layer "
        "transformer and compare them.",
    )
    parser.add_argument("--version", action="version", version=f"dynsim {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    commands = _commands(sweeps=argv is None or verb == "sweep")
    verbs = {c.verb for _, c in commands}
    verbs |= {"sweep"} if any(s.declares("sweep") for s in registry.settings().values()) else set()
    for name in sorted(verbs, key=lambda v: (ORDER.index(v) if v in ORDER else len(ORDER), v)):
        mine = [(s, c) for s, c in commands if c.verb == name]
        short, long = VERB_HELP.get(name, (None, None))
        short = short or next((c.verb_help for _, c in mine if c.verb_help), None)
        v = sub.add_parser(name, allow_abbrev=False, help=short, description=long)
        if argv is not None and name != verb:
            continue  # never parsed: its help line is all `dynsim --help` shows
        names = v.add_subparsers(dest="target", required=True, parser_class=Parser)
        for s, c in mine:
            kw = {"help": c.help} if c.help else {}
            if argv is not None and c.name != target:
                # never parsed: its help line is all `dynsim VERB --help` shows
                names.add_parser(c.name, **kw)
                continue
            p = names.add_parser(
                c.name, allow_abbrev=False, description=c.description or None, **kw
            )
            c.add_arguments(p, s)
            configfile.add_options(p)
            resources.add_options(p)
            p.set_defaults(
                run=c.ref("run"), setting_record=s, command_parser=p, estimate=c.ref("estimate")
            )
    add_rerun(sub)
    add_export(sub)
    return parser


def add_rerun(sub) -> None:
    """The `rerun` verb (no setting: the report names it); its work is `dynsim.cli.rerun.run`."""
    p = sub.add_parser("rerun", allow_abbrev=False, help=RERUN_HELP[0], description=RERUN_HELP[1])
    p.add_argument(
        "report", metavar="REPORT.json", help="report.json (or theorems.json) a command wrote"
    )
    p.add_argument(
        "--out",
        default=None,
        metavar="DIR",
        help="output folder of the rerun (default: rerun/ beside the report); never the "
        "report's own",
    )
    p.set_defaults(run=Ref("dynsim.cli.rerun:run"), target=None, entry=main, command_parser=p)


def add_export(sub) -> None:
    """The `export` verb (no setting: the folder's files say what it holds); its work is
    `dynsim.cli.export.run`."""
    p = sub.add_parser(
        "export", allow_abbrev=False, help=EXPORT_HELP[0], description=EXPORT_HELP[1]
    )
    p.add_argument("folder", metavar="FOLDER", help="an output folder a dynsim command wrote")
    p.add_argument(
        "--to",
        default=None,
        metavar="DIR",
        help="folder for the tidy files (default: FOLDER itself, next to the files read)",
    )
    p.add_argument(
        "--csv", action="store_true", help="write CSV (the default when no format is given)"
    )
    p.add_argument(
        "--parquet", action="store_true", help="write Parquet as well or instead (needs pyarrow)"
    )
    p.add_argument("--force", action="store_true", help="overwrite export files that exist")
    p.set_defaults(run=Ref("dynsim.cli.export:run"), target=None, command_parser=p)


def parse(argv: list[str]):
    """The options of `argv`, with a --config file's options placed before the typed ones (which
    override them). Sets args.argv (as typed) and args.effective_argv (the file's options spelled
    out: what `dynsim rerun` runs)."""
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    effective = list(argv)
    if getattr(args, "config", None) is not None:
        at = argv.index(args.command)
        at = argv.index(args.target, at + 1) + 1
        typed = without(argv[at:], "--config")
        effective = argv[:at] + configfile.tokens(args.command_parser, args.config) + typed
        args = parser.parse_args(effective)
    args.argv, args.effective_argv = argv, effective
    return args


def main(argv=None) -> int:
    """Parse `argv` (default: sys.argv[1:]), run the command, return its exit code. A SIGINT or
    SIGTERM at any moment, parsing included, makes it 130 or 143 (`dynsim.interrupt`)."""
    with interrupt.watch():
        code = _command(argv)
        if interrupt.received() is not None and code != interrupt.exit_code():
            print(interrupt.MESSAGE, file=sys.stderr)  # a signal after the work's last safe point
            code = interrupt.exit_code()
    return code


def _tolerant_streams() -> None:
    """Characters the output's encoding lacks (an ASCII-only locale: §, eta, the paper's symbols)
    are written escaped (\\xa7), instead of failing the command after its work is done."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) == "strict":
            reconfigure(errors="backslashreplace")


def _check_platforms() -> None:
    """A JAX_PLATFORMS naming no backend JAX can start here (a typo, or cuda on a machine without a
    GPU) is refused in one line before any work, instead of a traceback from inside the first
    computation; without it set, JAX picks a backend itself and nothing is imported here."""
    named = os.environ.get("JAX_PLATFORMS", "")
    if not named.strip():
        return
    import jax

    try:
        jax.devices()
    except Exception as exc:  # RuntimeError, or an AssertionError for a known but absent one
        why = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(
            f"JAX_PLATFORMS={named!r} names no backend JAX can start here ({why}); unset it, "
            "or set JAX_PLATFORMS=cpu"
        ) from None


def _command(argv) -> int:
    """`main`'s work: parse, check, run."""
    os.environ.setdefault("MPLBACKEND", "Agg")  # figures go to files: no window, no display needed
    # XLA's C++ log lines ("E... slow_operation_alarm.cc] Constant folding ...") kept off the
    # terminal, before JAX is imported: a value the user set is kept (docs/cli.md §6b)
    os.environ.setdefault(XLA_LOG_LEVEL, XLA_QUIET)
    _tolerant_streams()
    resources.say_long([])  # no estimate line left by an earlier command of this process
    # the output folders the command would create: removed again where it is refused or fails
    # and leaves them empty, so the file system is as the command found it
    made: list[str] = []
    remove, done = None, False
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        args = parse(argv)
        if getattr(args, "print_config", False):
            print(configfile.render(args, args.command_parser))
            return EXIT_AGREE
        if isinstance(getattr(args, "out", None), str):
            args.out = options.out_path(args.out)
        # the config's own checks are pure Python: a bad value is refused before the heavy imports
        # (after the claims' precheck, which names options the config would name as fields)
        if args.command == "check-theorems":
            precheck = verbs.claims(args.setting_record).precheck
            if precheck is not None:
                precheck(options.values(args))
        if hasattr(args, "config_defaults"):
            options.config(args)
        if args.command == "compare" and hasattr(args, "mode"):  # before the levels' checks
            why = verbs.mode_refusal(args.setting_record, args)
            if why is not None:
                raise ValueError(why)
        if getattr(args, "out", "") is None and args.target is not None:
            args.out = DEFAULT_OUT(args)
        # refuse what does not fit before any work
        if getattr(args, "estimate", None) is not None:
            needs = args.estimate(args)
            resources.refuse_oversized(needs, args.max_memory, args.max_time)
            resources.say_long(needs)
        if getattr(args, "out", None) is not None:
            CHECK_OUT(args)  # a folder, writable, with room for the outputs: before any work
        interrupt.raise_if_interrupted()  # a signal while parsing or importing: no work starts
        _check_platforms()
        made = MISSING_FOLDERS(args)
        # loaded now: after a signal, loading refuses (`dynsim.setting.load`), and the clean-up
        # below runs after signals too
        remove = REMOVE_MADE.load() if made else None
        code = args.run(args)
        done = code != EXIT_INVALID
        return code
    except (UsageError, ValueError, registry.Shadowed) as exc:
        print(
            f"dynsim: error: {exc}" if not str(exc).startswith("dynsim: error") else f"{exc}",
            file=sys.stderr,
        )
        return EXIT_INVALID
    except KeyboardInterrupt:
        print(interrupt.MESSAGE, file=sys.stderr)
        return interrupt.exit_code()
    except BrokenPipeError:  # the reader of stdout went away (e.g. `| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_AGREE
    # a write that failed (a full disk, a read-only folder): left no part (dynsim.tempfiles)
    except OSError as exc:
        if WRITE_ERROR(exc) is None:
            raise
        print(f"dynsim: error: {WRITE_ERROR(exc)}", file=sys.stderr)
        return EXIT_INVALID
    # Ctrl-C inside a compiled run's progress callback arrives wrapped by JAX
    except Exception as exc:
        if not INTERRUPTED(exc):
            raise
        print(interrupt.MESSAGE, file=sys.stderr)
        return interrupt.exit_code()
    finally:
        if made and remove is not None and not done:
            remove(made)


def main_entry() -> None:
    """Console-script entry point: exit with `main`'s code. After a Ctrl-C / SIGTERM it leaves
    through `os._exit`: XLA's threads could still be running during the interpreter's teardown,
    which crashed 5 of 15 interrupted sweeps (exit 139 after printing "interrupted"). Once `main`
    has returned the process only exits: a signal during the interpreter's teardown is ignored (it
    would print a KeyboardInterrupt traceback; the outputs are complete)."""
    code = main()
    for sig in interrupt.SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    if interrupt.received() is not None:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(code)
    sys.exit(code)
