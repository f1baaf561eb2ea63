"""A package's public names loaded on first use (PEP 562 module `__getattr__`), in the form of
scientific-python's `lazy_loader.attach` (as scikit-image and networkx use it): the package's
`__init__` lists its submodules and which names each one gives, and importing the package imports
none of them. A level package is imported for its light spec alone (`full.jsl.spec`); its
simulation, which imports JAX, loads when a caller first reads `full.jsl.simulate`."""

from __future__ import annotations

import importlib
from typing import Callable, Mapping, Optional, Sequence


def attach(
    package: str,
    submodules: Sequence[str] = (),
    attrs: Optional[Mapping[str, Sequence[str]]] = None,
) -> tuple[Callable, Callable, list[str]]:
    """(__getattr__, __dir__, __all__) for the package `package`: each of `submodules`, and each
    name of attrs[submodule] taken from that submodule, imported when first read."""
    origin = {name: module for module, names in (attrs or {}).items() for name in names}
    public = sorted({*submodules, *origin})

    def __getattr__(name: str):
        if name in submodules:
            return importlib.import_module(f"{package}.{name}")
        if name in origin:
            return getattr(importlib.import_module(f"{package}.{origin[name]}"), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return list(public)

    return __getattr__, __dir__, list(public)
