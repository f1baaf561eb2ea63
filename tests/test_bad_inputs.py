"""Bad and extreme inputs over every subcommand (issue 16): exit 2, one line "dynsim: error: ..."
naming the parameter, no traceback, within seconds, before any work; and the resource estimate that
refuses runs too large to fit."""

import argparse
import io
import json
import os
import subprocess
import sys
import time

import jax
import pytest

from dynsim import cli, resources
from dynsim import setting as registry

BIG = "1000000000000"
HUGE_SEED = "99999999999999999999999"

# (argv, the parameter the message must name). The first blocks are the cases: tracebacks,
# kills and wrong exit 0s (the --out path cases and Dask are other parts of issue 16).
CASES = [
    # tracebacks (exit 1)
    (["compare", "jsl", "--steps", BIG], "--steps"),
    (["compare", "mim", "--steps", BIG], "--steps"),
    (["sweep", "jsl", "--steps", BIG], "--steps"),
    (["sweep", "mim", "--steps", BIG], "--steps"),
    (["figure", "jsl-fig4", "--steps", BIG], "--steps"),
    (["check-theorems", "mim", "--steps", BIG], "--steps"),
    (["compare", "jsl", "--seed", HUGE_SEED], "--seed"),
    (["compare", "mim", "--seed", HUGE_SEED], "--seed"),
    (["sweep", "jsl", "--seed", HUGE_SEED], "--seed"),
    (["figure", "jsl-fig4", "--seed", HUGE_SEED], "--seed"),
    (["transfer", "jsl", "--seed", HUGE_SEED], "--seed"),
    (["compare", "jsl", "--mode", "sampled", "--N", "1000000000"], "--N"),
    (["compare", "mim", "--mode", "sampled", "--N", "1000000000"], "--N"),
    (["compare", "jsl", "--mode", "sampled", "--replicates", "100000"], "--replicates"),
    (["compare", "mim", "--mode", "sampled", "--replicates", "100000"], "--replicates"),
    (
        ["sweep", "jsl", "--level", "full", "--mode", "sampled", "--replicates", "100000"],
        "--replicates",
    ),
    (["sweep", "jsl", "--level", "full", "--mode", "sampled", "--N", "1000000000"], "--N"),
    (["sweep", "jsl", "--D", "64", "--C", "4", "--mc-samples", "1000000000"], "--mc-samples"),
    # killed (after minutes or at 4 GB)
    (["compare", "jsl", "--mode", "realistic", "--seeds", "100000"], "--seeds"),
    (
        [
            "sweep",
            "jsl",
            "--level",
            "full",
            "--mode",
            "realistic",
            "--seeds",
            "100000",
            "--max-time",
            "1h",
        ],
        "--seeds",
    ),
    (["figure", "jsl-fig4", "--seeds", "100000"], "--seeds"),
    (["compare", "mim", "--P", "1000000"], "--P"),
    (["sweep", "mim", "--P", "1000000"], "--P"),
    (["sweep", "mim", "--P", "1000000", "--approximation", "mean_field"], "--P"),
    # past MIMConfig.MAX_P: refused by the config itself, which would take minutes to build
    (["figure", "mim-phases", "--P", "100000000"], "MIMConfig.P = 100000000"),
    (["figure", "mim-phases", "--P", "1000000"], "--P"),
    # K P past MAX_P: refused by the config before any area is built (K = 10^5 built them for 4.5
    # s; 10^9 would take half a day and more memory than the machine has)
    (["compare", "mim", "--K", "1000000000"], "MIMConfig.K = 1000000000"),
    (["sweep", "mim", "--K", "1000000000"], "MIMConfig.K = 1000000000"),
    (["transfer", "jsl", "--n-tilde", "1000000000"], "--n-tilde"),
    (["experiment", "mim-images", "--steps", BIG], "--steps"),
    (["experiment", "jsl-images", "--steps", BIG], "--steps"),
    (["derive", "jsl", "--C", "1000"], "--C"),
    # wrong exit 0
    (
        ["compare", "mim", "--approximation", "mean_field", "--approximation-tolerance", "-1"],
        "--approximation-tolerance",
    ),
    (["sweep", "mim", "--approximation-tolerance", "-1"], "--approximation-tolerance"),
    (["derive", "jsl", "--p", "100001"], "--p"),
    (
        [
            "sweep",
            "jsl",
            "--D",
            "8",
            "--C",
            "2",
            "--q",
            "0.2,0.3",
            "--steps",
            "4",
            "--record-every",
            "2",
            "--heatmap",
            "nonexistent",
        ],
        "heatmap",
    ),
    # the other commands, and the bounds and limits themselves
    (["check-theorems", "jsl", "--seeds", "100000"], "--seeds"),
    (["figure", "jsl-fig2", "--seeds", "100000"], "--seeds"),
    (["figure", "mim-attention", "--P", "1000000"], "--P"),
    (["derive", "mim", "--max-memory", "8X"], "--max-memory"),
    (["compare", "jsl", "--N", "99999999999999999999"], "--N"),
    (["compare", "jsl", "--max-time", "-2h"], "--max-time"),
    (
        [
            "compare",
            "jsl",
            "--steps",
            "100000000",
            "--record-every",
            "100000000",
            "--max-time",
            "1s",
        ],
        "--steps",
    ),
    (["compare", "mim", "--max-memory", "1K"], "--max-memory"),
    (["transfer", "jsl", "--finetune-steps", BIG, "--max-time", "2h"], "--finetune-steps"),
    (["sweep", "jsl", "--seed", str(2**63 - 1), "--seeds", "2"], "--seed"),
    (["compare", "mim", "--partitions", "5"], "partitions"),
    (["compare", "jsl", "--steps", "-1", "--record-every", "0"], "steps"),
    (["rerun", "/nonexistent/report.json"], "report"),
    (["export", "/nonexistent/folder"], "FOLDER"),
    # Theorem 4.1's run lengthens as 1/eps: at 1e-320 it is refused by its estimate, not overflowed
    (["check-theorems", "mim", "--eps", "1e-320"], "--eps = 1e-320"),
    # kappas the estimate cannot read (P^100 overflowed in it): the configuration names them
    (["compare", "mim", "--P", "1000000", "--kappa-s", "100"], "kappa_s"),
    (["sweep", "mim", "--P", "1000000", "--kappa-s", "100"], "kappa_s"),
    (["check-theorems", "mim", "--kappa-s", "-1000"], "kappa_s"),
    (["check-theorems", "mim", "--only", "Lemma 9.9"], "--only"),
    (["check-theorems", "mim", "--only", ","], "--only"),
    (["check-theorems", "jsl", "--only", "Lemma 9"], "--only"),
    (["compare", "mim", "--kappa-s", "nan"], "kappa_s"),
    # the flow's end time past eta * 2^53: the GD step of a save, round(t / eta), is not determined
    (["compare", "jsl", "--method", "flow", "--t-max", "1e308"], "--t-max = 1e+308"),
    (["sweep", "jsl", "--method", "flow", "--t-max", "1e308"], "--t-max = 1e+308"),
    # the ICL setting, probed as the built-in ones are
    (["compare", "icl", "--steps", BIG], "--steps"),
    (["compare", "icl", "--mode", "sampled", "--batch", "1000000000"], "--batch = 1000000000"),
    (["sweep", "icl", "--N", "0,5"], "ICLConfig.N = 0"),
    (["check-theorems", "icl", "--tests", "1"], "--tests"),
    (["derive", "icl", "--d", "100000"], "ICLConfig.d = 100000"),
    (["figure", "icl-error", "--tests", "1000000000000000"], "--tests"),
]


def commands(parser: argparse.ArgumentParser) -> set:
    """Every (verb, target) of the parser, walked from its subparsers (a verb without targets:
    (verb, None))."""
    out = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for verb, sub in action.choices.items():
                inner = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
                out |= {(verb, t) for a in inner for t in a.choices} if inner else {(verb, None)}
    return out


def test_every_subcommand_has_a_bad_input_case():
    covered = {
        (argv[0], argv[1] if argv[0] not in ("rerun", "export") else None) for argv, _ in CASES
    }
    # the settings other test modules register, or that are not built in (an installed plugin),
    # and their own commands (a figure named after its setting)
    tests_own = set(registry.settings()) - set(registry.BUILTIN)
    tests_own |= {c.name for n in tests_own for c in registry.get(n).commands}
    missing = {(v, t) for v, t in commands(cli.build_parser()) - covered if t not in tests_own}
    assert not missing, f"add bad-input cases for {sorted(missing, key=str)}"


@pytest.mark.parametrize("argv,parameter", CASES, ids=[" ".join(a)[:60] for a, _ in CASES])
def test_bad_input_exits_2_with_one_named_line(argv, parameter, tmp_path, capsys):
    out = [] if argv[0] in ("derive", "rerun", "export") else ["--out", str(tmp_path / "out")]
    started = time.perf_counter()
    code = cli.main(argv + out)
    seconds = time.perf_counter() - started
    err = capsys.readouterr().err
    lines = [
        line
        for line in err.splitlines()
        if line.strip() and not line.startswith(("dynsim sweep", "sweep "))
    ]
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith("dynsim: error:"), err
    assert parameter in lines[0] and "Traceback" not in err
    # in-process, with JAX started: the refusals come before any work
    assert seconds < 10, f"{seconds:.1f} s"


def test_refusal_says_estimate_limit_and_what_fits(capsys):
    code = cli.main(["compare", "jsl", "--mode", "sampled", "--N", "1000000000"])
    err = capsys.readouterr().err
    assert (
        code == 2 and "available memory" in err and "4.61 TB" in err and "fewer --replicates" in err
    )
    # 8 replicates x 1e9 samples x D = 9 x 64 bytes (the batch's arrays) = 4.608e12 bytes, printed
    # to 3 digits


@pytest.mark.parametrize("mode, held", [("exact", "5.9e+05 PB"), ("sampled", "4.72e+06 PB")])
def test_a_huge_d_is_refused_by_the_parameters_it_would_hold(capsys, mode, held):
    """--d at int64's top once reached XLA (SIGABRT in an allocation): the full level's parameters
    hold v and w* in d, 4 x 8 bytes x 2 d = 5.9e20 bytes a run (8 replicates in mode sampled),
    refused before any work."""
    code = cli.main(["compare", "jsl", "--mode", mode, "--d", str(2**63 - 1)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1, err
    assert "--d = 9223372036854775807 is too large here" in err[0] and "parameters" in err[0]
    assert f"about {held}" in err[0] and err[0].endswith("a smaller --d or --D")


def test_time_refusal_names_the_limit(capsys):
    code = cli.main(
        [
            "compare",
            "jsl",
            "--steps",
            "100000000",
            "--record-every",
            "100000000",
            "--max-time",
            "1s",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "--max-time" in err and "roughly" in err and "--steps = 100000000" in err


def test_a_day_is_the_default_horizon_and_max_time_raises_it():
    # two days of work at the estimate's rate
    need = [resources.Need("x", {"--steps": 7}, flops=2 * 86400 * resources.FLOP_RATE)]
    with pytest.raises(ValueError, match=r"--steps = 7 is too large here: .* above a day"):
        resources.refuse_oversized(need, available=8 * 2**30)
    resources.refuse_oversized(need, available=8 * 2**30, max_time=3 * 86400)  # raised: admitted
    with pytest.raises(ValueError, match="above --max-time"):
        resources.refuse_oversized(need, available=8 * 2**30, max_time=86400.0)
    said = io.StringIO()  # accepted long work says its estimate when it starts, once
    resources.say_long(need)
    resources.say_pending(said)
    resources.say_pending(said)
    resources.say_long([resources.Need("y", {}, flops=30 * resources.FLOP_RATE)])  # short: silent
    resources.say_pending(said)
    assert said.getvalue().count("\n") == 1 and "roughly 2 days of work" in said.getvalue()


def test_a_measured_rate_counts_its_own_work():
    """A term with its own measured rate (the realistic step's) is timed at that rate, the others
    at FLOP_RATE, and the estimate names both rates."""
    fast = resources.Need("fast", {"--N": 1}, flops=3600 * 1e10, rate=1e10)  # an hour
    slow = resources.Need("slow", {"--steps": 1}, flops=3600 * resources.FLOP_RATE)  # an hour
    assert resources.work_seconds([fast, slow]) == pytest.approx(7200, rel=1e-12)  # rounding
    with pytest.raises(ValueError, match=r"roughly 2 h .*1e\+10 to 1e\+09 operations a second"):
        resources.refuse_oversized([fast, slow], available=8 * 2**30, max_time=3600)


def test_defaults_of_every_command_fit_in_8_gb_and_a_day():
    """The estimate must not refuse the commands' own defaults: each fits in 8 GB (the documented
    peaks are below 4 GB) and is estimated below a day (the slowest default, check-theorems jsl,
    runs in minutes)."""
    for verb, target in sorted(commands(cli.build_parser()), key=str):
        if target is None:
            continue
        args = cli.parse([verb, target])
        needs = args.estimate(args) if args.estimate is not None else []
        resources.refuse_oversized(needs, available=8 * 2**30, max_time=86400)


def test_every_command_states_the_integer_bound_in_help():
    for verb, target in commands(cli.build_parser()):
        if target is not None:
            text = cli.parse([verb, target]).command_parser.format_help()
            assert "2^63 - 1" in " ".join(text.split()), (verb, target)


def test_seed_bound_is_what_jax_random_key_takes(capsys):
    jax.random.key(resources.INT_MAX)  # the largest seed the options take is a valid key
    with pytest.raises(OverflowError):
        jax.random.key(resources.INT_MAX + 1)
    assert cli.main(["compare", "jsl", "--seed", str(2**63), "--print-config"]) == 2
    assert cli.main(["compare", "jsl", "--seed", str(2**63 - 1), "--print-config"]) == 0


@pytest.mark.parametrize(
    "text,value", [("8G", 8 * 2**30), ("512M", 512 * 2**20), ("1.5k", 1536), ("100", 100)]
)
def test_memory_size(text, value):
    assert resources.memory_size(text) == value


@pytest.mark.parametrize(
    "text,value", [("90", 90), ("30s", 30), ("20m", 1200), ("2h", 7200), ("1d", 86400)]
)
def test_duration(text, value):
    assert resources.duration(text) == value


@pytest.mark.parametrize("text", ["", "8X", "-1G", "G", "0"])
def test_bad_sizes_refused(text):
    with pytest.raises(argparse.ArgumentTypeError):
        resources.memory_size(text)


LIMITED = (
    "import resource, runpy, sys; resource.setrlimit(resource.RLIMIT_AS, (3 * 2**30, 3 * 2**30)); "
    "sys.argv[0] = 'dynsim'; runpy.run_module('dynsim.cli', run_name='__main__')"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["compare", "jsl", "--mode", "sampled", "--N", "1000000000"],
        ["figure", "mim-phases", "--P", "1000000"],
    ],
)
def test_refused_under_a_3_gb_address_space(argv, tmp_path):
    """A separate process with RLIMIT_AS = 3 GB (JAX starts in about 1 GB of address space): the
    estimate refuses before any allocation, so the process neither dies nor prints a traceback."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run(
        [sys.executable, "-c", LIMITED, *argv, "--out", str(tmp_path / "o")],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=50,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and lines[0].startswith("dynsim: error: --"), (
        proc.stderr
    )
    assert not (tmp_path / "o").exists()


def test_max_memory_replaces_the_available_memory():
    """--max-memory is the limit when given, below or above the available memory (the estimate can
    overshoot)."""
    need = [resources.Need("x", {"--N": 1}, bytes=2e9)]
    # raised above the available memory: admitted
    resources.refuse_oversized(need, max_memory=4e9, available=1e9)
    with pytest.raises(ValueError, match="available memory"):
        resources.refuse_oversized(need, available=1e9)
    with pytest.raises(ValueError, match="--max-memory"):
        resources.refuse_oversized(need, max_memory=1e9, available=8e9)


def test_runs_one_after_another_count_their_largest_memory():
    runs = [
        [resources.Need("a", {}, bytes=3e9, flops=1.0)],
        [
            resources.Need("b", {}, bytes=2e9, flops=2.0),
            resources.Need("c", {}, bytes=2e9, flops=4.0),
        ],
    ]
    out = resources.sequential(runs)
    # run 2 (4e9) is the peak
    assert sum(n.bytes for n in out) == 4e9 and sum(n.flops for n in out) == 7.0


def test_reclaimable_page_cache_is_available(monkeypatch):
    """In a cgroup, memory.current counts the page cache; its inactive part is not in use (issue 16
    review: 3.9 of 4 GiB 'used' after heavy file I/O refused every run)."""
    files = {
        "/proc/meminfo": "MemAvailable:   33554432 kB\n",
        "/sys/fs/cgroup/memory.max": str(4 * 2**30),
        "/sys/fs/cgroup/memory.current": str(39 * 2**30 // 10),
        "/sys/fs/cgroup/memory.stat": f"anon 1000\ninactive_file {3 * 2**30}\nactive_file 5\n",
    }
    monkeypatch.setattr(resources, "_read", lambda path: files.get(path, ""))
    assert resources.available_memory() == 4 * 2**30 - 39 * 2**30 // 10 + 3 * 2**30
    files["/sys/fs/cgroup/memory.stat"] = ""
    # without memory.stat: as before
    assert resources.available_memory() == 4 * 2**30 - 39 * 2**30 // 10


def test_check_theorems_mim_defaults_are_not_charged_the_patch_budget():
    """The reduced MIM estimate charges the per-patch views the run expands (none at P = 4096: they
    exceed the budget), not the budget's 160 MB each; the ladder's runs count one at a time: the
    default check-theorems mim is the largest rung's class records (103 records x 4 x 211^2 float64
    = 147 MB) and tables, below 200 MB (it was estimated at 819 MB: four rungs summed, each charged
    160 MB)."""
    args = cli.parse(["check-theorems", "mim"])
    assert sum(n.bytes for n in args.estimate(args)) < 200e6


def test_needs_are_json_safe_numbers():
    """Every estimate is finite numbers (no overflow into inf for the largest inputs the options
    take)."""
    args = cli.parse(["figure", "mim-phases", "--P", str(2**62)])
    for n in args.estimate(args):
        assert json.dumps([n.bytes, n.flops]) and n.bytes < float("inf") and n.flops < float("inf")


def test_mim_phases_is_estimated_at_the_kappas_it_runs():
    """figure mim-phases runs --kappa-pos and --kappa-neg, not the config's kappas (0.75, 0.25): at
    P = 65536 its larger run (kappa_s = 0.4: about P^0.6 = 776 areas) records 62 x 4 x 776^2 float64
    = 1.2 GB of class records; estimated at the config's kappa_s = 0.25 (3841 areas) it was 30 GB
    and refused a run that holds 0.54 GB. The runs are one after another: the larger one counts.
    Negative control: kappa_s = 0.1 in --kappa-neg (about P^0.9 = 21619 areas) is refused."""
    args = cli.parse(["figure", "mim-phases", "--P", "65536", "--steps", "300"])
    assert 1.0e9 < sum(n.bytes for n in args.estimate(args)) < 1.5e9
    args = cli.parse(
        ["figure", "mim-phases", "--P", "65536", "--steps", "300", "--kappa-neg", "0.6,0.1"]
    )
    with pytest.raises(ValueError, match="--P = 65536 is too large here"):
        resources.refuse_oversized(args.estimate(args), available=8 * 2**30)


def test_an_ascii_only_output_gets_escapes_not_an_encoding_error():
    """sweep's --help holds a section sign: an ASCII-only locale once ended it in exit 2 with a bare
    encoding error; it is written escaped instead."""
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    done = subprocess.run(
        [sys.executable, "-m", "dynsim.cli", "sweep", "jsl", "--help"],
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert b"docs/sweeps.md \\xa76" in done.stdout and b"codec" not in done.stderr
