"""Pictures and progress in Python: the chunk map (``Array.chunk_map_svg``), the notebook views
(``_repr_html_``) and ``progress=`` on long operations (a callable, or a tqdm bar)."""
import re
import sys
import threading
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import zarrpp

NS = "{http://www.w3.org/2000/svg}"


def cells(svg):
    root = ET.fromstring(svg)
    return [e.get("class") for e in root.iter(NS + "rect") if e.get("class", "").startswith("cell")]


def texts(svg, cls):
    return [e.text for e in ET.fromstring(svg).iter(NS + "text") if e.get("class") == cls]


def test_chunk_map_after_a_prepend(tmp_path):
    z = zarrpp.create_array(tmp_path / "a.zarr", shape=(6, 4), chunks=(4, 4), dtype="i4")
    z[:] = 1
    assert cells(z.chunk_map_svg()) == ["cell stored", "cell stored edge"]
    z.prepend(np.full((3, 4), 2, dtype="i4"))
    svg = z.chunk_map_svg()
    assert cells(svg) == ["cell stored edge", "cell stored", "cell stored edge"]
    assert texts(svg, "key") == ["c/-1/0", "c/0/0", "c/1/0"]
    assert "domain [-3, 6) \u00d7 [0, 4)" in texts(svg, "title")[1]
    assert len([e for e in ET.fromstring(svg).iter(NS + "line") if e.get("class") == "origin"]) == 1


def test_chunk_map_of_a_large_sparse_grid_is_binned(tmp_path):
    z = zarrpp.create_array(tmp_path / "b.zarr", shape=(1000, 3000), chunks=(10, 10), dtype="u1")
    z[500:505, :] = 1  # one chunk row of 100: a third of each cell of 3 rows
    svg = z.chunk_map_svg(size=300, max_cells=20)
    got = cells(svg)
    assert len(got) == 20 * 20  # 100 rows in 20 cells of 5, 300 columns in 20 of 15
    assert got.count("cell some") == 20 and got.count("cell empty") == 380
    assert "a cell holds 5 \u00d7 15 chunks; shaded by the share stored" in texts(svg, "note")


def test_array_repr_html_shows_the_essentials_beside_the_map(tmp_path):
    z = zarrpp.create_array(tmp_path / "c.zarr", shape=(20, 30), chunks=(10, 10), dtype="f4",
                            compressors=zarrpp.codecs.ZstdCodec(level=3))
    z[0:10, :] = 1.5
    z.prepend(np.zeros((5, 30), dtype="f4"))
    page = z._repr_html_()
    for row in ("<th style='text-align:left;padding-right:1em'>Shape</th><td style='text-align:left'>(25, 30)</td>",
                "[-5, 20), [0, 30)", "float32", "(10, 10)", "zstd", " of 9 chunks"):
        assert row in page, row
    svg = re.search(r"<svg.*</svg>", page, re.S).group(0)
    assert cells(svg).count("cell empty") == 3  # the rows 10..20 were never written


def test_repr_html_shows_what_it_can(tmp_path, monkeypatch):
    with zarrpp.config.set({"array.rectilinear_chunks": True}):
        z = zarrpp.create_array(tmp_path / "r.zarr", shape=(60, 100), chunks=(10, 10), shards=[[20, 40], [50, 50]],
                                dtype="i2")
    page = z._repr_html_()  # shards of several sizes: no one shard shape, the map still drawn
    assert "&lt;variable&gt;" in page and "<svg" in page

    def unlistable(*args, **kwargs):
        raise RuntimeError("cannot list keys")
    monkeypatch.setattr(zarrpp.Array, "chunk_map_svg", unlistable)
    monkeypatch.setattr(zarrpp.Array, "nbytes_stored", unlistable)
    page = z._repr_html_()
    assert "chunk map not drawn: cannot list keys" in page and "not known: cannot list keys" in page


def test_group_repr_html_lists_members(tmp_path):
    g = zarrpp.open_group(tmp_path / "g.zarr", mode="w")
    g.create_array("x<y", shape=(10,), chunks=(5,), dtype="i2")
    g.create_group("sub")
    page = g._repr_html_()
    assert "2 members" in page
    assert "x&lt;y" in page and "x<y" not in page  # names are escaped
    assert "sub/" in page and "(10,)" in page and "int16" in page


def recorder():
    steps, lock = [], threading.Lock()

    def cb(objects, nbytes):
        with lock:
            steps.append((objects, nbytes))
    return steps, cb


def test_progress_of_growth_resize_and_a_block(tmp_path):
    z = zarrpp.create_array(tmp_path / "p.zarr", shape=(400, 300), chunks=(100, 100), dtype="f8")
    steps, cb = recorder()
    data = np.ones((200, 300))
    z.append(data, progress=cb)
    assert len(steps) == 6 and sum(n for _, n in steps) == data.nbytes
    steps.clear()
    z.prepend(np.ones((50, 300)), progress=cb)
    assert sum(n for _, n in steps) == 50 * 300 * 8
    steps.clear()
    z.resize(100, 300, progress=cb)  # removes the chunks past row 100 of the new domain
    assert sum(o for o, _ in steps) == len(steps) > 0 and all(n == 0 for _, n in steps)
    steps.clear()
    with z.progress(cb):
        z[:] = 2.0
        z.append(np.ones((100, 300)))  # no progress= inside the block: the block's callable hears it
    assert sum(n for _, n in steps) == 100 * 300 * 8 * 2
    steps.clear()
    z[:] = 3.0  # after the block: nothing
    assert steps == []
    with z.progress(cb):
        z[0:100, :]  # reads too
    assert sum(n for _, n in steps) == 100 * 300 * 8
    assert all(o == 1 for o, _ in steps)


def test_progress_blocks_inside_each_other_each_hear_it_all(tmp_path):
    z = zarrpp.create_array(tmp_path / "n.zarr", shape=(100, 100), chunks=(10, 10), dtype="u1")
    outer, cb_outer = recorder()
    inner, cb_inner = recorder()
    call, cb_call = recorder()
    with z.progress(cb_outer):
        with z.progress(cb_inner):
            z[:] = 1
        z[0:10, :] = 2  # the inner block is over: the outer still hears
        z.append(np.ones((10, 100), dtype="u1"), progress=cb_call)
        z[0:10, :] = 3
    z[:] = 4
    assert len(inner) == 100
    assert len(call) == 10
    assert len(outer) == 100 + 10 + 10 + 10


def test_progress_of_copy_and_convert(tmp_path):
    z = zarrpp.create_array(tmp_path / "s.zarr", shape=(30, 30), chunks=(10, 10), dtype="i4", zarr_format=2)
    z[:] = 7
    steps, cb = recorder()
    zarrpp.copy_array(z, tmp_path / "copy.zarr", progress=cb)
    assert steps == [(1, 0)] * 9
    steps.clear()
    rep = zarrpp.convert_to_v3(tmp_path / "s.zarr", dst=tmp_path / "v3.zarr", progress=cb)
    assert rep["chunks_copied"] == 9 and len(steps) == 9 and all(n > 0 for _, n in steps)


def test_a_failing_callback_is_reported_once_and_the_work_completes(tmp_path, monkeypatch):
    z = zarrpp.create_array(tmp_path / "f.zarr", shape=(40,), chunks=(10,), dtype="i4")
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_value))

    def bad(objects, nbytes):
        raise RuntimeError("boom")
    z.append(np.arange(40, dtype="i4"), progress=bad)
    assert z.shape == (80,) and (z[40:] == np.arange(40)).all()
    assert len(seen) == 1 and str(seen[0]) == "boom"


def test_progress_true_draws_a_tqdm_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    z = zarrpp.create_array(tmp_path / "t.zarr", shape=(10, 10), chunks=(5, 5), dtype="f8")
    z.append(np.ones((10, 10)), progress=True)
    err = capsys.readouterr().err
    assert "append" in err and "100%" in err


def test_progress_refuses_what_it_cannot_use(tmp_path, monkeypatch):
    z = zarrpp.create_array(tmp_path / "r.zarr", shape=(10,), chunks=(5,), dtype="f8")
    with pytest.raises(TypeError, match="progress must be a callable"):
        z.append(np.ones(5), progress=5)
    monkeypatch.setitem(sys.modules, "tqdm", None)  # as if tqdm were not installed
    with pytest.raises(ImportError, match="python3-tqdm"):
        z.append(np.ones(5), progress=True)
    assert z.shape == (10,)  # refused before anything was written
