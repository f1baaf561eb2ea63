"""The import rules of dynsim's layout, read from the source with `ast` (nothing is imported):

ground (dynsim's shared definitions) <- levels (reduced/, full/) <- face (CLI, sweeps, checker,
claims, the settings' declarations). No import cycle between modules; a function-local import only
defers a heavy module (a heavy library, or a module whose top level imports one); no `_private` name
used outside its module; the generic core of dynsim names no setting; a level imports no other level
and no face module. Besides the imports, a "module:attr" string (`dynsim.setting.Ref`) and a lazy
package's table (`dynsim.lazy.attach`) are edges too: a string names a heavy module only, and the
light modules (the levels' specs, the settings' declarations and what they import) import no heavy
library at their top level.
"""

from __future__ import annotations

import ast
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("dynsim", "reduced", "full")
# the libraries whose import takes seconds or is optional: a light module's top level imports none
# (sklearn: the digits of the image experiments, the optional `images` extra)
HEAVY = (
    "jax",
    "jaxlib",
    "flax",
    "optax",
    "sympy",
    "diffrax",
    "scipy",
    "matplotlib",
    "pandas",
    "distributed",
    "dask",
    "xarray",
    "sklearn",
    "IPython",
)
# the settings this repository declares (pyproject's entry points: built in or plugin), each with
# its packages dynsim.NAME, reduced.NAME and full.NAME, every one held to the same rules
SETTINGS = tuple(
    tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"][
        "dynsim.settings"
    ]
)
SETTING_PACKAGES = tuple(f"{top}.{name}" for name in SETTINGS for top in PACKAGES) + (
    # the papers' real-image experiments (Section 6 of each): each reads its own setting's modules
    "dynsim.images",
)
# the library's front door keeps each setting's config class (`dynsim.JSLConfig`, ...: ground)
FRONT_DOOR = {"dynsim": {m for n in SETTINGS for m in (f"dynsim.{n}", f"dynsim.{n}.config")}}
# the command line's modules: no level imports them
FACE = ("dynsim.cli", "dynsim.verbs")


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


def _reach(start: str, graph=None) -> set[str]:
    """The modules reachable from `start` in one or more steps of `graph` (default: every import,
    `GRAPH`)."""
    graph = GRAPH if graph is None else graph
    seen, todo = set(), [start]
    while todo:
        for nxt in graph.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def _owner(target: str) -> str:
    """The module of dynsim, reduced or full that an import or reference of `target` runs."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target


def _top_level_graph() -> dict[str, set[str]]:
    """module -> internal modules its top level imports (with their packages' __init__, but its
    own packages')."""
    out = {}
    for module, (v, _) in SCANS.items():
        own, edges = set(_ancestors(module)), set()
        for target, _, local, _ in v.found:
            if not local and _internal(target):
                t = _owner(target)
                edges |= {
                    a for a in [*_ancestors(t), t] if a in MODULES and a != module and a not in own
                }
        out[module] = edges
    return out


TOP = _top_level_graph()


def _top_reach(start: str) -> set[str]:
    """What importing `start` executes: it, its packages' __init__ and, transitively, what their top
    levels import."""
    seen = {start, *(a for a in _ancestors(start) if a in MODULES)}
    todo = list(seen)
    while todo:
        for nxt in TOP.get(todo.pop(), ()):
            for m in (nxt, *_ancestors(nxt)):
                if m in MODULES and m not in seen:
                    seen.add(m)
                    todo.append(m)
    return seen


def _heavy_imports(module: str) -> list[str]:
    """The heavy libraries `module`'s top level imports itself."""
    v, _ = SCANS[module]
    return sorted({t.split(".")[0] for t, _, local, _ in v.found if not local} & set(HEAVY))


def _why_heavy(module: str) -> str:
    """'' when importing `module` imports no heavy library, else the module that does and which."""
    for m in sorted(_top_reach(module)):
        if _heavy_imports(m):
            return f"{m} imports {', '.join(_heavy_imports(m))}"
    return ""


def test_function_local_imports_only_defer_heavy_modules():
    """A function imports late only what would make its module heavy: a heavy library, or one of
    dynsim's modules whose top level imports one (a figure's run loads the plots there)."""
    bad = [
        f"{m}:{line} imports {t}"
        for m, (v, _) in SCANS.items()
        for t, _, local, line in v.found
        if local
        and t.split(".")[0] not in HEAVY
        and not (_internal(t) and _owner(t) and _why_heavy(_owner(t)))
    ]
    assert not bad, (
        "function-local imports of light modules (import them at the top): " + "; ".join(bad)
    )


def test_no_import_cycle():
    """No cycle among the modules' imports, a function's late import included (a level's spec that
    loads its simulation, which imports the spec, is one)."""
    cycles = sorted(m for m in GRAPH if m in _reach(m))
    assert not cycles, f"modules on an import cycle: {cycles}"


def test_an_import_cycle_is_found():
    """Negative control of `test_no_import_cycle`'s reading: two modules importing each other, one
    of them inside a function."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert sorted(m for m in graph if m in _reach(m, graph)) == ["a", "b"]


def test_levels_import_no_command_line():
    """No module under reduced/ or full/ imports the command line (dynsim.cli, dynsim.verbs), at
    its top or in a function: a level's options are a `dynsim.runoptions.Options` record, whose
    flags the command line generates."""
    bad = [
        f"{m}:{line} imports {t}"
        for m, (v, _) in SCANS.items()
        if m.split(".")[0] in ("reduced", "full")
        for t, _, _, line in v.found
        if any(t == f or t.startswith(f + ".") for f in FACE)
    ]
    assert not bad, "; ".join(bad)


REFERENCE = re.compile(r"^([A-Za-z_][\w.]*):([A-Za-z_][\w.]*)$")


def _constants(tree: ast.Module) -> dict[str, str]:
    """A module's top-level NAME = "text" assignments (what its f-string references use)."""
    out = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            out[node.targets[0].id] = node.value.value
    return out


def _text(node, constants: dict[str, str]):
    """The text of a string constant, or of an f-string of module constants; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            elif isinstance(value.value, ast.Name) and value.value.id in constants:
                parts.append(constants[value.value.id])
            else:
                return None
        return "".join(parts)
    return None


def _references() -> list[tuple[str, int, str]]:
    """Every "module:attr" string naming one of dynsim's modules: (referrer, line, target), the
    target the submodule a lazy package's table names for the attribute."""
    given = {(p, name): t for p, t, names in LAZY for name in names}
    out = []
    for module, (_, tree) in SCANS.items():
        if module.endswith(".mutations"):  # a catalogue's patch targets name what it patches
            continue
        constants = _constants(tree)
        for node in ast.walk(tree):
            text = _text(node, constants)
            found = REFERENCE.match(text) if text else None
            if found and _internal(found.group(1)) and _owner(found.group(1)):
                target = _owner(found.group(1))
                attr = found.group(2).split(".")[0]
                out.append((module, node.lineno, given.get((target, attr), target)))
    return out


def _lazy_tables() -> list[tuple[str, str, list[str]]]:
    """(package, submodule, the names it gives) of every lazy package's table
    (`dynsim.lazy.attach`): a submodule listed itself gives its own name."""
    out = []
    for module, (_, tree) in SCANS.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "attach":
                for kw in node.keywords:
                    value = ast.literal_eval(kw.value)
                    for name in value if kw.arg == "submodules" else value.keys():
                        names = [name] if kw.arg == "submodules" else value[name]
                        out.append((module, f"{module}.{name}", names))
    return out


LAZY = _lazy_tables()
REFERENCES = _references()


def test_the_lazy_tables_and_references_name_real_modules():
    """Every lazy table's submodule exists, and so does every reference's module (a typo there
    would fail only when a run first loads it); a reference that names its own setting's module
    is resolved by these edges, as an import is."""
    missing = [f"{p} lists {t}" for p, t, _ in LAZY if t not in MODULES]
    assert not missing and len(LAZY) >= 20 and len(REFERENCES) >= 20, missing


def test_a_lazy_package_lists_every_module_it_holds():
    """`package.module` reads as it did when the package imported its modules: each lazy package's
    table names every module and subpackage in it."""
    listed = {(p, t) for p, t, names in LAZY if names == [t.rpartition(".")[2]]}
    lazy = {p for p, _, _ in LAZY}
    missing = [
        m
        for m in MODULES
        if m.rpartition(".")[0] in lazy and (m.rpartition(".")[0], m) not in listed
    ]
    assert not missing, f"modules their lazy package does not list: {missing}"


def test_a_string_reference_names_a_heavy_module():
    """A "module:attr" string stays only where importing the module would load a heavy library (or
    would import the referrer back, a cycle): a light module is imported."""
    bad = [
        f"{m}:{line} names {t}"
        for m, line, t in REFERENCES
        if not _why_heavy(t) and m not in _top_reach(t)
    ]
    assert not bad, "references to light modules (import them): " + "; ".join(bad)


# what a refusal, --help and the declarations read: a level's spec, a setting's declaration, the
# command line's parser and the registry
LIGHT = sorted(
    m
    for m in MODULES
    if m.endswith(".spec") or m in ("dynsim", "dynsim.cli", "dynsim.setting", "dynsim.verbs")
) + [f"dynsim.{name}.setting" for name in SETTINGS]


@pytest.mark.parametrize("module", LIGHT)
def test_the_light_modules_import_no_heavy_library(module):
    assert not _why_heavy(module), f"{module} is heavy: {_why_heavy(module)}"


def test_a_heavy_import_is_found():
    """Negative control of `_why_heavy`: the levels' simulations import JAX."""
    assert "imports jax" in _why_heavy("full.jsl.simulation")
    assert _why_heavy("dynsim.sweeps.common")  # scipy


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
    """A level imports no other level (reduced <-> full, one setting's <-> another's) and, from
    dynsim, only modules that import no level themselves (the ground)."""
    bad = []
    for m in GRAPH:
        top = m.split(".")[0]
        if top not in ("reduced", "full"):
            continue
        setting = m.split(".")[1] if m.count(".") >= 1 and m.split(".")[1] in SETTINGS else None
        for t in GRAPH[m]:
            ttop = t.split(".")[0]
            if ttop in ("reduced", "full") and ttop != top:
                bad.append(f"{m} imports the other level's {t}")
            if (
                setting
                and ttop == top
                and t.count(".") >= 1
                and t.split(".")[1] in SETTINGS
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
