"""Training of the JSL Section 6 learners (`dynsim.images.jsl_models`) on the digits: Adam (optax,
the learning rate decayed to 0 on a cosine over the steps) on the cross-entropy of random
minibatches, the steps a `lax.scan`, the seeds a `vmap`; one compiled function per learner and
size, reused across conditions, translations and frozen P (those are traced, not static).

Each minibatch image is translated at random by up to `SHIFT` pixels in each direction (zeros
shifted in) before it is centred, cut into patches and permuted: the standard augmentation the
paper trains with (Section 6), applied to the original image, so a permuted image's patches move
as the original's do. The data of seed r (`seed_data`): its own train/test split and its own patch
permutation (the same for every learner, so learners compare paired by seed)."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import progress

from . import digits, jsl_models
from .jsl_options import Run

__all__ = [
    "SeedData", "seed_data", "train", "init_params", "fit", "translate", "offsets", "SHIFT"
]  # fmt: skip

SHIFT = 1  # pixels: the largest translation, in each direction
# the keys' implementation: XLA's RngBitGenerator, whose programs compile faster than threefry's
# (flax draws every parameter's start from its own key; docs/benchmarks.md p)
PRNG = "rbg"


@dataclasses.dataclass(frozen=True)
class SeedData:
    """The arrays of every seed, stacked: x_train (R, n, 8, 8) images, y_train (R, n), x_test,
    y_test, perms {condition: (R, D)} (position i of a permuted image shows patch perms[r, i])."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    perms: dict
    grid: tuple


def seed_data(n_test: int, seeds: int, seed: int, grid: tuple) -> SeedData:
    """Each seed's split and patch permutation, from numpy generators seeded by (seed, r); the
    original condition's permutation is the identity."""
    pixels, labels = digits.images()
    parts = {k: [] for k in ("x_train", "y_train", "x_test", "y_test")}
    perms = []
    D = grid[0] * grid[1]
    for r in range(seeds):
        draws = np.random.default_rng([seed, r]).integers(0, 2**31 - 1, size=2)
        train_at, test_at = digits.split_index(len(labels), n_test, int(draws[0]))
        for part, at in (("train", train_at), ("test", test_at)):
            parts[f"x_{part}"].append(pixels[at])
            parts[f"y_{part}"].append(labels[at])
        perms.append(digits.permutation(D, int(draws[1])))
    stacked = {k: np.stack(v) for k, v in parts.items()}
    identity = np.tile(np.arange(D), (seeds, 1))
    return SeedData(**stacked, perms={"original": identity, "permuted": np.stack(perms)}, grid=grid)


def translate(images, offset):
    """Each (8, 8) image moved by its own offset (n, 2) in 0..2 SHIFT (SHIFT: not moved), zeros
    shifted in."""
    padded = jnp.pad(images, ((0, 0), (SHIFT, SHIFT), (SHIFT, SHIFT)))
    side = images.shape[-1]
    return jax.vmap(lambda a, o: jax.lax.dynamic_slice(a, (o[0], o[1]), (side, side)))(
        padded, offset
    )


def offsets(key, shape: tuple, shift):
    """Random offsets for `translate`: moves in -shift..shift in each direction, shift (traced) at
    most SHIFT; 0 moves nothing."""
    return SHIFT - shift + jax.random.randint(key, (*shape, 2), 0, 2 * shift + 1)


def init_params(module, key, x):
    """The module's initial parameters for inputs shaped like `x` (one image's patches); a block's
    hold every attention's (`jsl_models.ATTENTION`)."""
    return module.init(key, x[None])["params"]


def _loss(module, params, x, y, code):
    logits = module.apply({"params": params}, x, code)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))


@functools.lru_cache(maxsize=None)
def _compiled(module, patch: int, steps: int, batch: int, lr: float):
    """The jitted seed-vmapped initialization and fit of `module`: (key, perm, code, shift,
    learn_p, x_train, y_train, x_test, y_test) -> (initial params, final params, test accuracy,
    final training loss); code the block's attention (`jsl_models.ATTENTION`), shift the
    translations' size, learn_p 1 (P trained) or 0 (P frozen: Adam's update of a zero gradient
    is 0)."""
    opt = optax.flatten(optax.adam(optax.cosine_decay_schedule(lr, steps)))

    def one(key, perm, code, shift, learn_p, x, y, xt, yt):
        def step(carry, draw):
            params, state = carry
            idx, offset, t = draw
            progress.report_every(t + 1, steps)  # all seeds at once
            images = translate(x[idx], offset)
            loss, grads = jax.value_and_grad(functools.partial(_loss, module))(
                params, digits.prepare(images, patch)[:, perm], y[idx], code
            )
            if "P" in grads:
                grads = {**grads, "P": grads["P"] * learn_p}
            updates, state = opt.update(grads, state, params)
            return (optax.apply_updates(params, updates), state), loss

        start, pick, move = jax.random.split(key, 3)
        params0 = init_params(module, start, digits.prepare(xt[:1], patch)[0])
        draws = (jax.random.randint(pick, (steps, batch), 0, x.shape[0]),
                 offsets(move, (steps, batch), shift), jnp.arange(steps))  # fmt: skip
        (params, _), losses = jax.lax.scan(step, (params0, opt.init(params0)), draws)
        logits = module.apply({"params": params}, digits.prepare(xt, patch)[:, perm], code)
        return params0, params, jnp.mean(jnp.argmax(logits, axis=-1) == yt), losses[-1]

    return jax.jit(jax.vmap(one, in_axes=(0, 0, None, None, None, 0, 0, 0, 0)))


def fit(module, patch, keys, perm, x, y, xt, yt, *, code, shift, learn_p, steps, batch, lr):
    """Initialize `module` from keys (R,) and train it on each seed's images, permuted by perm
    (R, D) after the translations of size `shift`, its attention `code`; returns (initial params,
    params, test accuracy (R,), last minibatch loss (R,)) as numpy."""
    fn = _compiled(module, int(patch), int(steps), int(batch), float(lr))
    x, xt = jnp.asarray(x, module.dtype), jnp.asarray(xt, module.dtype)
    code, learn_p = jnp.asarray(code, module.dtype), jnp.asarray(learn_p, module.dtype)
    out = fn(keys, perm, code, shift, learn_p, x, y, xt, yt)
    return jax.tree_util.tree_map(np.asarray, out)


def train(run: Run, data: SeedData, *, patch, width, heads, dtype, steps, batch, lr, seed):
    """`run` for every seed: {"accuracy" (R,), "loss" (R,), "P0", "P" (R, D, width) for the
    blocks}. Seed r's initialization and minibatches come from the key of `seed` (PRNG) folded
    with the learner's index and r only: every run of a learner starts each seed from the same
    parameters and draws the same minibatches."""
    module = jsl_models.make(run.learner, data.grid, patch, width, heads, dtype)
    perm = data.perms[run.condition]
    root = jax.random.key(seed, impl=PRNG)
    base = jax.random.fold_in(root, jsl_models.MODELS.index(run.learner))
    keys = jax.vmap(lambda r: jax.random.fold_in(base, r))(jnp.arange(perm.shape[0]))
    code = jsl_models.ATTENTION.get(run.learner, (0.0, 0.0))  # the CNN ignores it
    params0, params, acc, loss = fit(
        module, patch, keys, perm, data.x_train, data.y_train, data.x_test, data.y_test,
        code=code, shift=SHIFT * run.translations, learn_p=0.0 if run.frozen else 1.0,
        steps=steps, batch=batch, lr=lr,
    )  # fmt: skip
    out = {"accuracy": acc, "loss": loss}
    if "P" in params:
        out["P0"], out["P"] = params0["P"], params["P"]
    return out
