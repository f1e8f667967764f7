"""The regular_bounded conformance corpus (conformance/regular_bounded) through the Python API,
and the record of what zarrita.js reads from it (conformance/regular_bounded/zarrita.json)."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import zarrpp

CORPUS = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", "conformance", "regular_bounded"))
MANIFEST = json.load(open(os.path.join(CORPUS, "manifest.json")))
ENTRIES = MANIFEST["arrays"]


def test_the_corpus_is_listed_whole():
    assert len(ENTRIES) >= 40
    on_disk = {f"{kind}/{n}" for kind in ("read", "refuse") for n in os.listdir(os.path.join(CORPUS, kind))
               if not n.endswith(".npy")}
    assert on_disk == {e["path"] for e in ENTRIES}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["path"] for e in ENTRIES])
def test_reads_or_refuses_as_listed(entry):
    path = os.path.join(CORPUS, entry["path"])
    if entry["expect"] == "refuse":
        with pytest.raises((ValueError, NotImplementedError, OverflowError, TypeError, IndexError)):
            zarrpp.open_array(path, mode="r")[...]
        return
    z = zarrpp.open_array(path, mode="r")
    assert [list(d) for d in z.domain] == entry["domain"]
    expected = np.load(os.path.join(CORPUS, entry["values"]))
    got = z[...]
    assert got.shape == expected.shape and got.dtype == expected.dtype.newbyteorder("=")
    assert np.array_equal(got, expected, equal_nan=expected.dtype.kind == "f")
    if z.ndim:
        # every element once more, one at a time from the end (negative indices count from the end)
        flat = expected.reshape(-1)
        for k in range(1, min(flat.size, 12) + 1):
            idx = np.unravel_index(flat.size - k, expected.shape)
            neg = tuple(int(i) - s for i, s in zip(idx, expected.shape))
            v = z[neg]
            assert v == flat[-k] or (np.isnan(v) and np.isnan(flat[-k]))


def test_the_generator_writes_the_committed_corpus(tmp_path):
    """generate.py is deterministic and the committed corpus is what it writes."""
    import shutil
    out = tmp_path / "corpus"
    shutil.copytree(CORPUS, out,
                    ignore=shutil.ignore_patterns("refuse", "*.py", "*.md", "zarrita.json", "manifest.json"))
    subprocess.run([sys.executable, os.path.join(CORPUS, "generate.py"), str(out)], check=True)
    for kind in ("read", "refuse"):
        for root, _, files in os.walk(os.path.join(CORPUS, kind)):
            for f in files:
                a = os.path.join(root, f)
                b = os.path.join(out, os.path.relpath(a, CORPUS))
                assert os.path.exists(b) and open(a, "rb").read() == open(b, "rb").read(), os.path.relpath(a, CORPUS)
    assert json.load(open(out / "manifest.json")) == MANIFEST


def test_zarrita_reads_the_corpus_as_recorded():
    interop = os.path.join(CORPUS, "..", "..", "tests", "interop", "node_modules", "zarrita", "package.json")
    assert os.path.exists(interop), "zarrita is not installed: run npm ci in tests/interop (scripts/setup.sh does)"
    r = subprocess.run([sys.executable, os.path.join(CORPUS, "record_zarrita.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
