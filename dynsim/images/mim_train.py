"""Training the attention model of `dynsim.images.mim_model` on patched digits: one objective, all
seeds at once (vmapped), optax Adam on minibatches, the steps in one `lax.scan` (reporting its
progress, `dynsim.progress.report_every`), and the test-set evaluation: loss against its baseline,
accuracy, attention maps."""

from __future__ import annotations

import dataclasses
import functools
import math

import jax
import jax.numpy as jnp
import optax

from dynsim import progress

from .mim_model import Attention, masked_input, masks

__all__ = ["Training", "train", "evaluate", "loss", "TEMPERATURE"]

TEMPERATURE = 0.1  # InfoNCE temperature of the contrastive objective (SimCLR's order)


@dataclasses.dataclass(frozen=True)
class Training:
    """What one objective's run needs besides the data: sizes, optimizer, masking ratio gamma."""

    objective: str
    steps: int
    batch: int
    learning_rate: float
    mask_ratio: float
    width: int = 32
    dtype: str = "float64"

    def model(self, P: int, d: int) -> Attention:
        return Attention(P=P, d=d, width=self.width, objective=self.objective, dtype=self.dtype)


def loss(model: Attention, training: Training, params, X, y, key):
    """The objective on a batch X (n, P, d), labels y (n,): masked reconstruction (mean over images
    of 1/2 sum_{p in M} ||F_p - x_p||^2, eq. 2.8), cross-entropy, or symmetric InfoNCE of two
    masked views."""
    n, P, _ = X.shape
    if training.objective == "masked":
        M = masks(key, n, P, training.mask_ratio)
        out = model.apply(params, masked_input(X, M))
        return 0.5 * jnp.sum(jnp.where(M[..., None], (out - X) ** 2, 0.0)) / n
    if training.objective == "supervised":
        logits = model.apply(params, X)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    k1, k2 = jax.random.split(key)
    z1, z2 = (
        model.apply(params, masked_input(X, masks(k, n, P, training.mask_ratio))) for k in (k1, k2)
    )
    z1, z2 = (z / jnp.linalg.norm(z, axis=-1, keepdims=True).clip(1e-12) for z in (z1, z2))
    logits = z1 @ z2.T / TEMPERATURE
    labels = jnp.arange(n)
    ce = optax.softmax_cross_entropy_with_integer_labels
    return 0.5 * (ce(logits, labels).mean() + ce(logits.T, labels).mean())


@functools.partial(jax.jit, static_argnames=("training",))
def train(training: Training, X, y, keys):
    """Train one model per seed: X (S, n, P, d), y (S, n), keys (S, 2); returns (params stacked
    over seeds, the training loss per step (steps, S))."""
    S, n, P, d = X.shape
    model = training.model(P, d)
    optimizer = optax.adam(training.learning_rate)
    init = jax.vmap(lambda k, Xs: model.init(k, Xs[:1]))(keys, X)
    state = (init, jax.vmap(optimizer.init)(init), keys)

    def one(params, opt, key, Xs, ys):
        key, pick, draw = jax.random.split(key, 3)
        index = jax.random.randint(pick, (training.batch,), 0, n)
        value, grads = jax.value_and_grad(
            lambda p: loss(model, training, p, Xs[index], ys[index], draw)
        )(params)
        updates, opt = optimizer.update(grads, opt, params)
        return optax.apply_updates(params, updates), opt, key, value

    def step(carry, t):
        params, opt, key, value = jax.vmap(one)(*carry, X, y)
        progress.report_every(t + 1, training.steps)
        return (params, opt, key), value

    (params, _, _), losses = jax.lax.scan(step, state, jnp.arange(training.steps))
    return params, losses


@functools.partial(jax.jit, static_argnames=("training",))
def evaluate(training: Training, params, X_train, X, y, key):
    """Per seed, on the test images X (S, m, P, d): the attention of the unmasked images (S, m, P,
    P), the test objective and its baseline (masked: predicting each position's training-mean patch;
    contrastive: log m, chance; supervised: log 10, chance) and the accuracy (supervised; else
    NaN)."""
    S, m, P, d = X.shape
    model = training.model(P, d)

    def one(p, Xtr, Xs, ys):
        attn = model.apply(p, Xs, method=Attention.attention)
        value = loss(model, training, p, Xs, ys, key)
        accuracy = jnp.nan
        if training.objective == "masked":
            M = masks(key, m, P, training.mask_ratio)
            mean = Xtr.mean(axis=0)
            baseline = 0.5 * jnp.sum(jnp.where(M[..., None], (mean - Xs) ** 2, 0.0)) / m
        elif training.objective == "supervised":
            baseline = jnp.asarray(math.log(10.0), Xs.dtype)
            accuracy = jnp.mean(jnp.argmax(model.apply(p, Xs), axis=-1) == ys)
        else:
            baseline = jnp.asarray(math.log(m), Xs.dtype)
        return attn, value, baseline, jnp.asarray(accuracy, Xs.dtype)

    return jax.vmap(one)(params, X_train, X, y)
