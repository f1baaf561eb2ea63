"""The closed forms the Gaussian moments give (docs/icl.md §4-§6), in NumPy: Gamma, the global
minimum of Theorem 4.1, its loss, and the prediction error of a linear predictor
y_hat = x_q^T P^T (1/M) sum_i y_i x_i on a test prompt of M examples, under shifts of the prompt
covariates, the query and the task.

The one moment identity behind them (x_i ~ N(0, C) independent, S = (1/M) sum_i x_i x_i^T, A
symmetric): E[S A S] = (1 + 1/M) C A C + (1/M) tr(A C) C (docs/icl.md eq. (M1))."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from dynsim.validation import check_int, is_int

# Rounding allowed in a matrix that should be symmetric (and, for a covariance, positive-definite),
# as a multiple of d eps ||C||_F (eps: float64's unit roundoff, C d x d): an entry of a product of
# d x d matrices computed in float64 is off by at most about d eps times the product's scale
# (Higham, Accuracy and Stability of Numerical Algorithms, §3.5), and eigvalsh's eigenvalues by
# about d eps ||C|| (a backward-stable method). A caller's covariance is at most a few such products
# (P C P^T, a shift times Lambda): 8 of them cover it, and stay orders of magnitude below any real
# asymmetry or eigenvalue of the covariances used here.
ROUNDING = 8


def _tolerance(C: np.ndarray) -> float:
    """The rounding `ROUNDING` allows in the d x d matrix C: ROUNDING d eps ||C||_F."""
    return ROUNDING * C.shape[0] * np.finfo(np.float64).eps * float(np.linalg.norm(C))


def _array(name: str, value: Any) -> np.ndarray:
    """`value` as a float64 array: TypeError unless it holds real numbers only; ValueError unless
    they are finite."""
    try:
        arr = np.asarray(value)
    except ValueError:  # a ragged nesting
        raise ValueError(f"{name} is invalid: its rows differ in length") from None
    if arr.dtype.kind not in "iuf" or isinstance(value, (str, bytes)):
        raise TypeError(f"{name} must be an array of real numbers, got {type(value).__name__}")
    arr = arr.astype(np.float64)
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} is invalid: it holds a value that is not finite (NaN or inf)")
    return arr


def _count(name: str, value: Any) -> int:
    """N or M: a positive integer (TypeError for a non-integer, ValueError below 1)."""
    if not is_int(value):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    check_int(name, value, 1)
    return int(value)


def _matrix(name: str, value: Any, d: Optional[int]) -> np.ndarray:
    """A finite d x d real matrix (d: that of the first matrix, None for the first)."""
    M = _array(name, value)
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] == 0 or d not in (None, M.shape[0]):
        want = "a non-empty square matrix" if d is None else f"a {d} x {d} matrix"
        raise ValueError(f"{name} is invalid: its shape is {M.shape}, must be {want}")
    return M


def _symmetric(name: str, value: Any, d: Optional[int], lowest: Optional[str]) -> np.ndarray:
    """A finite d x d symmetric matrix, within `_tolerance`; `lowest`: "definite" (a covariance:
    every eigenvalue above the rounding), "semidefinite" (none below minus the rounding), or None
    (any symmetric matrix)."""
    C = _matrix(name, value, d)
    tol = _tolerance(C)
    off = float(np.max(np.abs(C - C.T)))
    if off > tol:
        raise ValueError(
            f"{name} is invalid: not symmetric (|C - C^T| reaches {off:.3g}, past the rounding "
            f"{tol:.3g})"
        )
    if lowest is None:
        return C
    least = float(np.linalg.eigvalsh((C + C.T) / 2)[0])
    bound = tol if lowest == "definite" else -tol
    if least < bound or (lowest == "definite" and least == bound):
        relation = ">" if lowest == "definite" else ">="
        raise ValueError(
            f"{name} is invalid: not positive-{lowest} (its least eigenvalue is {least:.3g}, must "
            f"be {relation} {bound:.3g}, the rounding)"
        )
    return C


def _spectrum(spectrum: Any) -> np.ndarray:
    """Lambda's diagonal: a non-empty 1-d sequence of finite numbers > 0."""
    lam = _array("spectrum", spectrum)
    if lam.ndim != 1 or lam.size == 0:
        raise ValueError(f"spectrum is invalid: its shape is {lam.shape}, must be (d,) with d >= 1")
    if not np.all(lam > 0):
        raise ValueError(
            f"spectrum is invalid: {float(lam.min())!r} is not > 0 (Lambda = diag(spectrum) is a "
            "covariance: positive-definite)"
        )
    return lam


def covariance(spectrum) -> np.ndarray:
    """Lambda = diag(spectrum)."""
    return np.diag(_spectrum(spectrum))


def gamma(spectrum, N: int) -> np.ndarray:
    """Gamma = (1 + 1/N) Lambda + tr(Lambda)/N I_d (Theorem 4.1; docs/icl.md eq. (G))."""
    lam = covariance(spectrum)
    N = _count("N", N)
    return (1 + 1 / N) * lam + np.trace(lam) / N * np.eye(lam.shape[0])


def limit(spectrum, N: int) -> np.ndarray:
    """Gamma^{-1}: the product u U that gradient flow converges to (Theorem 4.1)."""
    return np.linalg.inv(gamma(spectrum, N))


def min_loss(spectrum, N: int) -> float:
    """L* = (1/2) [tr Lambda - tr(Gamma^{-1} Lambda^2)], the loss at the global minimum (docs/icl.md
    eq. (L*))."""
    lam = covariance(spectrum)
    return 0.5 * float(np.trace(lam) - np.trace(limit(spectrum, N) @ lam @ lam))


def prompt_moment(A: np.ndarray, C: np.ndarray, M: int) -> np.ndarray:
    """E[S A S] = (1 + 1/M) C A C + (1/M) tr(A C) C, S the empirical covariance of M draws of N(0,
    C), A symmetric (docs/icl.md eq. (M1))."""
    C = _symmetric("C", C, None, "definite")
    return _moment(_symmetric("A", A, C.shape[0], None), C, _count("M", M))


def _moment(A: np.ndarray, C: np.ndarray, M: int) -> np.ndarray:
    """`prompt_moment` of checked operands."""
    return (1 + 1 / M) * C @ A @ C + np.trace(A @ C) / M * C


def prediction_error(P, prompt_cov, query_cov, task_cov, M: int) -> float:
    """E[(y_hat - <w, x_q>)^2] of y_hat = w^T S P x_q: prompt covariates of covariance `prompt_cov`
    (S their empirical covariance over M examples), query x_q of `query_cov`, task w with
    E[w w^T] = `task_cov` (w w^T for one fixed task): tr(W [E[S A S] - Cp P Cq - Cq P^T Cp + Cq]),
    A = P Cq P^T (docs/icl.md eq. (E)). The covariances must be symmetric, the covariates'
    positive-definite, the task's positive-semidefinite (w w^T), within rounding (`ROUNDING`)."""
    P, Cp, Cq, W = _operands(P, prompt_cov, query_cov, task_cov)
    M = _count("M", M)
    A = P @ Cq @ P.T
    inner = _moment(A, Cp, M) - Cp @ P @ Cq - Cq @ P.T @ Cp + Cq
    return float(np.trace(W @ inner))


def _operands(P, prompt_cov, query_cov, task_cov) -> tuple[np.ndarray, ...]:
    """P (any d x d) and the three covariances, checked (`prediction_error`), as float64."""
    P = _matrix("P", P, None)
    d = P.shape[0]
    return (
        P,
        _symmetric("prompt_cov", prompt_cov, d, "definite"),
        _symmetric("query_cov", query_cov, d, "definite"),
        _symmetric("task_cov", task_cov, d, "semidefinite"),
    )


def error_floor(P, prompt_cov, query_cov, task_cov) -> float:
    """The M -> infinity limit of `prediction_error` (S -> Cp): tr(W (Cp P - I) Cq (P^T Cp - I))
    (docs/icl.md eq. (E-inf))."""
    P, Cp, Cq, W = _operands(P, prompt_cov, query_cov, task_cov)
    B = Cp @ P - np.eye(P.shape[0])
    return float(np.trace(W @ B @ Cq @ B.T))


def theorem_error(spectrum, N: int, M: int, task_cov) -> float:
    """Theorem 4.2's prediction error on a new task (noiseless labels: its best linear predictor's
    error is 0): `prediction_error` at P = Gamma^{-1} (trained on prompts of N examples), test
    prompts of M examples from the training distribution."""
    lam = covariance(spectrum)
    return prediction_error(limit(spectrum, N), lam, lam, task_cov, M)
