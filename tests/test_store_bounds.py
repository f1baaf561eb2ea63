"""Loading a stored point is bounded in memory before anything is parsed: a member whose npy header
declares a huge array, or a zip member declaring a huge uncompressed size (a zip bomb), is rejected
as corrupt (moved aside) without allocating it; a real point still loads."""

from __future__ import annotations

import tracemalloc
import zipfile

import numpy as np
import pytest

from dynsim.store import Store

KEY = "ab" * 32
BOMB_BYTES = 256 * 2**20  # 256 MiB of zeros: about 256 kB deflated


def _huge_header(path):
    """A point whose `summary` member declares 10^12 float64 (8 TB) and holds 16 bytes."""
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = (10**12,)
    with zipfile.ZipFile(path, "w") as zf, zf.open("summary.npy", "w") as member:
        np.lib.format.write_array_header_1_0(member, header)
        member.write(np.zeros(2).tobytes())


def _bomb(path):
    """A point whose `summary` member is a whole, valid npy of BOMB_BYTES of zeros, deflated."""
    with (
        zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf,
        zf.open("summary.npy", "w", force_zip64=True) as member,
    ):
        header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
        header["shape"] = (BOMB_BYTES // 8,)
        np.lib.format.write_array_header_1_0(member, header)
        block = bytes(2**20)
        for _ in range(BOMB_BYTES // len(block)):
            member.write(block)


@pytest.mark.parametrize("craft", [_huge_header, _bomb])
def test_a_crafted_point_is_rejected_without_allocating(tmp_path, craft):
    store = Store(str(tmp_path))
    path = store.path(KEY)
    (tmp_path / "points" / KEY[:2]).mkdir()
    craft(path)
    size = (tmp_path / "points" / KEY[:2] / f"{KEY}.npz").stat().st_size
    assert size < 2**20  # the file is small: its declarations lie
    tracemalloc.start()
    try:
        with pytest.warns(RuntimeWarning, match="corrupt"):
            assert store.load(KEY) is None
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # numpy reports its array buffers to tracemalloc: reading the member would allocate >= 256 MiB
    # (the bomb) or fail to allocate 8 TB; 4 MiB is the file's size plus room for zipfile's and
    # numpy's bookkeeping
    assert peak < 4 * 2**20, peak
    assert not (tmp_path / "points" / KEY[:2] / f"{KEY}.npz").exists()
    # moved aside, as any corrupt point
    assert (tmp_path / "points" / KEY[:2] / f"{KEY}.npz.corrupt").exists()


def test_a_real_point_still_loads(tmp_path):
    store = Store(str(tmp_path))
    store.save(KEY, {"T1": 12.5, "label": "x" * 1000}, {})
    assert store.load(KEY) == {"summary": {"T1": 12.5, "label": "x" * 1000}}
