"""The idealized runs behind the JSL claims: one reduced run per (D, temperature), with its errors
against f* and y.

A `Point` is one reduced run on (P) and what the claims read from it: the final state's error
against f* (`reduced.jsl.fstar`, exact classes split by sign f*, or a Monte Carlo sample with its
standard error) and against y, the same error one decade of time earlier (has the run reached the
theorem's horizon?), patch association, the exact reference lines, Lemma 4.3's per-entry increments
at every recorded state, and the event times.

The run is the gradient flow of (P) (`reduced.jsl.simulate(cfg, method="flow")`, LSODA on the exact
class sum) to t = eta * steps: the eta -> 0 limit of GD at the same time eta T, which is what the
theorems' small eta (Parametrization 3.1) and T >= poly(d)/eta describe, and the only way to reach T
>= poly(d)/eta at D >= 32 (the flow to t = 1e6 takes seconds; GD at eta = 0.005 would need 2e8
steps). `method="gd"` runs GD instead (tests).

The ladder keeps the judged point's expected number of random nonzero patches q(D - C)
(`ladder_config`): the paper's q = poly(C)/D. At fixed q the Bayes error and the share of inputs
where f* differs from y grow with D, and the converged gap to Bayes grows too (flow to t = 1e6, q =
0.5: 0.0040, 0.0095, 0.0129 at D = 24, 32, 36).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Optional

import jax
import jax.numpy as jnp
import numpy as np

import reduced.jsl
from dynsim import progress
from reduced.jsl import dynamics, fstar, sums, tables

from . import events, reference
from .config import JSLConfig
from .setting import MAX_FLOW_D

# the error is read at t and at t / HORIZON_DECADE (is the run past the theorem's horizon?)
HORIZON_DECADE = 10.0
# Lemma 4.3's increments are evaluated at every recorded step up to this sum size
LEMMA_4_3_MAX_CLASSES = 1_000_000
# above this the f* error uses a Monte Carlo sample (`reduced.jsl.fstar`)
FSTAR_MAX_CLASSES = 5_000_000
FSTAR_SAMPLES = 1_000_000


def at_size(cfg: JSLConfig, D: int, **changes) -> JSLConfig:
    """cfg at D patches (d = D, sigma = 1/sqrt(d) and the partition resolved again)."""
    return cfg.replace(**{"D": D, "d": None, "sigma": None, "partition": None, **changes})


def ladder_q(judged: JSLConfig, D: int) -> float:
    """q at D keeping the judged point's expected random nonzero patches: q (D - C) = q_judged
    (D_judged - C)."""
    return judged.q * (judged.D - judged.C) / (D - judged.C)


def ladder_config(judged: JSLConfig, D: int) -> JSLConfig:
    """The ladder point D of the judged config: q scaled by `ladder_q` (the paper's q = poly(C)/D),
    the rest kept. A ValueError names D when the scaled q leaves (0, 1]."""
    if D <= judged.C:
        raise ValueError(
            f"ladder size D = {D} is invalid for C = {judged.C}: must be > C (a random set "
            f"besides the "
            "signal set)"
        )
    q = ladder_q(judged, D)
    if not 0.0 < q <= 1.0:
        raise ValueError(
            f"ladder size D = {D} is invalid for C = {judged.C}: keeping q (D - C) = "
            f"{judged.q * (judged.D - judged.C):g} needs q = {q:.4g}, outside (0, 1]; use "
            f"larger sizes"
        )
    return at_size(judged, D, q=q)


@dataclasses.dataclass
class Point:
    """One reduced run and what the claims read from it."""

    D: int
    temperature: str
    steps: int
    error_fstar: float  # P[f* F <= 0] at T
    error_fstar_se: float  # Monte Carlo standard error (0 when exact)
    error_y: float  # P[F < 0] + 1/2 P[F = 0] at T (y = +1)
    patch_association: float  # at T (1.0 or 0.0 by Lemma 4.1)
    lines: dict  # exact reference lines against y and f*
    sum_method: str
    # Lemma 4.3: smallest per-entry gamma increment over the recorded steps (nan: not evaluated)
    min_d_gamma: float
    min_d_gamma_step: int  # the recorded step where it occurs (-1: not evaluated)
    steps_d_gamma_not_positive: int  # recorded steps with d gamma <= 0
    max_ratio: float  # max |d rho| / d gamma over the recorded steps with d gamma > 0
    ratio_at_start: float
    events: dict
    alpha_peaked: bool  # alpha reached its maximum before the last recorded step: Event I is over
    seconds: float
    # share of the run's loss decrease made in its last tenth (`loss_tail`)
    loss_tail: float = math.nan
    q: float = math.nan
    error_fstar_earlier: float = math.nan  # P[f* F <= 0] at t / HORIZON_DECADE
    method: str = "flow"  # "flow" (t = eta * steps) or "gd"
    reached: bool = True  # the run got to T (a flow solver that stops early drops the later saves)
    # alpha's rise before it first falls, over alpha(0) (`event_i_rise`): > 0 iff Event I
    alpha_rise: float = math.nan
    # min over recorded t of gamma - rho (the corollary gamma >= rho)
    min_gamma_minus_rho: float = math.nan
    min_gamma_minus_rho_step: int = -1
    # min, max over t of d gamma / (eta alpha^p Gamma G^(p-1))
    polylog_implied: tuple = (math.nan, math.nan)
    # the GD increment of alpha at t = 0 (> 0: Event I starts with a rise)
    d_alpha_at_start: float = math.nan

    @property
    def gap_fstar(self) -> float:
        """Error against f* above the Bayes error against f* (P[f* = 0])."""
        return self.error_fstar - self.lines["bayes_error_fstar"]

    @property
    def gap_change(self) -> float:
        """|gap(t) - gap(t / 10)| / gap(t): how much the last decade of time moved the gap (inf when
        gap(t) = 0)."""
        gap = self.gap_fstar
        return abs(self.error_fstar_earlier - self.error_fstar) / gap if gap > 0 else math.inf

    def to_dict(self) -> dict:
        return {
            **dataclasses.asdict(self),
            "gap_fstar": self.gap_fstar,
            "gap_change": self.gap_change,
        }


def lines(cfg: JSLConfig) -> dict[str, float]:
    """The exact reference lines against y (`reference.lines`) and against f*."""
    return {
        **reference.lines(cfg),
        "glm_error_fstar": reference.glm_error_fstar(cfg),
        "bayes_error_fstar": reference.bayes_error_fstar(cfg),
    }


def increments(cfg: JSLConfig, traj, max_nonzero: Optional[int]) -> np.ndarray:
    """Per-entry GD increments (d alpha, d gamma, d rho) = -orbit_step_sizes grad L at every
    recorded state (Lemma 4.3), shape (records, 3)."""
    table = tables.table(cfg, max_nonzero).weights
    states = jnp.asarray(np.stack([traj["alpha"], traj["gamma"], traj["rho"]], axis=1), cfg.dtype)
    grads = _gradients_jit(cfg, table, states)
    return np.asarray(-dynamics.orbit_step_sizes(cfg) * grads)


@jax.jit
def _gradients_jit(cfg: JSLConfig, table, states):
    """dL/dtheta at every state, one state at a time (memory of one pass); cfg's numbers traced."""
    return jax.lax.map(lambda th: dynamics.gradient(cfg, table, th), states)


@jax.jit
def _attention_weights(cfg: JSLConfig, states):
    """(Lambda, Gamma, Xi) at every state (R, 3), in one compiled program; cfg's numbers traced."""
    return jax.vmap(lambda th: dynamics.attention_weights(cfg, th))(states)


def lemma_4_3_rate(cfg: JSLConfig, alpha, gamma, rho) -> np.ndarray:
    """eta alpha^p Gamma G^(p-1), G = D (Lambda + (C-1) Gamma): Lemma 4.3's gamma increment without
    its polylog(d)."""
    lam, gam, _ = np.asarray(
        _attention_weights(cfg, jnp.asarray(np.stack([alpha, gamma, rho], axis=1), cfg.dtype))
    ).T
    G = cfg.D * (lam + (cfg.C - 1) * gam)
    return cfg.eta * np.asarray(alpha) ** cfg.p * gam * G ** (cfg.p - 1)


def event_i_rise(alpha: np.ndarray, t1_index: Optional[int]) -> float:
    """(alpha at its first recorded local maximum, up to T1_attention - alpha(0)) / alpha(0): > 0
    when alpha rose from its start before it fell (Event I), 0 when it fell first (a start above the
    Event-I plateau; a later rise in Event III does not count), NaN when alpha(0) <= 0."""
    alpha = np.asarray(alpha, float)
    window = alpha if t1_index is None else alpha[: t1_index + 1]
    falls = np.flatnonzero(np.diff(window) < 0)
    peak = window[falls[0]] if falls.size else window[-1]
    return float((peak - alpha[0]) / alpha[0]) if alpha[0] > 0 else math.nan


def loss_tail(steps: np.ndarray, loss: np.ndarray) -> float:
    """(L(0.9 T) - L(T)) / (L(0) - L(T)): the share of the run's loss decrease made in its last
    tenth of steps (the record at or before 0.9 T); 1 when the run is one record long, inf when the
    loss did not decrease."""
    steps, loss = np.asarray(steps), np.asarray(loss, dtype=float)
    i = int(np.searchsorted(steps, 0.9 * steps[-1], side="right")) - 1
    total = loss[0] - loss[-1]
    return float((loss[i] - loss[-1]) / total) if total > 0 else math.inf


def flow_times(cfg: JSLConfig) -> np.ndarray:
    """Save times of a point's flow: 0, 100 log-spaced times from min(eta, t) to t = eta * steps,
    and t / 10."""
    t = cfg.eta * cfg.steps
    ts = np.unique(
        np.concatenate([[0.0], np.geomspace(min(cfg.eta, t), t, 100)[:-1], [t / HORIZON_DECADE, t]])
    )
    # geomspace's rounding can repeat a time (steps = 1)
    keep = np.concatenate([[True], np.diff(ts) > 1e-9 * t])
    keep[-1] = True  # t itself, exactly
    return np.concatenate([ts[:-1][keep[:-1] & (ts[:-1] < t * (1 - 1e-9))], [t]])


def run(cfg: JSLConfig, method: str = "flow"):
    """The reduced trajectory of a point: the gradient flow to t = eta * steps (default) or GD."""
    if method == "gd":
        return reduced.jsl.simulate(cfg)
    if method != "flow":
        raise ValueError(f"method = {method!r} is invalid: must be 'flow' or 'gd'")
    if cfg.steps < 1:
        raise ValueError(
            f"JSLConfig.steps = {cfg.steps} is invalid for a claim: must be >= 1 (the flow runs to "
            "t = eta * steps)"
        )
    if cfg.D > MAX_FLOW_D:
        raise ValueError(
            f"ladder size D = {cfg.D} is invalid: the flow needs an exact class sum, up to D = "
            f"{MAX_FLOW_D}"
        )
    return reduced.jsl.simulate(cfg, method="flow", times=flow_times(cfg))


def run_point(cfg: JSLConfig, method: str = "flow") -> Point:
    """The reduced run of cfg (`run`) and its readings (`Point`)."""
    t0 = time.perf_counter()
    traj = run(cfg, method)
    reached = int(traj.steps[-1]) == cfg.steps and "stopped_at_time" not in traj.meta
    trunc = traj.meta["truncation"]
    theta = np.array([traj["alpha"][-1], traj["gamma"][-1], traj["rho"][-1]])
    size = tables.size(cfg, None, limit=FSTAR_MAX_CLASSES)
    signed = (
        fstar.signed_table(cfg)
        if size is not None
        else fstar.sampled_signed(cfg, jax.random.fold_in(sums.mc_key(cfg), 11), FSTAR_SAMPLES)
    )
    err, se = fstar.error(cfg, theta, signed)
    steps = np.asarray(traj.steps)
    # the record at or before T / 10
    k = int(np.searchsorted(steps, steps[-1] / HORIZON_DECADE, side="right")) - 1
    earlier = np.array([traj["alpha"][k], traj["gamma"][k], traj["rho"][k]])
    err_earlier = fstar.error(cfg, earlier, signed)[0]
    sum_method = traj.meta.get(
        "sum_method", "full" if trunc.get("max_nonzero") is None else "truncated"
    )
    min_dg = max_ratio = ratio0 = d_alpha0 = math.nan
    polylog = (math.nan, math.nan)
    at_min, not_positive = -1, 0
    if sum_method != "monte_carlo" and (trunc["configurations"] or 0) <= LEMMA_4_3_MAX_CLASSES:
        inc = increments(cfg, traj, trunc["max_nonzero"])
        d_alpha0, dg, dr = float(inc[0, 0]), inc[:, 1], inc[:, 2]
        rate = lemma_4_3_rate(cfg, traj["alpha"], traj["gamma"], traj["rho"])
        use = (rate > 0) & (dg > 0)
        if np.any(use):
            polylog = (float(np.min(dg[use] / rate[use])), float(np.max(dg[use] / rate[use])))
        min_dg = float(np.min(dg))
        at_min, not_positive = int(traj.steps[int(np.argmin(dg))]), int(np.sum(dg <= 0))
        pos = dg > 0
        ratios = np.abs(dr[pos]) / dg[pos]
        max_ratio = float(np.max(ratios)) if ratios.size else math.inf
        ratio0 = float(np.abs(dr[0]) / dg[0]) if dg[0] > 0 else math.inf
    ev = events.detect(traj)
    gap = np.asarray(traj["gamma"]) - np.asarray(traj["rho"])
    t1 = ev.times()["T1_attention"]
    t1_index = None if t1 is None else int(np.searchsorted(steps, t1))
    progress.advance()
    return Point(
        cfg.D,
        cfg.temperature,
        cfg.steps,
        err,
        se,
        float(traj["error"][-1]),
        float(traj["patch_association"][-1]),
        lines(cfg),
        sum_method,
        min_dg,
        at_min,
        not_positive,
        max_ratio,
        ratio0,
        {k: v for k, v in ev.times().items()},
        bool(np.argmax(traj["alpha"]) < traj.steps.size - 1),
        time.perf_counter() - t0,
        loss_tail(traj.steps, traj["loss"]),
        cfg.q,
        err_earlier,
        method,
        reached,
        event_i_rise(traj["alpha"], t1_index),
        float(np.min(gap)),
        int(steps[int(np.argmin(gap))]),
        polylog,
        d_alpha0,
    )
