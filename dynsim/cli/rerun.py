"""`dynsim rerun REPORT.json [--out DIR]`: run the command a report records again (its `invocation`:
the command line with a --config file's options spelled out) into another folder, and say whether
its trajectories.npz came out identical, byte for byte. Runs are deterministic given the config, the
package versions and the device: a rerun under other versions is run but flagged. The verb's options
are declared in `dynsim.cli` (`--help` reads them without this module's imports)."""

from __future__ import annotations

import json
import os
import sys

from dynsim import environment

from . import output
from .options import UsageError, without


def recorded(path: str) -> dict:
    """The `invocation` of the report at `path`."""
    try:
        with open(path) as fh:
            data = json.load(fh)
    except FileNotFoundError:
        raise UsageError(f"REPORT = {path!r} is invalid: no such file") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise UsageError(f"REPORT = {path!r} is invalid: not a JSON report ({exc})") from None
    inv = data.get("invocation") if isinstance(data, dict) else None
    if not isinstance(inv, dict) or not isinstance(inv.get("effective_argv"), list):
        raise UsageError(
            f'REPORT = {path!r} is invalid: it records no command line (no "invocation" with '
            '"effective_argv"; reports of dynsim 0.1.0 from before `rerun` existed do not)'
        )
    return inv


def run(args) -> int:
    """Run the recorded command into --out; compare trajectories.npz with the original's."""
    inv = recorded(args.report)
    source = os.path.dirname(os.path.abspath(args.report))
    out = args.out if args.out is not None else os.path.join(source, "rerun")
    if os.path.abspath(out) == source:
        raise UsageError(
            f"--out = {out!r} is invalid: it is the report's own folder, whose files the rerun "
            f"would "
            "replace; give another folder"
        )
    argv = without(without(inv["effective_argv"], "--out"), "--config") + ["--out", out]
    if inv.get("versions") not in (None, environment.versions()):
        changed = {
            k: (v, environment.versions().get(k))
            for k, v in inv["versions"].items()
            if environment.versions().get(k) != v
        }
        print(
            f"dynsim rerun: warning: the packages differ from the recorded run ({changed}); "
            f"the numbers may "
            "differ in the last bits",
            file=sys.stderr,
            flush=True,
        )
    print(f"dynsim rerun: dynsim {' '.join(argv)}", flush=True)
    mixed = output.mismatched(args.report)
    if mixed:
        print(
            f"dynsim rerun: warning: {', '.join(mixed)} beside {args.report} differ from the "
            f"digests it records: "
            "that folder holds files of another run; comparing with the recorded digests",
            file=sys.stderr,
        )
    code = args.entry(argv)
    old, new = os.path.join(source, "trajectories.npz"), os.path.join(out, "trajectories.npz")
    digest = output.recorded_files(args.report).get("trajectories.npz")
    if code in (0, 1) and (digest or os.path.exists(old)) and os.path.exists(new):
        if digest:  # what the recorded run wrote, whatever lies beside the report now
            same, how = output.sha256(new) == digest, "SHA-256 recorded in the report"
        else:
            with open(old, "rb") as a, open(new, "rb") as b:
                same, how = a.read() == b.read(), "byte comparison"
        print(
            f"dynsim rerun: {new} is {'identical to' if same else 'DIFFERENT from'} {old}"
            + ("" if same else f" ({how})")
        )
        if not same:
            return 1
    return code
