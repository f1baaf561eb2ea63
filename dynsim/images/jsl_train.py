"""Training of the JSL Section 6 learners (`dynsim.images.jsl_models`) on patched digits: Adam
(optax) on the cross-entropy of random minibatches, the steps a `lax.scan`, the seeds a `vmap`;
one compiled function per learner and size, reused across conditions.

The data of seed r (`seed_data`): its own train/test split and its own patch permutation per
condition (the same for every learner, so learners compare paired by seed). A condition is a
shuffle grid (JSL Figure 5b) of `block` x `block` patches: block 1 is the fixed random patch
permutation, a block as large as the grid is the original image."""

from __future__ import annotations

import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np
import optax

from dynsim import progress

from . import digits, jsl_models

__all__ = ["SeedData", "seed_data", "condition_blocks", "train", "init_params", "fit"]


@dataclasses.dataclass(frozen=True)
class SeedData:
    """The arrays of every seed, stacked: x_train (R, n, D, d), y_train (R, n), x_test, y_test,
    perms {condition: (R, D)} (position i of a permuted image shows patch perms[r, i])."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray
    perms: dict
    grid: tuple


def condition_blocks(grid: tuple, patch: int) -> dict:
    """{condition name: block} for a (rows, rows) grid: "permuted" (block 1), "shuffle-Npx" for the
    other proper divisors of the grid side (N = block x patch pixels), "original" (the whole
    grid)."""
    side = grid[0]
    out = {"original": side, "permuted": 1}
    for b in range(2, side):
        if side % b == 0:
            out[f"shuffle-{b * patch}px"] = b
    return out


def seed_data(data: digits.Digits, n_test: int, seeds: int, seed: int, conditions: dict):
    """Each seed's split and permutations, from numpy generators seeded by (seed, r)."""
    parts = {k: [] for k in ("x_train", "y_train", "x_test", "y_test")}
    perms = {c: [] for c in conditions}
    for r in range(seeds):
        draws = np.random.default_rng([seed, r]).integers(0, 2**31 - 1, size=1 + len(conditions))
        train_set, test_set = digits.split(data, n_test, int(draws[0]))
        parts["x_train"].append(train_set.x)
        parts["y_train"].append(train_set.y)
        parts["x_test"].append(test_set.x)
        parts["y_test"].append(test_set.y)
        for (c, block), s in zip(conditions.items(), draws[1:]):
            perms[c].append(digits.shuffle_grid(data.grid, block, int(s)))
    stacked = {k: np.stack(v) for k, v in parts.items()}
    return SeedData(**stacked, perms={c: np.stack(v) for c, v in perms.items()}, grid=data.grid)


def init_params(module, key, x):
    """The module's initial parameters for inputs shaped like `x` (one image)."""
    return module.init(key, x[None])["params"]


def _loss(module, params, x, y):
    logits = module.apply({"params": params}, x)
    return jnp.mean(optax.softmax_cross_entropy_with_integer_labels(logits, y))


@functools.lru_cache(maxsize=None)
def _compiled(module, frozen: bool, steps: int, batch: int, lr: float):
    """The jitted seed-vmapped fit of `module`: (params0, key, x_train, y_train, x_test, y_test) ->
    (final params, test accuracy, final training loss)."""
    opt = optax.adam(lr)

    def one(params, key, x, y, xt, yt):
        state = opt.init(params)
        n = x.shape[0]

        def step(carry, xs):
            (params, state), (k, t) = carry, xs
            progress.report_every(t + 1, steps)  # all seeds at once
            idx = jax.random.randint(k, (batch,), 0, n)
            loss, grads = jax.value_and_grad(functools.partial(_loss, module))(
                params, x[idx], y[idx]
            )
            if frozen:  # P stays at its initialization: Adam's update of a zero gradient is 0
                grads = {**grads, "P": jnp.zeros_like(grads["P"])}
            updates, state = opt.update(grads, state, params)
            return (optax.apply_updates(params, updates), state), loss

        keys = jax.random.split(key, steps)
        (params, _), losses = jax.lax.scan(step, (params, state), (keys, jnp.arange(steps)))
        logits = module.apply({"params": params}, xt)
        accuracy = jnp.mean(jnp.argmax(logits, axis=-1) == yt)
        return params, accuracy, losses[-1]

    return jax.jit(jax.vmap(one))


@functools.lru_cache(maxsize=None)
def _compiled_init(module):
    """The jitted seed-vmapped initialization of `module`: (keys (R,), one image per seed) ->
    stacked parameters."""
    return jax.jit(jax.vmap(functools.partial(init_params, module)))


def fit(module, frozen, params0, keys, x, y, xt, yt, *, steps: int, batch: int, lr: float):
    """Train `module` from params0 (stacked over seeds) on each seed's data; returns (params,
    test accuracy (R,), last minibatch loss (R,)) as numpy."""
    fn = _compiled(module, bool(frozen), int(steps), int(batch), float(lr))
    params, acc, loss = fn(params0, keys, x, y, xt, yt)
    return jax.tree_util.tree_map(np.asarray, params), np.asarray(acc), np.asarray(loss)


def train(
    name: str, data: SeedData, condition: str, *, patch, width, dtype, steps, batch, lr, seed
):
    """Learner `name` (jsl_models.MODELS) on `condition` for every seed: {"accuracy" (R,),
    "loss" (R,), "P0", "P" (R, D, width) for the attention learners}. Seed r's initialization
    and minibatches come from PRNGKey(seed) folded with r and the learner's index (not with the
    condition: original and permuted runs of a seed start from the same parameters)."""
    module = jsl_models.make(name, data.grid, patch, width, dtype)
    perm = data.perms[condition]
    R = perm.shape[0]
    x = np.stack([data.x_train[r][:, perm[r]] for r in range(R)]).astype(dtype)
    xt = np.stack([data.x_test[r][:, perm[r]] for r in range(R)]).astype(dtype)
    base = jax.random.fold_in(jax.random.PRNGKey(seed), jsl_models.MODELS.index(name))
    keys = jax.vmap(lambda r: jax.random.split(jax.random.fold_in(base, r)))(jnp.arange(R))
    params0 = _compiled_init(module)(keys[:, 0], x[:, 0])
    params, acc, loss = fit(
        module,
        name == "frozen",
        params0,
        keys[:, 1],
        x,
        data.y_train,
        xt,
        data.y_test,
        steps=steps,
        batch=batch,
        lr=lr,
    )
    out = {"accuracy": acc, "loss": loss}
    if "P" in params:
        out["P0"], out["P"] = np.asarray(params0["P"]), params["P"]
    return out
