"""The conformance corpora (conformance/regular_bounded, conformance/rectilinear,
conformance/rectilinear_bounded) through the Python API, and what zarrita.js reads from them
(conformance/regular_bounded/zarrita.json; it refuses every rectilinear and rectilinear_bounded array)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import zarrpp

CORPUS = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "conformance", "regular_bounded"))
MANIFEST = json.load(open(os.path.join(CORPUS, "manifest.json")))
RECT = os.path.join(os.path.dirname(CORPUS), "rectilinear")
RECT_MANIFEST = json.load(open(os.path.join(RECT, "manifest.json")))
RECTB = os.path.join(os.path.dirname(CORPUS), "rectilinear_bounded")
RECTB_MANIFEST = json.load(open(os.path.join(RECTB, "manifest.json")))
ENTRIES = MANIFEST["arrays"]
ALL = ([(CORPUS, e) for e in ENTRIES] + [(RECT, e) for e in RECT_MANIFEST["arrays"]] +
       [(RECTB, e) for e in RECTB_MANIFEST["arrays"]])


@pytest.mark.parametrize("corpus,entries,least", [(CORPUS, ENTRIES, 40), (RECT, RECT_MANIFEST["arrays"], 30),
                                                  (RECTB, RECTB_MANIFEST["arrays"], 25)],
                         ids=["regular_bounded", "rectilinear", "rectilinear_bounded"])
def test_the_corpus_is_listed_whole(corpus, entries, least):
    assert len(entries) >= least
    on_disk = {f"{kind}/{n}" for kind in ("read", "refuse") for n in os.listdir(os.path.join(corpus, kind))
               if not n.endswith(".npy")}
    assert on_disk == {e["path"] for e in entries}


@pytest.mark.parametrize("corpus,entry", ALL, ids=[f"{os.path.basename(c)}/{e['path']}" for c, e in ALL])
def test_reads_or_refuses_as_listed(corpus, entry):
    path = os.path.join(corpus, entry["path"])
    if entry["expect"] == "refuse":
        with pytest.raises((ValueError, NotImplementedError, OverflowError, TypeError, IndexError)):
            zarrpp.open_array(path, mode="r")[...]
        return
    z = zarrpp.open_array(path, mode="r")
    assert [list(d) for d in z.domain] == entry["domain"]
    expected = np.load(os.path.join(corpus, entry["values"]))
    if "chunk_sizes" in entry:
        assert [list(c) for c in z.write_chunk_sizes] == entry["chunk_sizes"]
    got = z[...]
    assert got.shape == expected.shape and got.dtype == expected.dtype.newbyteorder("=")
    assert np.array_equal(got, expected, equal_nan=expected.dtype.kind == "f")
    if z.ndim and z.size:
        # every element once more, one at a time from the end (negative indices count from the end)
        flat = expected.reshape(-1)
        for k in range(1, min(flat.size, 12) + 1):
            idx = np.unravel_index(flat.size - k, expected.shape)
            neg = tuple(int(i) - s for i, s in zip(idx, expected.shape))
            v = z[neg]
            assert v == flat[-k] or (np.isnan(v) and np.isnan(flat[-k]))


@pytest.mark.parametrize("corpus", [CORPUS, RECT, RECTB], ids=os.path.basename)
def test_the_generator_writes_the_committed_corpus(tmp_path, corpus):
    """generate.py is deterministic and the committed corpus is what it writes."""
    import shutil
    out = tmp_path / "corpus"
    shutil.copytree(corpus, out,
                    ignore=shutil.ignore_patterns("refuse", "*.py", "*.md", "zarrita.json", "manifest.json"))
    subprocess.run([sys.executable, os.path.join(corpus, "generate.py"), str(out)], check=True)
    for kind in ("read", "refuse"):
        for root, _, files in os.walk(os.path.join(corpus, kind)):
            for f in files:
                a = os.path.join(root, f)
                b = os.path.join(out, os.path.relpath(a, corpus))
                assert os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read(), os.path.relpath(a, corpus)
    assert json.load(open(out / "manifest.json")) == json.load(open(os.path.join(corpus, "manifest.json")))


@pytest.mark.parametrize("corpus", [RECT, RECTB], ids=os.path.basename)
def test_zarrita_refuses_every_rectilinear_array(corpus):
    """zarrita.js reads a grid's configuration.chunk_shape whatever the grid's name; rectilinear and
    rectilinear_bounded grids have none, so it fails on every array instead of misreading one
    (the corpus' refuse/chunk_shape_field has one, and zarrpp refuses it)."""
    script = os.path.join(CORPUS, "..", "..", "tests", "interop", "read_with_zarrita.mjs")
    for kind in ("read", "refuse"):
        names = sorted(n for n in os.listdir(os.path.join(corpus, kind))
                       if not n.endswith(".npy") and n != "chunk_shape_field")
        r = subprocess.run(["node", script, os.path.join(corpus, kind), *names], capture_output=True, text=True)
        lines = [json.loads(x) for x in r.stdout.splitlines()]
        assert [x["path"] for x in lines] == names
        assert all("error" in x and "data" not in x for x in lines), r.stdout


def test_zarrita_reads_the_corpus_as_recorded():
    interop = os.path.join(CORPUS, "..", "..", "tests", "interop", "node_modules", "zarrita", "package.json")
    assert os.path.exists(interop), "zarrita is not installed: run npm ci in tests/interop (scripts/setup.sh does)"
    r = subprocess.run([sys.executable, os.path.join(CORPUS, "record_zarrita.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
