"""A probe table generated from the parser: every value-taking option of every command gets the bad
values of its kind (a number: NaN, inf, huge, empty, not a number; a choice: not one; a path: empty,
a device, a FIFO, a folder; JSON: nested 1000 deep), and each must be refused as bad input is: exit
2, one line "dynsim: error: ..." naming the option, no traceback, nothing written, within seconds.
A new option is probed the day it is added (its kind read from its argparse type, choices and
metavar); an option whose kind is not known here fails `test_every_option_has_probes`."""

import argparse
import os
import re
import signal
import time

import pytest

from dynsim import cli
from dynsim import setting as registry

from .test_bad_inputs import commands

# the options that take no value or answer without running (--config is probed as a path)
SKIPPED = {"--help", "--print-config", "--version"}
DEEP = "[" * 1000 + "]" * 1000  # past dynsim.inputs.MAX_DEPTH
# seconds a refusal may take in-process with JAX started; a refusal reads only the command line
# and the config (the slowest ones checked in tests/test_bad_inputs.py take about a second)
SECONDS = 10

# bad values by kind; "{fifo}", "{folder}" and "{file}" are made in the test's tmp_path
NUMBER = ["nan", "inf", "-inf", "1e400", "", "abc"]
INTEGER = ["nan", "inf", "", "abc", "1.5", "99999999999999999999999", "-1"]
FAMILIES = {
    "float": NUMBER,
    "integer": INTEGER,
    "choice": ["not-a-choice", ""],
    "size": ["nan", "inf", "-inf", "", "abc"],
    "json": [DEEP, "", "abc"],
    "z": [DEEP, "", "uniform:nan:1", "nan:1"],
    "file": ["", "/dev/zero", "{fifo}", "{folder}"],
    "folder": ["", "/dev/zero", "{fifo}", "{file}"],
    "claims": ["", "not-a-claim"],
    "url": ["", "abc"],
    "pairs": ["", "abc", "N=nan"],
    "kappas": ["", "abc", "nan,nan"],
    "names": ["", "not-a-choice"],
}

# (command, option, value) valid on purpose, each with its reason; every other probe is refused
ALLOWED: dict = {}

# (command, option, value) refused wrongly today, each with the defect: strict xfails, which fail
# once the defect is fixed (then delete the entry)
DEFECTS: dict = {}  # none known (the estimate line, export --to, --replicates, ... fixed)


def kind(action: argparse.Action) -> str | None:
    """The probe family of `action`, from its argparse type, choices and metavar (None: unknown)."""
    typ = getattr(action.type, "__name__", None) or ""
    if action.choices is not None:
        return "choice"
    if typ in ("integer", "int", "int_list", "list of integer"):
        return "integer"
    if typ in ("float", "list of float", "eps_option"):
        return "float"
    if typ in ("memory_size", "duration"):
        return "size"
    if typ == "list of str":  # a sweep's axis of a choice field, or a list of names
        return "names"
    if typ in ("json_option", "z_option"):
        return "json" if typ == "json_option" else "z"
    by_metavar = {
        "FILE": "file",
        "FILE.toml": "file",
        "REPORT.json": "file",
        "FOLDER": "file",
        "DIR": "folder",
        "CLAIM[,CLAIM...]": "claims",
        "tls://HOST:PORT": "url",
        "KEY=VALUE,...": "pairs",
        "KC,KS": "kappas",
    }
    return by_metavar.get(action.metavar) if action.type is None else None


def subparser(argv: list[str]) -> argparse.ArgumentParser:
    """The parser of command `argv` (verb and target)."""
    p = cli.build_parser(argv)
    for word in argv:
        sub = next(a for a in p._actions if isinstance(a, argparse._SubParsersAction))
        p = sub.choices[word]
    return p


def value_options(argv: list[str]) -> list[argparse.Action]:
    """Every action of command `argv` that takes a value."""
    return [
        a for a in subparser(argv)._actions if a.nargs != 0 and not SKIPPED & set(a.option_strings)
    ]


def probed_commands() -> list[list[str]]:
    """Every command of the built-in settings (and rerun, export) as its argv."""
    tests_own = set(registry.settings()) - set(registry.BUILTIN)
    found = commands(cli.build_parser())
    return [[v] + ([t] if t else []) for v, t in sorted(found, key=str) if t not in tests_own]


def label(action: argparse.Action) -> str:
    return action.option_strings[0] if action.option_strings else action.metavar


def table() -> list:
    """(command argv, option label, value) of every probe, as pytest params (xfail where marked)."""
    out = []
    for argv in probed_commands():
        for action in value_options(argv):
            for value in FAMILIES.get(kind(action), []):
                key = (" ".join(argv), label(action), value)
                if key in ALLOWED:
                    continue
                shown = value if len(value) < 30 else value[:10] + "..."
                marks = (
                    [pytest.mark.xfail(strict=True, reason=DEFECTS[key])] if key in DEFECTS else []
                )
                ident = f"{key[0]} {key[1]} {shown}"
                out.append(pytest.param(argv, label(action), value, id=ident, marks=marks))
    return out


def test_every_option_has_probes():
    """An option whose kind this table does not know has no probe: give it a family."""
    unknown = [
        (" ".join(argv), label(a), getattr(a.type, "__name__", a.type), a.metavar)
        for argv in probed_commands()
        for a in value_options(argv)
        if kind(a) is None
    ]
    assert not unknown, f"options without probes (add their kind to FAMILIES): {unknown}"


def test_an_option_of_unknown_kind_has_no_probes():
    """Negative control of `kind`: a type this table does not know gets no family, so the coverage
    test above names its option."""
    parser = argparse.ArgumentParser()
    assert kind(parser.add_argument("--x", type=complex)) is None
    assert kind(parser.add_argument("--y", metavar="THING")) is None


class Accepted(BaseException):
    """A probe the command took: it reached its first write (the work begins there)."""


class Hung(BaseException):
    """A probe still running after SECONDS."""


def names(line: str, argv: list[str], option: str) -> bool:
    """Whether the error `line` names `option`: its flag, its field (`Config.q`, `q = ...`) or, for
    a positional, its metavar's stem (REPORT, FOLDER)."""
    if not option.startswith("-"):
        return option.split(".")[0] in line
    field = option[2:].replace("-", "_")
    spelled = (rf"{re.escape(option)}(?![\w-])", rf"\.{field}\b", rf"(?<![\w-]){field} =")
    return any(re.search(s, line) for s in spelled)


def base_argv(argv: list[str], option: str, tmp_path) -> list[str]:
    """A command line in which only the probed option is bad: an output folder under tmp_path (none
    for derive), a valid REPORT or FOLDER where the command needs one."""
    if argv == ["rerun"]:
        report = tmp_path / "report.json"
        report.write_text('{"invocation": {"effective_argv": ["derive", "jsl"]}}')
        return (
            ["rerun", "{value}", "--out", str(tmp_path / "out")]
            if option == "REPORT.json"
            else ["rerun", str(report)]
        )
    if argv == ["export"]:
        folder = tmp_path / "compare"
        folder.mkdir()
        # not a dynsim report: read only after --to is checked, it stops an accepted --to probe
        (folder / "report.json").write_text("{}")
        return ["export", "{value}"] if option == "FOLDER" else ["export", str(folder)]
    out = [] if argv[0] == "derive" or option == "--out" else ["--out", str(tmp_path / "out")]
    # --security is read only with a TLS --scheduler (never contacted: the file is refused first)
    secured = ["--scheduler", "tls://127.0.0.1:1"] if option == "--security" else []
    return argv + out + secured


def probe(argv, option, value, tmp_path, monkeypatch) -> tuple[int, float]:
    """Run `argv` with `option value` in-process: (exit code, seconds). Raises Accepted when the
    command begins its work (its first folder under tmp_path) and Hung past SECONDS."""
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "folder").mkdir()
    (tmp_path / "file").write_text("x")
    value = value.format(fifo=tmp_path / "fifo", folder=tmp_path / "folder", file=tmp_path / "file")
    base = base_argv(argv, option, tmp_path)
    line = [value if t == "{value}" else t for t in base]
    if "{value}" not in base:
        line += [option, value]
    makedirs = os.makedirs

    def guarded(path, *a, **kw):
        if str(path).startswith(str(tmp_path)):
            raise Accepted(f"{' '.join(argv)} {option} {value!r} was accepted: the run began")
        return makedirs(path, *a, **kw)

    def hung(*_):
        raise Hung(f"{' '.join(argv)} {option} {value!r} still running after {SECONDS} s")

    monkeypatch.setattr(os, "makedirs", guarded)
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    started = time.perf_counter()
    try:
        code = cli.main(line)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, time.perf_counter() - started


@pytest.mark.parametrize("argv,option,value", table())
def test_probe_is_refused(argv, option, value, tmp_path, capsys, monkeypatch):
    try:
        code, seconds = probe(argv, option, value, tmp_path, monkeypatch)
    except Accepted as exc:
        pytest.fail(str(exc))
    err = capsys.readouterr().err
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2, f"exit {code}: {err}"
    assert "Traceback" not in err
    assert len(lines) == 1 and lines[0].startswith("dynsim: error:"), err
    assert names(lines[0], argv, option), f"the error names not {option}: {lines[0]}"
    written = {"out", "to"} if option != "--to" else {"to"}
    assert not any((tmp_path / w).exists() for w in written), os.listdir(tmp_path)
    assert seconds < SECONDS


@pytest.mark.parametrize(
    "argv,option,value",
    [(["compare", "jsl"], "--steps", "10"), (["sweep", "mim"], "--eta", "0.1,0.2")],
)
def test_an_accepted_value_is_caught_before_work(argv, option, value, tmp_path, monkeypatch):
    """Negative control: a valid value reaches the run's first write, where the guard stops it."""
    with pytest.raises(Accepted, match="was accepted"):
        probe(argv, option, value, tmp_path, monkeypatch)


def test_the_error_must_name_the_option():
    """Negative control of `names`: a field's or flag's prefix does not count as naming it."""
    assert names("dynsim: error: JSLConfig.q = nan is invalid", ["compare", "jsl"], "--q")
    assert names("dynsim: error: --d = 0 is invalid", ["compare", "jsl"], "--d")
    assert not names("dynsim: error: --dtype = x is invalid", ["compare", "jsl"], "--d")
    assert not names("dynsim: error: seq = 1 is invalid", ["compare", "jsl"], "--q")
