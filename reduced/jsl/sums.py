"""How the configuration sum of (P) is evaluated, chosen per config: full, truncated with its bound,
or Monte Carlo.

The exact population loss is a sum over moment classes (`classes`; 229,062 at D = 36, 15.1 million
at D = 64 for C = 4, p = 3). `choose` picks, before any run:
  "full"        every class, when there are at most `max_configurations`;
  "truncated"   classes with at most k nonzero random patches, the smallest k whose dropped
    probability
                P[Bin(D-C, q) > k] is <= `tail_target`, when that sum fits; the rigorous bounds of
                `configurations.truncation_bounds` are evaluated after the run with the largest
                  alpha, Gamma, Xi met;
  "monte_carlo" `mc_samples` configurations drawn from their law (multinomial over the K set types)
    once, each with
                weight 1/M (common random numbers: the same sample at every step): GD runs on that
                  sample average,
                and the standard error of the loss and of the 0-1 error at each recorded state is
                  reported
                (`standard_errors`).
Counting the classes builds them (`classes.moment_classes`, stopped as soon as there are too many).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Optional

import jax
import jax.numpy as jnp

from dynsim.jsl import JSLConfig, error
from dynsim.validation import count_value, text_count

from . import class_sums, configurations, spec, tables
from .class_sums import ClassWeights
from .tables import BOUND_TARGET, MAX_CLASSES

METHODS = ("full", "truncated", "monte_carlo")
# the measurement: 1e6 samples gave 0.1-0.2% trajectory error at D = 100
MC_SAMPLES = 1_000_000


@dataclasses.dataclass(frozen=True)
class SumChoice:
    """The evaluation of one config's configuration sum, and why."""

    method: str  # one of METHODS
    max_nonzero: Optional[int]  # truncated: the cut k; otherwise None
    size: int  # moment classes summed (samples for monte_carlo)
    # multisets of set types in the full sum (what the classes group; `count_value`: past a float,
    # text)
    total: int | str
    # truncated: P[Bin(D-C, q) > k]; full: 0; monte_carlo: nan (sampled instead)
    dropped_probability: float
    reason: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def choose(
    cfg: JSLConfig,
    max_configurations: int = MAX_CLASSES,
    tail_target: float = BOUND_TARGET,
    mc_samples: int = MC_SAMPLES,
) -> SumChoice:
    """Every moment class if there are at most `max_configurations`, else the smallest fitting
    truncation with dropped probability <= tail_target, else Monte Carlo with `mc_samples`
    configurations."""
    spec.check_sum_options(max_configurations, tail_target, mc_samples)
    total = count_value(configurations.count(cfg.D, cfg.C))
    size = tables.size(cfg, None, limit=max_configurations)
    if size is not None:
        return SumChoice(
            "full",
            None,
            size,
            total,
            0.0,
            f"{text_count(size)} moment classes <= {text_count(max_configurations)}",
        )
    for k in range(cfg.D - cfg.C + 1):
        dropped = configurations.tail_probability(cfg.D, cfg.C, cfg.q, k)
        if dropped <= tail_target:
            size = tables.size(cfg, k, limit=max_configurations)
            if size is not None:
                return SumChoice(
                    "truncated",
                    k,
                    size,
                    total,
                    dropped,
                    f"more than {text_count(max_configurations)} moment classes; at most {k} "
                    f"nonzero random patches keeps {text_count(size)} and drops probability "
                    f"{dropped:.3g} <= {tail_target:g}",
                )
            break
    return SumChoice(
        "monte_carlo",
        None,
        mc_samples,
        total,
        float("nan"),
        f"more than {text_count(max_configurations)} moment classes and no truncation with dropped "
        f"probability <= {tail_target:g} fits: {text_count(mc_samples)} sampled configurations",
    )


def type_probabilities(q, C: int) -> jax.Array:
    """P[set type (a, b)] = C!/(a! b! c!) (q/2)^(a+b) (1-q)^c for every type of
    `configurations.set_types(C)` (traceable in q)."""
    types = configurations.set_types(C)
    coef = jnp.array(
        [math.comb(C, a) * math.comb(C - a, b) for a, b in types], jnp.result_type(q, float)
    )
    nonzero = jnp.array([a + b for a, b in types], coef.dtype)
    return coef * (q / 2) ** nonzero * (1 - q) ** (C - nonzero)


def monte_carlo_table(cfg: JSLConfig, key, q, samples: int) -> ClassWeights:
    """`samples` configurations n ~ Multinomial(L-1, type probabilities(q)), as their moment
    classes' monomials, each of weight 1/samples (traceable in q)."""
    p = type_probabilities(jnp.asarray(q, cfg.dtype), cfg.C)
    n = jax.random.multinomial(
        key, cfg.L - 1, p, shape=(samples, p.shape[0]), dtype=jnp.dtype(cfg.dtype)
    )
    return ClassWeights(
        class_sums.sampled_classes(cfg, n, cfg.dtype),
        jnp.full((samples,), 1.0 / samples, cfg.dtype),
    )


def mc_key(cfg: JSLConfig) -> jax.Array:
    """The Monte Carlo sample's key: from cfg.seed (so seeds give independent samples)."""
    return jax.random.fold_in(jax.random.key(cfg.seed), 7)


def standard_errors(cfg: JSLConfig, states, table: ClassWeights) -> dict:
    """loss_se_mc, error_se_mc: standard errors of the sampled loss and 0-1 error at each recorded
    state (alpha, gamma, rho) (R, 3): std over the equally weighted sampled configurations /
    sqrt(M)."""
    M = table.w.shape[0]

    def one(theta):
        F = class_sums.F_of(cfg, theta, table)
        loss = jax.nn.softplus(-F)
        wrong = error.wrong(F, class_sums.tie_tolerance(cfg, theta, table))
        return jnp.std(loss, ddof=1) / jnp.sqrt(M), jnp.std(wrong, ddof=1) / jnp.sqrt(M)

    loss_se, error_se = jax.lax.map(one, jnp.asarray(states))
    # not "<name>_se": that suffix is the checker's Monte Carlo band of replicate runs, which this
    # is not
    return {"loss_se_mc": loss_se, "error_se_mc": error_se}
