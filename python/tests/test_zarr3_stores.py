"""zarr-python 3's ways of naming stores and chunk keys, as zarrpp takes them: the ``v2`` chunk key
encoding on Zarr v3 arrays, ``memory://`` URLs, any mapping as a store."""
import json
import os

import numpy as np
import pytest

import zarrpp


@pytest.mark.parametrize("cke,keys", [
    ({"name": "v2", "separator": "."}, ["-1.0", "-1.1", "0.0", "0.1", "1.0", "1.1"]),
    ({"name": "v2", "configuration": {"separator": "/"}}, ["-1/0", "-1/1", "0/0", "0/1", "1/0", "1/1"]),
    ("v2", ["-1.0", "-1.1", "0.0", "0.1", "1.0", "1.1"]),
    ({"name": "default", "separator": "."}, ["c.-1.0", "c.-1.1", "c.0.0", "c.0.1", "c.1.0", "c.1.1"]),
], ids=["v2-dot", "v2-slash-configuration", "v2-name", "default-dot"])
def test_v3_arrays_take_either_chunk_key_encoding_and_grow_with_it(tmp_path, cke, keys):
    path = tmp_path / "a"
    z = zarrpp.create_array(str(path), shape=(4, 4), chunks=(2, 2), dtype="i4", chunk_key_encoding=cke,
                            fill_value=-9)
    data = np.arange(16, dtype="i4").reshape(4, 4)
    z[:] = data
    z.prepend(np.full((2, 4), 7, dtype="i4"))
    doc = json.loads((path / "zarr.json").read_text())
    name = cke if isinstance(cke, str) else cke["name"]
    assert doc["chunk_key_encoding"]["name"] == name
    stored = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
    assert stored == sorted(keys + ["zarr.json"])
    again = zarrpp.open_array(str(path), mode="r")
    assert np.array_equal(again[:], np.vstack([np.full((2, 4), 7, dtype="i4"), data]))


def test_bad_chunk_key_encodings_are_refused_before_anything_is_written(tmp_path):
    for bad, word in [({"name": "v3"}, "unknown chunk key encoding"), ({"name": "v2", "separator": "|"}, "separator"),
                      ({"name": "default", "configuration": {"sep": "/"}}, "sep")]:
        with pytest.raises(ValueError, match=word):
            zarrpp.create_array(str(tmp_path / "x"), shape=(2,), dtype="i1", chunk_key_encoding=bad)
        assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="a Zarr v2 array's chunk keys are v2 keys"):
        zarrpp.create_array(str(tmp_path / "y"), shape=(2,), dtype="i1", zarr_format=2,
                            chunk_key_encoding={"name": "default"})
    with pytest.raises(TypeError, match="chunk_key_encoding"):
        zarrpp.create_array(str(tmp_path / "z"), shape=(2,), dtype="i1", chunk_key_encoding=5)


def test_memory_urls_name_a_process_wide_store():
    from zarrpp.storage import forget_memory_store
    zarrpp.create_group("memory://t-urls/sub")
    z = zarrpp.create_array("memory://t-urls/sub/a", shape=(4,), chunks=(2,), dtype="i2")
    z[:] = [1, 2, 3, 4]
    del z
    assert zarrpp.open_array("memory://t-urls/sub/a", mode="r")[:].tolist() == [1, 2, 3, 4]
    assert zarrpp.open_array("memory://t-urls", path="sub/a", mode="r")[:].tolist() == [1, 2, 3, 4]
    g = zarrpp.open_group("memory://t-urls/sub", mode="r")
    assert [name for name, _ in g.members()] == ["a"]
    assert str(zarrpp.storage.make_store("memory://t-urls")) == "memory://t-urls"
    # Another name is another store; a forgotten one starts empty.
    with pytest.raises(Exception):
        zarrpp.open_array("memory://t-urls-other/sub/a", mode="r")
    assert forget_memory_store("t-urls") and not forget_memory_store("t-urls")
    with pytest.raises(Exception):
        zarrpp.open_array("memory://t-urls/sub/a", mode="r")
    forget_memory_store("t-urls-other")
    with pytest.raises(ValueError, match="memory://NAME"):
        zarrpp.open_group("memory://", mode="a")


def test_a_group_created_below_a_consolidated_memory_root_keeps_it_current():
    from zarrpp.storage import forget_memory_store
    root = zarrpp.create_group("memory://t-consolidated", zarr_format=2)
    st = zarrpp.storage.make_store("memory://t-consolidated")
    st.set(".zmetadata", json.dumps({"metadata": {".zgroup": {"zarr_format": 2}},
                                     "zarr_consolidated_format": 1}).encode())
    zarrpp.create_array("memory://t-consolidated/v", shape=(2,), dtype="i1", zarr_format=2)
    assert "v/.zarray" in json.loads(bytes(st.get(".zmetadata")))["metadata"]
    del root
    forget_memory_store("t-consolidated")
