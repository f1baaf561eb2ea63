"""Build dynsim's API reference (HTML, from the docstrings) with pdoc: `python docs/build_api.py
[OUT]`.

OUT defaults to docs/api (git-ignored). Needs pdoc: `pip install '.[docs]'`. Plain `pdoc dynsim
reduced full` documents only what each package's `__all__` lists; this script adds every public
module of the three packages (dotted names without a leading underscore), each exactly once, and
prints pdoc's warnings once each. Run it from the repository root (or anywhere dynsim is installed):
it documents the dynsim that `import dynsim` finds.
"""

from __future__ import annotations

import pkgutil
import sys
import warnings
from pathlib import Path

PACKAGES = ("dynsim", "reduced", "full")


def modules() -> list[str]:
    """Every public module of the three packages, each package before its submodules."""
    names = []
    for top in PACKAGES:
        pkg = __import__(top)
        names.append(top)
        names += sorted(
            m.name
            for m in pkgutil.walk_packages(pkg.__path__, top + ".")
            if not any(part.startswith("_") for part in m.name.split("."))
        )
    return names


def specs(names: list[str]) -> list[str]:
    """The fewest module specs that make pdoc document all of `names` once (a package spec adds its
    `__all__`)."""
    from pdoc.extract import walk_specs

    covered: set[str] = set()
    out = []
    for name in names:
        if name not in covered:
            out.append(name)
            covered.update(walk_specs([name]))
    return out


def main(argv: list[str]) -> int:
    import pdoc

    out = Path(argv[0] if argv else "docs/api")
    names = modules()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pdoc.pdoc(*specs(names), output_directory=out)
    distinct = list(dict.fromkeys(str(w.message) for w in caught))
    for message in distinct:
        print(f"warning: {message}", file=sys.stderr)
    pages = len(list(out.rglob("*.html"))) - 1  # index.html is the module list
    print(
        f"{pages} module pages ({len(names)} public modules) in {out}/, {len(distinct)} "
        f"distinct warning(s)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
