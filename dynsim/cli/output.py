"""What every command shares: exit codes, logging to stderr, timed runs under a progress bar, atomic
JSON and npz writes, the outputs of `compare`, and the options every setting's commands take (--out,
--confidence, --method)."""

from __future__ import annotations

import errno
import functools
import hashlib
import json
import os
import shutil
import sys
import time
import types
import warnings

from dynsim import claims as claims_mod
from dynsim import environment, results
from dynsim import progress, resources
from dynsim import inputs, schemas, tempfiles
from dynsim.trajectory import MAX_FILE_BYTES, atomic_savez, atomic_write_text, save_many
from dynsim.trajectory import strict_json

from .options import EXIT_AGREE, EXIT_DISAGREE, changed

# a command's record (report.json, theorems.json, a figure's .json): kilobytes to a few megabytes
MAX_RECORD_BYTES = 1 << 28
# what the readers of a record take from it (dynsim.schemas): `dynsim rerun` its invocation and
# files (`recorded_files`: "files" that is not a mapping lists nothing), `dynsim export` its table
# (report.json: each compared observable's and residual's numbers; theorems.json: its claims and
# measurements). Numbers are written finite or null (`strict_json`)
NUMBER = schemas.kind("number", "null", infinite=False)
SIZE = schemas.kind("number", "null", low=0, infinite=False)
NAME = schemas.kind("text", "null")
RECORD = {
    "invocation": schemas.kind("object"),
    "invocation.effective_argv": schemas.kind("list"),
    "invocation.effective_argv[]": schemas.kind("text"),
    "invocation.versions": schemas.kind("object"),
    "files.*": schemas.kind("text"),
}
REPORT = {
    **RECORD,
    "errors": schemas.kind("object"),
    "errors.*": schemas.kind("object"),
    **{f"errors.*.{k}": SIZE for k in ("max_abs", "max_rel", "tolerance")},
    "errors.*.worst_step": schemas.kind("integer", "null", low=0),
    "errors.*.passed": schemas.kind("bool"),
    "errors.*.reason": NAME,
    "errors.*.max_z": NUMBER,
    # an edited report's list of residuals is read as none
    "residuals": schemas.kind("object", "list", "null"),
    "residuals.*": schemas.kind("object"),
    "residuals.*.value": NUMBER,
    "residuals.*.tolerance": SIZE,
    "residuals.*.passed": schemas.kind("bool", "null"),
    "residuals.*.reason": NAME,
}
THEOREMS = {
    **RECORD,
    "claims": schemas.kind("list"),
    "claims[]": schemas.kind("object"),
    **{f"claims[].{k}": NAME for k in ("kind", "claim", "verdict", "relation")},
    "claims[].measured": NUMBER,
    "claims[].threshold": NUMBER,
    "measurements": schemas.kind("list"),
    "measurements[]": schemas.kind("object"),
    **{f"measurements[].{k}": NAME for k in ("kind", "name")},
}


def log(msg: str) -> None:
    """One line to stderr, at once (on a line of its own: a bar drawn there makes room)."""
    progress.make_room()
    print(msg, file=sys.stderr, flush=True)


def write_json(path: str, data) -> None:
    """`data` as indented strict JSON (NaN and infinities as null: `strict_json`), written
    atomically."""
    atomic_write_text(path, strict_json(data))


def invocation(args) -> dict:
    """The exact command line (`args.argv`, set by `dynsim.cli.main`), the same with a --config
    file's options spelled out (`effective_argv`: what `dynsim rerun` runs), every option's value as
    parsed, defaults included, and the package versions."""
    options = {}
    for k, v in sorted(vars(args).items()):
        if k in ("run", "setting_record", "argv", "effective_argv", "command_parser", "entry"):
            continue
        try:
            json.dumps(v)
        except TypeError:
            v = described(v)
        options[k] = v
    return {
        "command_line": ["dynsim", *getattr(args, "argv", [])],
        "effective_argv": list(getattr(args, "effective_argv", getattr(args, "argv", []))),
        "options": options,
        "versions": environment.versions(),
    }


def described(value) -> str:
    """A value JSON cannot hold, as text that is the same in every run: a function by its
    "module:qualified name" (its repr holds an address), anything else by str."""
    if isinstance(value, functools.partial):
        return described(value.func) + "".join(f", {k}={v!r}" for k, v in value.keywords.items())
    if isinstance(value, types.FunctionType):
        return f"{value.__module__}:{value.__qualname__}"
    return str(value)


def size(path) -> str:
    """The size of the file at `path` for an output line: "812 B", "3.2 kB", "4.6 MB"."""
    n = os.path.getsize(path)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def wrote(out: str, names) -> str:
    """The output line of a figure command: "wrote OUT/a.png (162.7 kB), OUT/a.npz (3.2 MB),
    ..."."""
    return "wrote " + ", ".join(
        f"{os.path.join(out, n)} ({size(os.path.join(out, n))})" for n in names
    )


def warn_unread(args, unread: dict[str, str]) -> None:
    """A warning line for each config option given (typed or in --config) that this run does not
    read: `unread` maps field -> why (no option is silently ignored). A value equal to the command's
    default changes nothing and is not warned about (a --print-config file spells out every
    field)."""
    given = changed(args)
    for field, why in unread.items():
        if field in given:
            log(
                f"warning: --{field.replace('_', '-')} = {getattr(args, field)} is not read "
                f"here: {why}"
            )


def write_npz(path: str, arrays: dict) -> None:
    """`arrays` as an npz, written atomically."""
    atomic_savez(path, arrays)


def run_logged(label: str, total: int | None, fn, timings: dict, key: str, unit: str = "steps"):
    """Run `fn()` under a progress bar of `total` `unit`s (None: the run's own, e.g. a flow's save
    times), time it, and pass its warnings to stderr. The bar shows once the run has taken
    `progress.DELAY` seconds; off a terminal it writes one plain line at most every
    `progress.INTERVAL` seconds instead."""
    resources.say_pending()  # the work starts: the estimate, if long, is its first line
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with progress.bar(total, label, unit=unit, delay=progress.DELAY):
            out = fn()
    timings[key] = time.perf_counter() - t0
    for w in caught:
        log(f"warning: {w.message}")
    log(f"{label}: done in {timings[key]:.1f} s")
    return out


def sha256(path: str) -> str:
    """The SHA-256 of the file at `path` (hex)."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


class Staged:
    """A command's files as one set: `with Staged(out) as stage:` write each file to
    `stage.path(name)` (a fresh temporary folder inside `out`), then `stage.commit(record, data)`
    writes `data` as the JSON `record` with "files": {name: SHA-256} of the others, and moves the
    files into `out`, the record last. A failure before the commit (a full disk, Ctrl-C) leaves
    `out` as it was; so does a target that cannot take a file (a folder of that name in `out`: every
    target is checked before the first move, so the set moves whole or not at all); a kill during
    the moves (microseconds) leaves a record whose digests do not match, which `mismatched`
    reports. The temporary folder goes in every case."""

    def __init__(self, out: str):
        self.out, self.dir = out, None

    def __enter__(self) -> "Staged":
        os.makedirs(self.out, exist_ok=True)
        self.dir = tempfiles.mkdtemp(self.out)
        return self

    def path(self, name: str) -> str:
        """Where to write the file `name` of the set."""
        return os.path.join(self.dir, name)

    def commit(self, record: str, data: dict, drop=()) -> None:
        """Write the record with the digests of the files written so far, then move every file into
        place and remove the files of the set named in `drop` that this run did not write (compare
        --no-plot: an older compare.png)."""
        names = sorted(n for n in os.listdir(self.dir) if n != record)
        for name in [*names, record]:  # a rename onto a folder fails: none is moved then
            target = os.path.join(self.out, name)
            if os.path.isdir(target) and not os.path.islink(target):
                raise IsADirectoryError(
                    errno.EISDIR, f"a folder is where the output file {name} goes", target
                )
        write_json(self.path(record), {**data, "files": {n: sha256(self.path(n)) for n in names}})
        for name in names:
            os.replace(self.path(name), os.path.join(self.out, name))
        for name in set(drop) - set(names):
            if os.path.isfile(os.path.join(self.out, name)):
                os.unlink(os.path.join(self.out, name))
        os.replace(self.path(record), os.path.join(self.out, record))

    def __exit__(self, kind, exc, tb) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)
        if isinstance(exc, OSError) and str(exc.filename).startswith(
            self.dir + os.sep
        ):  # name the file's own place
            where = os.path.join(self.out, os.path.relpath(exc.filename, self.dir))
            raise OSError(exc.errno, exc.strerror, where) from exc


def recorded_files(record_path: str) -> dict[str, str]:
    """The "files" a record (report.json, a figure's .json) lists: {name: SHA-256}; {} in one
    written before digests were recorded. Only plain names count (a file of the record's own
    folder): an edited record naming "/etc/passwd" or "../x" lists nothing there."""
    data = inputs.read_json(record_path, MAX_RECORD_BYTES, "report")
    files = data.get("files") if isinstance(data, dict) else None
    # an edited record's "files" that is not {name: digest} lists nothing
    if not isinstance(files, dict):
        return {}
    return {
        k: v
        for k, v in files.items()
        if isinstance(k, str)
        and isinstance(v, str)
        and k not in ("", ".", "..")
        and os.path.basename(k) == k
        and (os.altsep is None or os.altsep not in k)
    }


def mismatched(record_path: str) -> list[str]:
    """The files a record lists (`recorded_files`) that are missing or differ from their digest
    beside it (a folder holding parts of two runs); [] when all match. A listed name that is not a
    regular file inside the folder, or is larger than any dynsim output, is not the recorded file
    (and is not read)."""
    folder = os.path.dirname(os.path.abspath(record_path))

    def same(name: str, digest: str) -> bool:
        path = os.path.join(folder, name)
        try:
            inputs.regular_file(path, MAX_FILE_BYTES, "file", inside=folder)
        except ValueError:
            return False
        return sha256(path) == digest

    return [n for n, digest in recorded_files(record_path).items() if not same(n, digest)]


def emit_compare(args, report, out: dict, trajectories: dict, plot, extra: list) -> int:
    """The outputs of every `compare`: report.json (`out`), trajectories.npz, compare.png via
    `plot(path)` unless
    --no-plot; then `out` as JSON (--json) or the report's table, the `extra` lines and what was
      written.
    Exit 0 when the levels agree, 1 when they disagree; an approximation's gap (`Report.verdict`
    "APPROXIMATION GAP") exits 0 unless --strict. The three go in as one set (`Staged`):
    report.json, moved last, records the digests of the other two."""
    with Staged(args.out) as stage:
        save_many(stage.path("trajectories.npz"), trajectories, compressed=True)
        if not args.no_plot:
            plot(stage.path("compare.png"))
        stage.commit("report.json", {**out, "invocation": invocation(args)}, drop=["compare.png"])
    if args.json:
        print(strict_json(out))
    else:
        print(report.table())
        for line in extra:
            print(line)
        print(
            wrote(
                args.out,
                ["report.json", "trajectories.npz"] + ([] if args.no_plot else ["compare.png"]),
            )
        )
    if report.verdict == "APPROXIMATION GAP" and not args.strict:
        print("the approximation's gap is reported, not a failure (exit 0; --strict exits 1 on it)")
        return EXIT_AGREE
    return EXIT_AGREE if report.passed else EXIT_DISAGREE


def run_claims(
    args, total: int, evaluate, config: dict, extra: dict | None = None, unit: str = "runs"
) -> int:
    """`check-theorems`: evaluate the claims (`evaluate(log)` -> [Claim | Measurement]) under a
    progress bar of `total` units (the evaluator moves it with `progress.advance` per finished run,
    or compiled runs per step when unit="steps"), write theorems.json ({"config", "claims",
    "measurements", "timings", **extra}) to --out, print the table or (--json) {"config", "claims",
    "measurements"}. The exit status is `dynsim.claims.exit_code`'s: 0 every claim holds, 1 some
    claim fails, 3 none fails but some could not be judged."""
    from dynsim import evidence  # matplotlib, once the claims are judged

    os.makedirs(args.out, exist_ok=True)
    timings: dict = {}
    found = run_logged("claims", total, lambda: evaluate(log), timings, "seconds", unit=unit)
    data = claims_mod.to_dict(found, config)
    write_json(
        os.path.join(args.out, "theorems.json"),
        {**data, "timings": timings, **(extra or {}), "invocation": invocation(args)},
    )
    provenance = {"device": environment.device(), "versions": environment.versions()}
    evidence.draw(
        found,
        os.path.join(args.out, "theorems.png"),
        f"dynsim {' '.join(getattr(args, 'argv', [])[:2])}: what each verdict read",
        [provenance],
    )
    text = claims_mod.to_json(found, config) if args.json else None
    verbose = getattr(args, "verbose", False)
    print(text or results.table(found, verbose, "--verbose, or theorems.json"))
    log(wrote(args.out, ["theorems.json", "theorems.png"]))
    return claims_mod.exit_code(found)


def check_confidence(confidence: float) -> None:
    """--confidence lies strictly between 0 and 1."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(
            f"--confidence = {confidence} is invalid: must lie strictly between 0 and 1"
        )
