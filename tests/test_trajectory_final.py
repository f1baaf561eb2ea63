"""Trajectory.final: what a run leaves for a later step (the last reduced MIM state, the trained Q
and its embedding) is a declared field, saved and loaded bit for bit in both file forms; files
written without it load with it empty; no other attribute can be set on a trajectory."""

from __future__ import annotations

import numpy as np
import pytest

import full.mim
import reduced.mim
from dynsim import MIMConfig, Trajectory
from dynsim.mim import diversity, records
from dynsim.mim.figures import attention_table
from dynsim.mim.embedding import basis as make_basis
from dynsim.trajectory import save_many, write_npz
from reduced.mim import flow

# the smallest MIM configs of the existing tests (tests/test_mim.py, tests/test_mim_joint.py)
K1 = MIMConfig(P=9, kappa_c=0.6, kappa_s=0.3, mask_ratio=0.5, steps=60, record_every=10)
K2 = MIMConfig(
    P=9,
    K=2,
    kappa_c=0.7,
    kappa_s=0.3,
    partition="random",
    mask_ratio=0.5,
    steps=30,
    record_every=10,
    seed=3,
)
REDUCED = {
    "gd, K = 1": (K1, {}),
    "joint types, K = 2": (K2, {}),
    "joint cells, K = 2": (K2, {"approximation": "mean_field"}),
    "flow, K = 1": (K1, {"method": "flow", "saves": 8}),
}


@pytest.fixture(scope="module")
def cells():
    """A reduced K = 2 mean-field run: the diversity reads its final state
    (`diversity.final_state`)."""
    cfg, options = REDUCED["joint cells, K = 2"]
    return reduced.mim.simulate(cfg, **options)


@pytest.fixture(scope="module")
def trained():
    return full.mim.simulate(K2, mode="exact")


def reloaded(t: Trajectory, folder) -> list[Trajectory]:
    """`t` written and read back in both file forms: Trajectory.save and the CLI's
    trajectories.npz."""
    t.save(folder / "one.npz")
    save_many(folder / "trajectories.npz", {"reduced": t, "full": t}, compressed=True)
    return [
        Trajectory.load(folder / "one.npz"),
        Trajectory.load(folder / "trajectories.npz", "full"),
    ]


def assert_same_final(t: Trajectory, u: Trajectory) -> None:
    """Bit for bit: the same names in the same order, each array of the same dtype, shape and
    bits."""
    assert list(u.final) == list(t.final)
    for name, value in t.final.items():
        np.testing.assert_array_equal(u.final[name], value, strict=True)
    assert u == t  # and the trajectory's equality reads them


@pytest.mark.parametrize("run", sorted(REDUCED))
def test_reduced_final_state_is_saved_and_loaded_bit_for_bit(run, tmp_path):
    cfg, options = REDUCED[run]
    t = reduced.mim.simulate(cfg, **options)
    assert list(t.final) == ["A", "B", "B_self"]
    assert all(v.dtype == np.float64 and v.size > 0 for v in t.final.values())
    assert np.any(t.final["A"] != 0)  # the run moved: not a comparison of the initial zeros
    if "pp_class" in t.observables:  # per class: the last record is the final state itself
        np.testing.assert_array_equal(t.final["B"], t["pp_class"][-1], strict=True)
        np.testing.assert_array_equal(t.final["B_self"], t["pp_self"][-1], strict=True)
    for u in reloaded(t, tmp_path):
        assert_same_final(t, u)
    if options.get("method") == "flow":
        # the table was handed to the solve for the call only
        assert not hasattr(flow.tracing, "table")


def test_full_final_q_and_basis_are_saved_and_loaded_bit_for_bit(trained, tmp_path):
    t = trained
    d = K2.d
    assert list(t.final) == ["Q", "E", "V"] and t.final["Q"].shape == (1, d, d)
    assert np.any(t.final["Q"] != 0)
    Q, basis = full.mim.trained(t)
    np.testing.assert_array_equal(Q, t.final["Q"], strict=True)
    for mine, want in zip(basis, make_basis(K2)):  # the embedding the run was trained on
        np.testing.assert_array_equal(np.asarray(mine), np.asarray(want), strict=True)
    for u in reloaded(t, tmp_path):
        assert_same_final(t, u)
    with pytest.raises(ValueError, match="no trained Q"):
        full.mim.trained(Trajectory(t.steps, t.observables, t.meta))


def test_attention_figure_reads_a_loaded_full_run(trained, tmp_path):
    """`figure mim-attention`'s maps and table from the saved run equal those of the fresh one (the
    same arrays through the same code: bit for bit)."""
    k, grid = 2, (3, 3)
    attn, table = attention_table(K2, trained, grid, k)
    for u in reloaded(trained, tmp_path):
        attn_u, table_u = attention_table(K2, u, grid, k)
        np.testing.assert_array_equal(attn_u, attn, strict=True)
        assert table_u == table
    assert attn.shape == (K2.K, K2.P, K2.P) and np.all(np.isfinite(attn))


def test_diversity_reads_a_loaded_reduced_run(cells, tmp_path):
    """Section 6's diversity rebuilds the trained maps from the joint cells' final state: from the
    saved run it gives the same numbers (same arrays, same seed: bit for bit)."""
    assert "fp_cell" in cells.observables  # the branch that reads t.final
    want = diversity.diversities(K2, cells, images=4, k=2)
    assert np.all(np.isfinite(want["trained", diversity.RULES[0]]))
    for u in reloaded(cells, tmp_path):
        got = diversity.diversities(K2, u, images=4, k=2)
        assert got.keys() == want.keys()
        for key, value in want.items():
            np.testing.assert_array_equal(got[key], value, strict=True)
    with pytest.raises(KeyError):  # without its final state the diversity cannot be read
        diversity.diversities(K2, Trajectory(cells.steps, cells.observables, cells.meta), 4, 2)


def test_files_without_final_arrays_load_with_final_empty(cells, tmp_path):
    """The format before `final`: steps, meta and obs/<name> (one trajectory), <prefix>/...
    (several)."""
    old = {
        "steps": cells.steps,
        "meta": np.array('{"level": "reduced"}'),
        **{f"obs/{k}": v for k, v in cells.observables.items()},
    }
    with open(tmp_path / "one.npz", "wb") as fh:
        write_npz(fh, old)
    with open(tmp_path / "many.npz", "wb") as fh:
        write_npz(fh, {f"reduced/{k}": v for k, v in old.items()})
    for u in (
        Trajectory.load(tmp_path / "one.npz"),
        Trajectory.load(tmp_path / "many.npz", "reduced"),
    ):
        assert u.final == {} and u.keys() == cells.keys()
        for name, value in cells.items():
            np.testing.assert_array_equal(u[name], value, strict=True)


def test_derived_trajectories_keep_final(cells):
    per_class = reduced.mim.simulate(K1)
    stripped = Trajectory(
        per_class.steps,
        {k: v for k, v in per_class.items() if k != "fp_corr"},
        per_class.meta,
        per_class.final,
    )
    expanded = records.with_per_patch(stripped, K1)  # fp_corr rebuilt from fp_class
    assert "fp_corr" in expanded and expanded is not stripped
    assert_same_final(
        per_class,
        Trajectory(per_class.steps, per_class.observables, per_class.meta, expanded.final),
    )
    thinned = cells.thinned(1)
    assert thinned.steps.size < cells.steps.size  # a new trajectory, some records dropped
    assert_same_final(cells, Trajectory(cells.steps, cells.observables, cells.meta, thinned.final))


def test_no_attribute_outside_the_declared_fields(cells):
    with pytest.raises(AttributeError):
        cells.final_state = tuple(cells.final.values())
    with pytest.raises(AttributeError):
        cells.basis = None
