"""JSLConfig validation and the partition into sets."""

import numpy as np
import pytest

from dynsim import JSLConfig
from dynsim.jsl import partition

BAD = [
    ("D", 10, "multiple of C"),
    ("D", 3, "L = D/C = 2"),
    ("C", 1, ">= 2"),
    ("p", 4, "odd"),
    ("p", 1, "odd integer >= 3"),
    ("q", 1.5, "[0, 1]"),
    ("q", -0.1, "[0, 1]"),
    ("nu", -1e-3, ">= 0"),
    ("eta", 0.0, "> 0"),
    ("steps", -1, ">= 0"),
    ("sigma_A", 0.0, "never leave uniform"),
    ("record_every", 0, ">= 1"),
    ("N", 0, ">= 1"),
    ("d", 0, ">= 1"),
    ("sigma", -1.0, ">= 0"),
    ("temperature", "hot", "sqrt_d, unit"),
    ("partition", "spiral", "grid, contiguous, random"),
    ("dtype", "float16", "float64, float32"),
    ("D", 9.5, "integer"),
    ("q", float("nan"), "finite"),
    ("seed", -3, ">= 0"),
    ("seed", 2**70, "at most 2^63 - 1"),
    ("seed", 2**63, "what jax.random.key takes"),
]


@pytest.mark.parametrize("field,value,allowed", BAD)
def test_invalid_field_names_field_value_and_rule(field, value, allowed):
    with pytest.raises(ValueError) as err:
        JSLConfig(**{field: value})
    msg = str(err.value)
    assert f"JSLConfig.{field} = {value!r}" in msg and allowed in msg


def test_the_largest_seed_is_accepted_by_both_configs_and_jax():
    from dynsim import MIMConfig

    import jax

    top = 2**63 - 1
    assert JSLConfig(seed=top).seed == top and MIMConfig(seed=top).seed == top
    jax.random.key(top)  # what the bound stands for: the key takes it
    with pytest.raises(ValueError, match="MIMConfig.seed = 9223372036854775808 is invalid"):
        MIMConfig(seed=top + 1)


def test_grid_only_where_it_fits():
    with pytest.raises(ValueError, match="partition.*'grid' needs"):
        JSLConfig(D=9, C=3, partition="grid")


def test_defaults_are_resolved():
    cfg = JSLConfig(D=16, C=4)
    assert cfg.d == 16 and cfg.sigma == pytest.approx(0.25) and cfg.partition == "grid"
    assert JSLConfig(D=9, C=3).partition == "contiguous"
    assert cfg.tau == 4.0 and cfg.replace(temperature="unit").tau == 1.0
    assert JSLConfig(nu=1e-2, p=3).alpha0 == pytest.approx(0.1)


def test_grid_partition_is_figure_1b():
    # Figure 1b(1): S1={1,2,5,6}, S2={3,4,7,8}, S3={9,10,13,14}, S4={11,12,15,16} (1-indexed).
    got = partition.sets(JSLConfig(D=16, C=4)) + 1
    assert got.tolist() == [[1, 2, 5, 6], [3, 4, 7, 8], [9, 10, 13, 14], [11, 12, 15, 16]]


@pytest.mark.parametrize("kind", ["grid", "contiguous", "random"])
def test_partitions_are_partitions(kind):
    cfg = JSLConfig(D=36, C=4, partition=kind, seed=3)
    sets = partition.sets(cfg)
    assert sets.shape == (9, 4)
    assert sorted(sets.ravel().tolist()) == list(range(36))
    within, between = partition.orbit_masks(cfg)
    assert within.sum() == 36 * 3 and between.sum() == 36 * 32


def test_random_partition_depends_on_seed():
    a = partition.sets(JSLConfig(D=16, C=4, partition="random", seed=0))
    b = partition.sets(JSLConfig(D=16, C=4, partition="random", seed=1))
    assert not np.array_equal(a, b)
