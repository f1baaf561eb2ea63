"""The documentation is self-contained and its references resolve.

- No tracked file cites notes outside the repository (the derivation notes ship in
  docs/derivations/).
- Every relative markdown link in README.md and docs/**.md names a tracked file or folder.
- Every citation "docs/<file>.md §N" (and the aliases "derivations §N" in docs/jsl.md, "spec §N" in
  docs/mim.md)
  names an existing file and an existing numbered heading in it.
- The API reference has something to show: every public module has a module docstring, and every
  class, function
  and module that `dynsim.__all__` exports has its own docstring.
Each check is a function tried on a small bad input first, so that it is seen to fail.
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import subprocess
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dynsim", "reduced", "full")

# Built from pieces so that this file does not match itself.
OUTSIDE_NOTES = re.compile(
    "|".join(
        [r"\.\./" + "shared", "shared" + "/papers", "jsl-" + "derivations", "mim-model-" + "spec"]
    )
)
SECTION_ID = r"\d+[a-z]?(?:\.\d+)?"
CITATION = re.compile(
    r"(docs/[\w./-]+?\.md)\)?((?:\s*(?:,|and)?\s*§\s?"
    + SECTION_ID
    + r"(?:\s?[-–]\s?§?"
    + SECTION_ID
    + r")?)+)"
)
SECTION = re.compile(r"§\s?(" + SECTION_ID + r")(?:\s?[-–]\s?§?(" + SECTION_ID + r"))?")
HEADING = re.compile(r"^#{1,6}\s+(" + SECTION_ID + r")(?=[.\s])", re.M)
# Short names a doc defines in its first paragraph for a file it cites often.
ALIASES = {
    "docs/jsl.md": {"derivations": "docs/derivations/jsl.md"},
    "docs/mim.md": {
        "spec": "docs/derivations/mim-model.md",
        "Spec": "docs/derivations/mim-model.md",
    },
}
LINK = re.compile(r"!?\[[^\]]*\]\(\s*([^)\s]+)(?:\s+\"[^\"]*\")?\s*\)")


def tracked_files() -> list[str]:
    """Repository-relative paths of the tracked files (git), or of every file outside build folders
    without git."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout
        files = [f for f in out.decode().split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    skip = {".git", ".ci-venv", ".venv", "build", "dynsim-out", ".pytest_cache", "__pycache__"}
    files = []
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in skip and not d.endswith(".egg-info")]
        files += [str((Path(dirpath) / f).relative_to(ROOT)) for f in filenames]
    return files


FILES = tracked_files()
TEXT_SUFFIXES = {".py", ".md", ".toml", ".txt", ".cfg", ".ini", ".yml", ".yaml", ".json", ".sh", ""}


def read(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8", errors="replace")


def outside_citations(text: str) -> list[str]:
    """The lines of `text` that cite notes outside the repository."""
    return [line.strip() for line in text.splitlines() if OUTSIDE_NOTES.search(line)]


def strip_code(markdown: str) -> str:
    """Markdown without fenced code blocks and inline code spans (links there are not links)."""
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)
    return re.sub(r"`[^`\n]*`", "", markdown)


def broken_links(md_path: str, markdown: str, files: set[str]) -> list[str]:
    """Relative link targets of `markdown` (a file at repository path `md_path`) that name no
    tracked file or folder."""
    folders = {str(Path(f).parent.as_posix()) for f in files}
    folders |= {p for f in folders for p in (str(q.as_posix()) for q in Path(f).parents)}
    bad = []
    for target in LINK.findall(strip_code(markdown)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
            continue  # an absolute URL or an anchor in the same page
        path = target.split("#", 1)[0]
        resolved = os.path.normpath(os.path.join(os.path.dirname(md_path), path)).replace(
            os.sep, "/"
        )
        if resolved not in files and resolved.rstrip("/") not in folders:
            bad.append(target)
    return bad


def headings(markdown: str) -> set[str]:
    """The section numbers of a markdown file's numbered headings ("## 3. Title" -> "3", "### 3a.
    ..." -> "3a")."""
    return set(HEADING.findall(strip_fenced(markdown)))


def strip_fenced(markdown: str) -> str:
    return re.sub(r"^```.*?^```", "", markdown, flags=re.S | re.M)


def citations(rel: str, text: str) -> list[tuple[str, str]]:
    """(cited file, section number) for every "docs/<file>.md §N" in `text`, and for the aliases of
    `rel`."""
    found = []
    for m in CITATION.finditer(text):
        for sec in SECTION.finditer(m.group(2)):
            found += [(m.group(1), s) for s in sec.groups() if s]
    for alias, target in ALIASES.get(rel, {}).items():
        for m in re.finditer(
            r"\b" + alias + r" (§\s?" + SECTION_ID + r"(?:\s?[-–]\s?§?" + SECTION_ID + r")?)", text
        ):
            for sec in SECTION.finditer(m.group(1)):
                found += [(target, s) for s in sec.groups() if s]
    return found


def bad_citations(rel: str, text: str, read_doc) -> list[str]:
    """The citations of `text` whose file does not exist or has no heading with that section
    number."""
    bad = []
    for doc, sec in citations(rel, text):
        content = read_doc(doc)
        if content is None:
            bad.append(f"{doc} (no such file)")
        elif sec not in headings(content):
            bad.append(f"{doc} §{sec}")
    return bad


def public_modules() -> list[Path]:
    """Every module of the three packages whose dotted name has no part starting with an underscore
    (packages too)."""
    mods = []
    for rel in FILES:
        p = Path(rel)
        if p.suffix == ".py" and p.parts[0] in PACKAGES:
            parts = p.with_suffix("").parts
            if not any(part.startswith("_") and part != "__init__" for part in parts):
                mods.append(ROOT / p)
    return mods


def missing_docstring(source: str, name: str | None = None) -> bool:
    """Whether the module in `source` (name None), or its top-level class or function `name`, lacks
    a docstring."""
    tree = ast.parse(source)
    if name is None:
        return not ast.get_docstring(tree)
    for node in tree.body:
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == name
        ):
            return not ast.get_docstring(node)
    raise LookupError(f"{name} is not defined at the top level of its module")


# --- the checks fail on bad input
#   ------------------------------------------------------------------------------------


def test_the_checks_fail_on_bad_input():
    # The bad inputs are built from pieces, so that this (tracked) file passes its own checks.
    notes = "../" + "shared" + "/" + "papers/notes.md"
    assert outside_citations(f"x = 1  # see {notes} 3b\nok") == [f"x = 1  # see {notes} 3b"]
    assert outside_citations("follows " + "jsl-" + "derivations 2.4")
    assert outside_citations("docs/derivations/jsl.md §2.4") == []

    files = {"README.md", "docs/jsl.md", "docs/img/a.png"}
    md = (
        "[ok](jsl.md) ![img](img/a.png) [gone](missing.md) [up](../README.md#x) "
        "[web](https://x.org/a.md) `[code](nowhere.md)` [folder](img/) [anchor](#top)"
    )
    assert broken_links("docs/guide.md", md, files) == ["missing.md"]

    doc = "# T\n## 1. One\n### 1a. Sub\n### 2.4 Point\n```\n## 9. not a heading\n```\n"
    assert headings(doc) == {"1", "1a", "2.4"}
    n, none = "docs/" + "n.md", "docs/" + "none.md"
    docs = {n: doc}
    text = f"see {n} §1a and {n} §2.4, §9; {n} §1-§3; [{n}]({n}) §1-2; {none} §1"
    assert bad_citations("x.py", text, docs.get) == [
        f"{n} §9",
        f"{n} §3",
        f"{n} §2",
        f"{none} (no such file)",
    ]
    assert bad_citations(
        "docs/jsl.md", "derivations §3e", {"docs/derivations/jsl.md": doc}.get
    ) == ["docs/derivations/jsl.md §3e"]

    assert missing_docstring("x = 1\n")
    assert not missing_docstring('"""Doc."""\n')
    assert missing_docstring('"""Doc."""\ndef f():\n    return 1\n', "f")
    assert not missing_docstring('"""Doc."""\nclass A:\n    """A."""\n', "A")


# --- the repository
#   ------------------------------------------------------------------------------------------------


def test_derivation_notes_are_shipped():
    for doc in ("docs/derivations/jsl.md", "docs/derivations/mim-model.md"):
        assert doc in FILES, f"{doc} is not tracked"


def test_no_tracked_file_cites_notes_outside_the_repository():
    offenders = {}
    for rel in FILES:
        if Path(rel).suffix in TEXT_SUFFIXES and (ROOT / rel).is_file():
            lines = outside_citations(read(rel))
            if lines:
                offenders[rel] = lines[:3]
    assert not offenders, f"cite the shipped notes (docs/derivations/) instead: {offenders}"


def markdown_docs() -> list[str]:
    return [f for f in FILES if f == "README.md" or (f.startswith("docs/") and f.endswith(".md"))]


def test_markdown_docs_are_found():
    docs = markdown_docs()
    assert "README.md" in docs and "docs/jsl.md" in docs and "docs/derivations/mim-model.md" in docs


@pytest.mark.parametrize("rel", markdown_docs())
def test_relative_links_resolve(rel):
    assert broken_links(rel, read(rel), set(FILES)) == []


def test_section_citations_resolve():
    def read_doc(doc):
        return read(doc) if doc in FILES else None

    bad, n = {}, 0
    for rel in FILES:
        if Path(rel).suffix in {".py", ".md"}:
            text = read(rel)
            n += len(citations(rel, text))
            found = bad_citations(rel, text, read_doc)
            if found:
                bad[rel] = sorted(set(found))
    assert n > 50, f"only {n} section citations found: is the citation pattern still right?"
    assert not bad, f"citations of missing sections: {bad}"


# An example's output folder: under dynsim-out/ (each command's default folder is one) or a
# placeholder in capitals (DIR, SHARED/DIR)
OUT = re.compile(r"--out[ =]([^\s`'\"\\)]+)")


def stray_outs(text: str) -> list[str]:
    """The --out values of `text` that are neither under dynsim-out/ nor a placeholder."""
    return [
        v
        for v in OUT.findall(text)
        if not v.startswith("dynsim-out/") and not v.split("/")[0].isupper()
    ]


def test_examples_write_under_one_folder():
    """Every page's examples write where a command's default --out does, under dynsim-out/ (the
    measurements' history in docs/benchmarks.md aside), so pages agree on where outputs are."""
    assert stray_outs("dynsim figure jsl-fig4 --out figs --out DIR --out dynsim-out/a") == ["figs"]
    for rel in markdown_docs():
        if rel != "docs/benchmarks.md":
            assert stray_outs(read(rel)) == [], rel


def test_public_modules_have_docstrings():
    mods = public_modules()
    assert len(mods) > 50
    missing = [
        str(p.relative_to(ROOT)) for p in mods if missing_docstring(p.read_text(encoding="utf-8"))
    ]
    assert not missing, f"modules without a module docstring: {missing}"


def test_exported_names_have_docstrings():
    import dynsim

    missing = []
    for name in dynsim.__all__:
        obj = getattr(dynsim, name)
        if name.startswith("__"):
            continue  # __version__ and the like: data, not API
        if isinstance(obj, types.ModuleType):
            source, own = inspect.getsource(obj), None
        elif inspect.isclass(obj) or inspect.isfunction(obj):
            source, own = inspect.getsource(inspect.getmodule(obj)), obj.__name__
        else:
            missing.append(f"{name} (a {type(obj).__name__}: export a module, class or function)")
            continue
        if missing_docstring(source, own):
            missing.append(name)
    assert not missing, f"dynsim.__all__ entries without their own docstring: {missing}"


def test_the_readme_first_screen_names_every_setting():
    """Every setting this repository declares (pyproject's entry points, `BUILTIN`: built in or
    plugin) is named before the README's first section, with its paper's page, and one of its
    commands (a verb on it, or one of its figures) is among the first five minutes'."""
    from dynsim.setting import BUILTIN as settings

    readme = (ROOT / "README.md").read_text()
    intro, _, rest = readme.partition("## First five minutes")
    first = rest.partition("\n## ")[0]
    for name in settings:
        assert f"the {name.upper()} setting" in intro and f"docs/{name}.md" in intro, name
        assert re.search(rf"^dynsim (\S+ {name}|figure {name}-\S+) ", first, re.M), name
