"""What every figure command shares: config options without the fields it does not read, and the sizes of the
files it wrote."""

from __future__ import annotations

import os

from . import options


class _Without:
    """A parser (or argument group) that adds every argument except those whose dest is in `skip`."""

    def __init__(self, target, skip: frozenset):
        self.target, self.skip = target, skip

    def add_argument(self, *names, **kwargs):
        return None if kwargs.get("dest") in self.skip else self.target.add_argument(*names, **kwargs)

    def add_argument_group(self, *args, **kwargs):
        return _Without(self.target.add_argument_group(*args, **kwargs), self.skip)

    def __getattr__(self, name):
        return getattr(self.target, name)


def config_options(parser, setting, defaults: dict, unread: tuple = ()) -> None:
    """`options.config_options` without the config fields in `unread` (fields the command's run never reads, which
    would otherwise be listed and silently ignored); they keep the command's defaults."""
    fields = {f.replace("-", "_") for f in unread}
    options.config_options(_Without(parser, frozenset(fields)), setting, defaults)


def size(path) -> str:
    """The size of the file at `path` for an output line: "812 B", "3.2 kB", "4.6 MB"."""
    n = os.path.getsize(path)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def wrote(out: str, names) -> str:
    """The output line of a figure command: "wrote OUT/a.png (162.7 kB), OUT/a.npz (3.2 MB), ..."."""
    return "wrote " + ", ".join(f"{os.path.join(out, n)} ({size(os.path.join(out, n))})" for n in names)
