"""The optax training engine of the full level: GD in one `lax.scan`, replicate keys; the checks the
settings share (`check_setting`, `replicates`) are `dynsim.validation`'s, light."""

from __future__ import annotations

from typing import Callable, Optional

import jax
import jax.numpy as jnp
import optax

from dynsim import recording
from dynsim.validation import DEFAULT_REPLICATES, check_setting  # noqa: F401 (this module's names)
from dynsim.validation import mode_replicates as replicates  # noqa: F401

EVAL_TAG = 2**32 - 1  # fold_in tag of the recorded quantities' samples (never a training batch's t)


LOSS_RISE = "max_loss_rise"  # the record `train(descent=True)` adds


def train(
    grad: Callable,
    opt: optax.GradientTransformation,
    params0,
    observe: Callable,
    steps: int,
    record_every: int,
    key: Optional[jax.Array] = None,
    nonfinite: bool = False,
    descent: bool = False,
):
    """`steps` optax updates params <- apply_updates(params, opt.update(grad)) from params0,
    `observe(params, t)` recorded at `recording.recorded_steps`; traceable. grad(params,
    fold_in(key, t)) draws step t's batch from key (grad(params) without key). Returns (final
    params, records); nonfinite: `recording.run`'s. descent: grad returns (loss, gradient) with loss
    > 0, and the records also hold LOSS_RISE, the largest (L(t) - L(t - 1)) / L(t - 1) over the
    steps so far (-1, its floor, before two losses are known; NaN once a loss is not finite):
    whether GD descended at every step, read from the losses it computes anyway."""

    def step(carry, t):
        params, opt_state = carry[:2]
        g = grad(params) if key is None else grad(params, jax.random.fold_in(key, t))
        if descent:
            (loss, g), (prev, worst) = g, carry[2:]
            rise = jnp.where(prev > 0, (loss - prev) / jnp.where(prev > 0, prev, 1.0), -1.0)
            nan = jnp.isnan(worst) | jnp.isnan(rise)
            tail = (loss, jnp.where(nan, jnp.nan, jnp.maximum(worst, rise)))
        updates, opt_state = opt.update(g, opt_state, params)
        return (optax.apply_updates(params, updates), opt_state) + (tail if descent else ())

    def recorded(carry, t):
        out = observe(carry[0], t)
        return {**out, LOSS_RISE: carry[3]} if descent else out

    start = (params0, opt.init(params0))
    if descent:
        dtype = jax.tree.leaves(params0)[0].dtype
        # finite, since `nonfinite` reads the whole carry
        start += (jnp.asarray(-1.0, dtype), jnp.asarray(-1.0, dtype))
    carry, records = recording.run(step, recorded, start, steps, record_every, nonfinite)
    return carry[0], records


def base_key(cfg) -> jax.Array:
    """The key of a run's batches (mode "sampled" splits it into one key per replicate)."""
    return jax.random.fold_in(jax.random.key(cfg.seed), 1)


def eval_key(key: jax.Array) -> jax.Array:
    """The key of the recorded quantities' own samples: fold_in(eval_key(key), t) at step t."""
    return jax.random.fold_in(key, EVAL_TAG)


def replicate_keys(cfg, R: int) -> jax.Array:
    """One key per replicate run of mode "sampled": `base_key` split R ways."""
    return jax.random.split(base_key(cfg), R)
