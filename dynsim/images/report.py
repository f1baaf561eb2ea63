"""What both image experiments do around their run: refuse a missing `images` extra before any
work, and write the figure and the JSON report as one staged set, then print the tables and exit
with the claims' code."""

from __future__ import annotations

import os

from dynsim import claims, environment, results
from dynsim.cli import output

from . import digits

__all__ = ["prepare", "provenance", "write"]


def prepare(args, patch: int) -> None:
    """The digits load (the images extra: a ValueError naming it when missing) and --out exists."""
    try:
        digits.load(patch)
    except ImportError as exc:
        raise ValueError(str(exc)) from None
    os.makedirs(args.out, exist_ok=True)


def provenance(dtype: str) -> dict:
    """The level's dtype, the device and the versions, recorded in the report and the figure."""
    return {"dtype": dtype, "device": environment.device(), "versions": environment.versions()}


def write(args, name: str, draw, found: list, settings: dict, record: dict, table: str) -> int:
    """NAME.png (drawn by draw(path)) and NAME.json (the claims, `record`, the provenance, the
    invocation) as one set, the JSON moved last; prints `table`, the claims' table and the files;
    returns the claims' exit code. record: the experiment's entries and its "provenance" and
    "timings"."""
    with output.Staged(args.out) as stage:
        draw(stage.path(f"{name}.png"))
        body = {**claims.to_dict(found, settings), **record, "invocation": output.invocation(args)}
        stage.commit(f"{name}.json", body)
    print(table)
    print(results.table(found, where=f"{name}.json"))
    print(output.wrote(args.out, [f"{name}.png", f"{name}.json"]))
    return claims.exit_code(found)
