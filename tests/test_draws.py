"""dynsim.draws.flat gives jax.random's own numbers: a draw of several axes made flat and reshaped
equals the direct draw bit for bit (the samplers of both settings rely on it)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from dynsim.draws import flat

KEY = jax.random.key(20261128)
SHAPES = [(5, 7), (3, 4, 6), (2, 1, 3, 2)]


def test_the_partitionable_threefry_is_on():
    """The premise of `flat`: JAX numbers the elements of a draw in row-major order only with the
    partitionable threefry (its default since JAX 0.5)."""
    assert jax.config.jax_threefry_partitionable


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float64])
def test_normal_and_uniform_are_the_direct_draws(shape, dtype):
    # exact equality: the same bits through the same element-wise transform
    assert np.array_equal(
        flat(jax.random.normal, KEY, shape, dtype), jax.random.normal(KEY, shape, dtype)
    )
    got = flat(jax.random.uniform, KEY, shape, dtype, -0.5, 2.0)
    assert np.array_equal(got, jax.random.uniform(KEY, shape, dtype, -0.5, 2.0))


@pytest.mark.parametrize("shape", SHAPES)
def test_choice_with_probabilities_is_the_direct_draw(shape):
    p = jnp.asarray([0.2, 0.5, 0.3])
    got = flat(lambda k, s: jax.random.choice(k, 3, s, p=p), KEY, shape)
    assert np.array_equal(got, jax.random.choice(KEY, 3, shape, p=p))
    assert got.shape == shape
