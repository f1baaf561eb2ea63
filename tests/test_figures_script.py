"""docs/figures.py, without running a figure: every image of docs/img has an entry, every entry is a
dynsim command the CLI parses and names the PNG that command writes, and every image the docs cite
exists."""

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from dynsim import claims, cli

ROOT = Path(__file__).resolve().parent.parent
IMG = ROOT / "docs" / "img"


def _script():
    spec = importlib.util.spec_from_file_location("docs_figures", ROOT / "docs" / "figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses read the module of the classes they make
    spec.loader.exec_module(module)
    return module


SCRIPT = _script()


def test_every_image_has_an_entry_and_every_entry_an_image():
    images = sorted(p.name for p in IMG.glob("*.png"))
    entries = [f.name for f in SCRIPT.FIGURES]
    assert len(entries) == len(set(entries)), "an image with two entries"
    assert images == sorted(entries)


@pytest.mark.parametrize("figure", SCRIPT.FIGURES, ids=lambda f: f.name)
def test_every_entry_is_a_command_the_cli_parses(figure, tmp_path):
    args = cli.parse(figure.argv(str(tmp_path)))
    assert args.run is not None and args.out == str(tmp_path)


def _option(command: tuple, name: str) -> str:
    return command[command.index(name) + 1]


@pytest.mark.parametrize("figure", SCRIPT.FIGURES, ids=lambda f: f.name)
def test_every_entry_names_a_png_its_command_writes(figure):
    """compare writes compare.png, `figure NAME` and `experiment NAME` NAME.png, a sweep
    heatmap-<level>_<summary>.png for each --heatmap summary (the reduced level's, the default
    --level), check-theorems theorems.png. Only a command that judges claims (an experiment,
    check-theorems) may exit non-zero and still have written its figure: 1 or 3, its claims'
    verdicts (dynsim.claims.exit_code), never 2 (bad input)."""
    verb = figure.command[0]
    codes = (claims.EXIT_HOLDS, claims.EXIT_FAILS, claims.EXIT_UNJUDGED)
    assert figure.exits == (codes if verb in ("experiment", "check-theorems") else (0,))
    if verb == "compare":
        written = {"compare.png"}
    elif verb == "check-theorems":
        written = {"theorems.png"}
    elif verb in ("figure", "experiment"):
        written = {f"{figure.command[1]}.png"}
    else:
        assert verb == "sweep" and "--level" not in figure.command
        written = {
            f"heatmap-reduced_{name}.png"
            for name in _option(figure.command, "--heatmap").split(",")
        }
    assert figure.output in written


def _cited() -> list[tuple[Path, Path]]:
    """(document, image path) of every image a Markdown document of the README or docs/ shows."""
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for target in re.findall(r"!\[[^\]]*\]\(([^)\s]+)\)", doc.read_text(encoding="utf-8")):
            found.append((doc, (doc.parent / target).resolve()))
    return found


def test_every_image_the_docs_cite_exists():
    cited = _cited()
    assert any(doc.name == "README.md" for doc, _ in cited)  # the pattern finds the README's
    missing = [f"{doc.name}: {path}" for doc, path in cited if not path.is_file()]
    assert not missing


def test_list_prints_every_command_and_a_bad_name_is_refused(capsys):
    assert SCRIPT.main(["--list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == [f.name for f in SCRIPT.FIGURES]
    assert all(SCRIPT.command_line(f) in line for f, line in zip(SCRIPT.FIGURES, out))
    assert SCRIPT.main(["--list", "compare-jsl"]) == 0
    assert capsys.readouterr().out.startswith("compare-jsl.png: dynsim compare jsl ")
    assert SCRIPT.main(["no-such-image"]) == 2
    assert "unknown image no-such-image.png" in capsys.readouterr().err
