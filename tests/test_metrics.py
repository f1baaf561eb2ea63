import dynsim  # noqa: F401  (enables float64 in JAX)

# Attention diversity (Huang et al. 2024, Section 6) and average attention distance (Dosovitskiy et
# al. 2021).

import math

import jax.numpy as jnp
import numpy as np
import pytest

from dynsim.metrics import attention_diversity, average_attention_distance, grid_coordinates

# Hand-computed values vs the code: a few float64 roundings (sqrt, a sum and a division of numbers
# of order 1, each within u = 1.1e-16 relative), so rel 1e-12 leaves a margin of ~1000x while
# catching any wrong formula.
REL = 1e-12


def one_hot_rows(targets, P):
    """Attention in which query p puts all its weight on patch targets[p]."""
    a = np.zeros((len(targets), P))
    a[np.arange(len(targets)), targets] = 1.0
    return a


def random_attention(rng, heads, P):
    a = rng.random((heads, P, P))
    return a / a.sum(axis=-1, keepdims=True)


def test_grid_coordinates_row_major():
    assert grid_coordinates((2, 3)).tolist() == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert grid_coordinates((1, 1)).shape == (1, 2)


# 1. Collapse
#    -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 2, 9])
def test_all_queries_on_one_patch_is_zero(k):
    a = one_hot_rows([4] * 9, 9)  # 3x3 grid, every query looks only at the centre
    out = attention_diversity(a, (3, 3), k=k)
    assert out.shape == (1,) and out.dtype == np.float64
    assert out[0] == 0.0


def test_same_top_k_in_same_order_is_zero():
    a = np.zeros((9, 9))
    a[:, 2], a[:, 7], a[:, 0] = 0.5, 0.3, 0.2  # same three patches, same ranking, for every query
    assert attention_diversity(a, (3, 3), k=3)[0] == 0.0


# 2. Hand-built known values
#    -----------------------------------------------------------------------------------


def test_identity_k1_on_1x2_grid():
    # Vectors (0, 0) and (0, 1): one pair at distance 1.
    assert attention_diversity(np.eye(2), (1, 2), k=1)[0] == pytest.approx(1.0, rel=REL)


def test_identity_k1_on_2x2_grid():
    # Vectors = the four grid points: 4 pairs at distance 1 (sides), 2 at sqrt(2) (diagonals).
    want = (4 + 2 * math.sqrt(2)) / 6
    assert attention_diversity(np.eye(4), (2, 2), k=1)[0] == pytest.approx(want, rel=REL)


def test_identity_k1_on_2x1_grid_uses_rows():
    # Column grid: patch 1 sits at (1, 0); one pair at distance 1.
    assert attention_diversity(np.eye(2), (2, 1), k=1)[0] == pytest.approx(1.0, rel=REL)


def test_k2_known_value_on_1x3_grid():
    # Query p: 0.6 on itself, 0.4 on patch (p+1) mod 3. Vectors (row, col, row, col) in rank order:
    # q0 = (0,0,0,1), q1 = (0,1,0,2), q2 = (0,2,0,0).
    # |q0-q1| = |(0,1,0,1)| = sqrt2, |q0-q2| = |(0,2,0,-1)| = sqrt5, |q1-q2| = |(0,1,0,-2)| = sqrt5.
    a = np.zeros((3, 3))
    for p in range(3):
        a[p, p], a[p, (p + 1) % 3] = 0.6, 0.4
    want = (math.sqrt(2) + 2 * math.sqrt(5)) / 3
    assert attention_diversity(a, (1, 3), k=2)[0] == pytest.approx(want, rel=REL)


def test_rank_order_matters():
    # Same two patches, opposite order: vectors (0,0,0,1) and (0,1,0,0), distance sqrt2 (a set would
    # give 0).
    a = np.array([[0.6, 0.4], [0.4, 0.6]])
    assert attention_diversity(a, (1, 2), k=2)[0] == pytest.approx(math.sqrt(2), rel=REL)


# 3. Average attention distance
#    --------------------------------------------------------------------------------


def test_identity_attention_distance_is_zero():
    out = average_attention_distance(np.eye(6), (2, 3))
    assert out.shape == (1,) and out.dtype == np.float64
    assert out[0] == 0.0


def test_uniform_attention_distance_on_1x3_grid():
    # Query 0: (0 + 1 + 2)/3 = 1, query 1: (1 + 0 + 1)/3 = 2/3, query 2: 1; mean 8/9.
    a = np.full((3, 3), 1 / 3)
    assert average_attention_distance(a, (1, 3))[0] == pytest.approx(8 / 9, rel=REL)


def test_uniform_attention_distance_on_2x2_grid():
    # Every query: distances 0, 1, 1, sqrt2 with weight 1/4.
    a = np.full((4, 4), 0.25)
    assert average_attention_distance(a, (2, 2))[0] == pytest.approx(
        (2 + math.sqrt(2)) / 4, rel=REL
    )


def test_one_hot_attention_distance():
    # 2x2 grid, query p looks only at patch 3 = (1, 1): distances sqrt2, 1, 1, 0; mean (2 +
    # sqrt2)/4.
    a = one_hot_rows([3, 3, 3, 3], 4)
    assert average_attention_distance(a, (2, 2))[0] == pytest.approx(
        (2 + math.sqrt(2)) / 4, rel=REL
    )


# 4. Several heads
#    ----------------------------------------------------------------------------------------------


def test_multiple_heads_match_single_heads():
    rng = np.random.default_rng(0)
    heads = np.stack([np.eye(4), one_hot_rows([1, 1, 1, 1], 4), random_attention(rng, 1, 4)[0]])
    div = attention_diversity(jnp.asarray(heads), (2, 2), k=2)
    dist = average_attention_distance(jnp.asarray(heads), (2, 2))
    assert div.shape == (3,) and dist.shape == (3,)
    assert isinstance(div, np.ndarray) and div.dtype == np.float64 and dist.dtype == np.float64
    for h in range(3):
        # Diversity: the same pdist on the same vectors, so identical.
        assert div[h] == attention_diversity(heads[h], (2, 2), k=2)[0]
        # Distance: the same 16 products of order 1, possibly summed in another order by einsum.
        assert dist[h] == pytest.approx(average_attention_distance(heads[h], (2, 2))[0], rel=REL)
    # Known values of the first two heads. Identity, k=2 on 2x2: rank 2 is the lowest-index
    # zero-weight patch, i.e. patch 0 for queries 1..3 and patch 1 for query 0: q0 = (0,0,0,1), q1 =
    # (0,1,0,0), q2 = (1,0,0,0), q3 = (1,1,0,0). |q0-q1| = sqrt2, |q0-q2| = sqrt2, |q0-q3| = sqrt3,
    # |q1-q2| = sqrt2, |q1-q3| = 1, |q2-q3| = 1.
    want = (3 * math.sqrt(2) + math.sqrt(3) + 2) / 6
    assert div[0] == pytest.approx(want, rel=REL)
    assert div[1] == 0.0 and dist[0] == 0.0
    # Head 1: all queries on patch 1 = (0, 1): distances 1, 0, sqrt2, 1.
    assert dist[1] == pytest.approx((2 + math.sqrt(2)) / 4, rel=REL)


# 5. Tie rule
#    -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 9])
def test_uniform_attention_is_collapsed(k):
    a = np.full((9, 9), 1 / 9)
    assert attention_diversity(a, (3, 3), k=k)[0] == 0.0


def test_ties_go_to_the_lower_index():
    # Query 0 is uniform (a three-way tie), queries 1 and 2 look only at patch 0. With ties to the
    # lower index query 0 also picks patch 0, so the diversity is 0; with ties to the higher index
    # it would pick patch 2 and give (2 + 2 + 0)/3 = 4/3.
    a = np.array([[1 / 3, 1 / 3, 1 / 3], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])
    assert attention_diversity(a, (1, 3), k=1)[0] == 0.0
    # Two-way tie behind a clear winner: query 0 = [0.5, 0.25, 0.25] ranks (0, 1), query 1 = [0.5,
    # 0, 0.5] ranks (0, 2): vectors (0,0,0,1) and (0,0,0,2), distance 1.
    b = np.array([[0.5, 0.25, 0.25], [0.5, 0.0, 0.5], [0.5, 0.25, 0.25]])
    # Pairs: (q0, q1) = 1, (q0, q2) = 0, (q1, q2) = 1.
    assert attention_diversity(b, (1, 3), k=2)[0] == pytest.approx(2 / 3, rel=REL)


# 6. Named errors
#    -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "attn, grid_shape, k, name",
    [
        (np.eye(4), (3, 1), 1, "grid_shape"),  # product 3 != P = 4
        (np.eye(4), (2, 2), 5, "k"),  # k > P
        (np.eye(4), (2, 2), 0, "k"),
        (np.eye(4), (2, 2), 1.0, "k"),
        (np.eye(4), (2, 2), True, "k"),
        (np.eye(4), (0, 4), 1, "grid_shape"),
        (np.eye(4), (2.0, 2), 1, "grid_shape"),
        (np.eye(4), (4,), 1, "grid_shape"),
        (np.eye(4), 4, 1, "grid_shape"),
        (np.eye(4) - 0.5, (2, 2), 1, "attn"),  # negative
        (np.where(np.eye(4) > 0, np.nan, 0.0), (2, 2), 1, "attn"),  # NaN
        (np.where(np.eye(4) > 0, np.inf, 0.0), (2, 2), 1, "attn"),
        (np.ones((4, 3)) / 3, (2, 2), 1, "attn"),  # not square
        (np.ones((1, 1, 4, 4)) / 4, (2, 2), 1, "attn"),  # 4-D
        (np.ones(4) / 4, (2, 2), 1, "attn"),  # 1-D
        (np.ones((1, 1)), (1, 1), 1, "attn"),  # P = 1: no pairs of queries
        (np.eye(2) + 0j, (1, 2), 1, "attn"),  # complex
        ([["a", "b"], ["c", "d"]], (1, 2), 1, "attn"),
    ],
)
def test_diversity_rejects_bad_input(attn, grid_shape, k, name):
    with pytest.raises(ValueError, match=name):
        attention_diversity(attn, grid_shape, k=k)


def test_error_messages_give_the_value():
    with pytest.raises(ValueError, match=r"k must be an int with 1 <= k <= P = 4, got 5"):
        attention_diversity(np.eye(4), (2, 2), k=5)
    with pytest.raises(ValueError, match=r"grid_shape \(3, 1\) has 3 patches, but attn has P = 4"):
        attention_diversity(np.eye(4), (3, 1), k=1)
    with pytest.raises(ValueError, match=r"attn must be non-negative, got minimum -0\.5"):
        attention_diversity(np.eye(4) - 0.5, (2, 2), k=1)


@pytest.mark.parametrize(
    "attn, grid_shape, name",
    [
        (np.eye(4), (1, 3), "grid_shape"),
        (-np.eye(4), (2, 2), "attn"),
        (np.full((4, 4), np.nan), (2, 2), "attn"),
        (np.ones((2, 3, 4)), (2, 2), "attn"),
    ],
)
def test_distance_rejects_bad_input(attn, grid_shape, name):
    with pytest.raises(ValueError, match=name):
        average_attention_distance(attn, grid_shape)


# 7. Invariances
#    -----------------------------------------------------------------------------------------------


def test_permuting_queries_leaves_diversity_unchanged():
    rng = np.random.default_rng(1)
    a = random_attention(rng, 2, 16)
    perm = rng.permutation(16)
    got, want = attention_diversity(a[:, perm, :], (4, 4), k=3), attention_diversity(a, (4, 4), k=3)
    # The same 120 pairwise distances (each computed identically), averaged in a different order: a
    # reordered sum of 120 positive terms moves by at most ~120 u relative.
    np.testing.assert_allclose(got, want, rtol=REL, atol=0)
    assert np.all(want > 0)


def test_scaling_a_row_by_a_power_of_two_leaves_diversity_unchanged():
    # Only the ranking enters; multiplying by 2**3 is exact in float64, so the ranking (ties
    # included) is the same.
    rng = np.random.default_rng(2)
    a = random_attention(rng, 1, 9)[0]
    b = a.copy()
    b[4] *= 8.0
    assert attention_diversity(b, (3, 3), k=4)[0] == attention_diversity(a, (3, 3), k=4)[0]


def test_large_grid_runs_and_collapse_is_zero():
    # 32x32 = 1024 patches at k = 10 (paper: 14x14, top-10): pdist over 523776 pairs.
    P = 1024
    a = one_hot_rows(np.arange(P), P)
    assert attention_diversity(np.full((1, P, P), 1.0 / P), (32, 32), k=10)[0] == 0.0
    assert attention_diversity(a, (32, 32), k=10)[0] > 0


def test_rounding_noise_does_not_break_ties():
    """Weights equal to TIE_DECIMALS decimals tie (a float64 softmax of equal scores differs in the
    last bits)."""
    from dynsim.metrics import TIE_DECIMALS

    assert TIE_DECIMALS == 12
    a = np.full((4, 4), 0.25)
    a[1, 3] += 3e-16  # rounding-level perturbations, which a plain stable sort would rank first
    a[2, 2] += 2e-16
    # every query then picks patch 0 first (lowest index among the tied): collapsed, diversity
    # exactly 0
    assert attention_diversity(a, (2, 2), k=1)[0] == 0.0
    b = a.copy()
    # a real difference (above 1e-12) still counts: query 1 now looks at patch 3 = (1, 1) vectors:
    # (0,0) for queries 0, 2, 3 and (1,1) for query 1: 3 of the 6 pairs at distance sqrt(2)
    b[1, 3] += 1e-9
    assert attention_diversity(b, (2, 2), k=1)[0] == pytest.approx(3 * np.sqrt(2) / 6, rel=1e-12)
