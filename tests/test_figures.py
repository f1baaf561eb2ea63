"""Figures: log-time axes without step 0, which loss a label names, shared colour limits, bounded
npz sizes, and no figure option listed but ignored."""

import json
import math
import os
import re

import matplotlib
import numpy as np
import pytest

import reduced.mim
from dynsim import cli, plotting
from dynsim.jsl import plotting as jsl_plotting
from dynsim.mim import MIMConfig
from dynsim.mim import plotting as mim_plotting
from dynsim.sweeps import plots
from dynsim.trajectory import Trajectory, load_many, log_spaced


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plotting functions would write, kept open instead of saved."""
    figs = []
    for module in (plotting, jsl_plotting, mim_plotting):
        monkeypatch.setattr(module, "save", lambda fig, path: figs.append(fig))
    yield figs
    for fig in figs:
        plotting.plt.close(fig)


def _traj(mode, steps=(0, 10, 100, 1000), N=4000, se=False):
    s = np.asarray(steps)
    obs = {
        "alpha": np.linspace(0, 1, s.size),
        "gamma": np.linspace(0, 2, s.size),
        "rho": -np.linspace(0, 1, s.size),
        "loss": np.linspace(0.7, 0.1, s.size),
    }
    if se:
        obs["loss_se"] = np.full(s.size, 0.01)
    return Trajectory(s, obs, {"level": "full", "mode": mode, "config": {"N": N}})


@pytest.fixture
def undrawn(monkeypatch):
    """Figure commands for their data only: each figure is closed unsaved and an empty file stands
    in for its PNG (rendering the PNG took about a third of a small mim-phases run; the tests using
    this read the npz)."""

    def skip(fig, path):
        plotting.plt.close(fig)
        open(path, "wb").close()

    for module in (plotting, jsl_plotting, mim_plotting):
        monkeypatch.setattr(module, "save", skip)


def _log_axes(fig):
    return [ax for ax in fig.axes if ax.get_xscale() == "log"]


def _assert_nothing_at_or_below_zero(fig):
    axes = _log_axes(fig)
    assert axes, "no log-time axis drawn"
    for ax in axes:
        for line in ax.get_lines():
            if line.get_transform() == ax.get_yaxis_transform():
                # axhline: its x runs over the axes' width (0 to 1 in axes coordinates), not over
                # steps
                continue
            x = np.asarray(line.get_xdata(), float)
            assert np.all(x > 0), (
                f"a point at x <= 0 on the log axis of {ax.get_ylabel()!r}: {x[:3]}"
            )
        for coll in ax.collections:  # fill_between bands
            for path in coll.get_paths():
                assert np.all(path.vertices[:, 0] > 0), (
                    f"a band vertex at x <= 0 on {ax.get_ylabel()!r}"
                )


def _mim_run(approx=None):
    cfg = MIMConfig(P=16, steps=30, record_every=3)
    return cfg, reduced.mim.simulate(cfg, approximation=approx)


def test_log_time_axes_draw_no_step_zero(drawn):
    """Every curve on a log-time axis starts at its first positive record (step 0 = x 0 has no place
    on it)."""
    runs = {"reduced": _traj("population"), "full": _traj("sampled", se=True)}
    plotting.compare_plot(runs, "x.png")
    jsl_plotting.compare_plot(runs, "x.png")
    steps, y = np.array([0, 5, 50, 500]), np.array([0.5, 0.4, 0.2, 0.1])
    mask, A = np.eye(4), np.arange(16.0).reshape(4, 4)
    jsl_plotting.figure4(
        mask,
        A,
        steps,
        y,
        y,
        "x.png",
        references={"bayes_error": 0.05},
        test_error_se=y / 10,
        cos_v_se=y / 10,
    )
    jsl_plotting.figure2(
        mask, A, steps, y, y, "x.png", chance=0.3, test_error_se=y / 10, association_se=y / 10
    )
    cfg, t = _mim_run()
    mim_plotting.compare_plot({"reduced": t, "full": t}, cfg, "x.png")
    mim_plotting.phases_plot({"a": (cfg, t), "b": (cfg, t)}, "x.png", {"a": 0, "b": None})
    assert len(drawn) == 6
    for fig in drawn:
        _assert_nothing_at_or_below_zero(fig)
    # the first positive record is drawn: step 5 is the left end of Figure 4's test-error curve
    assert min(np.min(line.get_xdata()) for line in drawn[2].axes[2].get_lines()[:1]) == 5


def test_log_time_marks_the_sparse_early_records(drawn):
    """Records 0.3 decade apart (5 -> 10) carry markers; records 1/400 decade apart (2995 -> 3000)
    do not."""
    steps = np.arange(0, 3001, 5)
    fig = plotting.plt.figure()
    line = plotting.log_time(fig.gca(), steps, np.ones(steps.size))
    marked = np.asarray(line.get_xdata())[line.get_markevery()]
    assert 5 in marked and 10 in marked and 3000 not in marked
    # 1/20 decade: the gap 5k -> 5(k + 1) exceeds it while log10(1 + 1/k) > 0.05, i.e. k <= 8
    assert marked.tolist() == [5.0 * k for k in range(1, 10)]
    plotting.plt.close(fig)


@pytest.mark.parametrize(
    "mode, expected",
    [
        ("population", "population loss"),
        ("exact", "population loss"),
        ("sampled", "batch loss (4000 fresh samples)"),
        ("realistic", "training loss (4000 samples)"),
    ],
)
def test_loss_label_says_which_loss(drawn, mode, expected):
    runs = {"reduced": _traj("population"), "other": _traj(mode)}
    jsl_plotting.compare_plot(runs, "x.png")
    loss_ax = drawn[0].axes[3]
    texts = [t.get_text() for t in loss_ax.get_legend().get_texts()]
    assert f"other: {expected}" in texts and "reduced: population loss" in texts
    if mode not in ("population", "exact"):
        assert not any("population" in t for t in texts if t.startswith("other"))
        assert loss_ax.get_ylabel() == "loss"
    else:
        assert loss_ax.get_ylabel() == "population loss"


def test_mim_loss_label_of_a_sampled_run(drawn):
    cfg, t = _mim_run()
    sampled = Trajectory(
        t.steps,
        t.observables,
        {**t.meta, "mode": "sampled", "approximation": None, "config": {"N": 512}},
    )
    mim_plotting.compare_plot({"reduced": t, "full": sampled}, cfg, "x.png")
    texts = [x.get_text() for x in drawn[0].axes[3].get_legend().get_texts()]
    assert "full: batch loss (512 fresh samples)" in texts and "reduced: population loss" in texts


def test_se_band_has_a_legend_entry(drawn):
    jsl_plotting.compare_plot(
        {"reduced": _traj("population"), "full": _traj("sampled", se=True)}, "x.png"
    )
    texts = [t.get_text() for t in drawn[0].axes[3].get_legend().get_texts()]
    assert r"$\pm3$ SE" in texts
    steps, y = np.array([0, 5, 50]), np.array([0.5, 0.4, 0.2])
    jsl_plotting.figure4(
        np.eye(3), np.ones((3, 3)), steps, y, y, "x.png", references={}, test_error_se=y / 10
    )
    assert r"$\pm 2$ SE over seeds" in [
        t.get_text() for t in drawn[1].axes[2].get_legend().get_texts()
    ]


def test_attention_maps_share_one_labelled_colour_scale(drawn):
    cfg = MIMConfig(P=16)
    attn = np.full((16, 16), 1 / 16)
    attn[3] = np.eye(16)[5]  # query 3 puts all its mass on patch 5; query 0 is uniform (max 1/16)
    mim_plotting.attention_maps(attn, cfg, [3, 0], "x.png")
    fig = drawn[0]
    maps = [ax.images[0] for ax in fig.axes[1:3]]
    # the largest weight of either, from 0
    assert [m.get_clim() for m in maps] == [(0.0, 1.0), (0.0, 1.0)]
    bars = [ax for ax in fig.axes if ax.get_ylabel() == "attention weight (shared scale)"]
    assert len(bars) == 1  # one labelled bar for both maps
    assert "area" in [ax.get_title() for ax in fig.axes]  # the categorical area bar is labelled too


def test_learned_A_scale_is_symmetric_and_its_blank_diagonal_is_not_white(drawn):
    A = np.array([[9.0, 0.2, -0.5], [0.1, 9.0, 0.3], [0.0, 0.4, 9.0]])
    jsl_plotting.figure2(
        np.eye(3), A, np.array([0, 1]), np.ones(2), np.ones(2), "x.png", chance=0.5
    )
    image = drawn[0].axes[1].images[0]
    # max |off-diagonal| = 0.5; the diagonal sigma_A = 9 is not on the scale
    assert image.get_clim() == (-0.5, 0.5)
    # grey: not the white of the map's 0
    assert tuple(image.cmap.get_bad()[:3]) == (0.55, 0.55, 0.55)
    labels = [ax.get_ylabel() for ax in drawn[0].axes]
    assert r"$\hat A_{ij}$" in labels


def _first_at_or_after(steps, target):
    later = [i for i, s in enumerate(steps) if s >= target]
    return later[0] if later else None


def test_log_spaced_keeps_one_record_per_target():
    steps = np.arange(0, 20001, 3)
    kept = log_spaced(steps, 10)
    expected = {0, steps.size - 1}
    k = 0
    while 10 ** (k / 10) <= steps[-1] * (1 + 1e-12):  # targets 10^(k/10), checked one by one
        i = _first_at_or_after(steps, round(10 ** (k / 10), 9))
        if i is not None:
            expected.add(i)
        k += 1
    assert kept.tolist() == sorted(expected)
    # the bound: per_decade * decades + 1, + 0 and last
    assert kept.size <= 2 + math.floor(10 * math.log10(20000)) + 1
    with pytest.raises(ValueError, match="per_decade"):
        log_spaced(steps, 0)


def _size_in_line(out, name):
    m = re.search(re.escape(name) + r" \((\d+(?:\.\d)?) (B|kB|MB|GB)\)", out)
    assert m, f"no size stated for {name} in: {out!r}"
    return float(m.group(1)) * {"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m.group(2)], m.group(2)


def test_mim_phases_npz_is_log_spaced_compressed_and_its_size_stated(tmp_path, capsys, undrawn):
    steps = 1000
    code = cli.main(
        [
            "figure",
            "mim-phases",
            "--P",
            "64",
            "--steps",
            str(steps),
            "--record-every",
            "1",
            "--out",
            str(tmp_path),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    path = tmp_path / "mim-phases.npz"
    stated, unit = _size_in_line(out, "mim-phases.npz")
    # one decimal
    assert abs(stated - os.path.getsize(path)) <= 0.05 * {"B": 1, "kB": 1e3, "MB": 1e6}[unit] + 0.5
    runs = load_many(path)
    # 1001 records at steps 0..1000; 40 per decade over 3 decades: at most 40 * 3 + 1 positive
    # records, + step 0
    bound = 40 * 3 + 1 + 1
    raw = 0
    for t in runs.values():
        assert t.steps[0] == 0 and t.steps[-1] == steps and t.steps.size <= bound
        assert (
            t.steps.tolist() == np.arange(steps + 1)[log_spaced(np.arange(steps + 1), 40)].tolist()
        )
        assert t.meta["thinned"] == {
            "per_decade": 40,
            "records": steps + 1,
            "kept": int(t.steps.size),
        }
        # float64/int64 + step
        per_record = sum(8 * int(np.prod(v.shape[1:])) for v in t.observables.values()) + 8
        raw += bound * per_record + 4 * len(json.dumps(t.meta))  # numpy stores the meta as UTF-32
    # compressed: never above the raw bytes but for zip headers (about 200 B per array) and
    # deflate's 5 B per 16 kB
    entries = sum(len(t.observables) + 2 for t in runs.values())
    assert os.path.getsize(path) <= raw * (1 + 5 / 16384) + 200 * entries
    with np.load(path) as f:  # compressed: a zip of deflated members
        assert f.zip.infolist()[0].compress_type == 8


def _help_options(command):
    """The long options `dynsim figure COMMAND --help` lists."""
    with pytest.raises(SystemExit):
        cli.main(["figure", command, "--help"])


# For each figure command: a small base run, and for every option it lists a changed value (with any
# further options it needs to be read). An option listed but absent here fails the completeness
# test; a listed option whose changed value leaves the runs' configs and approximation the same
# fails `test_every_listed_option_reaches_the_runs`.
MIM_PHASES_BASE = ["--P", "16", "--steps", "40", "--record-every", "4"]
OPTION_CHANGES = {
    "mim-phases": (
        MIM_PHASES_BASE,
        {
            "--P": ("36",),
            "--K": ("2", "--approximation", "pp_frozen+mean_field"),
            "--mask-ratio": ("0.75",),
            "--z": ("0.5:0.5,1.5:0.5",),
            "--eta": ("0.5",),
            "--steps": ("44",),
            "--record-every": ("2",),
            "--partition": ("random",),
            "--seed": ("1", "--partition", "random"),
            "--dtype": ("float32",),
            "--kappa-pos": ("0.85,0.3",),
            "--kappa-neg": ("0.8,0.4",),
            "--approximation": ("pp_frozen+mean_field",),
        },
    ),
}
NOT_DATA = {
    "--out",
    "--help",
    "--partitions",
    "--config",
    "--print-config",
    "--max-memory",
    "--max-time",
}
# --partitions: refused by mim-phases (tested below); --config and --print-config: every command's
# (tests/test_cli_config.py); --max-memory / --max-time: limits on the run, not data
# (tests/test_bad_inputs.py)


def _listed(command, capsys):
    _help_options(command)
    return set(re.findall(r"(?<![\w-])(--[A-Za-z][A-Za-z0-9-]*)", capsys.readouterr().out))


@pytest.mark.parametrize("command", sorted(OPTION_CHANGES))
def test_every_listed_option_has_a_change_to_check(command, capsys):
    listed = _listed(command, capsys)
    assert listed - NOT_DATA == set(OPTION_CHANGES[command][1]), (
        "options listed without a check, or checked but unlisted"
    )


@pytest.mark.parametrize(
    "command, unread",
    [
        ("mim-phases", {"--kappa-c", "--kappa-s", "--d", "--N"}),
        ("mim-attention", {"--N"}),
        ("jsl-fig2", {"--q", "--sigma"}),
    ],
)
def test_figures_do_not_list_the_options_they_do_not_read(command, unread, capsys):
    """mim-phases takes its kappas from --kappa-pos/--kappa-neg and runs the reduced level only (no
    embedding, no samples); mim-attention trains on the exact loss (no samples); Figure 2's patches
    are N(0, I) (no q, no sigma)."""
    listed = _listed(command, capsys)
    assert listed and not listed & unread
    assert {"--steps", "--eta", "--seed"} <= listed  # the fields they read stay listed
    option = sorted(unread)[0]
    assert cli.main(["figure", command, option, "0.8"]) == 2
    assert f"unrecognized arguments: {option}" in capsys.readouterr().err


def test_mim_phases_refuses_explicit_partitions(tmp_path, capsys):
    code = cli.main(
        [
            "figure",
            "mim-phases",
            *MIM_PHASES_BASE,
            "--partitions",
            json.dumps([[list(range(8)), list(range(8, 12)), list(range(12, 16))]]),
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 2 and "--partitions is invalid for figure mim-phases" in capsys.readouterr().err


def _data(out_dir):
    """Every array the command wrote (npz members but the metadata strings), by file and name."""
    arrays = {}
    for name in sorted(os.listdir(out_dir)):
        if name.endswith(".npz"):
            with np.load(os.path.join(out_dir, name)) as f:
                arrays.update({f"{name}:{k}": f[k] for k in f.files if not k.endswith("meta")})
    assert arrays, f"no npz written to {out_dir}"
    return arrays


def _same(a, b):
    return a.keys() == b.keys() and all(
        a[k].dtype == b[k].dtype
        and a[k].shape == b[k].shape
        and np.array_equal(a[k], b[k], equal_nan=a[k].dtype.kind == "f")
        for k in a
    )


class _Reached(BaseException):
    """Stops a figure command once its runs are built (a BaseException: the command's error
    handlers do not turn it into an exit code)."""


def _what_the_runs_read(argv, monkeypatch) -> dict:
    """The configs (both signs of Delta) and the approximation `figure mim-phases ARGV` would run,
    through the command's own parsing, checks and signed configs, stopped before the runs."""
    from dynsim.mim import figures
    from reduced.mim import spec as reduced_spec

    approx = reduced_spec.approx_option

    seen: dict = {}

    def sizes(cfgs, approximation):  # the run's first step after its configs are built
        seen["configs"] = [c.to_dict() for c in cfgs]
        seen["approximation"] = approx(approximation)
        raise _Reached

    monkeypatch.setattr(figures, "check_phases_size", sizes)
    with pytest.raises(_Reached):
        cli.main(["figure", "mim-phases", *argv, "--out", "/nonexistent/o"])
    return seen


def test_every_listed_option_reaches_the_runs(monkeypatch):
    """Every option mim-phases lists changes what its runs read (a config field or the
    approximation), against the same command without it. That the runs' numbers reach the written
    arrays is the real run's: test_figure_mim_phases_writes_what_it_ran."""
    base, changes = OPTION_CHANGES["mim-phases"]
    unchanged = []
    for option, (value, *needs) in changes.items():
        before = _what_the_runs_read([*base, *needs], monkeypatch)
        if _what_the_runs_read([*base, *needs, option, value], monkeypatch) == before:
            unchanged.append(option)
    assert not unchanged, f"options of figure mim-phases that change no run: {unchanged}"


def test_figure_mim_phases_writes_what_it_ran(tmp_path, capsys, undrawn):
    """One real run against one changed option: the arrays written follow the runs (a changed
    mask ratio changes every FP record)."""
    base, _ = OPTION_CHANGES["mim-phases"]
    for name, extra in (("base", []), ("changed", ["--mask-ratio", "0.75"])):
        code = cli.main(["figure", "mim-phases", *base, *extra, "--out", str(tmp_path / name)])
        assert code == 0, capsys.readouterr().err
    assert not _same(_data(tmp_path / "base"), _data(tmp_path / "changed"))


# ------------------------------------------------------------------ colours, titles, heatmaps

PROVENANCE = {"dtype": "float64", "device": "cpu:0 (cpu)", "versions": {"dynsim": "9.9"}}


def _curves(ax):
    """The curves of a log-time panel: lines of more than one point in data coordinates (not the
    step-0 triangles, not axvline / axhline)."""
    return [
        line
        for line in ax.get_lines()
        if len(line.get_xdata()) > 1
        and line.get_transform() not in (ax.get_xaxis_transform(), ax.get_yaxis_transform())
    ]


def _colour(line):
    return matplotlib.colors.to_hex(line.get_color())


def test_jsl_levels_share_each_observables_colour_and_differ_in_style(drawn):
    runs = {"reduced": _traj("population"), "full": _traj("exact")}
    jsl_plotting.compare_plot(runs, "x.png")
    colours = []
    for ax in drawn[0].axes[:4]:
        reduced, full = _curves(ax)
        assert _colour(reduced) == _colour(full)
        assert reduced.get_linestyle() != full.get_linestyle()
        colours.append(_colour(reduced))
    assert len(set(colours)) == 4  # one colour per observable
    # the levels' key, in the cell the two rows leave over
    texts = [t.get_text() for t in drawn[0].axes[-1].get_legend().get_texts()]
    assert texts == ["reduced (population)", "full (exact)"]


def test_mim_levels_share_each_curves_colour_and_the_legend_names_the_styles(drawn):
    cfg, t = _mim_run()
    mim_plotting.compare_plot({"reduced": t, "full": t}, cfg, "x.png")
    ax = drawn[0].axes[0]
    key = drawn[0].axes[-1]  # the cell the two rows leave over holds the key
    by_colour = {}
    for line in _curves(ax):
        by_colour.setdefault(_colour(line), []).append(line.get_linestyle())
    # three FP curves (local target, local global, global target), each once per level
    assert len(by_colour) == 3
    assert all(sorted(styles) == ["-", "--"] for styles in by_colour.values())
    legend = {
        t.get_text(): h
        for t, h in zip(key.get_legend().get_texts(), key.get_legend().legend_handles)
    }
    assert legend["reduced (exact)"].get_linestyle() == "-"
    assert legend["full (exact)"].get_linestyle() == "--"


def test_titles_leave_the_provenance_to_a_footer(drawn):
    runs = {
        "reduced": _traj("population"),
        "full": _traj("exact"),
    }
    for t in runs.values():
        t.meta.update(PROVENANCE)
    jsl_plotting.compare_plot(runs, "x.png", title="JSL D=9 (float64, cpu:0 (cpu))")
    cfg, t = _mim_run()
    mim_plotting.compare_plot({"reduced": t, "full": t}, cfg, "x.png")
    mim_plotting.phases_plot({"Delta > 0": (cfg, t)}, "x.png", title="MIM")
    for fig in drawn:
        titles = [fig._suptitle.get_text()] + [ax.get_title() for ax in fig.axes]
        assert not any("cpu:" in title for title in titles), titles
        assert any("cpu:0 (cpu)" in text.get_text() for text in fig.texts)  # the footer
    assert drawn[0]._suptitle.get_text() == "JSL D=9"
    # MIM's mask ratio is not written gamma (JSL's gamma is an attention entry)
    mim_titles = [drawn[1]._suptitle.get_text(), drawn[2].axes[0].get_title()]
    assert "mask ratio 0.75" in mim_titles[0]
    assert not any("gamma" in title for title in mim_titles)


def test_jsl_compare_marks_the_event_times(drawn):
    """A trajectory whose within-set attention overtakes the between-set one at step 100 (T1 by its
    definition, docs/jsl.md §10): a dotted line at 100 named T1_attention on every panel."""
    steps = np.array([0, 10, 100, 1000])
    t = _traj("population", steps=steps)
    t.observables["within_attention"] = np.array([0.1, 0.2, 0.6, 0.8])
    t.observables["between_attention"] = np.array([0.5, 0.5, 0.5, 0.4])
    t.meta["config"] = {"D": 9, "C": 3, "q": 0.3}
    jsl_plotting.compare_plot({"reduced": t, "full": _traj("exact", steps=steps)}, "x.png")
    for ax in drawn[0].axes[:4]:
        marked = {
            float(line.get_xdata()[0])
            for line in ax.get_lines()
            if line.get_transform() == ax.get_xaxis_transform()
        }
        assert 100.0 in marked
        assert "T1_attention " in [text.get_text() for text in ax.texts]


def test_figure2_says_when_the_learner_never_left_the_plateau(drawn):
    steps, y = np.array([0, 5, 50]), np.array([0.5, 0.4, 0.2])
    for left in (False, True):
        jsl_plotting.figure2(
            np.eye(3),
            np.ones((3, 3)),
            steps,
            y,
            y,
            "x.png",
            chance=0.1,
            linear_error=0.1,
            left_plateau=left,
        )
    notes = [[t.get_text() for ax in fig.axes for t in ax.texts] for fig in drawn]
    assert any("never left the linear plateau" in text for text in notes[0])
    assert not any("plateau" in text for text in notes[1])
    lines = [line.get_label() for line in drawn[0].axes[2].get_lines()]
    assert any(label.startswith("linear rule") for label in lines)


def test_mim_attention_title_shows_the_references_of_the_claim():
    """check-theorems mim's Section 6 measurement ranks the trained attention beside Theorem 4.1's
    ideal, a collapse and random logits (dynsim.mim.diversity.MAPS): the title shows those."""
    from dynsim.mim import diversity, figures

    table = {
        name: {"diversity": [value]}
        for name, value in zip(
            ("trained (per cluster)", "Thm 4.1 ideal", "collapse", "random logits", "uniform"),
            (4.2, 3.1, 0.0, 4.4, 0.0),
        )
    }
    title = figures.attention_title(MIMConfig(P=16), table, 4)
    assert diversity.MAPS[1:] == ("Thm 4.1 ideal", "collapse", "random logits")
    assert "4.2" in title and "3.1 (Thm 4.1 ideal)" in title and "4.4 (random logits" in title
    assert "uniform" not in title


def _heatmap(monkeypatch, values, tmp_path, unstable=(), labels=None):
    """The figure `plots.heatmaps` draws for summary reduced_X over (q, eta) = values' (columns,
    rows), two seeds with equal values, kept instead of saved, and its laid-out renderer."""
    figs = []

    def keep(fig, path, dpi):
        fig.draw_without_rendering()  # the layout saving would make
        figs.append((fig, fig.canvas.get_renderer()))

    monkeypatch.setattr(plots, "atomic_savefig", keep)
    values = np.asarray(values, float)
    qs = [round(0.1 * (j + 1), 1) for j in range(values.shape[1])]
    etas = [0.01 * (i + 1) for i in range(values.shape[0])]
    rows = [
        {
            "q": q,
            "eta": eta,
            "seed": seed,
            "dtype": "float64",
            "reduced_X": float(values[i, j]),
            "reduced_unstable": (i, j) in unstable,
            "reduced_nonfinite_from_step": None,
        }
        for i, eta in enumerate(etas)
        for j, q in enumerate(qs)
        for seed in (0, 1)
    ]
    plots.heatmaps(
        str(tmp_path),
        "jsl",
        "reduced",
        rows,
        {"q": qs, "eta": etas},
        ["reduced_X"],
        None,
        labels=labels,
    )
    return figs[0]


def test_heatmap_scale_is_logarithmic_over_more_than_a_decade(monkeypatch, tmp_path):
    wide, _ = _heatmap(monkeypatch, [[1.0, 10.0], [100.0, 1000.0]], tmp_path)  # three decades
    narrow, _ = _heatmap(monkeypatch, [[1.0, 2.0], [4.0, 9.0]], tmp_path)  # less than one
    signed, _ = _heatmap(monkeypatch, [[-1.0, 10.0], [100.0, 1000.0]], tmp_path)  # no log of -1
    assert isinstance(wide.axes[0].images[0].norm, matplotlib.colors.LogNorm)
    assert "log scale" in wide.axes[1].get_ylabel()  # the colour bar says so
    for fig in (narrow, signed):
        assert not isinstance(fig.axes[0].images[0].norm, matplotlib.colors.LogNorm)
        assert "log" not in fig.axes[1].get_ylabel()


def test_heatmap_title_and_axes_use_readable_names(monkeypatch, tmp_path):
    fig, _ = _heatmap(
        monkeypatch, [[1.0, 2.0], [3.0, 4.0]], tmp_path, labels={"X": "a description"}
    )
    title = fig._suptitle.get_text().replace("\n", " ")
    assert title == "JSL sweep, reduced level (GD): X (a description), mean over 2 seeds"
    assert fig.axes[0].get_ylabel() == r"$\eta$" and fig.axes[0].get_xlabel() == "$q$"
    assert any("float64" in text.get_text() for text in fig.texts)  # provenance in the footer


def _cell_width(ax, columns):
    return ax.bbox.width / columns


def test_heatmap_labels_fit_their_cells(monkeypatch, tmp_path):
    columns = 30
    values = np.full((3, columns), 123456.789)  # "123k": as long as a label of short() gets
    values[0, 0] = 1.0
    fig, renderer = _heatmap(monkeypatch, values, tmp_path)
    ax = fig.axes[0]
    assert len(ax.texts) == values.size
    for text in ax.texts:
        assert text.get_window_extent(renderer).width <= _cell_width(ax, columns)


def test_heatmap_labels_are_left_out_past_the_grid_size(monkeypatch, tmp_path):
    side = 21  # 441 cells > plots.MAX_LABELLED = 400
    values = np.arange(side * side, dtype=float).reshape(side, side) + 1
    fig, _ = _heatmap(monkeypatch, values, tmp_path)
    assert not fig.axes[0].texts
    assert any("table.csv has the values" in text.get_text() for text in fig.texts)


def test_hatched_cell_label_stands_out_on_the_cell_colour(monkeypatch, tmp_path):
    """An unstable cell is hatched; its label sits on a box of the cell's own colour, in white on a
    dark cell (the smallest value: viridis' darkest end) and black on a light one (the largest)."""
    fig, _ = _heatmap(monkeypatch, [[1.0, 2.0], [2.0, 2.0]], tmp_path, unstable={(0, 0), (0, 1)})
    ax = fig.axes[0]
    image = ax.images[0]
    for text, value, ink in zip(ax.texts[:2], (1.0, 2.0), ((1, 1, 1), (0, 0, 0))):
        cell = image.cmap(image.norm(value))
        assert matplotlib.colors.to_rgb(text.get_color()) == ink
        assert tuple(text.get_bbox_patch().get_facecolor()) == tuple(cell)
    assert [p.get_hatch() for p in ax.patches] == [plots.UNSTABLE_HATCH] * 2


def test_compare_figure_is_two_rows_near_4_3_with_the_levels_difference(drawn):
    """compare.png: two rows, width / height between 1.2 and 1.6 (4:3 is 1.33), and a log panel of
    |a - b| / tolerance drawn at the records where it is positive, exact zeros left out (and
    counted in the legend), the tolerance at 1."""
    from dynsim.checker import compare

    steps = np.array([0, 10, 100, 1000])
    a, b = _traj("population", steps=steps), _traj("exact", steps=steps)
    b.observables["alpha"] = a["alpha"] + np.array([0.0, 0.0, 1e-3, 0.0])  # far past rounding
    report = compare(a, b, observables=["alpha", "gamma"])
    jsl_plotting.compare_plot({"reduced": a, "full": b}, "x.png", report=report)
    fig = drawn[0]
    width, height = fig.get_size_inches()
    assert 1.2 <= width / height <= 1.6
    (panel,) = [ax for ax in fig.axes if "tolerance" in ax.get_ylabel()]
    assert panel.get_yscale() == "log" and panel.get_xscale() == "log"
    assert panel.get_title().startswith("DISAGREE")
    curves = {line.get_label().split(" ")[0]: line for line in panel.get_lines()}
    # steps 10 and 1000 equal (not drawn), step 100 past the tolerance (the ratio above 1)
    assert list(curves["alpha"].get_xdata()) == [100.0]
    assert curves["alpha"].get_ydata()[0] > 1
    assert "= 0 at 2 of 3 steps" in curves["alpha"].get_label()
    assert len(curves["gamma"].get_xdata()) == 0
    assert any(
        line.get_transform() == panel.get_yaxis_transform() and line.get_ydata()[0] == 1.0
        for line in panel.get_lines()
    )


def test_a_step_zero_far_from_the_curve_does_not_flatten_it(drawn):
    """A loss at 0.69 at step 0 and 0.041-0.042 after: the axis spans the curve (not 0.04 to 0.7),
    the step-0 marker sits on the top edge and its value is written beside it."""
    fig, ax = plotting.plt.subplots()
    steps = np.array([0, 10, 100, 1000])
    plotting.log_time(ax, steps, np.array([0.69, 0.042, 0.0415, 0.041]), color="C0")
    ax.set_yscale("log")
    plotting.step0_in_view(ax)
    low, high = ax.get_ylim()
    assert high < 0.05 and low > 0.03
    (marker,) = [line for line in ax.get_lines() if line.get_label() == plotting.STEP0]
    assert marker.get_ydata()[0] == high
    assert any("step 0: 0.69" in text.get_text() for text in ax.texts)
    plotting.plt.close(fig)


def test_the_difference_panel_keeps_each_bins_largest_record():
    """3,000 records over 3.5 decades in 60 log bins: at most 60 points, each a record, and the
    largest ratio of all among them (an envelope never hides a peak)."""
    x = np.arange(10, 30001, 10, dtype=float)
    y = np.abs(np.sin(x)) + 1e-3
    y[1234] = 50.0
    at = plotting.bin_maxima(x, y)
    assert 0 < at.size <= plotting.BINS and np.all(np.diff(x[at]) > 0)
    assert 1234 in at
    for i in at:  # the largest of its bin: no record of the same bin is larger
        edges = np.geomspace(x[0], x[-1] * (1 + 1e-12), plotting.BINS + 1)
        b = np.digitize(x[i], edges)
        assert y[i] == y[np.digitize(x, edges) == b].max()


def test_the_evidence_figure_shows_what_each_verdict_read(monkeypatch):
    """theorems.png: one panel per claim, titled with its verdict; an interval claim shows its
    statistic's interval against the threshold line with the statement's side shaded green; a trend
    claim shows the ladder's points and the fitted line's slope; measurements get no panel."""
    from dynsim import claims, evidence, statistic, trends

    figs = []
    monkeypatch.setattr(evidence, "save", lambda fig, path: figs.append(fig))
    trend = trends.fit([256, 1024, 4096], [0.14, 0.066, 0.043], logx=True, logy=True)
    common = dict(statement="s", reading="r", regime="g", derivation="d", negative_control="n")
    items = [
        claims.judge(
            "mean claim", reading_class="order", relation="<=", threshold=1.0,
            measured=statistic.Statistic(0.6, 0.4, 0.8, how="95% Student-t over 4 seeds"),
            **common,
        ),
        claims.judge(
            "trend claim", reading_class="order", relation="<", threshold=0.0,
            measured=statistic.slope(trend, "sizes P"), details={"fit": trend.to_dict()},
            **common,
        ),
        claims.Measurement("seconds", "wall seconds", 12.5),
    ]  # fmt: skip
    evidence.draw(items, "theorems.png")
    mean, slope = figs[0].axes[:2]
    assert [ax.get_visible() and ax.axison for ax in figs[0].axes].count(True) == 2
    assert mean.get_title() == "mean claim: holds"
    assert slope.get_title() == "trend claim: not evaluated"  # 3 rungs: the interval spans 0
    (bar,) = [c for c in mean.collections if c.get_segments()]
    assert np.allclose(bar.get_segments()[0][:, 0], [0.4, 0.8])  # the interval, not the point
    threshold = [ln for ln in mean.get_lines() if list(ln.get_xdata()) == [1.0, 1.0]]
    assert threshold  # the threshold's vertical line
    green = [p for p in mean.patches if matplotlib.colors.to_hex(p.get_facecolor()) == "#2ca02c"]
    assert green and green[0].get_extents().x1 <= mean.transData.transform((1.0, 0))[0] + 1
    points = [ln for ln in slope.get_lines() if ln.get_marker() == "o"]
    assert np.allclose(points[0].get_xdata(), [256, 1024, 4096])
    assert any(f"slope {trend.slope:.4g}" == t.get_text() for t in slope.get_legend().get_texts())
    # each panel says what was measured: the claim's reading under its axis label
    assert all(ax.get_xlabel().endswith("\nreading: r") for ax in (mean, slope))
    plotting.plt.close(figs[0])
