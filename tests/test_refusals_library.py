"""Every library argument is untrusted input: a bad one is refused in one line naming it (a
TypeError for a wrong type, a ValueError for a value out of range), and a refusal leaves the file
system as it found it: the closed forms of `dynsim.icl.moments`, every level's `simulate`, the
records `Finetune` and `Flow`, `Trajectory.save` into a missing folder, and a command refused after
it created its output folder, or given a folder name too long to create."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

from dynsim import Trajectory, cli
from dynsim.cli import output
from dynsim.icl import moments
from dynsim.trajectory import save_many
from full.jsl.spec import Finetune
from reduced.flow import MAX_SAVES, MAX_SOLVER_STEPS, Flow
from tests.helpers import assert_refused, register_for_the_test
from tests.toy_setting.setting import SETTING as TOY

EYE = np.eye(2)


def one_line(exc: pytest.ExceptionInfo, *needles: str) -> str:
    text = str(exc.value)
    assert len(text.splitlines()) == 1, text
    for needle in needles:
        assert needle in text, (needle, text)
    return text


def listing(where) -> list[str]:
    """Every path under `where`, folders included."""
    return sorted(
        os.path.relpath(os.path.join(root, name), where)
        for root, dirs, files in os.walk(where)
        for name in dirs + files
    )


# ---------------------------------------------------------------------------------------------
# dynsim.icl.moments


def unchecked(P, Cp, Cq, W, M: int) -> float:
    """Eq. (E) as written, its operands unchecked."""
    A = P @ Cq @ P.T
    moment = (1 + 1 / M) * Cp @ A @ Cp + np.trace(A @ Cp) / M * Cp
    return float(np.trace(W @ (moment - Cp @ P @ Cq - Cq @ P.T @ Cp + Cq)))


def test_an_asymmetric_covariance_is_refused_where_it_gave_a_negative_squared_error():
    """Truth-known: with [[1, 9], [0, 1]] (not symmetric) as any of the three covariances, eq.
    (E) as written gives the expected squared error -4.5 at P = [[0, 1], [0, 0]]; each is refused,
    naming it."""
    bad = np.array([[1.0, 9.0], [0.0, 1.0]])
    P = np.array([[0.0, 1.0], [0.0, 0.0]])
    for name, args in {
        "prompt_cov": (bad, EYE, EYE),
        "query_cov": (EYE, bad, EYE),
        "task_cov": (EYE, EYE, bad),
    }.items():
        assert unchecked(P, *args, 2) == -4.5  # what the formula makes of it
        with pytest.raises(ValueError) as exc:
            moments.prediction_error(P, *args, 2)
        assert one_line(exc, name, "not symmetric").startswith(name)
        with pytest.raises(ValueError, match=f"^{name} is invalid: not symmetric"):
            moments.error_floor(P, *args)
    assert moments.prediction_error(P, EYE, EYE, EYE, 2) == unchecked(P, EYE, EYE, EYE, 2) == 4.5
    with pytest.raises(ValueError, match="^C is invalid: not symmetric"):
        moments.prompt_moment(EYE, bad, 2)
    with pytest.raises(ValueError, match="^A is invalid: not symmetric"):
        moments.prompt_moment(bad, EYE, 2)


def test_the_symmetry_tolerance_is_the_rounding_of_a_computed_covariance():
    """A covariance computed in float64 (Q D Q^T, d = 40: asymmetric by rounding) is accepted and
    gives a positive error; the same with one entry off by 1e-9 of its size is refused."""
    rng = np.random.default_rng(3)
    d = 40
    Q = rng.normal(size=(d, d))
    C = Q @ np.diag(rng.uniform(0.5, 2.0, d)) @ Q.T
    assert np.max(np.abs(C - C.T)) > 0  # rounding made it asymmetric
    assert np.max(np.abs(C - C.T)) < moments._tolerance(C)
    P = rng.normal(size=(d, d)) / d
    w = rng.normal(size=d)
    assert moments.prediction_error(P, C, C, np.outer(w, w), 5) > 0
    off = C.copy()
    off[0, 1] += 1e-9 * np.abs(C).max()
    with pytest.raises(ValueError, match="^prompt_cov is invalid: not symmetric"):
        moments.prediction_error(P, off, C, np.outer(w, w), 5)


def test_definiteness_is_required_of_the_covariates_and_semidefiniteness_of_the_task():
    """A fixed task's covariance w w^T (rank 1, eigenvalue 0) is taken; a covariate covariance
    with an eigenvalue 0 or below is not (nor a task covariance with a negative one)."""
    w = np.array([0.6, -0.8])
    expected = moments.prediction_error(EYE, EYE, EYE, np.outer(w, w), 4)
    # eq. (E) at P = C = I, |w| = 1: tr(E[S S]) - 1 = (1 + 1/4) + 2/4 - 1 = 0.75
    assert expected == pytest.approx(0.75, rel=1e-14)
    singular = np.diag([1.0, 0.0])
    with pytest.raises(ValueError) as exc:
        moments.prediction_error(EYE, singular, EYE, EYE, 4)
    one_line(exc, "prompt_cov", "not positive-definite")
    with pytest.raises(ValueError, match="^query_cov is invalid: not positive-definite"):
        moments.prediction_error(EYE, EYE, np.diag([1.0, -1.0]), EYE, 4)
    with pytest.raises(ValueError, match="^task_cov is invalid: not positive-semidefinite"):
        moments.prediction_error(EYE, EYE, EYE, -np.outer(w, w), 4)
    with pytest.raises(ValueError, match="^C is invalid: not positive-definite"):
        moments.prompt_moment(EYE, singular, 4)


@pytest.mark.parametrize(
    "call, kind, needle",
    [
        (lambda: moments.prediction_error(EYE, EYE, EYE, EYE, 0), ValueError, "M = 0 is invalid"),
        (lambda: moments.prediction_error(EYE, EYE, EYE, EYE, 2.0), TypeError, "M must be an"),
        (lambda: moments.prompt_moment(EYE, EYE, -1), ValueError, "M = -1 is invalid"),
        (lambda: moments.theorem_error([1.0, 4.0], 5, True, EYE), TypeError, "M must be an"),
        (lambda: moments.gamma([1.0, 4.0], 0), ValueError, "N = 0 is invalid"),
        (lambda: moments.limit([1.0, 4.0], "5"), TypeError, "N must be an integer"),
        (lambda: moments.min_loss([1.0, 0.0], 5), ValueError, "spectrum is invalid"),
        (lambda: moments.covariance([1.0, np.nan]), ValueError, "spectrum is invalid"),
        (lambda: moments.covariance(None), TypeError, "spectrum must be"),
        (lambda: moments.covariance([[1.0]]), ValueError, "spectrum is invalid"),
        (lambda: moments.error_floor(np.eye(3), EYE, EYE, EYE), ValueError, "prompt_cov"),
        (lambda: moments.error_floor([[1.0, np.inf], [0, 1]], EYE, EYE, EYE), ValueError, "P"),
        (lambda: moments.error_floor("P", EYE, EYE, EYE), TypeError, "P must be an array"),
        (lambda: moments.error_floor([[1.0, 2.0], [3.0]], EYE, EYE, EYE), ValueError, "P is"),
    ],
)
def test_counts_and_arrays_are_checked(call, kind, needle):
    with pytest.raises(kind) as exc:
        call()
    one_line(exc, needle)


# ---------------------------------------------------------------------------------------------
# every level's simulate


@pytest.mark.parametrize(
    "module, config",
    [
        ("reduced.icl", "ICLConfig"),
        ("full.icl", "ICLConfig"),
        ("reduced.jsl", "JSLConfig"),
        ("full.jsl", "JSLConfig"),
        ("reduced.mim", "MIMConfig"),
        ("full.mim", "MIMConfig"),
    ],
)
@pytest.mark.parametrize("cfg", [None, {"eta": 0.1}])
def test_simulate_of_a_non_config_names_the_config_type(module, config, cfg):
    simulate = importlib.import_module(module).simulate
    with pytest.raises(TypeError) as exc:
        simulate(cfg)
    article = "an" if config[0] in "AEIOU" else "a"
    assert one_line(exc) == f"cfg must be {article} {config}, got {type(cfg).__name__}"


def test_the_reduced_icl_flow_of_a_non_config_is_the_same_type_error():
    with pytest.raises(TypeError, match="^cfg must be an ICLConfig, got NoneType$"):
        importlib.import_module("reduced.icl").simulate(None, method="flow")


# ---------------------------------------------------------------------------------------------
# the records Finetune and Flow

FINETUNE = [
    (dict(names=None), TypeError, "names must be a mapping"),
    (dict(names={"seeds": 3}), TypeError, "names must map field names to text"),
    (dict(names={"seedz": "--s"}), ValueError, "did you mean seeds?"),
    (dict(n_tilde=None), TypeError, "n_tilde must be a sequence"),
    (dict(n_tilde="8"), TypeError, "n_tilde must be a sequence"),
    (dict(n_tilde=[8, 1.5]), TypeError, "n_tilde must be a sequence of integers, got a float"),
    (dict(n_tilde=[]), ValueError, "n_tilde = [] is invalid"),
    (dict(n_tilde=[2**63]), ValueError, "n_tilde = [9223372036854775808] is invalid"),
    (dict(seeds="8"), TypeError, "seeds must be an integer, got str"),
    (dict(seeds=True), TypeError, "seeds must be an integer, got bool"),
    (dict(seeds=1), ValueError, "seeds = 1 is invalid"),
    (dict(seeds=2**63), ValueError, "seeds = 9223372036854775808 is invalid"),
    (dict(steps=None), TypeError, "steps must be an integer"),
    (dict(steps=-1), ValueError, "steps = -1 is invalid"),
    (dict(steps=2**70), ValueError, "at most 2^63 - 1"),
    (dict(eta="0.1"), TypeError, "eta must be a real number, got str"),
    (dict(eta=float("nan")), ValueError, "eta = nan is invalid"),
    (dict(eta_glm=None), TypeError, "eta_glm must be a real number"),
    (dict(eta_glm=0), ValueError, "eta_glm = 0 is invalid"),
    (dict(record_every=1.0), TypeError, "record_every must be an integer"),
    (dict(record_every=0), ValueError, "record_every = 0 is invalid"),
    (dict(record_every=2**64), ValueError, "record_every = 18446744073709551616 is invalid"),
    (dict(overlap=None), TypeError, "overlap must be a real number"),
    (dict(overlap=1.5), ValueError, "overlap = 1.5 is invalid"),
    (dict(seeds="8", names={"seeds": "--finetune-seeds"}), TypeError, "--finetune-seeds must"),
]
FLOW = [
    (dict(saves=2**40), ValueError, "saves = 1099511627776 is invalid: must be an integer in "),
    (dict(saves=MAX_SAVES + 1), ValueError, "saves = 1048577 is invalid"),
    (dict(saves="100"), TypeError, "saves must be an integer, got str"),
    (dict(saves=0), ValueError, "saves = 0 is invalid"),
    (dict(max_steps=MAX_SOLVER_STEPS + 1), ValueError, "max_steps = 2147483648 is invalid"),
    (dict(max_steps=10.0), TypeError, "max_steps must be an integer, got float"),
    (dict(rtol="1e-6"), TypeError, "rtol must be a real number, got str"),
    (dict(atol=float("inf")), ValueError, "atol = inf is invalid"),
    (dict(t_max=True), TypeError, "t_max must be a real number, got bool"),
    (dict(t_max=10**400), ValueError, "t_max = 1.00e+400 is invalid"),
    (dict(t_min=[0.1]), TypeError, "t_min must be a real number, got list"),
    (dict(solver=4), TypeError, "solver must be text or None, got int"),
    (dict(solver="rk4"), ValueError, "solver = 'rk4' is invalid"),
    (dict(times="0 1 2"), TypeError, "times must be a sequence of real numbers, got str"),
    (dict(times=[0.0, "1"]), TypeError, "times must be a sequence of real numbers"),
]


@pytest.mark.parametrize(
    "record, fields, kind, needle",
    [
        *[(Finetune, f, k, n) for f, k, n in FINETUNE],
        *[(Flow, f, k, n) for f, k, n in FLOW],
    ],
)
def test_a_record_field_of_a_wrong_type_or_out_of_range_is_refused_naming_it(
    record, fields, kind, needle
):
    with pytest.raises(kind) as exc:
        record(**fields)
    one_line(exc, needle)


def test_the_records_bounds_are_taken():
    """The bounds themselves are accepted (the checks are not off by one)."""
    assert Flow(saves=MAX_SAVES, max_steps=MAX_SOLVER_STEPS).saves == MAX_SAVES
    assert Flow(times=np.arange(MAX_SAVES + 2.0)).times.size == MAX_SAVES + 2  # given: no cap
    big = 2**63 - 1
    assert Finetune(seeds=big, steps=big, record_every=big, n_tilde=[big]).n_tilde == (big,)
    assert Finetune(seeds=np.int64(3), names={"seeds": "--finetune-seeds"}).seeds == 3


# ---------------------------------------------------------------------------------------------
# Trajectory.save


def test_saving_into_a_missing_folder_is_refused_naming_it_and_creates_nothing(tmp_path):
    traj = Trajectory(np.arange(2), {"x": np.zeros(2)}, {"level": "reduced"})
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    before = listing(tmp_path)
    missing = tmp_path / "a" / "b"
    with pytest.raises(FileNotFoundError) as exc:
        traj.save(missing / "t.npz")
    one_line(exc, f"its folder {str(missing)!r} does not exist", "t.npz")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        save_many(missing / "t.npz", {"reduced": traj})
    with pytest.raises(NotADirectoryError) as exc:
        traj.save(tmp_path / "file" / "t.npz")
    one_line(exc, "is not a folder")
    with pytest.raises(IsADirectoryError) as exc:
        traj.save(tmp_path / "folder")
    one_line(exc, "a folder is where the file goes")
    with pytest.raises(ValueError, match="^path = '' is invalid: an empty path"):
        traj.save("")
    assert listing(tmp_path) == before  # no folder made, no temporary file left
    traj.save(tmp_path / "folder" / "t.npz")
    assert Trajectory.load(tmp_path / "folder" / "t.npz") == traj


# ---------------------------------------------------------------------------------------------
# a refused command leaves no folder behind


def test_an_over_long_folder_name_is_refused_before_any_folder_or_work(tmp_path, capsys):
    """A component past 255 bytes under a nested new path: refused before the run (the levels
    never start), nothing created."""
    out = tmp_path / "a" / "b" / ("x" * 300) / "c"
    code = cli.main(["compare", "jsl", "--out", str(out)])
    assert_refused(code, capsys.readouterr().err, "has 300 bytes, more than the 255")
    assert listing(tmp_path) == []
    deep = tmp_path.joinpath(*["d" * 200] * 20)  # each name fits, the path does not
    code = cli.main(["compare", "jsl", "--out", str(deep)])
    assert_refused(code, capsys.readouterr().err, "a path may have")
    assert listing(tmp_path) == []


def test_a_command_refused_after_creating_its_folder_removes_it(tmp_path, capsys, monkeypatch):
    """A refusal raised while the outputs are written (after `Staged` created the nested --out
    and its temporary folder) removes every folder it created; an existing folder stays, and a
    command that succeeds keeps its folders."""
    register_for_the_test(monkeypatch, TOY)
    (tmp_path / "kept").mkdir()
    out = tmp_path / "kept" / "x" / "y" / "z"

    def refuse(path, *args, **kwargs):
        assert os.path.isdir(out)  # created before the refusal
        raise ValueError("refused while writing")

    monkeypatch.setattr(output, "save_many", refuse)
    code = cli.main(["compare", "toy", "--no-plot", "--out", str(out)])
    err = assert_refused(code, capsys.readouterr().err, "refused while writing", one_line=False)
    assert err.splitlines()[-1] == "dynsim: error: refused while writing"  # after the runs' log
    assert listing(tmp_path) == ["kept"]
    monkeypatch.undo()
    register_for_the_test(monkeypatch, TOY)
    assert cli.main(["compare", "toy", "--no-plot", "--out", str(out)]) == 0
    assert {"report.json", "trajectories.npz"} <= set(os.listdir(out))
