"""The closed forms the Gaussian moments give (docs/icl.md §4-§6), in NumPy: Gamma, the global
minimum of Theorem 4.1, its loss, and the prediction error of a linear predictor
y_hat = x_q^T P^T (1/M) sum_i y_i x_i on a test prompt of M examples, under shifts of the prompt
covariates, the query and the task.

The one moment identity behind them (x_i ~ N(0, C) independent, S = (1/M) sum_i x_i x_i^T, A
symmetric): E[S A S] = (1 + 1/M) C A C + (1/M) tr(A C) C (docs/icl.md eq. (M1))."""

from __future__ import annotations

import numpy as np


def covariance(spectrum) -> np.ndarray:
    """Lambda = diag(spectrum)."""
    return np.diag(np.asarray(spectrum, dtype=np.float64))


def gamma(spectrum, N: int) -> np.ndarray:
    """Gamma = (1 + 1/N) Lambda + tr(Lambda)/N I_d (Theorem 4.1; docs/icl.md eq. (G))."""
    lam = covariance(spectrum)
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
    return (1 + 1 / M) * C @ A @ C + np.trace(A @ C) / M * C


def prediction_error(P, prompt_cov, query_cov, task_cov, M: int) -> float:
    """E[(y_hat - <w, x_q>)^2] of y_hat = w^T S P x_q: prompt covariates of covariance `prompt_cov`
    (S their empirical covariance over M examples), query x_q of `query_cov`, task w with
    E[w w^T] = `task_cov` (w w^T for one fixed task): tr(W [E[S A S] - Cp P Cq - Cq P^T Cp + Cq]),
    A = P Cq P^T (docs/icl.md eq. (E))."""
    P, Cp, Cq, W = (np.asarray(a, dtype=np.float64) for a in (P, prompt_cov, query_cov, task_cov))
    A = P @ Cq @ P.T
    inner = prompt_moment(A, Cp, M) - Cp @ P @ Cq - Cq @ P.T @ Cp + Cq
    return float(np.trace(W @ inner))


def error_floor(P, prompt_cov, query_cov, task_cov) -> float:
    """The M -> infinity limit of `prediction_error` (S -> Cp): tr(W (Cp P - I) Cq (P^T Cp - I))
    (docs/icl.md eq. (E-inf))."""
    P, Cp, Cq, W = (np.asarray(a, dtype=np.float64) for a in (P, prompt_cov, query_cov, task_cov))
    B = Cp @ P - np.eye(P.shape[0])
    return float(np.trace(W @ B @ Cq @ B.T))


def theorem_error(spectrum, N: int, M: int, task_cov) -> float:
    """Theorem 4.2's prediction error on a new task (noiseless labels: its best linear predictor's
    error is 0): `prediction_error` at P = Gamma^{-1} (trained on prompts of N examples), test
    prompts of M examples from the training distribution."""
    lam = covariance(spectrum)
    return prediction_error(limit(spectrum, N), lam, lam, task_cov, M)
