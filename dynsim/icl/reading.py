"""What the ICL claims read of one trained run (`Reading`): the start the run took, how far it moved
at its end, whether GD is stable where it stopped, the learned product u W11^KQ, and the trained
layer's prediction error on fresh test prompts by Monte Carlo (the literal forward pass of
`full.icl.model`, every parameter included). docs/icl.md §7."""

from __future__ import annotations

import dataclasses
from functools import partial

import jax
import jax.flatten_util
import jax.numpy as jnp
import numpy as np

from dynsim.icl.config import ICLConfig
from full.icl import model
from full.icl.population import population_loss

LATE = 0.8  # the horizon premise compares the end with the last record at or before 0.8 T
TEST_SEED_TAG = 7  # fold_in tag of the test prompts' key (never a training batch's)


@dataclasses.dataclass(frozen=True)
class Reading:
    """One trained run as the claims read it: the start (u(0), ||W11^KQ(0)||_F / u(0), the largest
    entry of the other blocks at t = 0), the move of u W11^KQ over the last fifth of the run
    (relative to ||u W11^KQ(T)||_F), eta times the population Hessian's largest eigenvalue at the
    end, the largest entry of the other blocks at the end, and the final parameters."""

    spectrum: tuple
    N: int
    eta: float
    u0: float
    theta_norm: float
    offblock0: float
    late_move: float
    sharpness: float
    offblock: float
    params: dict

    @property
    def d(self) -> int:
        return len(self.spectrum)

    @property
    def product(self) -> np.ndarray:
        """P = u W11^KQ at the end of the run (d x d)."""
        d = self.d
        return self.params["W_PV"][d, d] * self.params["W_KQ"][:d, :d]


@partial(jax.jit, static_argnames=("N",))
def _hessian(params: dict, lam, N: int):
    """The population loss's Hessian in every entry of W^PV and W^KQ, flattened."""
    flat, unravel = jax.flatten_util.ravel_pytree(params)
    return jax.hessian(lambda x: population_loss(unravel(x), lam, N))(flat)


def hessian_top(params: dict, lam: np.ndarray, N: int) -> float:
    """The largest eigenvalue of the population loss's Hessian in every entry of W^PV and W^KQ
    (`_hessian`): GD at step size eta is stable where eta times it is below 2."""
    hess = _hessian({k: jnp.asarray(v) for k, v in params.items()}, jnp.asarray(lam), N)
    return float(np.max(np.linalg.eigvalsh(np.asarray(hess))))


def read(cfg: ICLConfig, full) -> Reading:
    """The reading of a full-level trajectory `full` (mode exact) of `cfg`."""
    lam = np.asarray(cfg.spectrum)
    steps = np.asarray(full.steps)
    late = int(np.searchsorted(steps, LATE * steps[-1], side="right")) - 1  # last record <= 0.8 T
    # relative to the product's own size at T: a run still at its saddle (u W11^KQ ~ sigma^2) moves
    # by a share of itself, however small the product is
    scale = float(np.linalg.norm(full["product"][-1]))
    move = float(np.linalg.norm(full["product"][-1] - full["product"][late]) / scale)
    if late >= len(steps) - 1:  # one record: no stretch to measure
        move = float("nan")
    params = {k: np.asarray(v, np.float64) for k, v in full.final.items()}
    d = cfg.d
    finite = all(np.all(np.isfinite(v)) for v in params.values())
    sharp = cfg.eta * hessian_top(params, lam, cfg.N) if finite else float("nan")
    u0 = float(full["u"][0])
    U0 = np.asarray(full["product"][0]) / u0 if u0 != 0 else np.full(d, np.nan)
    return Reading(
        spectrum=tuple(cfg.spectrum),
        N=cfg.N,
        eta=cfg.eta,
        u0=u0,
        theta_norm=float(np.linalg.norm(U0) / abs(u0)) if u0 != 0 else float("nan"),
        offblock0=float(full["offblock"][0]),
        late_move=move,
        sharpness=sharp,
        offblock=float(full["offblock"][-1]),
        params=params,
    )


@partial(jax.jit, static_argnames=("n", "batches", "size"))
def _batch_errors(params, key, lam, task, scale, n: int, batches: int, size: int):
    """The mean squared error of the layer on each of `batches` batches of `size` test prompts of n
    examples (one key per batch, folded from `key`)."""

    def one(i):
        E, target = model.prompts(jax.random.fold_in(key, i), lam, n, size, lam.dtype, task, scale)
        return jnp.mean((model.predict(params, E) - target) ** 2)

    return jax.lax.map(one, jnp.arange(batches))


def test_errors(
    params: dict, spectrum, M: int, task, seed: int, batches: int, size: int, scale: float = 1.0
) -> np.ndarray:
    """The mean squared error of the layer `params` on each of `batches` independent batches of
    `size` fresh prompts of M examples (covariates of covariance scale * Lambda; the fixed `task`,
    or None: w ~ N(0, I_d) drawn for each prompt)."""
    key = jax.random.fold_in(jax.random.key(seed), TEST_SEED_TAG)
    p = {k: jnp.asarray(v, jnp.float64) for k, v in params.items()}
    lam = jnp.asarray(spectrum, jnp.float64)
    w = None if task is None else jnp.asarray(task, jnp.float64)
    return np.asarray(_batch_errors(p, key, lam, w, scale, M, batches, size))


def new_task(d: int, seed: int) -> np.ndarray:
    """A new task w: a seeded direction of norm sqrt(d) (the typical norm of w ~ N(0, I_d))."""
    w = np.random.default_rng(seed).standard_normal(d)
    return w / np.linalg.norm(w) * np.sqrt(d)
