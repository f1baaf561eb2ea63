"""A hostile-folder probe table, generated: every format dynsim reads back from a folder
(`dynsim.schemas.FORMATS`) gets the corruptions of its kind (an 8 GiB sparse file, a FIFO, a link
to a FIFO or to a copy outside the folder, an archive declaring more than it holds, each field of
the format's schema given every JSON type it may not have and every number outside its range, a
file name with a separator or "..", a claim dated a day ahead), and each corruption is run through
every command and library call that reads the format. Each ends in a one-line refusal naming the
file (and, for a schema case, the field): exit 2 from the command line, run in-process, or a
ValueError from the library; or in the format's documented recovery (docs/data.md §4: a stored
point set aside and recomputed, a stale claim taken over, a manifest or a report's odd file names
ignored). Within seconds, and nothing outside the folder opened or written. A format without
probes or without a reader fails `test_every_format_has_probes_and_readers`."""

from __future__ import annotations

import copy
import csv
import functools
import io
import json
import math
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
import tracemalloc
import warnings
import zipfile
import zlib
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np
import pytest

import dynsim
from dynsim import Trajectory, cli, inputs, schemas
from dynsim.cli import output
from dynsim.store import SUMMARY, Store, row, summary_schema
from dynsim.sweeps import frames, locks, plots
from dynsim.trajectory import META, load_many, many_to_arrays, write_npz
from tests.toy_setting import levels
from tests.toy_setting.setting import SETTING as TOY

dynsim.register(TOY)  # the folders come from its runs, the smallest a compare and a sweep make
# a recovered sweep recomputes a toy point: the run itself, not under test here, is remembered (each
# call of the toy's reduced level compiles its loop anew)
REMEMBERED = functools.lru_cache(levels.reduced)

SWEEP = ["sweep", "toy", "--eta", "0.1,0.2"]
# seconds a case may take in-process: a refusal reads a few kilobytes, a recovery recomputes one
# remembered toy point or waits SHORT seconds for a claim to go stale; a FIFO opened for reading
# blocks forever and reading 8 GiB takes far longer, so either fails the bound
SECONDS = 10
SPARSE = 8 << 30  # the size: an 8 GiB file of holes, which costs no disk
SHORT = 0.05  # STALE_SECONDS and UNWRITTEN_SECONDS in the sweep's lock cases (300 s and 10 s)

# the file each format is, inside its folder ("{key}": the store key of the first point)
FILES = {
    "report.json": "report.json",
    "theorems.json": "theorems.json",
    "trajectories.npz": "trajectories.npz",
    "table.csv": "table.csv",
    "sweep.json": "sweep.json",
    "store point": "points/{shard}/{key}.npz",
    "lock": "locks/{key}.lock",
}
# the source folder each format's case folder is copied from, and the files kept from it
FOLDERS = {
    "report.json": ("compare", ["report.json"]),
    "theorems.json": ("check-theorems", ["theorems.json"]),
    "trajectories.npz": ("compare", ["trajectories.npz"]),
    "table.csv": ("sweep", ["table.csv", "sweep.json"]),
    "sweep.json": ("sweep", None),
    "store point": ("sweep", None),
    "lock": ("sweep", None),
}
# every JSON type, as a value of it (an integer is a wrong type only where a number is: 0.5 stands
# for both)
VALUES = {"object": {"a": 1}, "list": [1], "text": "x", "null": None, "bool": True, "number": 0.5}
# the same as table.csv cells (a list or a mapping is text in a cell)
CELLS = {"text": "x", "null": "", "bool": "True", "number": "0.5"}


# ---------------------------------------------------------------------------------------------
# every path opened, renamed, removed or written while a case runs ("on"), resolved at that moment:
# an open follows links (but O_CREAT | O_EXCL, which fails on any existing entry); a rename or a
# removal acts on the entry itself, not on a link's target
WATCHED: dict = {"on": False, "paths": []}
FOLLOWED = {"open", "os.link", "os.truncate", "os.utime", "os.chmod"}
ENTRIES = {"os.rename", "os.remove", "os.rmdir", "os.mkdir"}
EXCLUSIVE = os.O_CREAT | os.O_EXCL


def _audit(event: str, args: tuple) -> None:
    if not WATCHED["on"] or event not in FOLLOWED | ENTRIES:
        return
    flags = args[2] if event == "open" and len(args) > 2 and isinstance(args[2], int) else 0
    exclusive = flags & EXCLUSIVE == EXCLUSIVE
    for arg in args[:2]:
        if isinstance(arg, (str, bytes, os.PathLike)):
            path = os.path.abspath(os.fsdecode(arg))
            folder = os.path.realpath(os.path.dirname(path))
            entry = event in ENTRIES or exclusive
            real = os.path.join(folder, os.path.basename(path)) if entry else os.path.realpath(path)
            WATCHED["paths"].append(real)


_HOOKED: list = []  # an audit hook cannot be removed: installed once, by the first case


class Hung(BaseException):
    """A case still running after SECONDS."""


# ---------------------------------------------------------------------------------------------
# the valid folders, made once


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> Path:
    if not _HOOKED:  # here, not at import: a worker that collects but runs no case is not hooked
        sys.addaudithook(_audit)
        _HOOKED.append(True)
    base = tmp_path_factory.mktemp("sources")
    for argv in (["compare", "toy", "--no-plot"], ["check-theorems", "toy"], SWEEP):
        assert cli.main([*argv, "--out", str(base / argv[0])]) == 0
    return base


def keys(folder: Path) -> list[str]:
    """The store keys of a sweep folder's points, in its table's order."""
    return [r["key"] for r in frames.read_table(str(folder)).rows]


def target(fmt: str, folder: Path) -> Path:
    """The file of format `fmt` in the case folder."""
    key = keys(folder)[0] if fmt in ("store point", "lock") else ""
    return folder / FILES[fmt].format(key=key, shard=key[:2])


def case_folder(fmt: str, sources: Path, tmp: Path) -> Path:
    """A fresh copy of the source folder of `fmt`, holding only what its readers read; a lock case's
    point is removed (a sweep claims only a point it must compute)."""
    source, kept = FOLDERS[fmt]
    folder = tmp / "folder"
    if kept is None:
        shutil.copytree(sources / source, folder)
    else:
        folder.mkdir()
        for name in kept:
            shutil.copy(sources / source / name, folder / name)
    if fmt == "lock":  # a live claim: this process's
        os.unlink(target("store point", folder))
        claim = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        target(fmt, folder).write_text(json.dumps(claim))
    return folder


# ---------------------------------------------------------------------------------------------
# reading and writing each format's document (what the schema cases edit)


def npz_arrays(path: Path) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


def read_doc(fmt: str, path: Path):
    """The format's parsed document: JSON; a trajectories file's first meta; a point's summary; a
    table's columns (lists of cells)."""
    if fmt == "trajectories.npz":
        arrays = npz_arrays(path)
        return json.loads(str(arrays[next(k for k in arrays if k.endswith("/meta"))]))
    if fmt == "store point":
        return Store(str(path.parents[2])).load(path.stem)["summary"]
    if fmt == "table.csv":
        header, *cells = list(csv.reader(io.StringIO(path.read_text())))
        return {c: [r[i] for r in cells] for i, c in enumerate(header)}
    return json.loads(path.read_text())


def write_doc(fmt: str, path: Path, doc) -> None:
    if fmt == "trajectories.npz":
        arrays = npz_arrays(path)
        arrays[next(k for k in arrays if k.endswith("/meta"))] = np.array(json.dumps(doc))
        np.savez(path, **arrays)
    elif fmt == "store point":
        store = Store(str(path.parents[2]))
        store.save(path.stem, doc, store.load(path.stem, trajectories=True)["trajectories"])
    elif fmt == "table.csv":
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(list(doc))
        writer.writerows(zip(*doc.values()))
        path.write_text(buf.getvalue())
    else:
        path.write_text(json.dumps(doc))  # NaN and Infinity as JSON's extension writes them


EVENT = "reduced_T1"  # an event time: a column with its censoring column (`summary_schema`)
SCHEMAS = {
    "report.json": output.REPORT,
    "theorems.json": output.THEOREMS,
    "trajectories.npz": META,
    # the table's columns: a row's schema, each a column of cells
    "table.csv": {
        f"{k}[]": v for k, v in summary_schema([EVENT + "_censored"], frames.ROW).items()
    },
    "sweep.json": plots.MANIFEST,
    "store point": summary_schema([EVENT + "_censored"], SUMMARY),
    "lock": locks.CLAIM,
}


def parts(path: str) -> list[str]:
    return [p for p in path.replace("[]", ".[]").split(".") if p]


def place(doc, path: str, value):
    """A copy of `doc` with `value` at one place `path` names (an existing one, else one made: a
    pattern's key spelled with "x" for "*", a list with one item), and that place's field name."""
    doc = copy.deepcopy(doc)
    node, names = doc, parts(path)
    for i, part in enumerate(names):
        child: object = [] if i + 1 < len(names) and names[i + 1] == "[]" else {}
        last = i + 1 == len(names)
        if part == "[]":
            if not node:
                node.append(child)
            if last or not isinstance(node[0], type(child)):
                node[0] = value if last else child
            node = node[0]
            continue
        key = next((k for k in node if fnmatchcase(k, part)), part.replace("*", "x"))
        if key == EVENT:
            node.setdefault(EVENT + "_censored", None)
        if last:
            node[key] = value
        elif not isinstance(node.get(key), type(child)):
            node[key] = child
        node = node[key]
    return doc, key


def table_place(doc: dict, path: str, cell: str) -> tuple[dict, str]:
    """A copy of a table's columns with `cell` in every row of the column `path` names (a column's
    cells are read as the type they all spell), made where missing (an event time with its
    censoring column, empty)."""
    doc = {c: list(v) for c, v in doc.items()}
    rows = len(next(iter(doc.values())))
    name = parts(path)[0]
    column = next((c for c in doc if fnmatchcase(c, name)), name.replace("*", "x"))
    if column == EVENT:
        doc.setdefault(EVENT + "_censored", [""] * rows)
    doc[column] = [cell] * rows
    return doc, column


def wrong(kind: schemas.Kind) -> list[tuple[str, object]]:
    """(label, value) of every JSON type `kind` does not take, and of every number outside its
    range (read from the kind's fields here, not through `schemas.judged`)."""
    out = [(schemas.WORDS[t], v) for t, v in VALUES.items() if t not in kind.types]
    if set(kind.types) & {"number", "integer"}:
        step = 1 if "number" not in kind.types else 0.5
        if kind.low > -math.inf:
            out.append((f"below {kind.low}", kind.low - step))
        if kind.high < math.inf:
            out.append((f"above {kind.high}", kind.high + step))
        if not kind.nan:
            out.append(("NaN", math.nan))
        if not kind.infinite:
            out.append(("infinity", math.inf))
    return out


def wrong_cells(kind: schemas.Kind) -> list[tuple[str, str]]:
    """`wrong` as table.csv cells: the types a cell can spell, and the numbers outside the range."""
    out = [(schemas.WORDS[t], c) for t, c in CELLS.items() if t not in kind.types]
    if set(kind.types) & {"number", "integer"}:
        out += [(label, repr(v)) for label, v in wrong(kind) if isinstance(v, (int, float))]
    return out


# ---------------------------------------------------------------------------------------------
# the corruptions that are not a schema's: each replaces the format's file


def outside(tmp: Path) -> Path:
    return tmp / "outside"


def replace_with(path: Path, how: str, tmp: Path) -> None:
    """Replace `path` by a sparse file, a FIFO or a link to a FIFO or a copy outside the folder."""
    copy_of = outside(tmp) / "copy"
    shutil.copy(path, copy_of)
    os.unlink(path)
    if how == "sparse":
        path.write_bytes(b"")
        os.truncate(path, SPARSE)
    elif how == "fifo":
        os.mkfifo(path)
    else:
        os.symlink(outside(tmp) / "fifo" if how == "link-fifo" else copy_of, path)


def member(kind: str, path: Path) -> None:
    """Add an archive member that declares more than it holds: "bomb", 16 MiB of zeros compressed
    to kilobytes (past the point file's own size; past half the available memory the case sets,
    1 MiB); "header", a stored npy whose header declares 2^40 float64 over 8 bytes of data."""
    if kind == "bomb":
        buf = io.BytesIO()
        np.lib.format.write_array(buf, np.zeros(2 << 20))
        with zipfile.ZipFile(path, "a", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("zeros.npy", buf.getvalue())
    else:
        buf = io.BytesIO()
        header = {"descr": "<f8", "fortran_order": False, "shape": (2**40,)}
        np.lib.format.write_array_header_1_0(buf, header)
        with zipfile.ZipFile(path, "a", zipfile.ZIP_STORED) as zf:
            zf.writestr("huge.npy", buf.getvalue() + bytes(8))


def plain_names(path: Path, tmp: Path) -> None:
    """A report whose "files" name the outside copy by "..", by an absolute path and through a
    subfolder: none is a plain name of the folder, so none is read."""
    doc = json.loads(path.read_text())
    shutil.copy(path, outside(tmp) / "copy")
    digest = output.sha256(str(outside(tmp) / "copy"))
    doc["files"] = {
        "../outside/copy": digest,
        str(outside(tmp) / "copy"): digest,
        "outside/../../outside/copy": digest,
        **doc["files"],
    }
    path.write_text(json.dumps(doc))


def stale_heatmaps(path: Path, tmp: Path) -> None:
    """A manifest listing an outside heatmap: a sweep removes only plain names in its folder."""
    doc = json.loads(path.read_text())
    (outside(tmp) / "heatmap-x.png").write_bytes(b"png")
    doc["heatmap_files"] = ["../outside/heatmap-x.png", str(outside(tmp) / "heatmap-x.png")]
    path.write_text(json.dumps(doc))


def future(path: Path, tmp: Path) -> None:
    """A claim of a live process of this host (pid 1) dated a day ahead: its age is negative, and
    pid 1 started after the claim's recorded start (0.0), so it is not the claim's owner."""
    path.write_text(json.dumps({"pid": 1, "host": socket.gethostname(), "started": 0.0}))
    ahead = time.time() + 86400
    os.utime(path, (ahead, ahead))


# ---------------------------------------------------------------------------------------------
# the readers: each returns (exit code, what it said: stderr, or the library's ValueError)


def cli_reader(argv):
    def read(folder: Path, tmp: Path, capsys, monkeypatch):
        code = cli.main([a.format(folder=folder, out=tmp / "out") for a in argv])
        return code, capsys.readouterr().err

    return read


def library(call):
    def read(folder: Path, tmp: Path, capsys, monkeypatch):
        try:
            call(folder)
        except ValueError as exc:
            return 2, str(exc)
        return 0, ""

    return read


def sweep(folder: Path, tmp: Path, capsys, monkeypatch):
    """`dynsim sweep ... --out FOLDER` resuming, claims made stale in SHORT seconds."""
    monkeypatch.setattr(locks, "STALE_SECONDS", SHORT)
    monkeypatch.setattr(locks, "UNWRITTEN_SECONDS", SHORT)
    monkeypatch.setattr(dynsim.sweeps, "WAIT_SECONDS", SHORT / 5)
    monkeypatch.setattr(levels, "reduced", REMEMBERED)
    code = cli.main([*SWEEP, "--out", str(folder)])
    return code, capsys.readouterr().err


def claim(folder: Path, tmp: Path, capsys, monkeypatch):
    """`Locks.claim` of the case's claim: refused when first seen (its time is now, or ahead),
    taken once this process's clock has passed STALE_SECONDS, or at once where its pid is not
    its owner (`future`: pid 1 started after the claim's recorded start); 0: held."""
    mine = locks.Locks(str(folder))
    now = [0.0]
    mine._clock = lambda: now[0]
    key = keys(folder)[0]
    first = mine.claim(key)
    now[0] += locks.STALE_SECONDS + 1
    taken = first or mine.claim(key)
    held = json.loads(Path(mine.path(key)).read_text()) if taken else {}
    mine.release(key)
    return (0 if taken and held.get("pid") == os.getpid() else 1), f"first claim: {first}"


def stored(folder: Path) -> None:
    Store(str(folder)).load(keys(folder)[0], trajectories=True, check=row)


def table(folder: Path) -> None:
    frames.to_pandas(frames.read_table(str(folder)))


READERS = {
    "report.json": {
        "export": cli_reader(["export", "{folder}"]),
        "rerun": cli_reader(["rerun", "{folder}/report.json", "--out", "{out}"]),
    },
    "theorems.json": {
        "export": cli_reader(["export", "{folder}"]),
        "rerun": cli_reader(["rerun", "{folder}/theorems.json", "--out", "{out}"]),
    },
    "trajectories.npz": {
        "export": cli_reader(["export", "{folder}"]),
        "Trajectory.load": library(lambda f: Trajectory.load(f / "trajectories.npz")),
        "load_many": library(lambda f: load_many(f / "trajectories.npz")),
    },
    "table.csv": {"export": cli_reader(["export", "{folder}"]), "read_table": library(table)},
    "sweep.json": {"sweep": sweep},
    "store point": {"sweep": sweep, "Store.load": library(stored)},
    "lock": {"sweep": sweep, "Locks.claim": claim},
}
# the formats whose corruptions are recovered from, not refused (docs/data.md §4)
RECOVERED = {"sweep.json", "store point", "lock"}
# a library call given a path reads what the caller names: a link to a readable copy is followed
FOLLOWS = {("Trajectory.load", "link-copy"), ("load_many", "link-copy")}


def recovered(fmt: str, reader: str, folder: Path, code: int, caught, field) -> None:
    """The format's documented recovery happened (a stored point's warning names the field)."""
    if fmt == "sweep.json":  # ignored, and the sweep's own written in its place
        assert code == 0
        assert isinstance(json.loads((folder / "sweep.json").read_text()), dict)
        assert not (folder / "sweep.json").is_symlink()
    elif fmt == "store point":  # set aside with a warning naming it, recomputed by the sweep
        path = target(fmt, folder)
        assert os.path.lexists(f"{path}.corrupt")
        said = [
            str(w.message) for w in caught if f"stored point {path} is corrupt" in str(w.message)
        ]
        assert said and (field is None or field in said[0]), [str(w.message) for w in caught]
        if reader == "sweep":
            assert code == 0 and Store(str(folder)).load(path.stem, check=row) is not None
    elif fmt == "lock":  # taken over: computed, then released (the sweep), or held (the library)
        assert code == 0
        if reader == "sweep":
            assert Store(str(folder)).load(keys(folder)[0]) is not None
            assert not os.path.lexists(target(fmt, folder))
    else:  # a report's file names with a separator: none listed, none read
        assert code == 0


# ---------------------------------------------------------------------------------------------
# the table


def corruptions(fmt: str) -> list[tuple[str, str, object]]:
    """(kind, label, how) of every corruption of `fmt`; how: what replaces the file, a function of
    (path, tmp), or (schema field, wrong value)."""
    out = [("sparse", "8 GiB of holes", "sparse"), ("fifo", "a FIFO", "fifo")]
    out += [("link-fifo", "a link to a FIFO outside", "link-fifo")]
    out += [("link-copy", "a link to a copy outside", "link-copy")]
    if fmt in ("trajectories.npz", "store point"):
        out += [("bomb", "a member declaring 16 MiB", "bomb")]
        out += [("header", "an npy header declaring 2^40 floats", "header")]
    if fmt == "report.json":
        out += [("path", "files named with a separator or ..", plain_names)]
    if fmt == "sweep.json":
        out += [("path", "heatmaps named with a separator or ..", stale_heatmaps)]
    if fmt == "lock":
        out += [("future", "a live claim dated a day ahead", future)]
    for field, kind in SCHEMAS[fmt].items():
        values = wrong_cells(kind) if fmt == "table.csv" else wrong(kind)
        if parts(field)[0] in frames.TEXT_COLUMNS:  # a store key is text whatever it spells
            values = [(label, cell) for label, cell in values if cell == ""]
        out += [("schema", f"{field} = {label}", (field, value)) for label, value in values]
    return out


def table_params() -> list:
    return [
        pytest.param(fmt, kind, how, reader, id=f"{fmt}-{reader}-{label}")
        for fmt in schemas.FORMATS
        for kind, label, how in corruptions(fmt)
        for reader in READERS[fmt]
        if (reader, kind) not in FOLLOWS
    ]


def corrupt(fmt: str, kind: str, how, folder: Path, tmp: Path) -> str | None:
    """Corrupt the case folder; returns the field a schema case breaks (its last name)."""
    path = target(fmt, folder)
    if kind in ("sparse", "fifo", "link-fifo", "link-copy"):
        replace_with(path, kind, tmp)
    elif kind in ("bomb", "header"):
        member(kind, path)
    elif kind in ("path", "future"):
        how(path, tmp)
    else:
        field, value = how
        if fmt == "table.csv":
            doc, name = table_place(read_doc(fmt, path), field, value)
        else:
            doc, name = place(read_doc(fmt, path), field, value)
        write_doc(fmt, path, doc)
        return name
    return None


def listing(where: Path) -> dict:
    """Every entry under `where` with its size and modification time (links not followed)."""
    out = {}
    for root, dirs, files in os.walk(where):
        for name in dirs + files:
            info = os.lstat(os.path.join(root, name))
            out[os.path.relpath(os.path.join(root, name), where)] = (info.st_size, info.st_mtime)
    return out


def hung(*_):
    raise Hung(f"still running after {SECONDS} s")


@pytest.mark.parametrize("fmt,kind,how,reader", table_params())
def test_hostile_folder(fmt, kind, how, reader, sources, tmp_path, capsys, monkeypatch):
    outside(tmp_path).mkdir()
    os.mkfifo(outside(tmp_path) / "fifo")
    folder = case_folder(fmt, sources, tmp_path)
    field = corrupt(fmt, kind, how, folder, tmp_path)
    # a compressed member may declare past its file's size: against 1 MiB available, 16 MiB is one
    monkeypatch.setattr(inputs, "available_memory", lambda: 1 << 20)
    before = listing(outside(tmp_path))
    capsys.readouterr()
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    started = time.perf_counter()
    WATCHED.update(on=True, paths=[])
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            code, err = READERS[fmt][reader](folder, tmp_path, capsys, monkeypatch)
    finally:
        WATCHED["on"] = False
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    seconds = time.perf_counter() - started
    assert seconds < SECONDS
    outer = os.path.realpath(outside(tmp_path)) + os.sep
    assert not [p for p in WATCHED["paths"] if p.startswith(outer)], "opened outside the folder"
    assert listing(outside(tmp_path)) == before
    assert set(os.listdir(tmp_path)) <= {"folder", "outside", "out"}
    assert "Traceback" not in err
    if fmt in RECOVERED or kind == "path":
        recovered(fmt, reader, folder, code, caught, field)
        if reader == "Locks.claim":  # only a claim its pid cannot own is taken at first sight
            assert ("first claim: True" in err) == (kind == "future"), err
        return
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1, err
    assert FILES[fmt] in lines[0], lines[0]
    assert field is None or field in lines[0], lines[0]


def test_every_format_has_probes_and_readers():
    """A format dynsim reads back is probed: add its readers and file here."""
    assert set(READERS) == set(FILES) == set(FOLDERS) == set(SCHEMAS) == set(schemas.FORMATS)
    probed = {p.values[0] for p in table_params()}
    assert probed == set(schemas.FORMATS)
    for fmt in schemas.FORMATS:
        kinds = {kind for kind, _, _ in corruptions(fmt)}
        assert {"sparse", "fifo", "link-fifo", "link-copy", "schema"} <= kinds, fmt


def test_a_wrong_value_is_generated_for_every_type_and_bound():
    """Negative control of `wrong`: a field taking only a bounded integer gets every other type,
    a number past each bound, NaN and an infinity; one taking anything gets nothing."""
    bounded = schemas.kind("integer", low=1, high=9, infinite=False)
    labels = [label for label, _ in wrong(bounded)]
    assert labels == [
        "a mapping",
        "a list",
        "text",
        "null",
        "a boolean",
        "a number",
        "below 1",
        "above 9",
        "NaN",
        "infinity",
    ]
    assert wrong(schemas.kind(*VALUES, nan=True)) == []
    assert [label for label, _ in wrong_cells(schemas.kind("bool"))] == ["text", "null", "a number"]


# ---------------------------------------------------------------------------------------------
# a zip bomb declaring 4 GiB, and a planted claim of pid 1 dated ahead, each on its own

BOMB_ROWS = 2**29 - 64  # float64: 4 GiB less 512 bytes, within a plain (not ZIP64) member
MiB = 1 << 20


def raw_zip(path: Path, members: list) -> None:
    """A zip archive written byte by byte: (name, method, data as stored, declared size, CRC)."""
    out, central = bytearray(), bytearray()
    for name, method, data, size, crc in members:
        encoded, offset = name.encode(), len(out)
        fields = (20, 0, method, 0, 0x21, crc, len(data), size, len(encoded))
        out += struct.pack("<4s5H3L2H", b"PK\x03\x04", *fields, 0) + encoded + data
        central += struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, *fields, 0, 0, 0, 0, 0, offset)
        central += encoded
    end = (len(members), len(members), len(central), len(out), 0)
    path.write_bytes(bytes(out + central + struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, *end)))


def stored_members(run: Trajectory) -> list:
    """The members `save_many` writes for {"reduced": run}, as `raw_zip` takes them (stored)."""
    buf = io.BytesIO()
    write_npz(buf, many_to_arrays({"reduced": run}))
    with zipfile.ZipFile(buf) as zf:
        return [
            (name, zipfile.ZIP_STORED, data, len(data), zlib.crc32(data))
            for name in zf.namelist()
            for data in [zf.read(name)]
        ]


def bomb(path: Path, how: str) -> None:
    """A compare's trajectories.npz (one trajectory of 2 steps) with a member reduced/obs/zeros
    whose npy header declares BOMB_ROWS float64: "declared", a few compressed bytes whose zip entry
    declares the 4 GiB; "deflated", a real deflate stream of 4 GiB of zeros (4 MiB: one MiB of
    zeros compresses to the same bytes after each full flush, so it is repeated, not compressed
    4,096 times; its CRC is left 0, never checked before the refusal)."""
    members = stored_members(Trajectory(np.arange(2), {"x": np.zeros(2)}, {"level": "reduced"}))
    head = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        head, {"descr": "<f8", "fortran_order": False, "shape": (BOMB_ROWS,)}
    )
    size = len(head.getvalue()) + 8 * BOMB_ROWS
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    if how == "declared":
        data = deflate.compress(head.getvalue() + bytes(8)) + deflate.flush()
    else:
        start = deflate.compress(head.getvalue()) + deflate.flush(zlib.Z_FULL_FLUSH)
        block = deflate.compress(bytes(MiB)) + deflate.flush(zlib.Z_FULL_FLUSH)
        assert block == deflate.compress(bytes(MiB)) + deflate.flush(zlib.Z_FULL_FLUSH)
        tail = deflate.compress(bytes(8 * BOMB_ROWS - 4096 * MiB + 2 * MiB)) + deflate.flush()
        data = start + block * 4094 + tail
    members.append(("reduced/obs/zeros.npy", zipfile.ZIP_DEFLATED, data, size, 0))
    raw_zip(path, members)


BOMB_READERS = {
    "Trajectory.load": library(lambda f: Trajectory.load(f / "trajectories.npz")),
    "load_many": library(lambda f: load_many(f / "trajectories.npz")),
    "export": cli_reader(["export", "{folder}"]),
}


@pytest.mark.parametrize("reader", BOMB_READERS)
@pytest.mark.parametrize("how", ["declared", "deflated"])
def test_a_zip_bomb_declaring_4_gib_is_refused_before_reading(
    how, reader, tmp_path, capsys, monkeypatch
):
    """Where half the memory would take it (1 TiB available), a member declaring 4 GiB is refused
    before any of it is read, in one line naming the file and the member: "declared" by its
    compressed bytes (79 cannot hold 4 GiB: deflate's ratio is at most 1032), "deflated" (4 MiB
    can) by the trajectory's layout (an observable of 536,870,848 rows beside 2 steps). Within
    seconds, the 4 GiB never allocated."""
    folder = tmp_path / "folder"
    folder.mkdir()
    bomb(folder / "trajectories.npz", how)
    with zipfile.ZipFile(folder / "trajectories.npz") as zf:
        assert zf.getinfo("reduced/obs/zeros.npy").file_size > 4 * 2**30 - 1024
    monkeypatch.setattr(inputs, "available_memory", lambda: 1 << 40)
    capsys.readouterr()
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    tracemalloc.start()
    try:
        code, err = BOMB_READERS[reader](folder, tmp_path, capsys, monkeypatch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    lines = [x for x in err.splitlines() if x.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "trajectories.npz" in lines[0] and "reduced/obs/zeros.npy" in lines[0], lines[0]
    why = "more than they can hold" if how == "declared" else "536,870,848 rows, its trajectory"
    assert why in lines[0], lines[0]
    assert peak < 256 * MiB, peak  # an import's objects at most: 4 GiB is never allocated


def test_a_trajectories_file_whose_member_reads_short_is_refused_naming_the_file(tmp_path):
    """A member whose stream ends before what its header declares (a truncated deflate stream
    whose declared size the bound allows) is refused in one line naming the file, not numpy's
    bare "EOF" message."""
    path = tmp_path / "t.npz"
    run = Trajectory(np.arange(2), {"x": np.arange(2 * 4096.0).reshape(2, 4096)}, {})
    members = []
    for name, method, data, size, crc in stored_members(run):
        if name == "reduced/obs/x.npy":  # half its data, declared whole
            short = zlib.compressobj(9, zlib.DEFLATED, -15)
            data, method = (
                short.compress(data[: len(data) // 2]) + short.flush(),
                zipfile.ZIP_DEFLATED,
            )
        members.append((name, method, data, size, crc))
    raw_zip(path, members)
    with pytest.raises(ValueError) as exc:
        Trajectory.load(path)
    text = str(exc.value)
    assert text.startswith(f"path = {str(path)!r} is invalid: unreadable (") and "\n" not in text


def planted(folder: Path, key: str, pid: int, started: float, ahead: float = 86400.0) -> Path:
    """A claim of `pid` on this host recording `started`, its file dated `ahead` seconds ahead."""
    path = folder / f"{key}.lock"
    path.write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "started": started}))
    when = time.time() + ahead
    os.utime(path, (when, when))
    return path


def test_a_claim_its_live_pid_cannot_own_is_taken_at_once(tmp_path):
    """Judged by when the pid's process started, not by the claim's time (a day ahead, so its age
    is negative): pid 1 recording a start before it began, a child recording a start an hour
    before it was spawned (a reused pid), and a start ahead of this host's clock are taken at the
    first claim; the same child recording a start after it began, and this test's parent, are
    live owners and keep their claims."""
    mine = locks.Locks(str(tmp_path))
    folder = Path(mine.directory)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        time.sleep(locks.START_SLACK + 0.5)  # the child has begun before the next time.time()
        owned = time.time()
        stale = {
            "a" * 64: planted(folder, "a" * 64, 1, 0.0),
            "b" * 64: planted(folder, "b" * 64, child.pid, owned - 3600),
            "c" * 64: planted(folder, "c" * 64, os.getppid(), time.time() + 3600),
        }
        live = {
            "d" * 64: planted(folder, "d" * 64, child.pid, owned),
            "e" * 64: planted(folder, "e" * 64, os.getppid(), time.time()),
        }
        for key, path in stale.items():
            assert mine.claim(key), key
            assert json.loads(path.read_text())["pid"] == os.getpid()
        for key, path in live.items():
            assert not mine.claim(key), key
            assert json.loads(path.read_text())["pid"] != os.getpid()
    finally:
        child.kill()
        child.wait()


def test_a_sweep_takes_a_planted_claim_of_pid_1_dated_ahead_at_once(tmp_path, capsys, monkeypatch):
    """The issue's lock: pid 1 of this host, dated a day ahead, recording the start 0.0. The sweep
    (STALE_SECONDS as shipped, 300 s) takes it over and computes the point within seconds."""
    monkeypatch.setattr(levels, "reduced", REMEMBERED)
    out = tmp_path / "sweep"
    assert cli.main([*SWEEP, "--out", str(out)]) == 0
    key = keys(out)[0]
    os.unlink(target("store point", out))
    path = planted(out / "locks", key, 1, 0.0)
    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)  # the claim trusted: 300 s of waiting
    try:
        code = cli.main([*SWEEP, "--out", str(out)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert code == 0, capsys.readouterr().err
    assert not path.exists() and Store(str(out)).load(key) is not None
