"""`MIMConfig`: every parameter of the MIM setting (Huang, Wen, Chi, Liang 2024, Section 2;
docs/derivations/mim-model.md §1-§3)."""

from __future__ import annotations

import dataclasses
import math
import numbers
from types import MappingProxyType
from typing import Any, ClassVar, Mapping, Optional

from dynsim.validation import Short, check_int64, check_seed, lower_bounds
from dynsim.validation import is_int as _is_int, is_real as _is_real

from .partition import build

PARTITIONS = ("grid", "random")
DTYPES = ("float64", "float32")
# the config lists every patch of every area (Python ints, about a second per million patches to
# build and check): past this it would take minutes before any run could start
MAX_P = 1 << 22


@dataclasses.dataclass(frozen=True)
class MIMConfig:
    """One MIM problem, shared by the reduced and the full level.

    Defaults are a small problem (P = 16 on a 4 x 4 grid, one cluster: a global area of 8 patches
    and four local areas of 2, 12 of 16 patches masked) on which both levels run exactly in seconds.
    `z` is normalized on construction to "const", a tuple of (value, probability) pairs, or
    ("uniform", L, U); `partitions` to a tuple (one per cluster) of tuples of areas (sorted patch
    indices, the global area first); `d=None` to P + sum_k N_k.
    """

    P: int = 16  # number of patches
    K: int = 1  # number of clusters, drawn uniformly
    # global area size about P^kappa_c (Assumption 2.2; see partition.py)
    kappa_c: Optional[float] = 0.75
    kappa_s: Optional[float] = 0.25  # local area sizes about P^kappa_s
    # gamma: round(mask_ratio P) patches are masked (Definition 2.5; MAE's 75%)
    mask_ratio: float = 0.75
    # latent law: "const" (z = 1), [(value, prob), ...] (exact), ("uniform", L, U) (sampled)
    z: Any = "const"
    eta: float = 1.0  # learning rate
    steps: int = 400  # gradient-descent steps
    record_every: int = 4  # record observables every this many steps (and at the last step)
    d: Optional[int] = None  # embedding dimension, >= P + sum_k N_k (default: equal)
    partition: str = "grid"  # "grid": rectangles on a sqrt(P) x sqrt(P) grid; "random": seeded
    partitions: Any = None  # explicit areas per cluster (global first); overrides the kappas
    N: int = 1024  # samples per step in the full level's mode "sampled"
    seed: int = 0
    dtype: str = "float64"

    # The numbers: no shape depends on them, so they are the leaves of MIMConfig as a pytree
    # (`dynsim.pytree`), traced by jit; every other field changes the areas, the query classes or a
    # table.
    NUMBERS: ClassVar[tuple[str, ...]] = ("eta",)
    # What the gradient flow does not depend on, with the value its compiled solve's static config
    # carries.
    FLOW_IGNORES: ClassVar[Mapping[str, Any]] = MappingProxyType(
        {"eta": 1.0, "steps": 0, "record_every": 1}
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "z", _normalize_z(self.z))
        if self.partitions is not None:
            object.__setattr__(self, "partitions", _normalize_partitions(self.partitions))
        _validate(self)
        if self.d is None:
            object.__setattr__(self, "d", self.P + sum(self.areas_per_cluster))

    @property
    def areas(self) -> tuple:
        """The areas P_{k,j}: per cluster a tuple of sorted patch-index tuples, area 0 the global
        one."""
        return build(self)

    @property
    def areas_per_cluster(self) -> tuple[int, ...]:
        """N_k, the number of areas of each cluster."""
        return tuple(len(a) for a in self.areas)

    @property
    def max_areas(self) -> int:
        """max_k N_k: the last axis of fp_corr and area_attention."""
        return max(self.areas_per_cluster)

    @property
    def masked(self) -> int:
        """|M| = round(mask_ratio P) (halves round up), the number of masked patches."""
        return int(math.floor(self.mask_ratio * self.P + 0.5))

    @property
    def effective_kappas(self) -> tuple[float, float]:
        """(kappa_c, kappa_s) of the realised areas: log|P_{k,1}| / log P and log(mean local size) /
        log P, cluster means."""
        logP = math.log(self.P)
        c = [math.log(len(a[0])) / logP for a in self.areas]
        s = [
            math.log(sum(len(x) for x in a[1:]) / (len(a) - 1)) / logP
            for a in self.areas
            if len(a) > 1
        ]
        return sum(c) / len(c), (sum(s) / len(s) if s else float("nan"))

    @property
    def delta(self) -> float:
        """Information gap Delta = 2 kappa_c - kappa_s - 1 (eq. 4.1, docs/derivations/mim-model.md
        §5), of the realised areas."""
        kc, ks = self.effective_kappas
        return 2 * kc - ks - 1

    def replace(self, **changes: Any) -> "MIMConfig":
        """A copy with some fields changed (validated again); a d that was the derived default is
        derived again."""
        if "d" not in changes and self.d == self.P + sum(self.areas_per_cluster):
            changes["d"] = None
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _fail(field: str, value: Any, allowed: str) -> None:
    # a bounded repr (`dynsim.validation.Short`): a value nested 1,000 deep or with 10^6 items
    # prints a short line
    raise ValueError(f"MIMConfig.{field} = {_SHORT.repr(value)} is invalid: {allowed}")


Z_HELP = (
    '"const" (z = 1), a list of (value, probability) pairs with values > 0 and probabilities > '
    '0 summing to 1 (exact), or ("uniform", L, U) with 0 < L <= U (sampled)'
)


def _normalize_z(z: Any) -> Any:
    if isinstance(z, str):
        if z != "const":
            _fail("z", z, Z_HELP)
        return z
    if isinstance(z, dict):
        z = list(z.items())
    if isinstance(z, (list, tuple)) and len(z) == 3 and z[0] == "uniform":
        L, U = z[1], z[2]
        if not (_is_real(L) and _is_real(U) and 0 < L <= U):
            _fail("z", z, Z_HELP)
        return ("uniform", float(L), float(U))
    try:
        pairs = tuple((float(v), float(p)) for v, p in z)
    except (TypeError, ValueError):
        _fail("z", z, Z_HELP)
    if not pairs or any(
        not (math.isfinite(v) and v > 0 and math.isfinite(p) and p > 0) for v, p in pairs
    ):
        _fail("z", z, Z_HELP)
    # a few roundings of numbers <= 1 stay far below 1e-12
    if abs(sum(p for _, p in pairs) - 1.0) > 1e-12:
        _fail("z", z, Z_HELP + f"; the probabilities sum to {sum(p for _, p in pairs)!r}")
    if len({v for v, _ in pairs}) != len(pairs):
        _fail("z", z, Z_HELP + "; each value once")
    return pairs


_SHORT = Short()  # keywords only from Python 3.12: set after
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxtuple, _SHORT.maxstring = 4, 8, 8, 40


def _normalize_partitions(parts: Any) -> tuple:
    """Areas as sorted tuples; exactly three levels of lists (clusters, areas, patches) whose
    patch indices are integers: a float, bool or string is refused, never cast."""
    why = "must be one list of areas per cluster, each area a list of integer patch indices"
    seq = (list, tuple)
    if not isinstance(parts, seq) or not all(
        isinstance(cluster, seq) and all(isinstance(area, seq) for area in cluster)
        for cluster in parts
    ):
        _fail("partitions", parts, why)
    for cluster in parts:
        for area in cluster:
            for q in area:
                if isinstance(q, bool) or not isinstance(q, numbers.Integral):
                    _fail("partitions", parts, f"{why}; {_SHORT.repr(q)} is not an integer")
    return tuple(
        tuple(tuple(sorted(int(q) for q in area)) for area in cluster) for cluster in parts
    )


def _validate(c: MIMConfig) -> None:
    for name in ("P", "K", "steps", "record_every", "N", "seed"):
        if not _is_int(getattr(c, name)):
            _fail(name, getattr(c, name), "must be an integer")
    check_int64(_fail, c, ("P", "K", "steps", "record_every", "N", "d"))
    for name in ("mask_ratio", "eta"):
        if not _is_real(getattr(c, name)):
            _fail(name, getattr(c, name), "must be a finite real number")
    if c.P > MAX_P:
        _fail("P", c.P, f"must be <= {MAX_P:,} (the config lists every patch of every area)")
    if c.P < 4:
        _fail(
            "P",
            c.P,
            "must be >= 4 (a global area, a local one and at least one masked and one unmasked "
            "patch)",
        )
    if c.K < 1:
        _fail("K", c.K, "must be >= 1")
    if c.K * c.P > MAX_P:  # checked before any area is built (that takes time in K P)
        _fail(
            "K",
            c.K,
            f"must be <= {MAX_P // c.P:,} at P = {c.P} (the config lists every patch of each "
            f"cluster's areas: K P at most {MAX_P:,})",
        )
    if not 0.0 < c.mask_ratio < 1.0:
        _fail("mask_ratio", c.mask_ratio, "must lie strictly between 0 and 1")
    if not 1 <= c.masked <= c.P - 1:
        _fail(
            "mask_ratio",
            c.mask_ratio,
            f"round(mask_ratio P) = {c.masked} must lie in [1, P - 1] = [1, {c.P - 1}]",
        )
    lower_bounds(
        _fail,
        c,
        {
            "eta": (0, True),
            "steps": (0, False),
            "record_every": (1, False),
            "N": (1, False),
            "seed": (0, False),
        },
    )
    check_seed(_fail, c.seed)
    if c.dtype not in DTYPES:
        _fail("dtype", c.dtype, f"must be one of {', '.join(DTYPES)}")
    if c.partition not in PARTITIONS:
        _fail("partition", c.partition, f"must be one of {', '.join(PARTITIONS)}")
    if c.partitions is None:
        for name in ("kappa_c", "kappa_s"):
            v = getattr(c, name)
            if not _is_real(v) or not 0.0 < v < 1.0:
                _fail(name, v, "must lie strictly between 0 and 1 (or give explicit `partitions`)")
        if c.kappa_s >= c.kappa_c:
            _fail(
                "kappa_s",
                c.kappa_s,
                f"must be < kappa_c = {c.kappa_c} (local areas are smaller than the global one)",
            )
        if c.partition == "grid" and math.isqrt(c.P) ** 2 != c.P:
            _fail(
                "partition",
                c.partition,
                f"'grid' needs P a perfect square (P = {c.P}); use 'random'",
            )
    else:
        _check_partitions(c)
    build(c)  # the kappas must give at least one local area
    need = c.P + sum(len(a) for a in build(c))
    if c.d is not None and (not _is_int(c.d) or c.d < need):
        _fail(
            "d",
            c.d,
            f"must be an integer >= P + sum_k N_k = {need} (positions and features orthonormal), "
            "or None for that value",
        )


def _check_partitions(c: MIMConfig) -> None:
    parts = c.partitions
    if len(parts) != c.K:
        _fail(
            "partitions", parts, f"must hold one partition per cluster: K = {c.K}, got {len(parts)}"
        )
    for k, cluster in enumerate(parts):
        flat = [q for area in cluster for q in area]
        if sorted(flat) != list(range(c.P)):
            _fail(
                "partitions",
                parts,
                f"cluster {k}: the areas must partition the patches 0..{c.P - 1} "
                "(each exactly once)",
            )
        if len(cluster) < 2:
            _fail(
                "partitions", parts, f"cluster {k}: needs a global area and at least one local area"
            )
        if any(len(area) == 0 for area in cluster):
            _fail("partitions", parts, f"cluster {k}: an area is empty")


FIELD_HELP = {
    "P": "number of patches P (a perfect square for --partition grid)",
    "K": "number of clusters, each drawn with probability 1/K",
    "kappa_c": "global area size about P^kappa_c (random: round(P^kappa_c); grid: the nearest "
    "number of whole rows), 0 < kappa_c < 1",
    "kappa_s": "local area size about P^kappa_s, 0 < kappa_s < kappa_c",
    "mask_ratio": "masking ratio gamma: round(gamma P) patches masked, 0 < gamma < 1",
    "z": "latent law: const (z = 1); V1:P1,V2:P2,... (finite, exact); uniform:L:U (sampled only)",
    "eta": "learning rate, > 0",
    "steps": "gradient-descent steps, >= 0",
    "record_every": "record the observables every this many steps (and at the last step)",
    "d": "embedding dimension (default P + sum_k N_k, the smallest with positions and features "
    "orthonormal)",
    "partition": "grid: rectangles on the sqrt(P) x sqrt(P) grid, a different layout per "
    "cluster; random: seeded",
    "partitions": "explicit areas as JSON: one list of areas per cluster, global area first "
    "(overrides the kappas)",
    "N": "samples per step in the full level's --mode sampled",
    "seed": "random seed (embedding rotation, random partitions, samples)",
    "dtype": "float64 or float32",
}
