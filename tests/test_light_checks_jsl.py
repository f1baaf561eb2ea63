"""JSL's option checks are light: a bad value of `transfer jsl`, `figure jsl-fig2` or `compare jsl`
is refused (exit 2, one `dynsim: error:` line naming the option as typed) before any heavy module is
imported, and the levels' checks that `compare jsl` and `sweep jsl` call load and refuse without
importing one (in one fresh process, sys.modules read after each: nothing is timed)."""

import pytest

from dynsim.jsl import partition, transfer
from dynsim.jsl.config import JSLConfig
from full.jsl import spec as full_spec
from reduced.jsl import spec as reduced_spec
from tests.test_lazy_settings import HEAVY, fresh, probe_all


BAD_OPTIONS = [
    (["transfer", "jsl", "--overlap", "2"], "--overlap = 2.0 is invalid"),
    (["transfer", "jsl", "--d", "1", "--overlap", "0.5"], "--overlap = 0.5 is invalid"),
    (["transfer", "jsl", "--n-tilde", "0"], "--n-tilde = (0,) is invalid"),
    (["transfer", "jsl", "--finetune-seeds", "1"], "--finetune-seeds = 1 is invalid"),
    (["transfer", "jsl", "--finetune-eta", "0"], "--finetune-eta = 0.0 is invalid"),
    (["transfer", "jsl", "--finetune-steps", "-1"], "--finetune-steps = -1 is invalid"),
    (
        ["figure", "jsl-fig2", "--partition", "contiguous"],
        "--partition = 'contiguous' is invalid",
    ),
    # compare's estimate checks both levels' options (light) before the levels load
    (["compare", "jsl", "--D", "16", "--C", "4", "--p", "17"], "JSLConfig.p = 17 is invalid"),
    (
        ["compare", "jsl", "--mode", "sampled", "--replicates", "1"],
        "--replicates = 1 is invalid",
    ),
    # an option the mode does not read: the mode's reason first (dynsim.verbs.mode_refusal)
    (
        ["compare", "jsl", "--replicates", "3"],
        "--replicates is for --mode sampled, not --mode exact",
    ),
    (["compare", "jsl", "--mode", "realistic", "--seeds", "1"], "--seeds = 1 is invalid"),
]
EXACT_TOO_LARGE = ["compare", "jsl", "--D", "16", "--C", "2"]
REALISTIC_REPLICATES = ["compare", "jsl", "--mode", "realistic", "--replicates", "2"]


@pytest.fixture(scope="module")
def refused(tmp_path_factory):
    """Every refusal of this module run in one fresh process, each with its own --out (the
    folder, which nothing may create, is returned beside the probe)."""
    argvs = [argv for argv, _ in BAD_OPTIONS] + [EXACT_TOO_LARGE, REALISTIC_REPLICATES]
    base = tmp_path_factory.mktemp("refused")
    outs = {tuple(argv): base / f"out{i}" for i, argv in enumerate(argvs)}
    found = probe_all([[*argv, "--out", str(outs[tuple(argv)])] for argv in argvs])
    return {
        tuple(argv): (found[(*argv, "--out", str(outs[tuple(argv)]))], outs[tuple(argv)])
        for argv in argvs
    }


def _refusal(refused, argv) -> list[str]:
    """The refusal's stderr lines, after checking it exited 2, imported nothing heavy and wrote
    nothing."""
    out, folder = refused[tuple(argv)]
    assert out["code"] == 2 and out["heavy"] == [], out
    assert not folder.exists()  # refused before any work
    return out["stderr"].strip().splitlines()


@pytest.mark.parametrize("argv, option", BAD_OPTIONS)
def test_a_bad_option_is_refused_before_any_heavy_import(argv, option, refused):
    lines = _refusal(refused, argv)
    assert lines[0].startswith(f"dynsim: error: {option}"), lines


def test_an_exact_sum_too_large_is_refused_before_any_heavy_import(refused):
    lines = _refusal(refused, EXACT_TOO_LARGE)
    assert lines[0].startswith("dynsim: error: --mode exact would enumerate"), lines
    assert "(--D = 16, --C = 2)" in lines[0] and "Use --mode sampled." in lines[0]


def test_mode_realistic_refuses_replicates_before_any_heavy_import(refused):
    lines = _refusal(refused, REALISTIC_REPLICATES)
    assert (
        lines[0]
        == "dynsim: error: --replicates is for --mode sampled; --mode realistic takes --seeds"
    )


# (level, config, compare's options, the start of the refusal)
LEVEL_REFUSALS = [
    ("reduced", dict(D=16, C=4, p=17), {}, "JSLConfig.p = 17 is invalid for the reduced level"),
    ("full", dict(D=16, C=2), {"mode": "exact", "replicates": None}, "--mode exact would"),
    ("full", dict(), {"mode": "sampled", "replicates": 1}, "--replicates = 1 is invalid"),
]


@pytest.mark.parametrize("level, config, opts, message", LEVEL_REFUSALS)
def test_the_levels_checks_load_and_refuse_without_a_heavy_import(level, config, opts, message):
    """The Level records' validate hooks (what `compare jsl` calls) are the levels' specs'."""
    code = (
        "import sys\nfrom dynsim import setting\nfrom dynsim.jsl.config import JSLConfig\n"
        f"check = getattr(setting.get('jsl'), {level!r}).validate\n"
        "try:\n"
        f"    check(JSLConfig(**{config!r}), {opts!r})\n"
        "except ValueError as exc:\n    print(exc)\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = fresh(code)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0].startswith(message) and lines[-1] == "[]", out.stdout


def test_valid_values_pass_the_light_checks():
    cfg = JSLConfig(D=16, C=4)  # grid partition, d = 16
    tuning = full_spec.Finetune(overlap=0.5, n_tilde=[8, 16]).resolved(cfg)
    assert (tuning.n_tilde, tuning.eta) == ((8, 16), cfg.eta / 2)
    assert full_spec.check_overlap(JSLConfig(D=16, C=4, d=1), -1) == -1.0
    partition.require_grid_partition(cfg, name="--partition")
    assert full_spec.validate_run_options(cfg, "exact") == 1
    assert full_spec.validate_run_options(cfg, "sampled", replicates=2) == 2
    assert full_spec.validate_run_options(cfg, "realistic", seeds=1) == 1
    realistic = {"replicates": None, "seeds": None, "ladder": [100, 400]}
    assert full_spec.validate_realistic(cfg, realistic) == full_spec.DEFAULT_SEEDS
    reduced_spec.check_moments_fit(16, 4, 15)  # 16^15 = 2^60 < 2^63
    # the library names its keywords
    with pytest.raises(ValueError, match=r"^mode='exact' would .*\(D = 16, C = 2\)"):
        full_spec.validate_run_options(JSLConfig(D=16, C=2), "exact")
    with pytest.raises(ValueError, match=r"^replicates = 1 is invalid"):
        full_spec.validate_run_options(cfg, "sampled", replicates=1)


def test_the_transfer_options_map_every_keyword_the_command_passes():
    """One mapping names every keyword `transfer_keywords` builds, so each refusal names its
    option."""
    args = type(
        "Args",
        (),
        dict(overlap=0.3, finetune_seeds=4, n_tilde=[8], finetune_steps=10, finetune_eta=0.1),
    )()
    kwargs = transfer.transfer_keywords(args)
    assert kwargs == dict(overlap=0.3, seeds=4, n_tilde=(8,), steps=10, eta=0.1)
    assert set(kwargs) == set(transfer.TRANSFER_OPTIONS)


def test_the_fine_tuning_is_checked_on_construction():
    """`Finetune` refuses a bad field when it is built, in the library's names or in the names it
    is given (the command line's), and checks the overlap against the config's d when resolved."""
    with pytest.raises(ValueError, match=r"^seeds = 1 is invalid"):
        full_spec.Finetune(seeds=1)
    with pytest.raises(ValueError, match=r"^--finetune-seeds = 1 is invalid"):
        full_spec.Finetune(seeds=1, names=transfer.TRANSFER_OPTIONS)
    with pytest.raises(ValueError, match=r"^eta = -0.1 is invalid"):
        full_spec.Finetune(eta=-0.1)
    narrow = full_spec.Finetune(overlap=0.5, names=transfer.TRANSFER_OPTIONS)
    with pytest.raises(ValueError, match=r"^--overlap = 0.5 is invalid for d = 1"):
        narrow.resolved(JSLConfig(D=16, C=4, d=1))
    assert full_spec.Finetune(n_tilde=[8]).n_tilde == (8,)
    assert full_spec.Finetune(eta=0.3).resolved(JSLConfig()).eta == 0.3


def test_a_C_whose_set_type_counts_overflow_float64_is_refused_before_any_work():
    """C = 652 is the largest C whose every set-type count C!/(a! b! (C-a-b)!) is a finite
    float64; at 653 one count is not, and the reduced level is refused in one line (it raised
    OverflowError after building the classes). The largest count sits at the most even split: the
    maximum over all (a, b) by brute force, in exact integers, at C = 30, 31, 32 (each residue mod
    3)."""
    import math
    import sys

    def even(C):
        return math.comb(C, C // 3) * math.comb(C - C // 3, (C - C // 3) // 2)

    for C in (30, 31, 32):
        pairs = [(a, b) for a in range(C + 1) for b in range(C - a + 1)]
        assert max(math.comb(C, a) * math.comb(C - a, b) for a, b in pairs) == even(C)
    assert even(652) <= sys.float_info.max < even(653)
    assert reduced_spec.set_types_fit(652) and not reduced_spec.set_types_fit(653)
    reduced_spec.check_moments_fit(1304, 652, 3)
    with pytest.raises(ValueError, match=r"^JSLConfig.C = 653 is invalid .* for C > 652"):
        reduced_spec.check_moments_fit(1306, 653, 3)
    with pytest.raises(ValueError, match=r"for C > 652"):
        reduced_spec.check_moments_fit(2_000_000, 1000, 3)
