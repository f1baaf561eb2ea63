"""docs/recipes.md runs as written: every `dynsim` line of its bash blocks exits with the code its
`# exit N` comment names (0 when none) and writes what the text says it writes; every python block
runs, one namespace per section, in a scratch folder (the blocks read what the commands before them
wrote)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from dynsim import cli

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "recipes.md").read_text()


def sections() -> dict[str, list[tuple[str, str]]]:
    """Section title -> its code blocks in order, (language, text)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for part in re.split(r"^## ", PAGE, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        out[title.strip()] = re.findall(r"```(bash|python)\n(.*?)```", body, flags=re.S)
    return out


SECTIONS = sections()
# what each recipe's text says it writes, relative to the scratch folder
WRITES = {
    "1.": [
        "dynsim-out/phase/heatmap-reduced_final_attention_ratio.png",
        "dynsim-out/phase/heatmap-reduced_t1_attention.png",
    ],
    "2.": ["dynsim-out/check-theorems-jsl/theorems.json"],
    "3.": ["mim-curves.png"],
    "4.": ["dynsim-out/cluster/table.csv"],
}


def test_the_page_has_the_four_recipes_with_code():
    assert [t[:2] for t in SECTIONS] == list(WRITES)
    assert all(SECTIONS.values())


@pytest.mark.parametrize("title", list(SECTIONS), ids=[t[:2] for t in SECTIONS])
def test_recipe_runs_as_written(title, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "recipe"}
    for language, text in SECTIONS[title]:
        if language == "python":
            exec(compile(text, f"docs/recipes.md: {title}", "exec"), namespace)
            continue
        for line in re.sub(r"\\\n\s*", " ", text).splitlines():
            command, _, comment = line.partition("#")
            if not command.startswith("dynsim "):
                continue
            expected = int(m.group(1)) if (m := re.search(r"exit (\d)", comment)) else 0
            code = cli.main(shlex.split(command)[1:])
            assert code == expected, (command, capsys.readouterr().err[-2000:])
    for path in WRITES[title[:2]]:
        assert (tmp_path / path).is_file(), path
