"""Issue 14: `--config FILE.toml`, `--print-config`, `dynsim rerun REPORT.json`, and one default per
config field."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import json
import re

import pytest

from dynsim import cli
from dynsim import setting as registry
from tests.helpers import cli_commands

TINY = ["--D", "9", "--steps", "40", "--record-every", "20"]
# the runs of this file use two configs, TINY at q = 0.4 with unit or sqrt_d temperature (each
# compiled once here)


COMMANDS = cli_commands()


def test_every_setting_command_takes_a_config_file():
    # compare, sweep, check-theorems, derive x 2 settings, figures, transfer
    assert len(COMMANDS) >= 12
    for prefix, p in COMMANDS:
        dests = {a.dest for a in p._actions}
        assert {"config", "print_config"} <= dests, prefix


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("# dynsim ")]


@pytest.mark.parametrize("prefix", [c for c, _ in COMMANDS], ids=" ".join)
def test_print_config_round_trips(prefix, tmp_path, capsys):
    """--print-config, fed back through --config, prints the same options (every command, nothing
    run)."""
    assert cli.main([*prefix, "--print-config"]) == 0
    first = capsys.readouterr().out
    (tmp_path / "c.toml").write_text(first)
    assert cli.main([*prefix, "--config", str(tmp_path / "c.toml"), "--print-config"]) == 0
    assert _body(capsys.readouterr().out) == _body(first)


def test_config_file_gives_the_same_run_as_options_and_options_override_it(tmp_path, capsys):
    """The file's run is the typed options' run, byte for byte; a typed option (the temperature)
    beats the file."""
    (tmp_path / "run.toml").write_text(
        'D = 9\nsteps = 40\nrecord-every = 20\nq = 0.4\ntemperature = "unit"\n'
    )
    assert (
        cli.main(
            [
                "compare",
                "jsl",
                "--config",
                str(tmp_path / "run.toml"),
                "--no-plot",
                "--out",
                str(tmp_path / "a"),
            ]
        )
        == 0
    )
    assert (
        cli.main(
            [
                "compare",
                "jsl",
                *TINY,
                "--q",
                "0.4",
                "--temperature",
                "unit",
                "--no-plot",
                "--out",
                str(tmp_path / "b"),
            ]
        )
        == 0
    )
    assert (tmp_path / "a" / "trajectories.npz").read_bytes() == (
        tmp_path / "b" / "trajectories.npz"
    ).read_bytes()
    assert (
        cli.main(
            [
                "compare",
                "jsl",
                "--config",
                str(tmp_path / "run.toml"),
                "--temperature",
                "sqrt_d",
                "--no-plot",
                "--out",
                str(tmp_path / "c"),
            ]
        )
        == 0
    )
    report = json.loads((tmp_path / "c" / "report.json").read_text())
    config = report["reduced_meta"]["config"]
    assert config["temperature"] == "sqrt_d" and config["q"] == 0.4 and config["steps"] == 40
    inv = report["invocation"]
    assert "--config" in inv["command_line"] and "--config" not in inv["effective_argv"]
    argv = inv["effective_argv"]
    # the typed option comes last: it wins
    assert "--temperature=unit" in argv and argv.index("--temperature=unit") < argv.index("sqrt_d")
    capsys.readouterr()


@pytest.mark.parametrize(
    "text, needle",
    [
        ("Q = 0.4\n", "Q is not an option"),
        ("q = true\n", "a boolean is only for a flag"),
        ("no_plot = 1\n", "is a flag"),
        ("q = [\n", "--config"),
        ("q = 1.5\n", "JSLConfig.q"),
    ],
)
def test_bad_config_file_exits_2_with_one_line(text, needle, tmp_path, capsys):
    (tmp_path / "bad.toml").write_text(text)
    assert (
        cli.main(["compare", "jsl", "--config", str(tmp_path / "bad.toml"), "--out", str(tmp_path)])
        == 2
    )
    err = capsys.readouterr().err.strip()
    assert needle in err and "\n" not in err and "Traceback" not in err


def test_missing_config_file_exits_2(tmp_path, capsys):
    assert cli.main(["compare", "jsl", "--config", str(tmp_path / "none.toml")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_sweep_config_file_takes_lists(tmp_path, capsys):
    (tmp_path / "s.toml").write_text("q = [0.2, 0.3]\nD = 9\nseeds = 2\n")
    assert cli.main(["sweep", "jsl", "--config", str(tmp_path / "s.toml"), "--print-config"]) == 0
    out = capsys.readouterr().out
    assert "q = [0.2, 0.3]" in out and "seeds = 2" in out and "\nD = 9" in out


def test_rerun_reproduces_trajectories_bit_for_bit(tmp_path, capsys):
    out = tmp_path / "orig"
    assert cli.main(["compare", "jsl", *TINY, "--q", "0.4", "--no-plot", "--out", str(out)]) == 0
    assert cli.main(["rerun", str(out / "report.json"), "--out", str(tmp_path / "again")]) == 0
    assert "identical to" in capsys.readouterr().out
    assert (tmp_path / "again" / "trajectories.npz").read_bytes() == (
        out / "trajectories.npz"
    ).read_bytes()
    again = json.loads((tmp_path / "again" / "report.json").read_text())
    assert again["reduced_meta"]["config"]["q"] == 0.4
    # negative controls: an original that is not what the command gives is reported as different,
    # exit 1; the rerun compares with the digest report.json records (tests/test_outputs.py), else
    # (older reports) with the file
    report = json.loads((out / "report.json").read_text())
    (out / "report.json").write_text(
        json.dumps({**report, "files": {"trajectories.npz": "0" * 64}})
    )
    assert cli.main(["rerun", str(out / "report.json"), "--out", str(tmp_path / "third")]) == 1
    assert "DIFFERENT" in capsys.readouterr().out
    (out / "report.json").write_text(json.dumps({k: v for k, v in report.items() if k != "files"}))
    data = (out / "trajectories.npz").read_bytes()
    (out / "trajectories.npz").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    assert cli.main(["rerun", str(out / "report.json"), "--out", str(tmp_path / "fourth")]) == 1
    assert "DIFFERENT" in capsys.readouterr().out


def test_rerun_refuses_bad_reports_and_its_own_folder(tmp_path, capsys):
    (tmp_path / "r.json").write_text('{"passed": true}')
    assert cli.main(["rerun", str(tmp_path / "r.json")]) == 2
    assert "records no command line" in capsys.readouterr().err
    assert cli.main(["rerun", str(tmp_path / "none.json")]) == 2
    out = tmp_path / "o"
    assert cli.main(["compare", "jsl", *TINY, "--q", "0.4", "--no-plot", "--out", str(out)]) == 0
    assert cli.main(["rerun", str(out / "report.json"), "--out", str(out)]) == 2
    assert "the report's own folder" in capsys.readouterr().err


DEFAULT_IN_HELP = re.compile(r"\(default: (.*?)\)\s*$", re.S)


def _default_of(action) -> str:
    return DEFAULT_IN_HELP.search(action.help).group(1)


def test_one_default_per_config_field_across_commands():
    """Every command that takes a config field shows the config's default, or says in --help that it
    uses another and why (issue 14: `check-theorems jsl` checked another problem than `compare jsl`
    without saying so)."""
    checked = 0
    for prefix, p in COMMANDS:
        cls = p.get_default("config_class")
        if cls is None:
            continue
        fields = {f.name: f.default for f in dataclasses.fields(cls)}
        overrides = p.get_default("config_defaults") or {}
        groups = " ".join(g.description or "" for g in p._action_groups)
        for a in p._actions:
            if a.dest not in fields:
                continue
            shown = _default_of(a)
            own = "derived" if fields[a.dest] is None else str(fields[a.dest])
            if a.dest in overrides and overrides[a.dest] != fields[a.dest]:
                assert shown == f"{overrides[a.dest]} here; {cls.__name__}'s: {own}", (
                    prefix,
                    a.dest,
                    shown,
                )
                assert f"differ from {cls.__name__}'s for" in groups and a.dest in groups, (
                    prefix,
                    a.dest,
                )
            else:
                assert shown == own, (prefix, a.dest, shown)
            checked += 1
    assert checked > 100


def test_help_defaults_are_the_run_defaults(capsys):
    """What --help says is what the command runs: --print-config (the run's options) agrees with
    it."""
    for prefix, p in COMMANDS:
        overrides = p.get_default("config_defaults")
        if not overrides:
            continue
        assert cli.main([*prefix, "--print-config"]) == 0
        printed = capsys.readouterr().out
        for k, v in overrides.items():
            assert re.search(rf"^{k} = \"?{re.escape(str(v))}\"?$", printed, re.M), (prefix, k, v)


def test_seeds_has_one_meaning():
    """--seeds is, in every command, the number of independent runs derived from --seed."""
    found = 0
    for prefix, p in COMMANDS:
        for a in p._actions:
            if "--seeds" in a.option_strings:
                assert a.help.startswith(
                    "number of independent runs, each with its own random draws derived from --seed"
                ), (prefix, a.help)
                found += 1
    assert found >= 5


def test_check_theorems_mim_takes_the_mim_config_options(capsys):
    assert (
        cli.main(
            ["check-theorems", "mim", "--kappa-c", "0.85", "--mask-ratio", "0.6", "--print-config"]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "kappa_c = 0.85" in out and "mask_ratio = 0.6" in out
    # the ladder sets P: said in --help, refused here a Delta < 0 base is judged (its Delta > 0
    # claims not applicable): tests/test_verdict_matrix_mim.py
    assert cli.main(["check-theorems", "mim", "--P", "64"]) == 2


def test_every_setting_is_covered():
    """Every shipped setting (the entry points; the built-in ones in a source tree) has its commands
    here; settings other tests register in-process (the toy) are not shipped."""
    names = {name for (_, name), _ in COMMANDS}
    shipped = {ep.name for ep in importlib.metadata.entry_points(group=registry.GROUP)}
    assert (shipped or set(registry.BUILTIN)) <= names


def test_a_config_option_the_mode_does_not_read_is_named(tmp_path, capsys):
    """compare jsl --mode exact does not read N (the sampled batch, the realistic training set): it
    says so."""
    assert (
        cli.main(
            [
                "compare",
                "jsl",
                *TINY,
                "--q",
                "0.4",
                "--N",
                "100",
                "--no-plot",
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "warning: --N = 100 is not read here" in err
    assert (
        cli.main(["compare", "jsl", *TINY, "--q", "0.4", "--no-plot", "--out", str(tmp_path)]) == 0
    )
    assert "is not read" not in capsys.readouterr().err
