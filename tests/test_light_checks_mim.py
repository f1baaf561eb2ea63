"""MIM's level options are checked before any level loads (the levels' specs, `reduced.mim.spec`,
`full.mim.spec`): a bad value is refused with one line naming the option as typed, exit
2, and none of the heavy modules imported; a valid config passes the same light checks."""

from __future__ import annotations

import argparse

import pytest

from dynsim import cli
from dynsim.mim import setting
from dynsim.mim.config import MIMConfig
from dynsim.mim.figures import check_attention, check_phases
from full.mim import spec as full_spec
from reduced.mim import spec as reduced_spec
from tests.test_lazy_settings import HEAVY, fresh, probe_all

UNIFORM = ["--z", "uniform:0.5:1.5"]

REFUSED = [
    # the reduced level's expectation is exact: it needs a finite law
    (["compare", "mim", *UNIFORM], "--z = uniform:0.5:1.5 is continuous"),
    (["figure", "mim-phases", *UNIFORM], "--z = uniform:0.5:1.5 is continuous"),
    # the full level's mode exact enumerates C(64, 32) masks: the message says what to change
    (["compare", "mim", "--P", "64"], "at --P 64, --K 1, --z const: lower --P, --K"),
    (["compare", "mim", "--P", "64"], "or use --mode sampled"),
    # the figure has no --mode: it is not offered
    (
        ["figure", "mim-attention", "--P", "64"],
        "at --P 64, --K 1, --z const: lower --P, --K or the",
    ),
    (["compare", "mim", "--samples", "0"], "--samples = 0 is invalid"),
    (
        ["compare", "mim", "--samples", "4", "--approximation", "pp_frozen"],
        "--approximation = 'pp_frozen' is invalid with --samples",
    ),
    (["compare", "mim", "--samples", "4", "--replicates", "1"], "--replicates = 1 is invalid"),
    (["compare", "mim", "--samples", "4", "--method", "flow"], "--method = 'flow' is invalid"),
    (
        ["compare", "mim", "--K", "2", "--method", "flow"],
        "--method = 'flow' is invalid with --K 2 and B free (--approximation none): the gradient "
        "flow holds the per-class state of K = 1 or pp_frozen; use --method gd, or --approximation "
        "pp_frozen",
    ),
    (["compare", "mim", "--replicates", "3"], "--replicates = 3 is invalid in mode 'exact'"),
    (["compare", "mim", "--mode", "sampled", "--replicates", "1"], "replicates = 1 is invalid"),
    (["compare", "mim", "--approximation-tolerance", "0"], "--approximation-tolerance = 0"),
]


@pytest.fixture(scope="module")
def refused():
    return probe_all([[*argv, "--out", "/nonexistent/o"] for argv, _ in REFUSED])


@pytest.mark.parametrize("argv, needle", REFUSED)
def test_a_bad_level_option_is_refused_before_the_heavy_imports(argv, needle, refused):
    out = refused[(*argv, "--out", "/nonexistent/o")]
    lines = out["stderr"].strip().splitlines()
    assert lines[0].startswith("dynsim: error: ") and needle in lines[0], out["stderr"]
    assert out["code"] == 2 and out["heavy"] == []


@pytest.mark.parametrize("argv, needle", REFUSED)
def test_a_bad_level_option_exits_2_with_one_line(argv, needle, tmp_path, capsys):
    assert cli.main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dynsim: error: ") and needle in err and "\n" not in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    "argv, needle",
    [
        # the points' check is the library's (`dynsim.sweep`): its keywords name the options
        (["sweep", "mim", *UNIFORM], "error: MIMConfig.z = ('uniform', 0.5, 1.5) is continuous"),
        (
            ["sweep", "mim", "--P", "16,64", "--level", "full"],
            "error: mode 'exact' would enumerate 488,526,937,079,580 (cluster, z, mask) triples",
        ),
        # K > 1 with B free has no flow: refused with the points' check, before the sweep says what
        # it will run (it was refused inside the run)
        (
            ["sweep", "mim", "--K", "2", "--approximation", "mean_field", "--method", "flow"],
            "error: method = 'flow' is invalid with K = 2",
        ),
    ],
)
def test_a_sweep_refuses_a_point_before_any_work(argv, needle, tmp_path, capsys):
    """The sweep checks its points after the core has imported JAX (`dynsim.sweeps`), but before
    it logs or runs anything."""
    assert cli.main([*argv, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dynsim: error: ") and needle in err and "\n" not in err
    assert not list(tmp_path.glob("o/points/*/*"))


def test_a_valid_config_passes_the_light_checks_without_loading_a_level():
    """The defaults of compare mim, both figures and a sweep point pass, and nothing heavy loads
    (K = 1: no joint-type size to check)."""
    code = (
        "import sys, argparse\n"
        "from dynsim.mim import setting\n"
        "from full.mim import spec as full_spec\n"
        "from reduced.mim import spec as reduced_spec\n"
        "from dynsim.mim.config import MIMConfig\n"
        "from dynsim.mim.figures import check_attention, check_phases\n"
        "cfg = MIMConfig()\n"
        f"opts = {compare_defaults()!r}\n"
        "reduced_spec.validate_reduced(cfg, opts)\n"
        "full_spec.validate_full(cfg, opts)\n"
        "setting.validate_point(cfg, setting.SWEEP_DEFAULTS, 'both')\n"
        "check_phases(cfg, argparse.Namespace(kappa_pos='0.9,0.4', kappa_neg='0.6,0.4',"
        " approximation='mean_field'))\n"
        "check_attention(cfg, argparse.Namespace(top_k=None))\n"
        f"print([m for m in {HEAVY!r} if m in sys.modules])"
    )
    out = fresh(code)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def compare_defaults() -> dict:
    """The level options `compare mim` passes at its defaults."""
    return {
        "approximation": None,
        "method": "gd",
        "samples": None,
        "replicates": None,
        "approximation_tolerance": 0.05,
        "mode": "exact",
    }


def test_the_light_checks_answer_as_the_levels_do():
    """The levels' validate_run_options are their specs' checks (plus the joint-type size)."""
    import full.mim
    import reduced.mim

    cfg = MIMConfig()
    assert reduced.mim.validate_run_options(cfg, "pp_frozen+mean_field") == (
        reduced_spec.check_reduced(cfg, "mean_field+pp_frozen")
    )
    assert full.mim.validate_run_options(cfg, "sampled") == full_spec.check_full(cfg, "sampled")
    assert full_spec.check_full(cfg, "sampled", 3) == 3 and full_spec.check_full(cfg) == 1
    with pytest.raises(ValueError, match="^approximation = 'frozen' is invalid"):
        reduced_spec.approximations("frozen")
    with pytest.raises(ValueError, match="mode = 'exactly' is invalid"):
        full.mim.validate_run_options(cfg, "exactly")
    # the joint-type size stays in the reduced level, loaded where it is wanted
    big = MIMConfig(P=36, K=2, kappa_c=0.7, kappa_s=0.3, mask_ratio=0.5)
    assert reduced_spec.exact_joint(big, ()) and not reduced_spec.exact_joint(big, ("mean_field",))
    assert reduced_spec.check_reduced(big) == ()
    with pytest.raises(ValueError, match="joint-type expectation"):
        reduced_spec.validate_reduced(big, compare_defaults())
    with pytest.raises(ValueError, match="joint-type expectation"):
        setting.validate_point(big, setting.SWEEP_DEFAULTS, "reduced")


def test_the_figures_checks_read_their_options():
    cfg = MIMConfig()
    phases = argparse.Namespace(kappa_pos="0.9,0.4", kappa_neg="0.6,0.4", approximation="none")
    check_phases(cfg, phases)
    with pytest.raises(ValueError, match="--z = uniform:0.5:1.5"):
        check_phases(cfg.replace(z=("uniform", 0.5, 1.5)), phases)
    with pytest.raises(ValueError, match="at --P 64") as refused:
        check_attention(MIMConfig(P=64), argparse.Namespace(top_k=None))
    assert "--mode" not in str(refused.value)  # the figures take none
    with pytest.raises(ValueError, match="is continuous") as refused:
        check_attention(MIMConfig(z=("uniform", 0.5, 1.5)), argparse.Namespace(top_k=None))
    assert "--mode" not in str(refused.value)


def test_the_joint_type_size_waits_for_the_estimate(tmp_path, capsys):
    """K > 1 with B free, exact: the joint types of P = 10^6 take minutes to build, so their size is
    checked after the resource estimate, which refuses the run first (naming --P)."""
    argv = ["compare", "mim", "--K", "2", "--P", "1000000", "--out", str(tmp_path / "o")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("dynsim: error: --steps = 400, --record-every = 4, --P = 1000000")


BIG_JOINT = dict(P=36, K=2, kappa_c=0.7, kappa_s=0.3, mask_ratio=0.5)  # > 2,000,000 count vectors


def test_the_joint_type_size_offers_what_its_caller_has():
    """compare mim has --samples, figure mim-phases and the library's sweep do not: each message
    offers only what its caller takes, in its names."""
    from dynsim.mim.figures import check_phases_size

    big = MIMConfig(**BIG_JOINT)
    with pytest.raises(ValueError) as compare:
        reduced_spec.validate_reduced(big, compare_defaults())
    assert str(compare.value).endswith(
        "(--P 36): use --approximation mean_field (counts at their means), --samples S (Monte "
        "Carlo) or a smaller --P"
    )
    with pytest.raises(ValueError) as figure:
        check_phases_size([big], "none")
    assert str(figure.value).endswith(
        "(--P 36): use --approximation mean_field (counts at their means) or a smaller --P"
    )
    with pytest.raises(ValueError) as point:
        setting.validate_point(big, setting.SWEEP_DEFAULTS, "reduced")
    assert str(point.value) == (
        "the exact joint-type expectation (K = 2, B free) needs more than 2,000,000 count vectors "
        "over the queries (P = 36): use approximation='mean_field' (counts at their means) or a "
        "smaller P"
    )


LIBRARY_REFUSALS = [
    # (level, keywords, the message's start): the keywords' names, as before the checks moved
    ("reduced", dict(approximation="bogus"), "approximation = 'bogus' is invalid: must be None"),
    (
        "reduced",
        dict(samples=0),
        "samples = 0 is invalid: must be an integer >= 1 (count vectors per query)",
    ),
    ("reduced", dict(samples=4, replicates=3.5), "replicates = 3.5 is invalid: must be an integer"),
    (
        "reduced",
        dict(samples=4, approximation="mean_field"),
        "approximation = 'mean_field' is invalid with samples: the Monte Carlo expectation keeps B "
        "free and draws the counts (leave approximation = None)",
    ),
    ("reduced", dict(samples=4, method="flow"), "method = 'flow' is invalid with samples"),
    (
        "reduced",
        dict(cfg=dict(K=2), method="flow"),
        "method = 'flow' is invalid with K = 2 and B free (approximation = None): the gradient "
        "flow holds the per-class state of K = 1 or pp_frozen; use method='gd', or "
        "approximation='pp_frozen'",
    ),
    (
        "reduced",
        dict(cfg=dict(z=("uniform", 0.5, 1.5))),
        "MIMConfig.z = ('uniform', 0.5, 1.5) is continuous: an exact expectation (the reduced "
        "level, the full level's mode 'exact') needs a finite law ('const' or (value, probability) "
        "pairs); the full level's mode 'sampled' runs the uniform law",
    ),
    ("reduced", dict(cfg=BIG_JOINT), "the exact joint-type expectation (K = 2, B free)"),
    ("full", dict(mode="sampled", replicates=1), "replicates = 1 is invalid"),
    ("full", dict(replicates=3), "replicates = 3 is invalid in mode 'exact'"),
    (
        "full",
        dict(cfg=dict(P=64)),
        "mode 'exact' would enumerate 488,526,937,079,580 (cluster, z, mask) triples per step "
        "(limit 300,000): lower P, K or the z support, or use mode 'sampled'",
    ),
    ("full", dict(cfg=dict(z=("uniform", 0.5, 1.5))), "MIMConfig.z = ('uniform', 0.5, 1.5)"),
]


@pytest.mark.parametrize("level, keywords, start", LIBRARY_REFUSALS)
def test_the_library_names_its_keywords(level, keywords, start):
    """reduced.mim / full.mim.validate_run_options speak to a Python caller: the keywords it
    passed, never a command line's flag."""
    import full.mim
    import reduced.mim

    keywords = dict(keywords)
    cfg = MIMConfig(**keywords.pop("cfg", {}))
    check = (reduced.mim if level == "reduced" else full.mim).validate_run_options
    with pytest.raises(ValueError) as refused:
        check(cfg, **keywords)
    message = str(refused.value)
    assert message.startswith(start) and "--" not in message, message
