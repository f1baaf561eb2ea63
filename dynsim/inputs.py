"""Every file dynsim reads, read one way: a regular file (never a FIFO, a device or a folder, so no
read hangs or runs forever), at most a stated size (checked before reading, then again while
reading), JSON and TOML parsed with a nesting bound; each refusal one line naming the file, as
`what = 'path' is invalid: why` (a ValueError, which the command line prints as "dynsim: error:").

`inside`: a file that must lie in a folder (a store's points) is refused when it, or a symlink on
its way, resolves outside it.
"""

from __future__ import annotations

import json
import math
import os
import stat
import tomllib
import zipfile
import zlib
from typing import Any, Optional

import numpy as np

from dynsim import schemas
from dynsim.resources import available_memory
from dynsim.schemas import InputError  # dynsim.inputs.InputError too

MB = 1 << 20
# the deepest nesting of brackets a JSON or TOML input may have: dynsim's own files nest at most
# about 8 deep (a report's invocation options); Python's parsers recurse once per level and fail
# near 1,000
MAX_DEPTH = 64


def _fail(what: str, path: Any, why: str, missing: bool = False):
    exc = InputError(f"{what} = {str(path)!r} is invalid: {why}")
    exc.missing = missing
    raise exc


def read_bytes(path, cap: int, what: str, inside: Optional[str] = None) -> bytes:
    """The bytes of the regular file `path`, at most `cap` of them (`what`: the option or field
    that named the file, for the message)."""
    path = os.path.expanduser(os.fspath(path))
    if path == "":
        _fail(what, path, "an empty path")
    _check_inside(path, inside, what)
    try:
        # O_NONBLOCK: opening a FIFO for reading returns at once instead of waiting for a writer
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except FileNotFoundError:
        _fail(what, path, "no such file", missing=True)
    except IsADirectoryError:
        _fail(what, path, "a folder, not a file")
    except OSError as exc:
        _fail(what, path, exc.strerror or str(exc))
    try:
        _check(os.fstat(fd), cap, what, path)
        data = b""
        while len(data) <= cap:  # unbuffered reads of the regular file, at most cap + 1 bytes
            chunk = os.read(fd, cap + 1 - len(data))
            if not chunk:
                break
            data += chunk
    finally:
        os.close(fd)
    if len(data) > cap:  # it grew while being read
        _fail(what, path, f"more than the {cap:,} bytes it may have")
    return data


def depth(text: str) -> int:
    """The deepest nesting of [ and { in `text` outside strings and # comments (JSON's strings;
    TOML's basic, literal and multi-line strings read alike)."""
    deepest = level = 0
    quote, escaped, comment = None, False, False
    for ch in text:
        if comment:
            comment = ch != "\n"
        elif quote is not None:
            if escaped:
                escaped = False
            elif ch == "\\" and quote == '"':
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch == "#":
            comment = True
        elif ch in "[{":
            level += 1
            deepest = max(deepest, level)
        elif ch in "]}":
            level -= 1
    return deepest


def _bounded(text: str, what: str, where: Any) -> None:
    if depth(text) > MAX_DEPTH:
        _fail(what, where, f"nested more than {MAX_DEPTH} deep")


def json_text(text: str, what: str) -> Any:
    """`text` parsed as JSON, its nesting bounded (a command-line value: `what` names it)."""
    shown = text if len(text) <= 60 else text[:57] + "..."
    _bounded(text, what, shown)
    try:
        return json.loads(text)
    except ValueError as exc:
        _fail(what, shown, f"not JSON ({exc})")


def _read_text(path, cap: int, what: str, inside: Optional[str], parse, kind: str) -> Any:
    raw = read_bytes(path, cap, what, inside)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        _fail(what, path, "not UTF-8 text")
    _bounded(text, what, path)
    try:
        return parse(text)
    except ValueError as exc:  # json.JSONDecodeError and tomllib.TOMLDecodeError alike
        _fail(what, path, f"not {kind} ({exc})")


def json_object(text: str, what: str, schema: Optional[dict] = None, where=None) -> dict:
    """`json_text` that must be a JSON object holding `schema` (`dynsim.schemas`; a stored
    trajectory's meta); a refusal names the file `where`, else the text's start."""
    shown = text[:57] if where is None else os.fspath(where)
    _bounded(text, what, shown)
    try:
        value = json.loads(text)
    except ValueError as exc:
        _fail(what, shown, f"not JSON ({exc})")
    if not isinstance(value, dict):
        _fail(what, shown, f"a JSON {type(value).__name__}, not an object")
    return value if schema is None else schemas.check(value, schema, what, shown)


def read_json(path, cap: int, what: str, inside: Optional[str] = None) -> Any:
    """The JSON file `path` (`read_bytes`, then parsed with its nesting bounded)."""
    return _read_text(path, cap, what, inside, json.loads, "JSON")


def read_toml(path, cap: int, what: str) -> dict:
    """The TOML file `path` (`read_bytes`, then parsed with its nesting bounded)."""
    return _read_text(path, cap, what, None, tomllib.loads, "TOML")


def regular_file(path, cap: int, what: str, inside: Optional[str] = None) -> str:
    """`path` checked as `read_bytes` would check it, without reading it (for a library that opens
    it itself, such as numpy's npz reader); returns the path with "~" expanded."""
    path = os.path.expanduser(os.fspath(path))
    _check_inside(path, inside, what)
    try:
        info = os.stat(path)
    except FileNotFoundError:
        _fail(what, path, "no such file", missing=True)
    except OSError as exc:
        _fail(what, path, exc.strerror or str(exc))
    _check(info, cap, what, path)
    return path


def _check_inside(path: str, inside: Optional[str], what: str) -> None:
    """Refuse `path` when it (or a link on its way) resolves outside the folder `inside`."""
    if inside is not None:
        real, folder = os.path.realpath(path), os.path.realpath(inside)
        if os.path.commonpath([real, folder]) != folder:
            _fail(what, path, f"it resolves to {real!r}, outside {folder!r}")


def _check(info: os.stat_result, cap: int, what: str, path) -> None:
    if stat.S_ISDIR(info.st_mode):
        _fail(what, path, "a folder, not a file")
    if not stat.S_ISREG(info.st_mode):
        _fail(what, path, "not a regular file (a FIFO, socket or device is never read)")
    if info.st_size > cap:
        _fail(what, path, f"{info.st_size:,} bytes, more than the {cap:,} it may have")


def npz_sizes(path: str, most: int) -> dict[str, tuple[tuple, np.dtype]]:
    """Refuse (ValueError) an .npz archive whose members declare more than `most` bytes together,
    or more than their compressed bytes can hold (`member_bound`), before reading any data; each
    member's npy header (read alone: at most numpy's 10,000-byte header limit) must declare a plain
    dtype (no pickled objects) and a shape whose bytes fill the member exactly. A zip bomb or a
    header declaring a huge array is thus rejected without allocating it. Returns each member's
    (shape, dtype), by its name less ".npy" (what np.load calls it)."""
    headers = {}
    with zipfile.ZipFile(path) as zf:
        members = zf.infolist()
        for member in members:
            member_bound(member)
        declared = sum(m.file_size for m in members)
        if declared > most:
            raise ValueError(f"its members declare {declared} bytes, more than the {most} allowed")
        for member in members:
            with zf.open(member) as fh:
                version = np.lib.format.read_magic(fh)
                if version not in ((1, 0), (2, 0)):
                    raise ValueError(
                        f"member {member.filename}: npy format version {version} is not dynsim's"
                    )
                read_header = (
                    np.lib.format.read_array_header_1_0
                    if version == (1, 0)
                    else np.lib.format.read_array_header_2_0
                )
                shape, _, dtype = read_header(fh)
                size = math.prod(shape) * dtype.itemsize  # Python integers: no overflow
                if dtype.hasobject or fh.tell() + size != member.file_size:
                    raise ValueError(
                        f"member {member.filename}: its header declares {dtype} {shape} "
                        f"({size} bytes) in a member of {member.file_size} bytes"
                    )
            headers[member.filename.removesuffix(".npy")] = (shape, dtype)
    return headers


# the most bytes one byte of a deflate stream decodes to: a 258-byte match (the longest) per two
# bits (the shortest length and distance codes, one bit each), 1032 to 1 (RFC 1951); a member that
# declares more than this times its compressed bytes (plus one match) declares what it cannot hold
DEFLATE_RATIO = 1032
DEFLATE_SLACK = 258


def member_bound(member: zipfile.ZipInfo) -> None:
    """Refuse (ValueError) a member whose declared size its compressed bytes cannot hold: a stored
    member holds exactly its bytes, a deflated one at most DEFLATE_RATIO times them (the methods
    numpy and dynsim write; any other is refused)."""
    if member.compress_type == zipfile.ZIP_STORED:
        bound, kind = member.compress_size, "stored"
    elif member.compress_type == zipfile.ZIP_DEFLATED:
        bound, kind = DEFLATE_RATIO * member.compress_size + DEFLATE_SLACK, "deflated"
    else:
        raise ValueError(
            f"member {member.filename}: compression method {member.compress_type} is not one "
            "dynsim writes (stored or deflated)"
        )
    if member.file_size > bound:
        raise ValueError(
            f"member {member.filename} declares {member.file_size:,} bytes in "
            f"{member.compress_size:,} {kind} bytes, more than they can hold ({bound:,})"
        )


def npz_file(path, cap: int, what: str, layout=None) -> str:
    """`regular_file` for an .npz archive np.load will open: at most `cap` bytes, its members
    declaring at most its own size (stored) or, compressed, half the memory available (the arrays,
    and the copy a table of them makes): `npz_sizes`; then `layout(headers)` (the members' (shape,
    dtype) by name: what the reader expects, a ValueError saying why not), all before any data is
    read. Returns the path."""
    path = regular_file(path, cap, what)
    most = max(os.path.getsize(path), available_memory() // 2)
    try:
        headers = npz_sizes(path, most)
        if layout is not None:
            layout(headers)
    except (ValueError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        _fail(what, path, str(exc) or type(exc).__name__)
    return path
