"""z.coords[...]: selections in the domain's coordinates, against NumPy on the shifted indices."""
import numpy as np
import pytest

import zarrpp


def _grown(tmp_path):
    z = zarrpp.create_array(str(tmp_path / "c.zarr"), shape=(10, 6), chunks=(4, 4), dtype="i4", fill_value=-1)
    base = np.arange(60, dtype="i4").reshape(10, 6)
    z[...] = base
    z.prepend(np.full((3, 6), 100, "i4"))
    return z, np.concatenate([np.full((3, 6), 100, "i4"), base])  # coordinates -3 .. 9


def test_coordinate_selections_match_numpy_on_shifted_indices(tmp_path):
    z, ref = _grown(tmp_path)
    lo = z.lower_bound[0]
    assert lo == -3 and z.origin == (0, 0)
    rng = np.random.default_rng(0)
    for _ in range(300):
        a, b = sorted(rng.integers(lo, 11, size=2))
        step = int(rng.choice([1, 2, 3]))
        col = int(rng.integers(0, 6))
        idx = rng.integers(lo, 10, size=4)
        mask = rng.random(6) < 0.5
        assert np.array_equal(z.coords[a:b:step, col], ref[a - lo:b - lo:step, col])
        assert np.array_equal(z.coords[idx, 1:4], ref[idx - lo, 1:4])
        assert np.array_equal(z.coords[a:b, mask], ref[a - lo:b - lo][:, mask])
        if b > a:
            assert np.array_equal(z.coords[b - 1:a - 1 if a - 1 >= lo - 1 else None:-1, col],
                                  ref[b - 1 - lo::-1, col][:b - a])
    assert z.coords[-3, 0] == 100 and isinstance(z.coords[-3, 0], np.integer)
    assert np.array_equal(z.coords[...], ref) and np.array_equal(z.coords.oindex[[-3, 9], 0], ref[[0, 12], 0])
    pts = z.coords.vindex[[-3, 0, 9], [0, 5, 2]]
    assert pts.tolist() == [ref[0, 0], ref[3, 5], ref[12, 2]]


def test_coordinate_writes_and_growth_by_another_handle(tmp_path):
    z, ref = _grown(tmp_path)
    z.coords[-2:1, 2] = [7, 8, 9]
    ref[1:4, 2] = [7, 8, 9]
    z.coords.vindex[[9, -3], [5, 0]] = 55
    ref[12, 5] = ref[0, 0] = 55
    other = zarrpp.open_array(str(tmp_path / "c.zarr"))
    other.prepend(np.zeros((2, 6), "i4"))
    assert z.domain[0] == (-3, 10)  # this handle has not looked yet
    assert np.array_equal(z.coords[-3:10], ref)  # the same elements
    assert np.array_equal(z.coords[-5:-3], np.zeros((2, 6)))  # re-reads the metadata to get there
    assert z.domain[0] == (-5, 10) and np.array_equal(z[2:], ref)  # zero-based shifted by 2
    z.coords[-5] = 4
    assert other.coords[-5].tolist() == [4] * 6


def test_coordinates_outside_the_domain_are_refused(tmp_path):
    z, _ = _grown(tmp_path)
    for sel in [-4, 10, slice(-4, 0), slice(0, 11), [0, 10], (slice(None), 6), (slice(None), -1)]:
        with pytest.raises(IndexError, match="outside the domain"):
            z.coords[sel]
        with pytest.raises(IndexError, match="outside the domain"):
            z.coords[sel] = 1
    with pytest.raises(IndexError, match="outside the domain"):
        z.coords.vindex[[0, 10], [0, 0]]
    with pytest.raises(IndexError, match="1-d"):
        z.coords[np.zeros((2, 2), int)]
    ro = zarrpp.open_array(str(tmp_path / "c.zarr"), mode="r")
    with pytest.raises(ValueError, match="read-only"):
        ro.coords[0] = 1
    with pytest.raises(ValueError):
        z.coords[0:2] = np.ones((3, 6))
