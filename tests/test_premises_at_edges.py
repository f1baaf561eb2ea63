"""Premises read where they apply (docs/claims.md): a run at its saddle is not judged, and the
MIM Delta < 0 run beside the ladder is sized from the options, not fixed."""

from __future__ import annotations

import json

import pytest

from dynsim import cli
from dynsim.claims import EXIT_DYNAMICS, EXIT_FAILS
from dynsim.mim import theorems
from dynsim.mim.config import MIMConfig


@pytest.mark.parametrize("kappa_s", [0.1, 0.25, 0.4, 0.5, 0.6, 0.65, 0.7, 0.8, 0.9, 0.95])
def test_the_negative_delta_run_is_a_valid_config_with_delta_below_zero(kappa_s):
    """2 kappa_c - kappa_s - 1 < 0 with kappa_s < kappa_c < 1 at every kappa_s; -0.2 where the
    global area stays 0.1 above the local one in the exponent (kappa_s <= 0.6), (0.6, 0.4) at the
    defaults as before."""
    kc = theorems.negative_kappa_c(kappa_s)
    base = MIMConfig(P=256, kappa_c=0.95 if kappa_s < 0.95 else 0.99, kappa_s=kappa_s)
    neg = theorems.negative_base(base)
    assert kappa_s < kc < 1 and 2 * kc - kappa_s - 1 < 0
    assert neg.kappa_c == kc
    if kappa_s <= 0.6:
        assert 2 * kc - kappa_s - 1 == pytest.approx(-0.2, abs=1e-12)
    assert theorems.negative_kappa_c(0.4) == pytest.approx(0.6, abs=1e-12)


def test_a_run_at_its_saddle_is_not_judged(tmp_path, capsys):
    """sigma = 1e-6, 100 steps: the product u W11^KQ ~ sigma^2 is still growing by most of itself
    over the last fifth of the run. The horizon premise reads that move relative to the product, so
    every claim is not applicable and the exit says the dynamics broke a premise (4), never
    "fails" (exit 1) on an untrained layer."""
    code = cli.main(
        ["check-theorems", "icl", "--sigma", "1e-6", "--steps", "100", "--tests", "1024"]
        + ["--json", "--out", str(tmp_path)]
    )
    found = json.loads((tmp_path / "theorems.json").read_text())
    assert code == EXIT_DYNAMICS != EXIT_FAILS
    assert {c["verdict"] for c in found["claims"]} == {"not applicable"}
    assert all("the run reached its horizon" in c["why"] for c in found["claims"])
    capsys.readouterr()
