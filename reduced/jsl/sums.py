"""How the configuration sum of (P) is evaluated, chosen per config: full, truncated with its bound, or Monte Carlo.

The exact population loss is a sum over count configurations (`configurations`) whose number grows like
C(L-1+K-1, K-1). `choose` picks, before any run:
  "full"        every configuration, when there are at most `max_configurations`;
  "truncated"   configurations with at most k nonzero random patches, the smallest k whose dropped probability
                P[Bin(D-C, q) > k] is <= `tail_target`, when that sum fits; the rigorous bounds of
                `configurations.truncation_bounds` are evaluated after the run with the largest alpha, Gamma, Xi met;
  "monte_carlo" `mc_samples` configurations drawn from their law (multinomial over the K set types), each with
                weight 1/M: GD runs on that sample average, and the standard error of the loss and of the 0-1
                error at each recorded state is reported (`standard_errors`).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import jax
import jax.numpy as jnp

from dynsim.jsl import JSLConfig, error
from dynsim.jsl.traced import View, numbers_of
from dynsim.validation import check_int

from . import configurations
from .dynamics import tie_tolerance
from .tables import BOUND_TARGET, MAX_CONFIGURATIONS, Weights
from .symbolic import derive

METHODS = ("full", "truncated", "monte_carlo")
MC_SAMPLES = 100_000


@dataclasses.dataclass(frozen=True)
class SumChoice:
    """The evaluation of one config's configuration sum, and why."""

    method: str  # one of METHODS
    max_nonzero: Optional[int]  # truncated: the cut k; otherwise None
    size: int  # configurations summed (samples for monte_carlo)
    total: int  # configurations in the full sum
    dropped_probability: float  # truncated: P[Bin(D-C, q) > k]; full: 0; monte_carlo: nan (sampled instead)
    reason: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def choose(cfg: JSLConfig, max_configurations: int = MAX_CONFIGURATIONS, tail_target: float = BOUND_TARGET,
           mc_samples: int = MC_SAMPLES) -> SumChoice:
    """Full enumeration if it fits, else the smallest fitting truncation with dropped probability <= tail_target,
    else Monte Carlo with `mc_samples` configurations."""
    check_int("max_configurations", max_configurations, 1)
    check_int("mc_samples", mc_samples, 1)
    if not (isinstance(tail_target, (int, float)) and 0 < tail_target < 1):
        raise ValueError(f"tail_target = {tail_target!r} is invalid: must lie strictly between 0 and 1")
    total = configurations.count(cfg.D, cfg.C)
    if total <= max_configurations:
        return SumChoice("full", None, total, total, 0.0, f"{total:,} configurations <= {max_configurations:,}")
    for k in range(cfg.D - cfg.C + 1):
        dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, k)
        if dropped <= tail_target:
            size = configurations.count_truncated(cfg.D, cfg.C, k)
            if size <= max_configurations:
                return SumChoice("truncated", k, size, total, dropped,
                                 f"{total:,} configurations > {max_configurations:,}; at most {k} nonzero random "
                                 f"patches keeps {size:,} and drops probability {dropped:.3g} <= {tail_target:g}")
            break
    return SumChoice("monte_carlo", None, mc_samples, total, float("nan"),
                     f"{total:,} configurations > {max_configurations:,} and no truncation with dropped probability "
                     f"<= {tail_target:g} fits: {mc_samples:,} sampled configurations")


def type_probabilities(q, C: int) -> jax.Array:
    """P[set type (a, b)] = C!/(a! b! c!) (q/2)^(a+b) (1-q)^c for every type of `configurations.set_types(C)`
    (traceable in q)."""
    types = configurations.set_types(C)
    coef = jnp.array([math.comb(C, a) * math.comb(C - a, b) for a, b in types], jnp.result_type(q, float))
    nonzero = jnp.array([a + b for a, b in types], coef.dtype)
    return coef * (q / 2) ** nonzero * (1 - q) ** (C - nonzero)


def monte_carlo_table(cfg: JSLConfig, key, q, samples: int) -> Weights:
    """`samples` configurations n ~ Multinomial(L-1, type probabilities(q)), each of weight 1/samples (traceable in q)."""
    p = type_probabilities(jnp.asarray(q, cfg.dtype), cfg.C)
    n = jax.random.multinomial(key, cfg.L - 1, p, shape=(samples, p.shape[0]), dtype=jnp.dtype(cfg.dtype))
    return Weights(n.T, jnp.full((samples,), 1.0 / samples, cfg.dtype))


def mc_key(cfg: JSLConfig) -> jax.Array:
    """The Monte Carlo sample's key: from cfg.seed (so seeds give independent samples)."""
    return jax.random.fold_in(jax.random.key(cfg.seed), 7)


def standard_errors(cfg: JSLConfig, states, table: Weights, numbers=None) -> dict:
    """loss_se_mc, error_se_mc: standard errors of the sampled loss and 0-1 error at each recorded state (alpha, gamma, rho) (R, 3):
    std over the equally weighted sampled configurations / sqrt(M)."""
    view = View(cfg, numbers_of(cfg) if numbers is None else numbers)
    der = derive(cfg.C, cfg.p)
    M = table.w.shape[0]

    def one(theta):
        vals = der.compiled(theta[0], theta[1], theta[2], view.sigma_A, view.tau, view.nu, cfg.D, list(table.n))
        loss = jnp.broadcast_to(vals[0], (M,))
        F = jnp.broadcast_to(der.compiled_F(theta[0], theta[1], theta[2], view.sigma_A, view.tau, view.nu, cfg.D,
                                            list(table.n)), (M,))
        wrong = error.wrong(F, tie_tolerance(view, theta))
        return jnp.std(loss, ddof=1) / jnp.sqrt(M), jnp.std(wrong, ddof=1) / jnp.sqrt(M)

    loss_se, error_se = jax.lax.map(one, jnp.asarray(states))
    # not "<name>_se": that suffix is the checker's Monte Carlo band of replicate runs, which this is not
    return {"loss_se_mc": loss_se, "error_se_mc": error_se}
