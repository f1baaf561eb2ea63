"""A sweep's output folder: each setting's default folder of its own, a folder holding another
sweep's outputs refused (never replaced unseen), the same sweep resumed and a larger grid extending
it with every heatmap kept, a table that names the setting and every config field even for one
point, and arguments of the wrong type or an `out` that is a file refused in one line."""

from __future__ import annotations

import csv
import json
import os
import shutil

import pytest

import dynsim
from tests.helpers import assert_refused, run

BASE = dict(D=9, C=3, steps=100, record_every=50, nu=0.02)
AXES = {"q": [0.2, 0.3], "eta": [0.05, 0.1]}
JSL = ["sweep", "jsl", "--D", "9", "--C", "3", "--steps", "100", "--record-every", "50"]
MIM = ["sweep", "mim", "--P", "9", "--kappa-c", "0.7", "--kappa-s", "0.3", "--steps", "20"]
MIM += ["--record-every", "10"]


def table(folder) -> list[dict]:
    with open(os.path.join(folder, "table.csv")) as fh:
        return list(csv.DictReader(fh))


def listing(folder) -> dict:
    """Every file under `folder` with its bytes."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                out[os.path.relpath(path, folder)] = fh.read()
    return out


def test_each_setting_sweeps_into_its_own_default_folder(tmp_path, monkeypatch, capsys):
    """Left out, --out is dynsim-out/sweep-NAME: a MIM sweep leaves a JSL sweep's files as they
    were, and each table names its setting and its fields, though each sweep has one point."""
    monkeypatch.chdir(tmp_path)
    assert run(capsys, *JSL, "--q", "0.3")[0] == 0
    jsl = tmp_path / "dynsim-out" / "sweep-jsl"
    before = listing(jsl)
    assert run(capsys, *MIM)[0] == 0
    mim = tmp_path / "dynsim-out" / "sweep-mim"
    assert listing(jsl) == before
    assert sorted(os.listdir(tmp_path)) == ["dynsim-out"]
    [row] = table(jsl)
    assert (row["setting"], row["q"], row["D"], row["eta"]) == ("jsl", "0.3", "9", "0.05")
    [row] = table(mim)
    assert (row["setting"], row["P"], row["kappa_c"], row["steps"]) == ("mim", "9", "0.7", "20")


def test_another_sweeps_folder_is_refused_the_same_resumed_a_larger_grid_extends_it(
    tmp_path, capsys
):
    out = str(tmp_path / "sw")
    first = dynsim.sweep("jsl", AXES, base=BASE, out=out, heatmaps=["final_loss"])
    kept = listing(out)
    assert "heatmap-reduced_final_loss.png" in kept
    refused = [
        dict(setting="mim", axes={"eta": [0.5, 1.0]}, base=dict(P=9, steps=20, record_every=10)),
        dict(setting="jsl", axes=AXES, base=BASE, level="full"),
        dict(setting="jsl", axes={"q": [0.2], "eta": [0.05, 0.1]}, base=BASE),  # rows would go
        dict(setting="jsl", axes=AXES, base=BASE, options={"max_configurations": 10**6}),
    ]
    for call in refused:
        with pytest.raises(ValueError) as caught:
            dynsim.sweep(call.pop("setting"), call.pop("axes"), out=out, **call)
        message = str(caught.value)
        assert message.startswith(f"out = {out!r} is invalid: it holds the outputs of another ")
        assert (
            "give another folder, or move that sweep.json, table.csv and heatmap-*.png away"
            in message
        )
        assert "\n" not in message
        assert listing(out) == kept  # nothing written, nothing removed
    # the command line: one line, exit 2, naming the folder
    code, _, err = run(capsys, *JSL, "--q", "0.2", "--out", out)
    assert_refused(
        code, err, f"out = {out!r} is invalid", "('jsl' at level 'reduced', 4 distinct runs"
    )
    assert listing(out) == kept
    # the same sweep again resumes (other heatmaps asked for: the earlier one is drawn again)
    again = dynsim.sweep("jsl", AXES, base=BASE, out=out, heatmaps=["final_attention_ratio"])
    assert again.computed == [] and again.rows == first.rows
    # a grid holding every point of it extends it: every row and every heatmap stays
    larger = dynsim.sweep("jsl", {"q": [0.2, 0.3, 0.4], "eta": [0.05, 0.1]}, base=BASE, out=out)
    assert len(larger.computed) == 2 and len(larger.reused) == 4
    rows = {r["key"]: r for r in table(out)}
    assert {r["key"] for r in first.rows} <= set(rows)
    with open(os.path.join(out, "sweep.json")) as fh:
        drawn = json.load(fh)["heatmap_files"]
    for name in ("final_loss", "final_attention_ratio"):
        assert f"heatmap-reduced_{name}.png" in drawn
        assert os.path.isfile(os.path.join(out, f"heatmap-reduced_{name}.png"))
    # as the refusal says: with the outputs moved away, another sweep reuses the stored points
    for name in ["sweep.json", "table.csv", *drawn]:
        shutil.move(os.path.join(out, name), tmp_path / name)
    subset = dynsim.sweep("jsl", {"q": [0.2], "eta": [0.05, 0.1]}, base=BASE, out=out)
    assert subset.computed == [] and len(subset.reused) == 2


def test_a_one_point_table_names_the_setting_and_every_field(tmp_path):
    res = dynsim.sweep("jsl", {}, base=BASE, out=str(tmp_path))
    [row] = table(tmp_path)
    config = dynsim.JSLConfig(**BASE)
    assert row["setting"] == "jsl" and list(row)[0] == "setting"
    for name in ("D", "C", "q", "eta", "steps", "nu", "temperature", "seed", "dtype"):
        assert row[name] == str(getattr(config, name)), name
    assert res.rows[0]["q"] == config.q and res.rows[0]["setting"] == "jsl"


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(axes=None), "axes must be a mapping of config fields to lists of values, got "),
        (dict(axes=[0.2, 0.3]), "axes must be a mapping"),
        (dict(axes={"q": 0.2}), "axes['q'] must be a list of values, got float"),
        (dict(setting=5), "setting must be a setting's name (str), got int"),
        (dict(level=1), "level must be one of 'reduced', 'full', 'both', got int"),
        (dict(base=[("q", 0.2)]), "base must be a mapping or None, got list"),
        (dict(options="flow"), "options must be a mapping or None, got str"),
        (dict(invocation=5), "invocation must be a mapping or None, got int"),
        (dict(out=5), "out must be a folder's path (str or os.PathLike) or None, got int"),
        (dict(heatmaps="final_loss"), "heatmaps must be a list of names (str) or None"),
        (dict(heatmap_axes=["q", 1]), "heatmap_axes must be a list of names (str) or None"),
        (dict(log="stderr"), "log must be a function of one line of text, or None, got str"),
    ],
)
def test_arguments_of_the_wrong_type_are_a_type_error_naming_them(kwargs, message):
    call = {"setting": "jsl", "axes": {"q": [0.2]}, **kwargs}
    with pytest.raises(TypeError) as caught:
        dynsim.sweep(call.pop("setting"), call.pop("axes"), **call)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)


@pytest.mark.parametrize("where", ["the folder", "a parent folder"])
def test_an_out_that_is_a_file_is_refused_in_one_line(tmp_path, capsys, where):
    """A file where the folder, or one of its parents, would go: refused before any work, nothing
    created, by the library (ValueError) and the command line (exit 2)."""
    path = tmp_path / "results"
    path.write_text("mine")
    out = str(path if where == "the folder" else path / "sw")
    with pytest.raises(ValueError, match=r"^out = .* is invalid: .*file") as caught:
        dynsim.sweep("jsl", {"q": [0.2]}, base=BASE, out=out)
    assert "\n" not in str(caught.value)
    code, _, err = run(capsys, *JSL, "--q", "0.2", "--out", out)
    assert_refused(code, err, f"--out = {out!r} is invalid", "file")
    assert os.listdir(tmp_path) == ["results"] and path.read_text() == "mine"
