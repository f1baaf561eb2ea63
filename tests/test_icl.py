"""The ICL setting (Zhang, Frei, Bartlett; dynsim/icl, reduced/icl, full/icl), declared with new
files only and registered here as its entry point would register it.

Expected values never come from the code under test: the closed forms are checked against exact
Gauss-Hermite expectations of the literal forward pass written here in NumPy (a tensor rule with 4
nodes per variable integrates every polynomial of degree <= 7 in each variable exactly; the squared
error has degree <= 6), the sympy gradients against central differences of the reduced loss typed
here, and the limits against Gamma = (1 + 1/N) Lambda + tr(Lambda)/N I worked out by hand.
"""

import csv
import itertools
import json
import subprocess
import sys
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import numpy as np
import pytest

from dynsim import cli
from dynsim import setting as registry
from dynsim.icl import moments
from dynsim.icl.config import ICLConfig
from dynsim.icl.setting import SETTING
from tests.helpers import assert_refused, cli_commands, register_for_the_test, run

ROOT = Path(__file__).resolve().parent.parent
SMALL = dict(d=2, N=5, kappa=4.0)  # Lambda = diag(1, 4): Gamma = diag(2.2, 5.8) by hand
GAMMA = np.array([1.2 * 1 + 5 / 5, 1.2 * 4 + 5 / 5])


@pytest.fixture(autouse=True)
def registered(monkeypatch):
    """The setting is known for each test only (what its entry point does in an install)."""
    register_for_the_test(monkeypatch, SETTING)


def gauss_hermite(fn, scales, nodes: int = 4) -> float:
    """E[fn(Z * scales)], Z standard normal in len(scales) dimensions, by the tensor
    Gauss-Hermite rule (exact for polynomials of degree <= 2 nodes - 1 in each variable)."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    grid = np.array(list(itertools.product(range(nodes), repeat=len(scales))))
    return float(np.sum(np.prod(w[grid] / w.sum(), axis=1) * fn(x[grid] * np.asarray(scales))))


def embed(X, w, xq):
    """The prompts' embeddings E (n, d + 1, N + 1): columns (x_i, <w, x_i>), then (x_q, 0)."""
    n, N, d = X.shape
    E = np.zeros((n, d + 1, N + 1))
    E[:, :d, :N], E[:, d, :N], E[:, :d, N] = X.transpose(0, 2, 1), np.einsum("nid,nd->ni", X, w), xq
    return E


def forward(W_PV, W_KQ, X, w, xq):
    """The literal layer's prediction: f(E) = E + W^PV E E^T W^KQ E / N at its last entry."""
    E, N, d = embed(X, w, xq), X.shape[1], X.shape[2]
    return (E + W_PV @ E @ (E.transpose(0, 2, 1) @ W_KQ @ E) / N)[:, d, N]


@pytest.mark.parametrize("d,N", [(1, 2), (2, 2), (1, 3)])
def test_population_loss_is_the_expectation_of_the_literal_layer(d, N):
    """Every entry of W^PV and W^KQ random: the closed form equals the exact expectation over the
    N examples, w and the query (relative 1e-12: both are sums of O(10^4) terms in float64)."""
    import jax.numpy as jnp

    from full.icl.population import population_loss

    rng = np.random.default_rng(d * 10 + N)
    lam = np.array([1.7, 0.6])[:d]
    W_PV, W_KQ = rng.normal(size=(2, d + 1, d + 1)) * 0.7

    def loss(z):
        X = z[:, : N * d].reshape(-1, N, d)
        w, xq = z[:, N * d : (N + 1) * d], z[:, (N + 1) * d :]
        return 0.5 * (forward(W_PV, W_KQ, X, w, xq) - np.sum(w * xq, axis=1)) ** 2

    scales = np.concatenate([np.tile(np.sqrt(lam), N), np.ones(d), np.sqrt(lam)])
    exact = gauss_hermite(loss, scales)
    params = {"W_PV": jnp.asarray(W_PV), "W_KQ": jnp.asarray(W_KQ)}
    assert float(population_loss(params, jnp.asarray(lam), N)) == pytest.approx(exact, rel=1e-12)


def test_the_flax_layer_is_the_literal_formula():
    import jax.numpy as jnp

    from full.icl import model

    rng = np.random.default_rng(3)
    W_PV, W_KQ = rng.normal(size=(2, 4, 4))
    X, w, xq = rng.normal(size=(5, 7, 3)), rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    params = {"W_PV": jnp.asarray(W_PV), "W_KQ": jnp.asarray(W_KQ)}
    got = model.predict(params, jnp.asarray(embed(X, w, xq)))
    np.testing.assert_allclose(np.asarray(got), forward(W_PV, W_KQ, X, w, xq), rtol=1e-12)


def test_the_moment_identity_and_the_error_formula_are_exact():
    """(M1) and eq. (E) for a non-symmetric P, different prompt and query covariances and a fixed
    task, against the exact expectation over M = 2 examples and the query."""
    rng = np.random.default_rng(5)
    Cp, Cq = np.diag([1.5, 0.5]), np.diag([0.8, 2.0])
    P, w = rng.normal(size=(2, 2)), np.array([0.7, -1.3])
    A = P @ Cq @ P.T

    def sas(z):  # tr(S A S B), B = diag(1, 3): weighs the two diagonal entries differently
        X = z[:, :4].reshape(-1, 2, 2)
        S = np.einsum("nid,nie->nde", X, X) / 2
        return np.einsum("nij,njk,ki->n", S @ A, S, np.diag([1.0, 3.0]))

    scales = np.sqrt(np.concatenate([np.diag(Cp), np.diag(Cp)]))
    expected = np.trace(moments.prompt_moment(A, Cp, 2) @ np.diag([1.0, 3.0]))
    assert gauss_hermite(sas, scales) == pytest.approx(expected, rel=1e-12)

    def err(z):
        X, xq = z[:, :4].reshape(-1, 2, 2), z[:, 4:]
        S = np.einsum("nid,nie->nde", X, X) / 2
        return (np.einsum("d,nde,ef,nf->n", w, S, P, xq) - xq @ w) ** 2

    scales = np.sqrt(np.concatenate([np.diag(Cp), np.diag(Cp), np.diag(Cq)]))
    got = moments.prediction_error(P, Cp, Cq, np.outer(w, w), 2)
    assert got == pytest.approx(gauss_hermite(err, scales), rel=1e-12)


def test_gamma_and_the_minimum_by_hand():
    lam = ICLConfig(**SMALL).spectrum
    assert lam == pytest.approx((1.0, 4.0))
    np.testing.assert_allclose(np.diag(moments.limit(lam, 5)), 1 / GAMMA, rtol=1e-15)
    # L* = (1/2) [tr Lambda - tr(Gamma^-1 Lambda^2)] = (1/2) [5 - 1/2.2 - 16/5.8]
    assert moments.min_loss(lam, 5) == pytest.approx(0.5 * (5 - 1 / 2.2 - 16 / 5.8), rel=1e-14)


def reduced_loss(u, a, lam, N):
    """The reduced loss typed here: (1/2) [u^2 sum_k a_k^2 lambda_k^2 gamma_k - 2 u sum_k a_k
    lambda_k^2 + tr Lambda]."""
    g = (1 + 1 / N) * lam + lam.sum() / N
    return 0.5 * (u**2 * np.sum(a**2 * lam**2 * g) - 2 * u * np.sum(a * lam**2) + lam.sum())


def test_sympy_gradients_are_the_reduced_losss_by_finite_differences():
    import jax.numpy as jnp

    from reduced.icl import simulation

    cfg = ICLConfig(**SMALL)
    lam, u, a = np.array([1.0, 4.0]), 0.7, np.array([0.3, -0.4])
    loss, d_u, d_a = (
        np.asarray(x) for x in simulation.terms(cfg, (jnp.asarray(u), jnp.asarray(a)))
    )
    assert float(loss) == pytest.approx(reduced_loss(u, a, lam, 5), rel=1e-14)
    h = 1e-6  # central differences: error ~ h^2 x third derivatives (O(10)) ~ 1e-11
    fd_u = (reduced_loss(u + h, a, lam, 5) - reduced_loss(u - h, a, lam, 5)) / (2 * h)
    fd_a = [
        (reduced_loss(u, a + h * e, lam, 5) - reduced_loss(u, a - h * e, lam, 5)) / (2 * h)
        for e in np.eye(2)
    ]
    assert float(d_u) == pytest.approx(fd_u, abs=1e-8)
    np.testing.assert_allclose(d_a, fd_a, atol=1e-8)


def test_both_levels_follow_gd_typed_by_hand():
    """GD on (u, a) with the reduced loss's gradient typed here, 100 steps at Lambda = diag(1, 4)
    (through the second mode's escape, where rounding is stretched ~10^3: atol 1e-11), against
    both levels on every record; the blocks the reduction sets to zero stay exactly zero."""
    from full.icl import training
    from reduced.icl import simulation

    cfg = ICLConfig(**SMALL, steps=100)
    red, full = simulation.simulate(cfg), training.simulate(cfg, mode="exact")
    lam, u, a, rows = np.array([1.0, 4.0]), 0.1, np.full(2, 0.1 / np.sqrt(2)), []
    for t in range(101):
        if t % 10 == 0:
            rows.append((u, u * a, reduced_loss(u, a, lam, 5)))
        residual = u * a * GAMMA - 1
        u, a = u - 0.05 * np.sum(a * lam**2 * residual), a - 0.05 * u * lam**2 * residual
    for level in (red, full):
        np.testing.assert_allclose(level["u"], [r[0] for r in rows], rtol=0, atol=1e-11)
        np.testing.assert_allclose(level["product"], [r[1] for r in rows], rtol=0, atol=1e-11)
        np.testing.assert_allclose(level["loss"], [r[2] for r in rows], rtol=0, atol=1e-11)
    assert np.max(full["offblock"]) == 0.0


@pytest.mark.smoke
def test_compare_exact_and_flow_agree(tmp_path, capsys):
    """Exact GD at Lambda = diag(1, 4), eta = 0.05, where the second mode's escape (steps 60-70)
    stretches rounding errors past the plain rounding model: the reduced run's amplification (the
    allowance of dynsim.icl.checks) covers them, so every observable agrees. GD is unstable there
    (eta x the Hessian's top eigenvalue is 6.4 at step 100; a run started 1e-8 off the manifold
    diverges), so the stability residual makes the verdict DISAGREE (exit 1); eta = 0.01 (1.66)
    agrees. The flow against GD on the same problem at eta = 0.005 (a stated 5% tolerance)."""
    small = ["--d", 2, "--N", 5, "--kappa", 4, "--steps", 100, "--no-plot"]
    code, out, err = run(capsys, "compare", "icl", *small, "--out", tmp_path / "gd")
    assert code == 1, err
    report = json.loads((tmp_path / "gd" / "report.json").read_text())
    assert all(e["passed"] for e in report["errors"].values()) and report["kind"] == "rounding"
    assert set(report["errors"]) == {"u", "product", "loss", "gap"}
    assert report["residuals"]["offblock"]["passed"] is True
    assert report["residuals"]["end_sharpness"]["passed"] is False
    assert report["gamma_inverse"] == pytest.approx(list(1 / GAMMA), rel=1e-14)
    assert "verdict: DISAGREE" in out and "Theorem 4.1: u W11^KQ -> Gamma^-1" in out
    # the plain model at the last step, 10 (t + 1) u max(1, scale), is exceeded; the allowance holds
    plain = 10 * 101 * 2.0**-53 * 1.0
    assert max(e["max_abs"] for e in report["errors"].values()) > plain
    stable = ["--eta", 0.01, "--steps", 800, "--out", tmp_path / "stable"]
    code, out, err = run(capsys, "compare", "icl", *small[:-3], "--no-plot", *stable)
    assert code == 0 and "verdict: AGREE" in out, err
    flow = ["--eta", 0.005, "--method", "flow", "--out", tmp_path / "flow"]
    code, out, err = run(capsys, "compare", "icl", *small, *flow)
    assert code == 0, err
    flow = json.loads((tmp_path / "flow" / "report.json").read_text())
    assert flow["kind"] == "approximation" and flow["passed"]
    assert flow["reduced_meta"]["approximation"] == "gradient_flow"


def test_compare_sampled_judges_the_product_and_the_loss(tmp_path, capsys):
    """Against sampled prompts u and the distance are reported, not judged (docs/icl.md §9)."""
    code, out, err = run(capsys, "compare", "icl", "--mode", "sampled", "--steps", 20, "--batch",
                         256, "--replicates", 2, "--no-plot", "--out", tmp_path)  # fmt: skip
    assert code in (0, 1), err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["kind"] == "statistical" and set(report["errors"]) == {"product", "loss"}
    assert {"u_difference", "gap_difference", "offblock"} <= set(report["residuals"])
    assert report["full_meta"]["replicates"] == 2


def test_derive_prints_the_sympy_loss_and_gamma_inverse(capsys):
    code, out, err = run(capsys, "derive", "icl", "--d", 2, "--N", 5, "--kappa", 4)
    assert code == 0, err
    assert "u a_k at dL/da_k = 0: N/(N*lambda_k + T + lambda_k)" in out
    assert f"Gamma^-1 = diag({1 / 2.2:.6g}, {1 / 5.8:.6g})" in out


def test_sweep_over_d_and_N(tmp_path, capsys):
    code, out, err = run(capsys, "sweep", "icl", "--d", "2,3", "--N", 4, "--steps", 150,
                         "--level", "full", "--out", tmp_path)  # fmt: skip
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "table.csv")))
    assert sorted(int(r["d"]) for r in rows) == [2, 3]
    for r in rows:
        d = int(r["d"])  # isotropic: 2 L* = d (d + 1) / (N + d + 1)
        assert float(r["theorem_error"]) == pytest.approx(d * (d + 1) / (4 + d + 1), rel=1e-12)
        assert float(r["learned_over_theorem"]) == pytest.approx(1, abs=1e-6)


def test_the_entry_point_names_this_record():
    entry = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    target = entry["dynsim.settings"]["icl"]
    assert EntryPoint("icl", target, registry.GROUP).load() is SETTING


def test_the_declaration_imports_no_heavy_library():
    code = (
        "import sys, dynsim.icl.setting, full.icl.spec\n"
        "heavy = ('jax', 'flax', 'optax', 'sympy', 'diffrax', 'scipy', 'matplotlib')\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and proc.stdout.strip() == "[]", proc.stderr + proc.stdout


@pytest.mark.parametrize(
    "argv,needle",
    [
        (["compare", "icl", "--d", "0"], "ICLConfig.d = 0 is invalid"),
        (["compare", "icl", "--replicates", "4"], "--replicates is for --mode sampled"),
        (["check-theorems", "icl", "--shift", "-1"], "--shift"),
        (["check-theorems", "icl", "--only", "Lemma 9"], "is not a claim here"),
        # the sampled batch of every replicate is held at once: 8 x 1e9 x 11 x 4 float64 x 6 copies
        (["compare", "icl", "--mode", "sampled", "--batch", str(10**9)], "--batch = 1000000000"),
        (["figure", "icl-error", "--tests", str(10**15)], "must be an integer in [32, 16777216]"),
    ],
)
def test_bad_input_is_refused_in_one_line(argv, needle, tmp_path, capsys):
    code = cli.main(argv + ["--out", str(tmp_path)])
    assert_refused(code, capsys.readouterr().err, needle)


def test_every_icl_command_round_trips_its_config(tmp_path, capsys):
    found = [prefix for prefix, _ in cli_commands() if prefix[1] in ("icl", "icl-error")]
    assert len(found) == 5  # compare, sweep, check-theorems, derive, figure icl-error
    for prefix in found:
        assert cli.main([*prefix, "--print-config"]) == 0
        first = capsys.readouterr().out
        (tmp_path / "c.toml").write_text(first)
        assert cli.main([*prefix, "--config", str(tmp_path / "c.toml"), "--print-config"]) == 0
        assert capsys.readouterr().out.splitlines()[1:] == first.splitlines()[1:]


def test_figure_icl_error(tmp_path, capsys):
    """Two lengths: the closed form 2 L* by hand (isotropic d = 3: d (d + 1) / (N + d + 1)), least
    squares exact once N >= d (noiseless labels), the trained layer's Monte Carlo near the form."""
    code, out, err = run(capsys, "figure", "icl-error", "--lengths", "2,4", "--steps", 150,
                         "--tests", 2048, "--out", tmp_path)  # fmt: skip
    assert code == 0, err
    rows = json.loads((tmp_path / "icl-error.json").read_text())["rows"]
    assert [r["N"] for r in rows] == [2, 4] and (tmp_path / "icl-error.png").stat().st_size > 0
    for r in rows:
        assert r["theorem"] == pytest.approx(12 / (r["N"] + 4), rel=1e-12)
        assert abs(r["learned"] - r["theorem"]) < 6 * r["learned_se"]
    assert rows[0]["ols"] > 0.1 and rows[1]["ols"] < 1e-20


def test_compare_refuses_agreement_where_gd_leaves_the_manifold(tmp_path, capsys):
    """At eta = 0.1 (d = 3, N = 10, isotropic) GD's fixed point u W11^KQ = Gamma^-1 is unstable: at
    the limit the population Hessian's top eigenvalue is 22.79, so eta lambda = 2.28 > 2 (0.05 gives
    1.14), and a run from any perturbed start leaves the reduced manifold. The exact full level
    starts on it, where the other blocks' gradients are exactly zero, so both levels agree to
    rounding: the stability residual must turn that into DISAGREE."""
    code, out, err = run(capsys, "compare", "icl", "--eta", 0.1, "--no-plot", "--out", tmp_path)
    assert code == 1, err
    report = json.loads((tmp_path / "report.json").read_text())
    assert all(e["passed"] for e in report["errors"].values())  # the levels agree to rounding
    sharp = report["residuals"]["end_sharpness"]
    assert sharp["passed"] is False and sharp["value"] > 2.0 and "verdict: DISAGREE" in out
    code, out, err = run(capsys, "compare", "icl", "--no-plot", "--out", tmp_path / "half")
    assert code == 0, err
    half = json.loads((tmp_path / "half" / "report.json").read_text())["residuals"]
    assert half["end_sharpness"]["passed"] is True and half["end_sharpness"]["value"] < 2.0


def test_the_config_imports_from_dynsim_and_titles_the_figure():
    """`from dynsim import ICLConfig` as for the built-in settings; the generic compare figure's
    title names the paper and the problem's fields, not the config's repr."""
    from dynsim import ICLConfig as top
    from dynsim.figtext import config_title

    assert top is ICLConfig
    title = config_title("icl", SETTING.description, ICLConfig())
    assert title.startswith("ICL (Zhang, Frei, Bartlett (2024)): reduced vs full, $d$=3, $N$=10")
    assert "ICLConfig(" not in title and "steps" not in title and "seed" not in title
