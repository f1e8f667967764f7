"""Property tests: ``z[sel]`` reads what NumPy's ``a[sel]`` reads, for generated selections
(integers, slices with any step, Ellipsis, integer and boolean arrays, in any mix), and writes
where NumPy writes. The deviations, on purpose (docs/architecture.md, "Selections"):

- np.newaxis (None) and a scalar boolean are refused (IndexError);
- an index that does not fit the array is refused even where the selection is empty (NumPy lets
  some pass, deprecated for integers);
- assigning through NumPy's advanced indexing (arrays mixed with slices, or several arrays not one
  per dimension) is refused: ``z.oindex[...] = v`` or ``z.vindex[...] = v`` say which is meant.
"""
import warnings

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import zarrpp  # noqa: E402

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def arrays_and_selections(draw):
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=1, max_size=3)))
    chunks = tuple(draw(st.integers(1, 4)) for _ in shape)
    n = draw(st.integers(0, len(shape) + 1))
    ellipsis_at = draw(st.one_of(st.none(), st.integers(0, n)))
    items = []
    for k in range(n):
        size = shape[min(k, len(shape) - 1)]
        kind = draw(st.sampled_from(["int", "slice", "slice", "ints", "bools", "ints2d", "ints21", "bools2d"]))
        if kind == "int":
            items.append(draw(st.integers(-size - 1, size)))
        elif kind == "slice":
            bound = st.one_of(st.none(), st.integers(-8, 8))
            step = st.one_of(st.none(), st.integers(-3, 3).filter(lambda s: s != 0))
            items.append(slice(draw(bound), draw(bound), draw(step)))
        elif kind == "ints":
            items.append(np.array(draw(st.lists(st.integers(-size, max(size - 1, 0)), max_size=4)), dtype=np.int64))
        elif kind in ("ints2d", "ints21"):
            items.append(np.array(draw(st.lists(st.integers(-size, max(size - 1, 0)), min_size=2, max_size=2)),
                                  dtype=np.int64).reshape((1, 2) if kind == "ints2d" else (2, 1)))
        elif kind == "bools2d":  # a mask over this dimension and the next (NumPy: its nonzero() arrays)
            nxt = shape[min(k + 1, len(shape) - 1)]
            items.append(np.array(draw(st.lists(st.booleans(), min_size=size * nxt, max_size=size * nxt)),
                                  dtype=bool).reshape(size, nxt))
        else:
            length = draw(st.sampled_from([size, size, size + 1]))
            items.append(np.array(draw(st.lists(st.booleans(), min_size=length, max_size=length)), dtype=bool))
    if ellipsis_at is not None:
        items.insert(ellipsis_at, Ellipsis)
    return shape, chunks, tuple(items)


def outcome(f):
    """("ok", result) or ("error", name). NumPy's deprecated acceptance of out-of-bounds indices
    that select nothing counts as the IndexError it is becoming (zarrpp raises it)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            return "ok", np.asarray(f())
    except (IndexError, ValueError, DeprecationWarning) as e:
        return "error", type(e).__name__


@SETTINGS
@given(arrays_and_selections())
def test_getitem_reads_what_numpy_reads(case):
    shape, chunks, sel = case
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    z = zarrpp.create_array(None, shape=shape, chunks=chunks, dtype="i4")
    z[...] = a
    want, got = outcome(lambda: a[sel]), outcome(lambda: z[sel])
    if want[0] == "ok" and got[0] == "error" and want[1].size == 0:
        return  # zarrpp checks every index even where nothing is selected (NumPy lets some pass)
    assert want[0] == got[0], (sel, want, got)
    if want[0] == "ok":
        assert got[1].shape == want[1].shape, sel
        np.testing.assert_array_equal(got[1], want[1])


@SETTINGS
@given(arrays_and_selections())
def test_setitem_writes_where_numpy_writes(case):
    shape, chunks, sel = case
    a = np.zeros(shape, dtype=np.int32)
    z = zarrpp.create_array(None, shape=shape, chunks=chunks, dtype="i4", fill_value=0)
    status, target = outcome(lambda: a[sel])
    if status == "ok" and target.size == 0:
        return  # nothing to write (and zarrpp may refuse an index NumPy lets pass, as above)
    if status == "error":
        with pytest.raises((IndexError, ValueError)):
            z[sel] = 1
        return
    value = np.arange(1, target.size + 1, dtype=np.int32).reshape(target.shape)
    if zarrpp._zarrpp.index_plan_kind(sel, shape) == "gather":
        with pytest.raises(IndexError, match="oindex"):
            z[sel] = value
        return
    a[sel] = value
    z[sel] = value
    np.testing.assert_array_equal(z[...], a)


# ---- the CLI's SELECTION strings and Python's z[...] agree ----

TABLE = ["...", "0", "-1", "1:3", "::2", "::-1", "3:0:-2", "-2:", "1, 2", ":, 2", "..., 1", "1, ..., 2", "1, 2, 3",
         "[0,2], :", ":, [4,0,1]", ":, :, [5,5,0]", "[True,False,True,True]", ":, [False,True,True,False,True]",
         "1:3, [0,2], 2", "[0,1], [1,2], [3,4]", "1, [1,2], [3,4]", "[0,3], 1, [5,0]", "[-1,0], [-1,0], -1",
         "0:0", "::3, ::-2, 1:", "[0,1], [2], 0", "[3], [0,1,2], [5]", "[], [], 1"]
OUT_OF_BOUNDS = ["[], 99, 0", "[0,1], [2,3], 6", "[], [], -7"]
ADVANCED = ["[0,1], [1,2], :", "1, :, [0,2]", "[True,False,True,True], [0,1,2]", "[0,2], ..., [1,3]"]


def _key(expr):
    return eval("np.s_[" + expr + "]", {"np": np})  # the same text as a Python subscript


def _cli_get(path, expr, tmp_path, *extra):
    import subprocess
    from conftest import cli_path
    out = tmp_path / "sel.npy"
    r = subprocess.run([cli_path(), "get", str(path), expr, "--out", str(out), *extra], capture_output=True, text=True)
    return r, (np.load(out) if r.returncode == 0 else None)


@pytest.fixture(scope="module")
def table_array(tmp_path_factory):
    path = tmp_path_factory.mktemp("table") / "a.zarr"
    a = np.arange(4 * 5 * 6, dtype=np.int32).reshape(4, 5, 6)
    zarrpp.create_array(str(path), shape=a.shape, chunks=(2, 2, 3), shards=(2, 4, 6), dtype="i4")[...] = a
    return path, a


@pytest.mark.parametrize("expr", TABLE)
def test_cli_selection_reads_what_python_reads(table_array, tmp_path, expr):
    path, a = table_array
    z = zarrpp.open_array(str(path))
    r, got = _cli_get(path, expr, tmp_path)
    assert r.returncode == 0, r.stderr
    want = np.asarray(z[_key(expr)])
    np.testing.assert_array_equal(got, want)
    assert got.shape == want.shape == np.asarray(a[_key(expr)]).shape


@pytest.mark.parametrize("expr", OUT_OF_BOUNDS)
def test_cli_refuses_what_python_refuses(table_array, tmp_path, expr):
    path, a = table_array
    z = zarrpp.open_array(str(path))
    with pytest.raises(IndexError):
        z[_key(expr)]
    r, _ = _cli_get(path, expr, tmp_path)
    assert r.returncode != 0 and "out of bounds" in r.stderr, r.stderr


@pytest.mark.parametrize("expr", ADVANCED)
def test_cli_reads_numpy_advanced_indexing_as_python_and_takes_oindex(table_array, tmp_path, expr):
    import subprocess
    from conftest import cli_path
    path, a = table_array
    z = zarrpp.open_array(str(path))
    r, got = _cli_get(path, expr, tmp_path)
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(got, a[_key(expr)])
    assert got.shape == z[_key(expr)].shape == a[_key(expr)].shape
    r, got = _cli_get(path, expr, tmp_path, "--oindex")
    assert r.returncode == 0, r.stderr
    np.testing.assert_array_equal(got, z.oindex[_key(expr)])
    # Writing through NumPy's advanced indexing is refused by both, naming the alternatives.
    r = subprocess.run([cli_path(), "set", str(path), expr, "--value", "7"], capture_output=True, text=True)
    assert r.returncode != 0 and "oindex" in r.stderr, r.stderr
    with pytest.raises(IndexError, match="oindex"):
        z[_key(expr)] = 7
    np.testing.assert_array_equal(z[...], a)


@st.composite
def points_cases(draw):
    """vindex: integer arrays of broadcastable shapes (and integers), one per dimension."""
    shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    bshape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    items = []
    for size in shape:
        if draw(st.booleans()):
            items.append(draw(st.integers(-size, size - 1)))
            continue
        sub = tuple(1 if draw(st.booleans()) else n for n in bshape[draw(st.integers(0, len(bshape))):])
        values = draw(st.lists(st.integers(-size, size - 1), min_size=int(np.prod(sub)), max_size=int(np.prod(sub))))
        items.append(np.array(values, dtype=np.int64).reshape(sub))
    return shape, tuple(items)


@SETTINGS
@given(points_cases())
def test_vindex_reads_and_writes_numpy_points(case):
    shape, sel = case
    a = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
    z = zarrpp.create_array(None, shape=shape, chunks=(2,) * len(shape), dtype="i4")
    z[...] = a
    want = a[sel]
    got = z.vindex[sel]
    assert np.shape(got) == want.shape
    np.testing.assert_array_equal(got, want)
    value = np.arange(100, 100 + want.size, dtype=np.int32).reshape(want.shape)
    if want.size == len({tuple(np.broadcast_to(np.asarray(c), want.shape).ravel()[k] for c in sel)
                         for k in range(want.size)}):  # no point twice (the last write would win)
        a[sel] = value
        z.vindex[sel] = value
        np.testing.assert_array_equal(z[...], a)


@pytest.mark.parametrize("expr", ["[0,1], [1,2], [3,4]", "1, :, 2", "[0,2], :, ::2", "..., [0,5]"])
def test_cli_set_writes_where_python_writes(tmp_path, expr):
    import subprocess
    from conftest import cli_path
    path = tmp_path / "s.zarr"
    z = zarrpp.create_array(str(path), shape=(4, 5, 6), chunks=(2, 2, 3), dtype="i4", fill_value=0)
    r = subprocess.run([cli_path(), "set", str(path), expr, "--value", "7"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = np.zeros((4, 5, 6), dtype=np.int32)
    want[_key(expr)] = 7
    np.testing.assert_array_equal(z[...], want)
