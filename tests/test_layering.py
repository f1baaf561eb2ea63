"""The import rules of dynsim's layout, read from the source with `ast` (nothing is imported):

ground (dynsim's shared definitions) <- levels (reduced/, full/) <- face (CLI, sweeps, checker,
claims, the settings' declarations). No import cycle between modules; no function-local import
except to defer an optional heavy library; no `_private` name used outside its module; the generic
core of dynsim names no setting; a level imports no other level and no face module.
"""

from __future__ import annotations

import ast
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dynsim", "reduced", "full")
# optional or heavy libraries a function may import late
# sklearn: the digits of the image experiments (the optional `images` extra)
HEAVY = ("matplotlib", "scipy", "distributed", "dask", "xarray", "sklearn")
SETTING_PACKAGES = (
    "dynsim.jsl",
    "dynsim.mim",
    "reduced.jsl",
    "reduced.mim",
    "full.jsl",
    "full.mim",
    # the papers' real-image experiments (Section 6 of each): each reads its own setting's modules
    "dynsim.images",
)
# the library's front door keeps `dynsim.JSLConfig` and `dynsim.MIMConfig` (config classes only:
# ground)
FRONT_DOOR = {"dynsim": {"dynsim.jsl", "dynsim.jsl.config", "dynsim.mim", "dynsim.mim.config"}}


def _modules() -> dict[str, Path]:
    out = {}
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()


def _is_package(name: str) -> bool:
    return MODULES.get(name, Path()).name == "__init__.py"


def _resolve(module: str, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


class _Imports(ast.NodeVisitor):
    """Every import of one module: (target module, names, inside a function?, line)."""

    def __init__(self, module: str):
        self.module, self.depth, self.found = module, 0, []
        self.aliases: dict[str, str] = {}  # local name -> internal module it is bound to

    def _function(self, node):
        self.depth += 1
        self.generic_visit(node)
        self.depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function

    def visit_Import(self, node):
        for a in node.names:
            self.found.append((a.name, [], self.depth > 0, node.lineno))
            if a.asname:
                self.aliases[a.asname] = a.name

    def visit_ImportFrom(self, node):
        target = _resolve(self.module, node)
        for a in node.names:
            sub = f"{target}.{a.name}"
            if sub in MODULES:
                self.found.append((sub, [], self.depth > 0, node.lineno))
                self.aliases[a.asname or a.name] = sub
            else:
                self.found.append((target, [a.name], self.depth > 0, node.lineno))


def _scan():
    out = {}
    for module, path in MODULES.items():
        v = _Imports(module)
        tree = ast.parse(path.read_text(), str(path))
        v.visit(tree)
        out[module] = (v, tree)
    return out


SCANS = _scan()


def _internal(name: str) -> bool:
    return name.split(".")[0] in PACKAGES


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _graph() -> dict[str, set[str]]:
    """module -> internal modules whose execution importing it triggers (the target and its
    packages' __init__), without the importer's own ancestor packages (a submodule importing its
    siblings is the normal pattern)."""
    graph = {}
    for module, (v, _) in SCANS.items():
        own = set(_ancestors(module))
        edges = set()
        for target, _, _, _ in v.found:
            if not _internal(target):
                continue
            while target and target not in MODULES:
                target = target.rpartition(".")[0]
            edges |= {
                t
                for t in [*_ancestors(target), target]
                if t in MODULES and t not in own and t != module
            }
        graph[module] = edges
    return graph


GRAPH = _graph()


def _reach(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for nxt in GRAPH.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def test_no_import_cycle():
    cycles = sorted(m for m in GRAPH if m in _reach(m))
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_function_local_imports_only_defer_heavy_libraries():
    bad = [
        f"{m}:{line} imports {t}"
        for m, (v, _) in SCANS.items()
        for t, _, local, line in v.found
        if local and t.split(".")[0] not in HEAVY
    ]
    assert not bad, "function-local imports: " + "; ".join(bad)


def test_no_private_name_crosses_a_module():
    bad = []
    for module, (v, tree) in SCANS.items():
        for target, names, _, line in v.found:
            bad += [
                f"{module}:{line} imports {target}.{n}"
                for n in names
                if _internal(target) and n.startswith("_") and not n.startswith("__")
            ]
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and node.value.id in v.aliases
            ):
                bad.append(f"{module}:{node.lineno} uses {v.aliases[node.value.id]}.{node.attr}")
    assert not bad, "private names used outside their module: " + "; ".join(bad)


def _setting_module(name: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in SETTING_PACKAGES)


def test_the_core_names_no_setting():
    """dynsim's generic modules (CLI, sweeps, checker, setting, claims, store, ...) import no
    setting's module; settings reach them only as plugins (dynsim.setting)."""
    bad = [
        f"{m} imports {t}"
        for m, edges in GRAPH.items()
        if m.startswith("dynsim") and not _setting_module(m)
        for t in edges
        if _setting_module(t) and t not in FRONT_DOOR.get(m, ())
    ]
    assert not bad, "; ".join(bad)


def test_levels_import_only_the_ground():
    """A level imports no other level (reduced <-> full, jsl <-> mim) and, from dynsim, only modules
    that import no level themselves (the ground)."""
    bad = []
    for m in GRAPH:
        top = m.split(".")[0]
        if top not in ("reduced", "full"):
            continue
        setting = (
            m.split(".")[1] if m.count(".") >= 1 and m.split(".")[1] in ("jsl", "mim") else None
        )
        for t in GRAPH[m]:
            ttop = t.split(".")[0]
            if ttop in ("reduced", "full") and ttop != top:
                bad.append(f"{m} imports the other level's {t}")
            if (
                setting
                and ttop == top
                and t.count(".") >= 1
                and t.split(".")[1] in ("jsl", "mim")
                and t.split(".")[1] != setting
            ):
                bad.append(f"{m} imports another setting's {t}")
            if ttop == "dynsim" and any(
                r.split(".")[0] in ("reduced", "full") for r in _reach(t) | {t}
            ):
                bad.append(f"{m} imports {t}, which is not ground (it imports a level)")
    assert not bad, "; ".join(bad)


# At most this many statements (logical lines, tokenize's NEWLINE tokens) per module. Counted in
# statements, the bound does not move when the formatter rewraps: it was 360 physical lines at the
# 120-column layout, under which the longest module (dynsim.mim.phases) had 238 statements.
MAX_STATEMENTS = 240


def _statements(path: Path) -> int:
    with open(path, encoding="utf-8") as fh:
        tokens = tokenize.generate_tokens(fh.readline)
        return sum(1 for tok in tokens if tok.type == tokenize.NEWLINE)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_modules_stay_short(module):
    """One idea per module: none over MAX_STATEMENTS statements."""
    statements = _statements(MODULES[module])
    assert statements <= MAX_STATEMENTS, f"{module} has {statements} statements"
