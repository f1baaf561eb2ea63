"""The digits data layer (dynsim.images.digits): patches, permutations, shuffle grids."""

import numpy as np
import pytest

from dynsim.images import digits


def test_patches_cut_rows_first_and_round_trip():
    image = np.arange(64.0).reshape(1, 8, 8)
    x = digits.patches(image, 2)
    # patch 1 is the grid cell (0, 1): pixel rows 0-1, columns 2-3, read row by row
    assert x[0, 1].tolist() == [2.0, 3.0, 10.0, 11.0]
    # patch 4 is the grid cell (1, 0): pixel rows 2-3, columns 0-1
    assert x[0, 4].tolist() == [16.0, 17.0, 24.0, 25.0]
    for s in digits.PATCH_SIZES:
        assert np.array_equal(digits.unpatch(digits.patches(image, s), s), image)


def test_load_scales_and_centres_every_image():
    data = digits.load(2)
    assert data.x.shape == (1797, 16, 4) and data.grid == (4, 4)
    # pixel values 0..16 scaled to [0, 1], then each image's mean removed: exact to rounding
    assert np.abs(data.x.mean(axis=(1, 2))).max() < 1e-15
    # centring shifts an image, so each image's range stays within the scaled [0, 1]
    assert np.ptp(data.x, axis=(1, 2)).max() <= 1.0 + 1e-15
    assert sorted(set(data.y.tolist())) == list(range(10))


@pytest.mark.parametrize("patch", [0, 3, 8, 2.0, True, "2"])
def test_a_patch_size_that_does_not_tile_is_refused(patch):
    with pytest.raises(ValueError, match="patch must be one of"):
        digits.patches(np.zeros((1, 8, 8)), patch)


def test_shuffle_grid_moves_whole_blocks():
    perm = digits.shuffle_grid((4, 4), 2, seed=0)
    assert sorted(perm.tolist()) == list(range(16))
    grid = perm.reshape(4, 4)
    for r in (0, 2):
        for c in (0, 2):
            block = grid[r : r + 2, c : c + 2]
            # a 2 x 2 block of a 4 x 4 grid holds patches (i, i+1, i+4, i+5) of one source block
            i = block[0, 0]
            assert block.tolist() == [[i, i + 1], [i + 4, i + 5]] and i % 2 == 0 and i // 4 % 2 == 0
    # a block as large as the grid is the identity; a block of 1 is a plain permutation
    assert digits.shuffle_grid((4, 4), 4, seed=0).tolist() == list(range(16))
    with pytest.raises(ValueError, match="block must divide"):
        digits.shuffle_grid((4, 4), 3, seed=0)


def test_permute_then_inverse_restores_the_images():
    data = digits.load(2)
    perm = digits.permutation(data.P, seed=3)
    back = digits.permute(digits.permute(data, perm), digits.inverse(perm))
    assert np.array_equal(back.x, data.x)
    assert not np.array_equal(digits.permute(data, perm).x, data.x)


def test_split_is_disjoint_and_refuses_bad_sizes():
    data = digits.load(4)
    train, test = digits.split(data, 300, seed=0)
    assert train.x.shape[0] == 1497 and test.x.shape[0] == 300
    with pytest.raises(ValueError, match="n_test must be an integer in 1..1796"):
        digits.split(data, 1797, seed=0)


@pytest.mark.parametrize("name", ["jsl-images", "mim-images"])
def test_a_missing_images_extra_is_one_refusal_and_writes_nothing(name, tmp_path, capsys,
                                                                   monkeypatch):  # fmt: skip
    import builtins

    from dynsim import cli

    real_import = builtins.__import__

    def no_sklearn(module, *args, **kwargs):
        if module.split(".")[0] == "sklearn":
            raise ModuleNotFoundError("No module named 'sklearn'")
        return real_import(module, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    out = tmp_path / "out"
    code = cli.main(["experiment", name, "--steps", "1", "--seeds", "2", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert err == [
        "dynsim: error: the image experiments need scikit-learn (its digits): "
        "pip install 'dynsim[images]'"
    ]
    assert not out.exists()
