"""Files dynsim reads back from a result folder are untrusted: a hostile or corrupted one is refused
in one line or recovered, never read past its bound, never a traceback."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from dynsim import Trajectory, cli
from dynsim import inputs
from dynsim.cli import output
from dynsim.trajectory import save_many

from .helpers import assert_refused
from .test_export import compare_out, mim_run, run  # noqa: F401 (the fixture)


def test_a_report_naming_paths_outside_its_folder_lists_none_of_them(tmp_path):
    outside = tmp_path / "secret"
    outside.write_text("not yours")
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "ok.txt").write_text("x")
    (folder / "link.txt").symlink_to(outside)
    files = {
        str(outside): "0" * 64,
        "../secret": "0" * 64,
        "..": "0" * 64,
        "ok.txt": output.sha256(str(folder / "ok.txt")),
        "link.txt": output.sha256(str(outside)),  # the right digest, through a link outside
    }
    (folder / "report.json").write_text(json.dumps({"files": files}))
    assert sorted(output.recorded_files(str(folder / "report.json"))) == ["link.txt", "ok.txt"]
    # the link resolves outside the folder: not the recorded file, and not read
    assert output.mismatched(str(folder / "report.json")) == ["link.txt"]


def test_export_refuses_a_report_that_is_a_link_outside(compare_out, tmp_path, capsys):  # noqa: F811
    outside = tmp_path / "elsewhere.json"
    outside.write_text((compare_out / "report.json").read_text())
    (compare_out / "report.json").unlink()
    (compare_out / "report.json").symlink_to(outside)
    assert_refused(run(compare_out), capsys.readouterr().err, "report.json", "outside")


def test_export_reads_a_report_whose_residuals_are_a_list(compare_out, capsys):  # noqa: F811
    data = json.loads((compare_out / "report.json").read_text())
    data["residuals"] = ["edited"]
    (compare_out / "report.json").write_text(json.dumps(data))
    assert run(compare_out) == 0, capsys.readouterr().err
    assert "Traceback" not in capsys.readouterr().err


def test_export_refuses_a_table_cell_past_csv_s_field_limit(tmp_path, capsys):
    (tmp_path / "sweep.json").write_text("{}")
    (tmp_path / "table.csv").write_text("key,q\n" + "a" * (200 << 10) + ",0.1\n")
    assert_refused(run(tmp_path), capsys.readouterr().err, "table.csv", "field larger")


def test_trajectories_declaring_more_than_half_the_memory_are_refused(tmp_path, monkeypatch):
    """A compressed member may declare more than its file holds; a declared total above half the
    available memory is refused before any data is read. Truth-known: 1 MiB of zeros (about 1 KiB
    compressed) against an available memory of 1 MiB (half: 512 KiB) is refused, against 4 MiB
    it loads."""
    path = tmp_path / "t.npz"
    run_ = Trajectory(np.arange(2), {"x": np.zeros((2, 1 << 16))}, {"level": "reduced"})
    save_many(path, {"reduced": run_}, compressed=True)
    assert os.path.getsize(path) < 64 << 10
    monkeypatch.setattr(inputs, "available_memory", lambda: 1 << 20)
    with pytest.raises(ValueError, match="its members declare .* more than the 524288 allowed"):
        Trajectory.load(path)
    monkeypatch.setattr(inputs, "available_memory", lambda: 4 << 20)
    assert Trajectory.load(path)["x"].shape == (2, 1 << 16)


def test_a_meta_that_is_not_an_object_is_refused(tmp_path):
    path = tmp_path / "t.npz"
    save_many(path, {"full": mim_run("full", 0)})
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["full/meta"] = np.array(json.dumps(["a", "list"]))
    np.savez(path, **arrays)
    with pytest.raises(ValueError, match="^meta = .* is invalid: a JSON list, not an object"):
        Trajectory.load(path)


def test_export_of_a_meta_list_is_one_line(compare_out, capsys):  # noqa: F811
    path = compare_out / "trajectories.npz"
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    arrays["full/meta"] = np.array("[1, 2]")
    np.savez(path, **arrays)
    assert_refused(cli.main(["export", str(compare_out)]), capsys.readouterr().err, "meta")


@pytest.mark.parametrize("value", [[1, 2], {"a": 1}])
def test_a_point_whose_summary_holds_a_list_or_mapping_is_corrupt(tmp_path, value):
    """The store's digest has no secret: a copied store can hold a point with a valid digest and a
    summary value a row cannot hold. It is set aside and recomputed, as a truncated point is."""
    from dynsim.store import Store, row

    store = Store(str(tmp_path))
    key = "ab" * 32
    store.save(key, {"q": 0.2, "reduced_final_loss": value}, {})
    assert store.load(key)["summary"]["reduced_final_loss"] == value  # other stores may nest
    with pytest.warns(RuntimeWarning, match="'reduced_final_loss' is not a number, text or null"):
        assert store.load(key, check=row) is None
    assert os.path.exists(store.path(key) + ".corrupt")
    store.save(key, {"q": 0.2, "reduced_final_loss": None, "ok": True, "v": "text"}, {})
    assert store.load(key, check=row)["summary"]["ok"] is True
