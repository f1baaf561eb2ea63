"""Labelled arrays and tidy tables of recorded runs (docs/data.md): `Trajectory.to_xarray` names
each setting's axes, `to_dataframe` gives one row per (observable, step, coordinate tuple) with the
padding left out and a diverged run's NaN kept, `Trajectories.to_dataframe` adds the run's name;
`dynsim.sweeps.frames.to_pandas` gives one row per point with a censored event as +inf.

Every expected value comes from the config's areas written out below or from the recorded arrays
indexed by hand, never from the code under test."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from dynsim import MIMConfig, Trajectory
from dynsim import setting as registry
from dynsim.setting import Ref
from dynsim.sweeps import SweepResult
from dynsim.sweeps import frames
from dynsim.trajectory import Trajectories, seed_statistics

# two clusters of 6 patches with N_1 = 4 and N_2 = 2 areas: the second cluster's areas 2 and 3 are
# padding (NaN by construction) in every per-area observable
PARTS = [[[0, 1, 2], [3], [4], [5]], [[0, 1, 3, 4], [2, 5]]]
P, N = 6, [4, 2]
OWN = {(p, k): j for k, cluster in enumerate(PARTS) for j, area in enumerate(cluster) for p in area}
CFG = MIMConfig(P=P, K=2, partitions=PARTS, mask_ratio=0.5, steps=8)  # records at 0, 4, 8
RECORDS = 3


@pytest.fixture(scope="module")
def runs():
    """The reduced level two ways: pp_frozen (records per query class), mean field (per joint
    cell); both add the per-patch views fp_corr, area_attention, pp_corr."""
    import reduced.mim

    return {
        "pp_frozen": reduced.mim.simulate(CFG, "pp_frozen"),
        "mean_field": reduced.mim.simulate(CFG, "mean_field"),
    }


def test_mim_axes_are_named_with_their_coordinates(runs):
    ds = runs["mean_field"].to_xarray()
    assert ds["fp_corr"].dims == ("step", "patch", "cluster", "area")
    assert ds["pp_corr"].dims == ("step", "patch", "key")
    assert ds["step"].values.tolist() == runs["mean_field"].steps.tolist()
    own = [[OWN[p, k] for k in range(2)] for p in range(P)]
    assert ds["own_area"].dims == ("patch", "cluster") and ds["own_area"].values.tolist() == own
    sizes = [[len(a) for a in c] + [0] * (4 - len(c)) for c in PARTS]
    assert ds["area_size"].values.tolist() == sizes
    # label-based selection works on every named axis
    assert ds["fp_corr"].sel(patch=5, cluster=1, area=1).shape == (RECORDS,)


def test_fp_corr_rows_are_the_entries_without_padding(runs):
    t = runs["mean_field"]
    df = t.to_dataframe("fp_corr")
    # sum over k of N_k * P entries per step: 6 * (4 + 2) = 36
    assert len(df) == RECORDS * P * sum(N)
    assert list(df.columns) == [
        "observable",
        "step",
        "patch",
        "cluster",
        "area",
        "own_area",
        "area_size",
        "value",
    ]
    assert (df["area"] < df["cluster"].map(dict(enumerate(N)))).all()  # no j >= N_k
    steps = t.steps.tolist()
    for r in df.itertuples():
        i = steps.index(r.step)
        assert r.value == t["fp_corr"][i, r.patch, r.cluster, r.area]
        assert r.own_area == OWN[r.patch, r.cluster]
        assert r.area_size == len(PARTS[r.cluster][r.area])
    # "FP correlation of patch p with each area": a pivot, one column per (cluster, area)
    last = df[df.step == steps[-1]].pivot(index="patch", columns=["cluster", "area"])["value"]
    assert last.shape == (P, sum(N)) and last.loc[5, (1, 1)] == t["fp_corr"][-1, 5, 1, 1]


def test_a_diverged_nan_is_kept_and_padding_still_dropped(runs):
    t = runs["mean_field"]
    fp = t["fp_corr"].copy()
    fp[2, 0, 0, 0] = np.nan  # a run that stopped being finite at the last record
    df = Trajectory(t.steps, {"fp_corr": fp}, t.meta).to_dataframe()
    assert len(df) == RECORDS * P * sum(N)
    hit = df[(df.step == t.steps[2]) & (df.patch == 0) & (df.cluster == 0) & (df.area == 0)]
    assert len(hit) == 1 and np.isnan(hit["value"].iloc[0]) and df["value"].isna().sum() == 1


def test_every_observable_keeps_its_entries_and_nothing_else(runs):
    """Per-patch, per-class and per-cell records: rows = entries that exist. These runs are finite,
    so an entry exists iff it is finite, except pp_class, which holds 0 (not NaN) at the positions a
    class lacks (B is frozen at 0)."""
    classes = [sum(1 for s in c if s) for c in runs["pp_frozen"].to_xarray()["class_area_size"]]
    for t in runs.values():
        df = t.to_dataframe()
        assert df["value"].notna().all()
        for name, values in t.items():
            n = (df.observable == name).sum()
            expect = RECORDS * sum(classes) if name == "pp_class" else np.isfinite(values).sum()
            assert n == expect, name


def test_class_and_cell_records_have_their_labels(runs):
    ds = runs["pp_frozen"].to_xarray()
    assert ds["fp_class"].dims == ("step", "class", "position")
    assert ds["class_area_size"].values.tolist() == [
        s + [0] * (4 - len(s)) for s in runs["pp_frozen"].meta["classes"]
    ]
    # joint cells: the patches grouped by (area in cluster 1, area in cluster 2), in that order
    cells = sorted({(OWN[p, 0], OWN[p, 1]) for p in range(P)})
    size = [sum((OWN[p, 0], OWN[p, 1]) == c for p in range(P)) for c in cells]
    ds = runs["mean_field"].to_xarray()
    assert ds["fp_cell"].dims == ("step", "cell", "cluster", "area")
    assert ds["cell_area"].values.tolist() == [list(c) for c in cells]
    assert ds["cell_size"].values.tolist() == size
    df = runs["mean_field"].to_dataframe("pp_cell")
    assert len(df) == RECORDS * len(cells) ** 2 and {"cell", "key_cell"} <= set(df.columns)


def test_standard_errors_and_seeds_follow_their_observable(runs):
    t = runs["mean_field"]
    fp = t["fp_corr"]
    u = Trajectory(t.steps, {"fp_corr": fp, "fp_corr_se": fp * 0 + 0.5}, t.meta)
    assert u.to_xarray()["fp_corr_se"].dims == ("step", "patch", "cluster", "area")
    assert len(u.to_dataframe("fp_corr_se")) == RECORDS * P * sum(N)
    # realistic JSL: R = 2 runs kept as <name>_seeds (steps, R)
    runs2 = {"test_error": np.array([[0.5, 0.4, 0.3], [0.6, 0.2, 0.1]])}
    v = Trajectory([0, 10, 20], seed_statistics(runs2), {"setting": "JSLConfig", "level": "full"})
    df = v.to_dataframe("test_error_seeds")
    assert list(df.columns) == ["observable", "step", "seed", "value"] and len(df) == 6
    for r in df.itertuples():
        assert r.value == runs2["test_error"][r.seed][[0, 10, 20].index(r.step)]


def test_unknown_setting_keeps_the_generic_names():
    t = Trajectory([0, 1], {"pp": np.arange(8.0).reshape(2, 2, 2)}, {"setting": "NoConfig"})
    assert t.to_xarray()["pp"].dims == ("step", "pp_dim1", "pp_dim2")
    df = t.to_dataframe()
    assert len(df) == 8 and df.loc[7, "value"] == 7.0 and df.loc[7, "pp_dim2"] == 1


def test_runs_in_one_table_and_bad_names(runs):
    both = Trajectories({"pp_frozen": runs["pp_frozen"], "mean_field": runs["mean_field"]})
    df = both.to_dataframe("fp_corr")
    assert df.columns[0] == "run" and df.groupby("run").size().to_dict() == {
        "pp_frozen": RECORDS * P * sum(N),
        "mean_field": RECORDS * P * sum(N),
    }
    # fp_cell only in the mean-field run: its rows only
    assert set(both.to_dataframe(["fp_cell"])["run"]) == {"mean_field"}
    with pytest.raises(ValueError, match="observables = \\['nope'\\] is invalid"):
        runs["mean_field"].to_dataframe(["nope"])


def test_without_xarray_one_line_names_the_extra(monkeypatch, runs):
    import sys

    monkeypatch.setitem(sys.modules, "xarray", None)  # import xarray now raises ImportError
    with pytest.raises(ImportError, match=r"to_dataframe needs xarray.*dynsim\[xarray\]"):
        runs["mean_field"].to_dataframe()


def test_the_declaration_names_its_coordinates():
    """MIM's declaration gives its coordinates' function itself (`dynsim.mim.frames` imports no
    heavy library); a `Ref` there would load on use (`dynsim.setting.Lazy`)."""
    from dynsim.mim import frames as mim_frames

    declared = registry.get("mim").frames
    assert declared.coords is mim_frames.coords and declared.dims["fp_corr"][0] == "patch"
    lazy = dataclasses.replace(declared, coords=Ref("dynsim.mim.frames:coords"))
    assert isinstance(lazy.ref("coords"), Ref) and lazy.coords is mim_frames.coords


# a sweep's rows as `sweep` returns them: T1 reached, censored by the horizon (2000 steps), unknown
# (diverged); t1 the same event in time eta * steps (eta = 0.05), censored at 0.05 * 2000, and t3
# a later event in time, censored in the first two rows
ROWS = [
    {"eta": 0.05, "reduced_T1": 150, "reduced_T1_censored": None, "reduced_nonfinite": None},
    {"eta": 0.05, "reduced_T1": None, "reduced_T1_censored": 2000, "reduced_nonfinite": None},
    {"eta": 0.05, "reduced_T1": None, "reduced_T1_censored": None, "reduced_nonfinite": 40},
]
TIMES = [(7.5, None), (None, 100.0), (None, None)]
ROWS = [
    {
        **r,
        **{"reduced_t1": t, "reduced_t1_censored": c, "reduced_t3": None},
        **{"reduced_t3_censored": 100.0 if i < 2 else None, "verdict": None, "key": f"k{i}"},
    }
    for i, (r, (t, c)) in enumerate(zip(ROWS, TIMES))
]
COLUMNS = list(ROWS[0])


def test_sweep_table_has_one_event_column_and_no_empty_ones():
    df = frames.to_pandas(SweepResult(ROWS, COLUMNS, [], [], None, {}))
    pd.testing.assert_frame_equal(SweepResult(ROWS, COLUMNS, [], [], None, {}).to_pandas(), df)
    assert list(df.columns) == [
        "eta",
        "reduced_T1",
        "reduced_horizon",
        "reduced_nonfinite",
        "reduced_t1",
        "reduced_t3",
        "reduced_t_horizon",
        "key",
    ]
    assert df["reduced_T1"].iloc[0] == 150 and df["reduced_T1"].iloc[1] == np.inf
    assert np.isnan(df["reduced_T1"].iloc[2])
    assert df["reduced_horizon"].tolist()[1] == 2000 and df["reduced_horizon"].isna().sum() == 2
    assert str(df["reduced_horizon"].dtype) == str(df["reduced_nonfinite"].dtype) == "Int64"
    assert df["reduced_t1"].tolist()[:2] == [7.5, np.inf] and df["reduced_t3"].tolist()[:2] == [
        np.inf,
        np.inf,
    ]
    # the events in time share one bound, 100.0, in every row where one is censored
    assert df["reduced_t_horizon"].tolist()[:2] == [100.0, 100.0]
    # the censored point sorts after the reached one; describe() reads it as beyond every reached
    # time (max and mean +inf, never the horizon 2000), and reached-only statistics drop it
    assert df.sort_values("reduced_T1")["key"].tolist()[:2] == ["k0", "k1"]
    with np.errstate(invalid="ignore"):  # std and quantiles of inf subtract inf - inf
        stats = df["reduced_T1"].describe()
    assert stats["max"] == np.inf and stats["mean"] == np.inf
    stats = df["reduced_T1"].replace(np.inf, np.nan).describe()
    assert stats["count"] == 1 and stats["max"] == 150


def test_sweep_table_read_back_from_its_csv(tmp_path):
    from dynsim.sweeps import table_csv

    (tmp_path / "table.csv").write_text(table_csv(ROWS, COLUMNS))
    again = frames.to_pandas(frames.read_table(str(tmp_path)))
    direct = frames.to_pandas(SweepResult(ROWS, COLUMNS, [], [], None, {}))
    pd.testing.assert_frame_equal(again, direct)
