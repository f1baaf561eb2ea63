"""Planted defects: a `Mutation` is one plausible developer's mistake (a sign, a missing factor, a
term left out of a normaliser, a wrong learning-rate scaling, data drawn with the wrong law),
injected without editing a file by replacing module attributes (`Patch`) for the length of a
`with applied(mutation):` block. A setting's `Catalogue` lists its mutations and the runs that
should notice them (`dynsim.detection` runs the matrix; docs/claims.md, "Detection matrix").

The seam: `Patch("package.module:name", make)` sets `package.module.name = make(original)` and
puts the original back afterwards. The name is patched where the code looks it up when it runs (a
function imported with `from x import f` is patched in the importer). JAX's compiled programs and
every `functools.lru_cache` are cleared on entry and on exit, so a program traced before the block
is traced again through the defect, and nothing traced through the defect outlives the block.
A patch whose replacement is never called while it is in place planted nothing: `applied` counts
the calls (`Applied.calls`) so the matrix can refuse such a seam."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import gc
import importlib
import inspect
import textwrap
from typing import Any, Callable, Iterator, Optional, Sequence

# what kind of mistake a mutation plants (the catalogue's coverage is read against these)
KINDS = (
    "sign",
    "factor",
    "normaliser",
    "mask",
    "learning rate",
    "data law",
    "initialization",
    "observable",
    "term",
)
LEVELS = ("reduced", "full", "both")  # where the defect sits: one level, or code both levels share


@dataclasses.dataclass(frozen=True)
class Patch:
    """Replace `target` ("package.module:name", name possibly dotted: "module:Class.method") by
    `make(original)` while a mutation is applied."""

    target: str
    make: Callable[[Any], Any]

    def resolve(self) -> tuple[Any, str]:
        """(the object holding the name, the last part of the name); a ValueError names a target
        that does not exist."""
        module, sep, name = self.target.partition(":")
        if not sep or not module or not name:
            raise ValueError(f"Patch.target = {self.target!r} is invalid: write 'module:name'")
        owner: Any = importlib.import_module(module)
        *path, last = name.split(".")
        for part in path:
            owner = getattr(owner, part)
        if not hasattr(owner, last):
            raise ValueError(f"Patch.target = {self.target!r} is invalid: {module} has no {name}")
        return owner, last


def edit(target: str, old: str, new: str) -> Patch:
    """A patch that recompiles the function at `target` from its own source with the text `old`
    (found exactly once) replaced by `new`: a one-line slip written as the developer would have
    written it. The new function sees the module's names as they are when it is made."""

    def make(original: Any) -> Any:
        fn = inspect.unwrap(original)
        source = textwrap.dedent(inspect.getsource(fn))
        if source.count(old) != 1:
            raise ValueError(
                f"edit of {target}: {old!r} occurs {source.count(old)} times in its source "
                "(must be once)"
            )
        scope = dict(fn.__globals__)
        exec(compile(source.replace(old, new), inspect.getsourcefile(fn) or target, "exec"), scope)
        return scope[fn.__name__]

    return Patch(target, make)


def edit_each(modules: Sequence[str], name: str, old: str, new: str) -> tuple[Patch, ...]:
    """The same `edit` of the function `name` in each of `modules`: where a function imported with
    `from x import f` is looked up by several modules, each holds its own name to patch."""
    return tuple(edit(f"{m}:{name}", old, new) for m in modules)


def swap(target: str, make: Callable[[Any], Any]) -> Patch:
    """A patch that replaces `target` by `make(original)` (a wrapper, or a value)."""
    return Patch(target, make)


@dataclasses.dataclass(frozen=True)
class Mutation:
    """One planted defect: `name` (unique in its catalogue), `kind` (one of KINDS), `level` (one
    of LEVELS), what a developer would have written (`description`), the patches that plant it
    and `caught_by`: the columns of the detection matrix ("compare" or a claim's name) that catch
    it, as the last full matrix measured (tests/test_detection.py runs them again)."""

    name: str
    kind: str
    level: str
    description: str
    patches: tuple[Patch, ...]
    caught_by: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"Mutation {self.name!r}: kind = {self.kind!r} not in {KINDS}")
        if self.level not in LEVELS:
            raise ValueError(f"Mutation {self.name!r}: level = {self.level!r} not in {LEVELS}")
        if not self.patches:
            raise ValueError(f"Mutation {self.name!r} has no patch")


@dataclasses.dataclass(frozen=True)
class Catalogue:
    """A setting's planted defects and the runs the detection matrix makes under each: `check`,
    the arguments of `dynsim check-theorems` after the setting's name (the claims' columns), and
    `compare`, those of `dynsim compare` (the "compare" column: a defect in one level makes the
    levels disagree), `compares`, further compare columns as (column name, arguments) (another
    mode of the full level, e.g. sampled batches, runs code the first never reaches). `sizes` says
    why these arguments (what the runs can resolve)."""

    mutations: tuple[Mutation, ...]
    check: tuple[str, ...] = ()
    compare: tuple[str, ...] = ()
    sizes: str = ""
    compares: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __post_init__(self) -> None:
        names = [m.name for m in self.mutations]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"Catalogue: mutations named twice: {twice}")
        extra = [name for name, _ in self.compares]
        if len(set(extra)) < len(extra) or "compare" in extra:
            raise ValueError(f"Catalogue: compare columns named twice: {extra}")

    def get(self, name: str) -> Mutation:
        for m in self.mutations:
            if m.name == name:
                return m
        raise ValueError(f"no mutation {name!r}; the catalogue has: {[m.name for m in self]}")

    def __iter__(self) -> Iterator[Mutation]:
        return iter(self.mutations)

    def __len__(self) -> int:
        return len(self.mutations)


def fresh() -> None:
    """Forget every compiled JAX program and every `functools.lru_cache`'s entries: what runs next
    is traced and computed anew from the module attributes as they are now."""
    import jax  # only where a mutation is applied

    jax.clear_caches()
    for obj in gc.get_objects():
        if isinstance(obj, functools._lru_cache_wrapper):
            obj.cache_clear()


@dataclasses.dataclass
class Applied:
    """What `applied` yields: `calls[target]`, how often each patch's replacement was called (a
    replacement that is not callable counts as called once it is in place)."""

    mutation: Optional[Mutation]
    calls: dict[str, int] = dataclasses.field(default_factory=dict)

    def silent(self) -> list[str]:
        """The patches whose replacement never ran: the defect they stand for was not planted."""
        return [t for t, n in self.calls.items() if n == 0]


def _counted(value: Any, record: Applied, target: str) -> Any:
    if not callable(value) or isinstance(value, type):
        record.calls[target] = 1
        return value
    record.calls[target] = 0

    @functools.wraps(value)
    def wrapper(*args, **kwargs):
        record.calls[target] += 1
        return value(*args, **kwargs)

    return wrapper


@contextlib.contextmanager
def applied(mutation: Optional[Mutation], clear: bool = True) -> Iterator[Applied]:
    """Plant `mutation` (None: nothing, the healthy simulator) for the block, with `fresh` caches
    on entry and exit (`clear=False`: none cleared, for patches no compiled program or cache
    reads); the originals are restored even when the block raises."""
    record = Applied(mutation)
    saved: list[tuple[Any, str, Any]] = []
    patches: Sequence[Patch] = () if mutation is None else mutation.patches
    # every target is imported before any patch is in place: a module first imported under a patch
    # would bind the defective function by `from x import f` and keep it after the block
    targets = [patch.resolve() for patch in patches]
    try:
        for patch, (owner, name) in zip(patches, targets):
            original = getattr(owner, name)
            saved.append((owner, name, original))
            setattr(owner, name, _counted(patch.make(original), record, patch.target))
        if clear:
            fresh()
        yield record
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)
        if clear:
            fresh()
