"""`Trajectory`: recorded observables of one run, with the metadata that says who produced them."""

from __future__ import annotations

import dataclasses
import html
import json
import os
import zipfile
from typing import Any, Iterator, Optional

import numpy as np

from . import divergence, inputs, schemas, tempfiles
from .archive import MAX_FILE_BYTES, read_arrays  # noqa: F401  (dynsim.trajectory's name too)
from .divergence import NONFINITE
from .setting import load
from .tempfiles import public_mode  # noqa: F401  (dynsim.trajectory's name too)
from .validation import count_value, did_you_mean

TEMP_PREFIX = tempfiles.PREFIX  # every temporary file dynsim writes starts so (dynsim.tempfiles)
# a stored trajectory's meta (dynsim.schemas): what its readers take from it (`to_xarray`'s
# attributes; a setting's coordinates: MIM's areas, each a list of patch indices per cluster, else
# its config); any other field is the run's own record
META = {
    **{k: schemas.kind("text") for k in ("setting", "level", "mode", "dtype", "device")},
    "config": schemas.kind("object"),
    "areas": schemas.kind("list", "null"),
    "areas[]": schemas.kind("list"),
    "areas[][]": schemas.kind("list"),
    "areas[][][]": schemas.kind("integer", low=0),
}


@dataclasses.dataclass(eq=False, repr=False, slots=True)
class Trajectory:
    """Observables recorded along a run.

    steps: int array of the recorded step numbers (0 = the initial state).
    observables: name -> array whose first axis runs over `steps`.
    meta: level ("reduced" or "full"), mode, dtype, device, config, package versions, ...
    final: name -> array, what the run ends with that a later step reads (reduced MIM: the last
    state A, B, B_self; full MIM: the trained Q and the embedding E, V it was trained on); empty
    when the run leaves none. Saved and loaded with the trajectory, like the observables.

    A read-only mapping of its observables: `name in traj`, `traj[name]`, `traj.keys()`,
    `.items()`, `.get()`, `len(traj)`, iteration over the names. `traj1 == traj2` compares steps,
    every observable and final array (bitwise, NaN equal to NaN) and meta; the repr is one line
    (level, mode, steps, observables with their shapes). `to_xarray()` gives an `xarray.Dataset`
    of the observables with named axes, `to_dataframe()` a tidy table, when xarray is installed
    (`pip install 'dynsim[xarray]'`; docs/data.md). Slotted: setting
    any other attribute raises AttributeError, so what a run leaves for later is declared here.
    """

    steps: np.ndarray
    observables: dict[str, np.ndarray]
    meta: dict[str, Any]
    final: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.steps = np.asarray(self.steps, dtype=np.int64)
        self.observables = {k: np.asarray(v) for k, v in self.observables.items()}
        self.final = {k: np.asarray(v) for k, v in self.final.items()}
        for name, values in self.observables.items():
            if values.shape[:1] != self.steps.shape:
                raise ValueError(
                    f"observable {name!r} has leading shape {values.shape[:1]}, expected "
                    f"{self.steps.shape} (one row per step)"
                )

    def __getitem__(self, name: str) -> np.ndarray:
        if name not in self.observables:  # a KeyError that names the recorded ones
            raise KeyError(
                f"no observable {name!r}{did_you_mean(self.observables, name)}; recorded: "
                + ", ".join(self.observables)
            )
        return self.observables[name]

    def __contains__(self, name: object) -> bool:
        return name in self.observables

    def __iter__(self) -> Iterator[str]:
        return iter(self.observables)

    def __len__(self) -> int:
        return len(self.observables)

    def keys(self):
        """The observables' names."""
        return self.observables.keys()

    def values(self):
        """The observables' arrays (first axis: the recorded steps)."""
        return self.observables.values()

    def items(self):
        """(name, array) of every observable."""
        return self.observables.items()

    def get(self, name: str, default: Any = None) -> Any:
        """Observable `name`, or `default` when it was not recorded."""
        return self.observables.get(name, default)

    def to_xarray(self):
        """An `xarray.Dataset`: one variable per observable over the dimension "step" (the recorded
        step numbers) and the axes its setting names (MIM's fp_corr: patch, cluster, area; a
        `<name>_seeds` run axis: seed; an axis no setting names: <name>_dim1, ...), with their
        coordinates (docs/data.md); attrs: level, mode, setting, dtype, device and the whole meta
        as JSON ("meta_json"). Needs xarray (`pip install 'dynsim[xarray]'`)."""
        return frames_module("Trajectory.to_xarray").to_xarray(self)

    def to_dataframe(self, observables=None):
        """A tidy `pandas.DataFrame`: one row per (observable, step, coordinate tuple), columns
        "observable", "step", the named axes with their coordinates (MIM's fp_corr: patch,
        cluster, area, own_area, area_size), "value"; padding entries (MIM's areas j >= N_k) left
        out, a NaN the run recorded kept (docs/data.md). observables: a name or a list of names
        (default: all). Needs xarray and pandas (`pip install 'dynsim[xarray]'`)."""
        return frames_module("Trajectory.to_dataframe").to_dataframe(self, observables)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trajectory):
            return NotImplemented
        return (
            np.array_equal(self.steps, other.steps)
            and same_arrays(self.observables, other.observables)
            and same_arrays(self.final, other.final)
            and json.dumps(self.meta, default=jsonable, sort_keys=True)
            == json.dumps(other.meta, default=jsonable, sort_keys=True)
        )

    def __repr__(self) -> str:
        shown = ", ".join(
            f"{k}{list(v.shape[1:]) if v.ndim > 1 else ''}"
            for k, v in list(self.observables.items())[:8]
        )
        more = len(self.observables) - 8
        span = f"{self.steps[0]}..{self.steps[-1]}" if self.steps.size else "none"
        return (
            f"Trajectory(level={self.level!r}, mode={self.meta.get('mode', '?')!r}, "
            f"{self.steps.size} records at steps {span}, observables: {shown}"
            + (f", ... {more} more" if more > 0 else "")
            + ")"
        )

    def _repr_html_(self, limit: int = 30) -> str:
        """For Jupyter: who produced it (level, mode, setting, dtype, device), the records, then one
        row per observable (the first `limit`): its shape per record and, for a scalar, its first
        and last recorded value."""
        facts = ", ".join(
            f"{k} {self.meta[k]}"
            for k in ("level", "mode", "setting", "dtype", "device")
            if k in self.meta
        )
        span = f"{self.steps[0]}..{self.steps[-1]}" if self.steps.size else "none"
        rows = [
            f"<tr><td>{html.escape(k)}</td><td>{list(v.shape[1:]) or 'scalar'}</td>"
            + (
                f"<td>{float(v[0]):.4g}</td><td>{float(v[-1]):.4g}</td>"
                if v.ndim == 1 and v.size
                else "<td></td>" * 2
            )
            + "</tr>"
            for k, v in list(self.observables.items())[:limit]
        ]
        more = len(self.observables) - limit
        return (
            f"<p>Trajectory: {html.escape(facts)}; {self.steps.size} records at steps {span}</p>"
            "<table><tr><th>observable</th><th>per record</th><th>first</th><th>last</th></tr>"
            + "".join(rows)
            + "</table>"
            + (f"<p>... {more} more observables</p>" if more > 0 else "")
        )

    def thinned(self, per_decade: int) -> "Trajectory":
        """The records at `log_spaced(self.steps, per_decade)`: a log-time figure's data at a size
        bounded by the number of decades, not by the number of records (meta["thinned"] says so)."""
        keep = log_spaced(self.steps, per_decade)
        if keep.size == self.steps.size:
            return self
        meta = {
            **self.meta,
            "thinned": {
                "per_decade": per_decade,
                "records": int(self.steps.size),
                "kept": int(keep.size),
            },
        }
        return Trajectory(
            self.steps[keep], {k: v[keep] for k, v in self.observables.items()}, meta, self.final
        )

    @property
    def level(self) -> str:
        return str(self.meta.get("level", "?"))

    def save(self, path) -> None:
        """Write to an .npz file atomically (write to a temporary file, then rename), in a folder
        that exists: a missing one is refused (FileNotFoundError naming it), nothing written."""
        path = os.fspath(path)
        arrays = {f"obs/{k}": v for k, v in self.observables.items()}
        arrays["steps"] = self.steps
        arrays["meta"] = np.array(json.dumps(self.meta, default=jsonable))
        arrays.update({f"final/{k}": v for k, v in self.final.items()})
        atomic_savez(path, arrays)

    @classmethod
    def load(cls, path, name: str | None = None):
        """Read a file written by `save` (one trajectory) or by `save_many` (the CLI's
        trajectories.npz).

        `name` picks one of several ("reduced", "full", ...). Left out, a file with one trajectory
        gives that Trajectory and a file with several gives all of them as a `Trajectories` list (in
        the file's order; index it by position or by name: `runs["full"]`)."""
        path, arrays = read_arrays(path)
        if "steps" in arrays:
            if name is not None:
                raise ValueError(
                    f"{os.fspath(path)} holds one trajectory (written by Trajectory.save): "
                    f"leave name out (got {name!r})"
                )
            observables = {k[4:]: v for k, v in arrays.items() if k.startswith("obs/")}
            final = {k[6:]: v for k, v in arrays.items() if k.startswith("final/")}  # older: none
            return cls(
                steps=arrays["steps"],
                observables=observables,
                meta=inputs.json_object(str(arrays["meta"]), "meta", META, path),
                final=final,
            )
        many = many_from_arrays(arrays, path)
        if name is None:
            return next(iter(many.values())) if len(many) == 1 else Trajectories(many)
        if name not in many:
            raise ValueError(
                f"{os.fspath(path)} holds the trajectories {list(many)}: name= must be one of them "
                f"(got {name!r})"
            )
        return many[name]


class Trajectories(list):
    """Several named trajectories (what `save_many` writes) as a list in their saved order;
    `runs["full"]` picks one by name, `runs.names` lists the names, `name in runs` asks for one."""

    def __init__(self, named: dict[str, Trajectory]):
        super().__init__(named.values())
        self.names = list(named)

    def __getitem__(self, key):
        if isinstance(key, str):
            if key not in self.names:
                raise KeyError(f"no trajectory named {key!r}; the names are {self.names}")
            return list.__getitem__(self, self.names.index(key))
        return list.__getitem__(self, key)

    def __contains__(self, item) -> bool:
        return item in self.names if isinstance(item, str) else list.__contains__(self, item)

    def as_dict(self) -> dict[str, Trajectory]:
        """name -> Trajectory."""
        return dict(zip(self.names, self))

    def to_dataframe(self, observables=None):
        """Every run's `Trajectory.to_dataframe` in one tidy table, first column "run" (the name:
        "reduced", "full", ...); with `observables`, each run's rows of those it holds. Needs
        xarray and pandas (`pip install 'dynsim[xarray]'`)."""
        return frames_module("Trajectories.to_dataframe").runs_to_dataframe(
            self.as_dict(), observables
        )

    def __repr__(self) -> str:
        return "Trajectories(" + ", ".join(f"{n}={t!r}" for n, t in zip(self.names, self)) + ")"

    def _repr_html_(self) -> str:
        """Each run's table (`Trajectory._repr_html_`) under its name."""
        return "".join(
            f"<p><b>{html.escape(n)}</b></p>{t._repr_html_()}" for n, t in zip(self.names, self)
        )


def frames_module(what: str):
    """`dynsim.frames`, loaded on first use; without xarray (and the pandas it needs), one line
    saying what to install."""
    try:
        import xarray  # noqa: F401  (it requires pandas)
    except ImportError:
        raise ImportError(
            f"{what} needs xarray, an optional dependency of dynsim: pip install 'dynsim[xarray]'"
        ) from None
    return load("dynsim.frames")


def seed_statistics(
    records: dict, *, standard_error: bool = True, keep_seeds: bool = True
) -> dict[str, np.ndarray]:
    """Runs over R seeds (name -> (R, steps, ...)) as observables: the seed mean, `<name>_se` =
    std(ddof=1)/sqrt(R) (with `standard_error` and R >= 2) and each run as `<name>_seeds` (steps,
    ..., R) (with `keep_seeds`)."""
    out: dict[str, np.ndarray] = {}
    for name, values in records.items():
        values = np.moveaxis(np.asarray(values), 0, -1)  # (steps, ..., R)
        if name == NONFINITE:  # a step number, not a measurement: the earliest run's
            out[name] = divergence.earliest(values)
            continue
        R = values.shape[-1]
        out[name] = values.mean(axis=-1)
        if standard_error and R >= 2:
            out[f"{name}_se"] = values.std(axis=-1, ddof=1) / np.sqrt(R)
        if keep_seeds:
            out[f"{name}_seeds"] = values
    return out


def strict_json(data: Any, indent: Optional[int] = 2) -> str:
    """`data` as strict JSON (RFC 8259, what every JSON file of the CLI is): NaN and +-inf written
    as null (a strict parser rejects Python's NaN / Infinity), numpy values as numbers and
    lists, other objects as their str. allow_nan=False: a non-finite number that slipped through
    raises instead of being written."""
    return json.dumps(finite(data), indent=indent, allow_nan=False)


def finite(x: Any) -> Any:
    """`x` with its non-finite floats replaced by None, numpy values and dataclasses by plain ones
    (`jsonable`)."""
    if isinstance(x, dict):
        return {k: finite(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [finite(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if np.isfinite(x) else None
    if x is None or isinstance(x, (str, int)):  # a count past a float's range as text
        return x if x is None or isinstance(x, (str, bool)) else count_value(x)
    return (
        finite(jsonable(x))
        if isinstance(x, (np.generic, np.ndarray)) or dataclasses.is_dataclass(x)
        else str(x)
    )


def jsonable(x: Any) -> Any:
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    if dataclasses.is_dataclass(x):
        return dataclasses.asdict(x)
    return str(x)


def write_npz(fh, arrays: dict[str, np.ndarray], compressed: bool = False) -> None:
    """`arrays` as an .npz archive (what np.savez / np.savez_compressed write, read by np.load) with
    every member dated 1980-01-01, so the same arrays give the same bytes (np.savez stamps the time
    of writing: `dynsim rerun` reproduces files bit for bit)."""
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    with zipfile.ZipFile(fh, "w", compression=method, allowZip64=True) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = method
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def atomic_savez(path: str, arrays: dict[str, np.ndarray], compressed: bool = False) -> None:
    """`write_npz` to `path` atomically (a temporary file in the same folder, then a rename)."""
    tempfiles.atomic_write(path, ".npz.tmp", lambda fh: write_npz(fh, arrays, compressed))


def atomic_savefig(fig, path: str, dpi: int) -> None:
    """A matplotlib figure as PNG at `path` atomically (a uniquely named temporary file in the same
    folder, then a rename): concurrent writers of one path never share a temporary file."""
    tempfiles.atomic_write(path, ".png.tmp", lambda fh: fig.savefig(fh, format="png", dpi=dpi))


def log_spaced(steps, per_decade: int) -> np.ndarray:
    """Indices of the records that a log-time axis needs: every step <= 0 and the last record, and
    for each target 10^(k / per_decade) (k = 0, 1, ...) the first record at or after it. At most
    per_decade * log10(max step) + 1 positive records besides the last, however many there are."""
    steps = np.asarray(steps)
    if not isinstance(per_decade, int) or isinstance(per_decade, bool) or per_decade < 1:
        raise ValueError(f"per_decade = {per_decade!r} is invalid: must be an integer >= 1")
    keep = set(np.flatnonzero(steps <= 0).tolist()) | ({steps.size - 1} if steps.size else set())
    positive = np.flatnonzero(steps > 0)
    if positive.size:
        top = float(steps[positive].max())
        powers = 10.0 ** (
            np.arange(int(np.floor(per_decade * np.log10(top) + 1e-9)) + 1) / per_decade
        )
        # steps are integers: 10^(50/50) = 10.000000000000002 means 10
        targets = np.ceil(powers * (1 - 1e-12))
        order = positive[np.argsort(steps[positive], kind="stable")]
        at = np.searchsorted(steps[order], targets, side="left")
        keep |= set(order[at[at < order.size]].tolist())
    return np.array(sorted(keep), dtype=np.int64)


def same_arrays(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> bool:
    """Whether two name -> array mappings hold the same names and bitwise equal arrays (NaN equal
    to NaN)."""
    return a.keys() == b.keys() and all(
        np.array_equal(v, b[k], equal_nan=v.dtype.kind in "fc") for k, v in a.items()
    )


def many_to_arrays(trajectories: dict[str, "Trajectory"]) -> dict[str, np.ndarray]:
    """Several trajectories as named arrays, each under its own prefix: <prefix>/steps, /meta,
    /obs/<name>, /final/<name>."""
    arrays: dict[str, np.ndarray] = {}
    for prefix, t in trajectories.items():
        arrays[f"{prefix}/steps"] = t.steps
        arrays[f"{prefix}/meta"] = np.array(json.dumps(t.meta, default=jsonable))
        for k, v in t.observables.items():
            arrays[f"{prefix}/obs/{k}"] = np.asarray(v)
        for k, v in t.final.items():
            arrays[f"{prefix}/final/{k}"] = np.asarray(v)
    return arrays


def many_from_arrays(arrays, where=None) -> dict[str, "Trajectory"]:
    """The inverse of `many_to_arrays` (names without a "/" are not trajectories and are skipped; a
    trajectory saved without final arrays loads with `final` empty); each meta must hold META (a
    refusal names the file `where`)."""
    # in the saved order
    prefixes = list(dict.fromkeys(k.split("/", 1)[0] for k in arrays if "/" in k))

    def under(pre: str, part: str) -> dict[str, np.ndarray]:
        head = f"{pre}/{part}/"
        return {k[len(head) :]: arrays[k] for k in arrays if k.startswith(head)}

    return {
        pre: Trajectory(
            arrays[f"{pre}/steps"],
            under(pre, "obs"),
            inputs.json_object(str(arrays[f"{pre}/meta"]), "meta", META, where),
            under(pre, "final"),
        )
        for pre in prefixes
    }


def save_many(path, trajectories: dict[str, "Trajectory"], compressed: bool = False) -> None:
    """Several trajectories in one .npz, each under its own prefix (e.g. "reduced", "full")."""
    atomic_savez(os.fspath(path), many_to_arrays(trajectories), compressed)


def load_many(path) -> dict[str, "Trajectory"]:
    """Read what `save_many` wrote."""
    path, arrays = read_arrays(path)
    return many_from_arrays(arrays, path)


def atomic_write_text(path: str, text: str) -> None:
    """Write a text file atomically (temporary file in the same directory, then rename)."""
    tempfiles.atomic_write(path, ".tmp", lambda fh: fh.write(text.encode()))
