"""Exact reference lines (GLM error, Bayes error, loss floor) against brute force and the published
numbers."""

import math
from fractions import Fraction

import pytest

from dynsim import JSLConfig
from dynsim.jsl import reference
from tests.conftest import U64
from tests.helpers import joint_law

SHAPES = [(6, 2), (8, 4), (9, 3), (8, 2)]
QS = [0.0, 0.3, 0.5, 1.0]


def _brute(D, C, q):
    joint = joint_law(D, C, q)
    glm = sum(
        w * (Fraction(1) if y * sum(s) < 0 else Fraction(1, 2) if sum(s) == 0 else 0)
        for (s, y), w in joint.items()
    )
    xs = {s for s, _ in joint}
    bayes = sum(min(joint.get((s, 1), 0), joint.get((s, -1), 0)) for s in xs)
    # -log P(y | s) = log1p(P(s, -y) / P(s, y)): the ratio rounded once, log1p relative error <= the
    #   ratio's
    floor = math.fsum(
        float(w) * math.log1p(float(joint.get((s, -y), 0) / w)) for (s, y), w in joint.items()
    )
    return glm, bayes, floor, sum(joint.values())


@pytest.mark.parametrize("q", QS)
@pytest.mark.parametrize("shape", SHAPES)
def test_reference_lines_equal_brute_force(shape, q):
    """Against an exact enumeration of every (y, signal set, delta) with itertools, posterior by
    Bayes' rule on s.

    GLM and Bayes error: the reference rounds an exact rational once and so does float(Fraction):
    equal to 1 ulp, checked as |diff| <= 2u |exact|. Loss floor: both sides add positive terms with
    relative error <= 5u each (weight, ratio and log1p rounded, one product; reference.loss_floor's
    docstring), fsum adds one more: 16u relative.
    """
    D, C = shape
    cfg = JSLConfig(D=D, C=C, q=q)
    glm, bayes, floor, total = _brute(D, C, q)
    assert total == 1
    assert abs(reference.glm_error(cfg) - float(glm)) <= 2 * U64 * float(glm)
    assert abs(reference.bayes_error(cfg) - float(bayes)) <= 2 * U64 * float(bayes)
    assert abs(reference.loss_floor(cfg) - floor) <= 16 * U64 * floor
    if 0 < q:
        assert glm > 0  # the comparison is not 0 == 0
    if q == 0:
        assert reference.lines(cfg) == {"glm_error": 0.0, "bayes_error": 0.0, "loss_floor": 0.0}


@pytest.mark.parametrize(
    "settings, published",
    [
        (
            dict(D=16, C=4, q=0.5),
            {
                "glm_error": (0.0539, 5e-5),
                "bayes_error": (0.0058, 5e-5),
                "loss_floor": (0.0081, 5e-5),
            },
        ),
        (
            dict(D=36, C=4, q=0.3),
            {
                "glm_error": (0.100, 5e-4),
                "bayes_error": (0.0020, 5e-5),
                "loss_floor": (0.0028, 5e-5),
            },
        ),
        (dict(D=16, C=4, q=0.3), {"glm_error": (0.020, 5e-4), "bayes_error": (0.00076, 5e-6)}),
        (dict(D=16, C=4, q=0.4), {"glm_error": (0.036, 5e-4), "bayes_error": (0.0024, 5e-5)}),
    ],
)
def test_published_reference_numbers(settings, published):
    """docs/derivations/jsl.md §5 (Default A, Default B, the q = 0.3 and 0.4 variants of A), an
    independent numpy computation printed to 2-4 digits: the tolerance is half a unit in the last
    printed digit."""
    got = reference.lines(JSLConfig(**settings))
    for name, (value, tol) in published.items():
        assert got[name] == pytest.approx(value, abs=tol), name


@pytest.mark.parametrize(
    "settings",
    [
        dict(D=196, C=4, q=0.3),
        dict(D=196, C=4, q=0.05),
        dict(D=100, C=4, q=1.0),
        dict(D=64, C=16, q=0.5),
    ],
)
def test_reference_orderings_at_large_sizes(settings):
    """Large settings, beyond brute force: Bayes <= GLM (Bayes is optimal), the floor is at least 2
    log 2 times the Bayes error (binary entropy h(p) >= 2 p log 2 for p <= 1/2, concavity), and
    everything is a probability/entropy."""
    out = reference.lines(JSLConfig(**settings))
    assert 0 < out["bayes_error"] <= out["glm_error"] <= 0.5
    assert 2 * math.log(2) * out["bayes_error"] <= out["loss_floor"] <= math.log(2)


def test_reference_refuses_non_config():
    with pytest.raises(TypeError, match="JSLConfig"):
        reference.lines({"D": 16})
