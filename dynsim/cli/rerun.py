"""`dynsim rerun REPORT.json [--out DIR]`: run the command a report records again (its `invocation`:
the command line with a --config file's options spelled out) into another folder, and say whether
its trajectories.npz came out identical, byte for byte. Runs are deterministic given the config, the
package versions and the device: a rerun under other versions is run but flagged. The verb's options
are declared in `dynsim.cli` (`--help` reads them without this module's imports)."""

from __future__ import annotations

import os
import sys

from dynsim import environment, inputs, schemas

from . import output
from .options import UsageError, without


MAX_REPORT_BYTES = 64 * 2**20  # a report is kilobytes; a larger file is not one
# options through which a report would make this process reach code or data elsewhere: a Dask
# scheduler returns results this process unpickles
REFUSED = ("--scheduler", "--security", "--insecure-scheduler")
# options that answer and exit: a report's command line never holds one (an edited report might)
NOT_A_RUN = ("--help", "-h", "--print-config", "--version")
# how the recorded command ran, not what it computed: never taken from a report (rerun writes into
# its own --out, reads no config file, and runs in this process: a local cluster's workers would be
# started from a report's word)
EXECUTION = ("--out", "--config", "--workers")
# the verb that writes each kind of report: a report reruns only its own verb
WRITER = {"theorems": "check-theorems", "report": "compare"}


def _read(path: str) -> dict:
    """The JSON of the report at `path`: a regular file (not a FIFO or a device) inside its folder
    (a link elsewhere is not a record of that folder) of at most MAX_REPORT_BYTES, read in one
    bounded read."""
    folder = os.path.dirname(os.path.abspath(path))
    return inputs.read_json(path, MAX_REPORT_BYTES, "REPORT", inside=folder)


def recorded(path: str) -> dict:
    """The `invocation` of the report at `path`, checked: a command line of strings naming the verb
    that writes this kind of report (`WRITER`), with no option that reaches a Dask scheduler,
    versions as a mapping, and the rest of its kind's schema (`output.REPORT`, `THEOREMS`)."""
    data = _read(path)
    inv = data.get("invocation") if isinstance(data, dict) else None
    argv = inv.get("effective_argv") if isinstance(inv, dict) else None
    if not isinstance(argv, list):
        raise UsageError(
            f'REPORT = {path!r} is invalid: it records no command line (no "invocation" with '
            '"effective_argv"; reports of dynsim 0.1.0 from before `rerun` existed do not)'
        )
    if not argv or not all(isinstance(t, str) for t in argv) or argv[0].startswith("-"):
        raise UsageError(
            f"REPORT = {path!r} is invalid: its effective_argv is not a dynsim command line "
            "(a list of strings starting with a verb)"
        )
    if argv[0] == "rerun":
        raise UsageError(f"REPORT = {path!r} is invalid: it records a rerun, not a command")
    reached = [t for t in argv if t.split("=")[0] in REFUSED]
    if reached:
        raise UsageError(
            f"REPORT = {path!r} asks for {reached[0].split('=')[0]}: rerun never connects to a "
            "Dask scheduler a report names (its results would run code in this process); if "
            "you trust it, run the recorded command yourself"
        )
    asked = [t for t in argv if t.split("=")[0] in NOT_A_RUN]
    if asked:
        raise UsageError(
            f"REPORT = {path!r} is invalid: its command line holds {asked[0].split('=')[0]}, "
            "which prints and runs nothing: no command that wrote a report had it"
        )
    kind = "theorems" if "claims" in data else "report"
    if argv[0] != WRITER[kind]:
        raise UsageError(
            f"REPORT = {path!r} is invalid: a {kind} file is written by `dynsim {WRITER[kind]}`, "
            f"but it records `dynsim {argv[0]}`"
        )
    if not isinstance(inv.get("versions", {}), dict):
        raise UsageError(f"REPORT = {path!r} is invalid: its versions are not a mapping")
    schemas.check(data, output.THEOREMS if kind == "theorems" else output.REPORT, "REPORT", path)
    return inv


def run(args) -> int:
    """Run the recorded command into --out; compare trajectories.npz with the original's."""
    inv = recorded(args.report)
    source = os.path.dirname(os.path.abspath(args.report))
    out = args.out if args.out is not None else os.path.join(source, "rerun")
    if os.path.realpath(out) == os.path.realpath(source):
        raise UsageError(
            f"--out = {out!r} is invalid: it is the report's own folder, whose files the rerun "
            f"would "
            "replace; give another folder"
        )
    argv = inv["effective_argv"]
    for option in EXECUTION:
        argv = without(argv, option)
    argv = argv + ["--out", out]
    if inv.get("versions") not in (None, {}, environment.versions()):
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
