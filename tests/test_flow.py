"""The gradient flow (method="flow"): GD converges to it at rate eta, tolerances do not recompile,
bad input is named, and `compare --method flow` runs end to end, its bar counting the save times
reached."""

import json
import math
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import reduced.jsl
import reduced.mim
from dynsim import JSLConfig, MIMConfig, cli, progress
from reduced import flow as generic_flow
from reduced.jsl import flow, tables
from reduced.mim import flow as mim_flow

T, DT = 40.0, 2.0  # common end time and comparison grid (t = 0, 2, ..., 40)
TIMES = np.arange(0.0, T + DT / 2, DT)
# flow rtol = atol: ~1e-10 against GD errors >= 1e-3 below, so the measured slope is GD's
TOL = 1e-10


def _slope_band(etas, errors, jac_norm):
    """Consecutive slopes log2(e(eta)/e(eta/2)) and their allowed deviation from 1.

    GD's error against the flow is e = eta E1 + eta^2 E2 + O(eta^3) (modified-equation expansion);
    E2 carries one more factor of the vector field's Jacobian J than E1, so r = eta |E2|/|E1| <~ eta
    ||J||, and the slope between eta and eta/2 is log2((1 + r)/(1 + r/2)) ~ r / (2 ln 2). Band:
    |slope - 1| <= eta ||J||_max / (2 ln 2), eta the coarser of the pair and ||J||_max the largest
    spectral norm of J along the flow (computed, not fitted)."""
    slopes = -np.diff(np.log2(errors))
    bands = np.asarray(etas[:-1]) * jac_norm / (2 * math.log(2))
    return slopes, bands


def _jac_norm(rhs, states):
    J = jax.jit(jax.jacfwd(rhs))
    return max(float(np.linalg.norm(np.asarray(J(s)), 2)) for s in states)


def test_jsl_gd_converges_to_the_flow_at_rate_eta():
    base = JSLConfig(D=9, C=3)
    fl = reduced.jsl.simulate(base, method="flow", t_max=T, times=TIMES, rtol=TOL, atol=TOL)
    assert fl.meta["mode"] == "flow" and fl.meta["approximation"] == "gradient_flow"
    # two slopes: each within its band, the finer one nearer 1
    etas = [0.05 / 2**k for k in range(3)]
    errors = []
    for eta in etas:
        gd = reduced.jsl.simulate(
            base.replace(eta=eta, steps=round(T / eta), record_every=round(DT / eta))
        )
        assert np.allclose(gd.steps * eta, fl["t"])
        errors.append(max(np.max(np.abs(gd[n] - fl[n])) for n in ("alpha", "gamma", "rho")))
    static = generic_flow.static(base)
    w = tables.table(static, None).weights
    states = jnp.stack([fl["alpha"], fl["gamma"], fl["rho"]], axis=1)
    norm = _jac_norm(lambda th: flow.rhs(static, w, th), states)
    slopes, bands = _slope_band(etas, errors, norm)
    # measured: errors 6.0e-3, 2.7e-3, 1.3e-3; slopes 1.17, 1.002; ||J|| ~ 19, bands 0.70, 0.35
    assert np.all(np.abs(slopes - 1) <= bands), (errors, slopes, bands)
    assert abs(slopes[-1] - 1) <= abs(slopes[0] - 1)  # approaching 1 as eta -> 0


def test_mim_gd_converges_to_the_flow_at_rate_eta():
    base = MIMConfig(P=16, K=1)
    fl = reduced.mim.simulate(base, method="flow", t_max=T, times=TIMES, rtol=TOL, atol=TOL)
    assert fl.meta["approximation"] == "gradient_flow"
    # two slopes: each within its band, the finer one nearer 1
    etas = [1.0 / 2**k for k in range(3)]
    names = ("fp_corr", "pp_class", "pp_self")
    errors = []
    for eta in etas:
        gd = reduced.mim.simulate(
            base.replace(eta=eta, steps=round(T / eta), record_every=round(DT / eta))
        )
        errors.append(max(np.nanmax(np.abs(gd[n] - fl[n])) for n in names))
    # Jacobian of the flattened class state along the flow
    cls = reduced.mim.classes.classes(base)
    tab = reduced.mim.classes.table(base, cls, mean_field=False)
    arrays = tuple(jnp.asarray(x) for x in (tab.u, tab.z, tab.w, tab.populations))
    static = base.replace(eta=1.0, steps=0, record_every=1)
    shapes = [x.shape[1:] for x in (fl["pp_class"], fl["pp_class"], fl["pp_self"])]
    sizes = [int(np.prod(s)) for s in shapes]

    def rhs(v):
        A, B, Bs = (
            v[a : a + n].reshape(s) for a, n, s in zip(np.cumsum([0] + sizes[:-1]), sizes, shapes)
        )
        return jnp.concatenate([x.ravel() for x in mim_flow.rhs(static, (), arrays, (A, B, Bs))])

    # ||J|| at the start (Q = 0) and at T (the class state along the run is not recorded in class
    # form)
    ends = [jnp.zeros(sum(sizes)), jnp.concatenate([jnp.ravel(x) for x in fl.final.values()])]
    norm = _jac_norm(rhs, ends)
    slopes, bands = _slope_band(etas, errors, norm)
    # measured: errors 2.1e-2, 1.0e-2, 5.1e-3; slopes 1.007, 1.004
    assert np.all(np.abs(slopes - 1) <= bands), (errors, slopes, bands)
    assert abs(slopes[-1] - 1) <= abs(slopes[0] - 1)


def test_tolerances_and_t_max_do_not_recompile():
    cfg = JSLConfig(D=9, C=3, steps=200, record_every=20)
    reduced.jsl.simulate(cfg, method="flow")
    before = flow.solve_jit._cache_size()
    a = reduced.jsl.simulate(cfg, method="flow", rtol=1e-8, atol=1e-11, t_max=7.5)
    b = reduced.jsl.simulate(cfg.replace(eta=0.02, steps=100), method="flow", rtol=1e-4, atol=1e-6)
    assert flow.solve_jit._cache_size() == before
    assert a.meta["rtol"] == 1e-8 and a.meta["t_max"] == 7.5 and a["t"][-1] == 7.5
    assert b.meta["atol"] == 1e-6 and b.meta["solver_steps"] < a.meta["solver_steps"]
    assert len(set(a.steps.tolist())) == a.steps.size  # steps are unique after rounding t / eta


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(method="euler"), "method"),
        (dict(method="flow", t_max=0.0), "t_max"),
        (dict(method="flow", t_max=-1.0), "t_max"),
        (dict(method="flow", t_max=1e308), "t_max = 1e[+]308 is invalid: must be at most eta"),
        (dict(method="flow", rtol=0.0), "rtol"),
        (dict(method="flow", atol=-1e-9), "atol"),
        (dict(method="flow", solver="rk4"), "solver"),
        (dict(method="flow", saves=0), "saves"),
        (dict(method="flow", max_steps=0), "max_steps"),
        (dict(method="flow", times=[0.0, 2.0, 1.0]), "times"),
        (dict(t_max=3.0), "t_max"),  # a flow option with method gd
    ],
)
def test_invalid_input_names_the_parameter(kw, name):
    with pytest.raises(ValueError, match=name):
        reduced.jsl.simulate(JSLConfig(D=9, C=3), **kw)
    with pytest.raises(ValueError, match=name):
        reduced.mim.simulate(MIMConfig(P=16), **kw)


def test_the_flow_options_are_checked_on_construction():
    """`Flow` refuses what it can judge alone when built; the end time and the save times against it
    when resolved for a run (t_max default eta * steps); an unknown option is a TypeError."""
    with pytest.raises(ValueError, match=r"^rtol = 0 is invalid"):
        generic_flow.Flow(rtol=0)
    with pytest.raises(ValueError, match=r"^t_min is invalid together with times"):
        generic_flow.Flow(t_min=0.1, times=[0.0, 1.0])
    late = generic_flow.Flow(times=[0.0, 5.0])  # past t_max = eta * steps = 1
    with pytest.raises(ValueError, match=r"^times = \[0.0, 5.0\] is invalid"):
        late.resolved(0.1, 1.0)
    with pytest.raises(ValueError, match=r"^t_max = 0 is invalid"):
        generic_flow.Flow().resolved(0.1, 0)  # steps = 0
    opts = generic_flow.Flow(saves=3).resolved(0.5, 4.0, "lsoda")
    assert opts["solver"] == "lsoda" and opts["t_max"] == 4.0
    # t_min = eta = 0.5, then log-spaced to 4: exp of a linspace of logs, a few ulps off (1e-12)
    assert opts["times"].tolist() == pytest.approx([0.0, 0.5, 0.5 * 8**0.5, 4.0], rel=1e-12)
    with pytest.raises(TypeError, match="rtoll"):
        reduced.jsl.simulate(JSLConfig(D=9, C=3), method="flow", rtoll=1e-3)


def test_cli_method_flow_end_to_end(tmp_path, capsys, monkeypatch):
    # the reduced level's bar counts the save times the flow reaches (LSODA here, diffrax for MIM)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    monkeypatch.setattr(progress, "INTERVAL", 0.0)  # stderr is no terminal: every report a line
    out = tmp_path / "jsl"
    code = cli.main(
        [
            "compare",
            "jsl",
            "--D",
            "9",
            "--C",
            "3",
            "--steps",
            "60",
            "--record-every",
            "20",
            "--method",
            "flow",
            "--out",
            str(out),
            "--no-plot",
        ]
    )
    text, err = capsys.readouterr()
    assert code == 0 and "approximation tolerance" in text and "reduced[gradient_flow]" in text
    assert "reduced: 4/4 save times" in err  # t = 0, 20, 40, 60 steps
    report = json.loads((out / "report.json").read_text())
    assert report["kind"] == "approximation" and report["reduced_meta"]["method"] == "flow"
    assert (
        report["reduced_meta"]["solver"] == "scipy.integrate.LSODA"
        and report["full_meta"]["level"] == "full"
    )
    from dynsim.trajectory import load_many

    assert load_many(out / "trajectories.npz")["reduced"].steps.tolist() == [0, 20, 40, 60]
    out = tmp_path / "mim"
    code = cli.main(
        [
            "compare",
            "mim",
            "--steps",
            "40",
            "--record-every",
            "4",
            "--method",
            "flow",
            "--t-max",
            "60",
            "--out",
            str(out),
            "--no-plot",
        ]
    )
    assert code == 0 and (out / "report.json").exists()
    assert re.search(r"^reduced: (\d+)/\1 save times", capsys.readouterr().err, re.MULTILINE)
    assert cli.main(["compare", "mim", "--method", "flow", "--t-max", "-2", "--out", str(out)]) == 2
    assert "--t-max = -2.0" in capsys.readouterr().err


def test_lsoda_default_agrees_with_kvaerno4_and_keeps_its_budget():
    """The reduced JSL flow's default host solver (scipy LSODA on the jit-compiled field and
    Jacobian) and diffrax Kvaerno4 solve the same ODE: at rtol 1e-8, atol 1e-11 their states agree
    to 1e-5 relative at every save (each controls its local error to ~rtol per step; a few hundred
    steps accumulate to well below 1e-5). A step budget that is too small stops LSODA with a named
    RuntimeWarning and keeps only the saves reached."""
    cfg = JSLConfig(D=16, C=4, q=0.3)
    a = reduced.jsl.simulate(cfg, method="flow", t_max=1e4, rtol=1e-8, atol=1e-11)
    b = reduced.jsl.simulate(
        cfg, method="flow", t_max=1e4, rtol=1e-8, atol=1e-11, solver="kvaerno4"
    )
    assert (
        a.meta["solver"] == "scipy.integrate.LSODA"
        and a.meta["evaluations"] > 0
        and a.meta["jacobians"] > 0
    )
    np.testing.assert_array_equal(a.steps, b.steps)
    for name in ("alpha", "gamma", "rho"):
        scale = np.max(np.abs(b.observables[name]))
        assert np.max(np.abs(a.observables[name] - b.observables[name])) <= 1e-5 * scale, name
    with pytest.warns(RuntimeWarning, match="max_steps = 5 reached"):
        c = reduced.jsl.simulate(cfg, method="flow", t_max=1e4, max_steps=5)
    assert c.meta["solver_result"] != "successful" and len(c.steps) < len(a.steps)
