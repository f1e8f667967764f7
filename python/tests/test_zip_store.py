"""ZipStore: zip files as zarr-python (2 and 3) keeps them, both ways, with the modes, the growth
and the failures a zip file allows."""
import os
import pickle
import subprocess
import sys
import time
import zipfile

import numpy as np
import pytest
import zarr as zarr2

import zarrpp
from zarrpp.storage import SuffixByteRequest, ZipStore


def _names(path):
    return zipfile.ZipFile(path).namelist()


def _litter(path):
    return sorted(n for n in os.listdir(os.path.dirname(path)) if n != os.path.basename(path))


@pytest.mark.parametrize("compression", [zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
def test_zarr_python_2_zip_files_read_as_zarr_python_2_reads_them(tmp_path, compression):
    path = str(tmp_path / "z2.zip")
    store = zarr2.ZipStore(path, mode="w", compression=compression)
    root = zarr2.group(store=store)
    a = root.create_dataset("g/a", shape=(10, 4), chunks=(3, 4), dtype="<f8", fill_value=-1)
    a[:] = np.arange(40.0).reshape(10, 4)
    with pytest.warns(UserWarning, match="Duplicate name"):
        a[0:3] = 7  # zarr-python appends the chunk again: the archive names it twice
    root.attrs["title"] = "zip"
    store.close()
    assert _names(path).count("g/a/0.0") == 2
    expected = zarr2.open(store=zarr2.ZipStore(path, mode="r"), mode="r")
    with ZipStore(path) as zs:
        got = zarrpp.open_group(store=zs, mode="r")
        assert got.attrs["title"] == "zip"
        assert np.array_equal(got["g/a"][:], expected["g/a"][:]) and got["g/a"][0, 0] == 7
        assert zs.list_prefix("g/a/") == ["g/a/.zarray", "g/a/0.0", "g/a/1.0", "g/a/2.0", "g/a/3.0"]
        assert zs.read_only
        with pytest.raises(ValueError, match="read-only"):
            got["g/a"][0, 0] = 1


def test_zarrpp_zip_files_read_in_zarr_python_2_without_duplicates(tmp_path):
    path = str(tmp_path / "pp.zip")
    with ZipStore(path, mode="w") as zs:
        g = zarrpp.create_group(store=zs, zarr_format=2, attributes={"k": 1})
        a = g.create_array("a", shape=(10,), chunks=(4,), dtype="i4", fill_value=0)
        a[:] = np.arange(10)
        a[:4] = -5  # rewritten before the commit: one member in the archive
        assert _litter(path)  # staged beside the archive until the commit
    assert _litter(path) == []
    names = _names(path)
    assert sorted(names) == sorted(set(names)) == [".zattrs", ".zgroup", "a/.zarray", "a/0", "a/1", "a/2"]
    assert all(i.compress_type == zipfile.ZIP_STORED for i in zipfile.ZipFile(path).infolist())
    back = zarr2.open(store=zarr2.ZipStore(path, mode="r"), mode="r")
    assert back.attrs["k"] == 1 and list(back["a"][:]) == [-5, -5, -5, -5, 4, 5, 6, 7, 8, 9]


def test_modes_as_zarr_python_has_them_and_contradictions_refused(tmp_path):
    path = str(tmp_path / "m.zip")
    with pytest.raises(FileNotFoundError):
        ZipStore(path)  # "r" needs the file
    with ZipStore(path, mode="x") as zs:
        zs.set("k", b"1")
    with pytest.raises(FileExistsError):
        ZipStore(path, mode="x")
    with ZipStore(path, mode="a") as zs:
        assert zs.get("k") == b"1"
        zs.set("k2", b"2")
    assert sorted(_names(path)) == ["k", "k2"]
    w = ZipStore(path, mode="w")
    assert w.list() == [] and sorted(_names(path)) == ["k", "k2"]  # replaced only by the commit
    w.set("only", b"3")
    w.close()
    assert _names(path) == ["only"]
    for kwargs, word in [({"mode": "w", "read_only": True}, "contradict"),
                         ({"mode": "a", "read_only": True}, "contradict"),
                         ({"compression": 12}, "compression"), ({"allowZip64": False}, "ZIP64"),
                         ({"mode": "rw"}, "mode")]:
        with pytest.raises(ValueError, match=word):
            ZipStore(path, **kwargs)
    with pytest.raises(TypeError, match="path"):
        ZipStore(open(path, "rb"))
    assert _names(path) == ["only"]


def test_growth_in_a_zip_file_both_ends_and_deflated(tmp_path):
    path = str(tmp_path / "g.zip")
    with ZipStore(path, mode="w", compression=zipfile.ZIP_DEFLATED) as zs:
        z = zarrpp.create_array(store=zs, shape=(4, 2), chunks=(2, 2), shards=(4, 2), dtype="i2", fill_value=0)
        z[:] = 1
        z.prepend(np.full((3, 2), 5, dtype="i2"))
        z.append(np.full((1, 2), 9, dtype="i2"))
    assert all(i.compress_type == zipfile.ZIP_DEFLATED for i in zipfile.ZipFile(path).infolist())
    with ZipStore(path) as zs:
        z = zarrpp.open_array(store=zs, mode="r")
        assert z.shape == (8, 2) and list(z[:, 0]) == [5, 5, 5, 1, 1, 1, 1, 9]
        shard = next(k for k in zs.list() if k.startswith("c/"))
        assert len(zs.get(shard, byte_range=SuffixByteRequest(4))) == 4  # a deflated member, read from inside
    with ZipStore(path, mode="a") as zs:  # growth again, after a commit
        zarrpp.open_array(store=zs).prepend(np.full((1, 2), 3, dtype="i2"))
    assert list(zarrpp.open_array(store=ZipStore(path), mode="r")[:, 1]) == [3, 5, 5, 5, 1, 1, 1, 1, 9]


def test_one_writer_at_a_time_and_readers_see_the_last_commit(tmp_path):
    path = str(tmp_path / "w.zip")
    w = ZipStore(path, mode="w")
    other = ZipStore(path, mode="a", lock_timeout=0)  # opening takes no lock
    w.set("k", b"1")
    with pytest.raises(RuntimeError, match="one writer at a time"):
        other.set("x", b"1")
    waiting = ZipStore(path, mode="a", lock_timeout=0.3)
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="held it for 300 ms"):
        waiting.set("x", b"1")
    assert time.monotonic() - started >= 0.3
    reader = ZipStore(path)
    assert not reader.exists("k") and w.get("k") == b"1"
    w.commit()
    assert ZipStore(path).get("k") == b"1" and reader.exists("k")  # readers follow the file
    w.close()
    w.set("after", b"2")  # used after close: reopened to add
    w.close()
    assert sorted(_names(path)) == ["after", "k"]
    other.set("x", b"3")  # now the other may write, over what the first committed
    other.close()
    assert sorted(_names(path)) == ["after", "k", "x"]
    assert w.with_read_only(True) == ZipStore(path) != w
    assert pickle.loads(pickle.dumps(ZipStore(path))).get("k") == b"1"


def test_a_writer_killed_before_its_commit_leaves_the_archive_whole(tmp_path):
    path = str(tmp_path / "k.zip")
    with ZipStore(path, mode="w") as zs:
        zarrpp.create_array(store=zs, shape=(4,), chunks=(2,), dtype="i4", fill_value=0)[:] = 1
    before = open(path, "rb").read()
    code = ("import os, sys, zarrpp\nfrom zarrpp.storage import ZipStore\n"
            "zs = ZipStore(sys.argv[1], mode='a')\nz = zarrpp.open_array(store=zs)\n"
            "z[:] = 2\nz.append([3, 3])\nos._exit(0)\n")
    subprocess.run([sys.executable, "-c", code, path], check=True, env=os.environ)
    assert open(path, "rb").read() == before
    assert list(zarrpp.open_array(store=ZipStore(path), mode="r")[:]) == [1, 1, 1, 1]
    assert [n for n in _litter(path) if "staged" in n]  # what it wrote is left beside, not deleted


def test_writers_left_open_are_committed_when_python_exits(tmp_path):
    path = str(tmp_path / "e.zip")
    code = ("import sys, zarrpp\nfrom zarrpp.storage import ZipStore\n"
            "zs = ZipStore(sys.argv[1], mode='w')\nz = zarrpp.create_array(store=zs, shape=(3,), dtype='u1')\n"
            "z[:] = 4\nsys.modules['__main__'].keep = (zs, z)\n")
    subprocess.run([sys.executable, "-c", code, path], check=True, env=os.environ)
    assert list(zarrpp.open_array(store=ZipStore(path), mode="r")[:]) == [4, 4, 4] and _litter(path) == []


def test_hostile_and_broken_archives_get_clear_errors(tmp_path):
    path = str(tmp_path / "h.zip")
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("../escape", b"x")
        zf.writestr("/abs", b"x")
        zf.writestr("dir/", b"")
        zf.writestr("ok", b"fine")
    with ZipStore(path) as zs:
        assert zs.list() == ["ok"]  # members no key can name are not listed
    not_zip = tmp_path / "n.zip"
    not_zip.write_bytes(b"not a zip file at all" * 10)
    with pytest.raises(RuntimeError, match="cannot be read as a zip archive"):
        ZipStore(str(not_zip))
    cut = tmp_path / "c.zip"
    cut.write_bytes(open(path, "rb").read()[:-30])
    with pytest.raises(RuntimeError, match="zip archive"):
        ZipStore(str(cut))
    corrupt = tmp_path / "x.zip"
    data = bytearray(open(path, "rb").read())
    at = data.index(b"fine")
    data[at:at + 4] = b"FINE"  # the CRC no longer matches
    corrupt.write_bytes(bytes(data))
    with pytest.raises(ValueError, match="ok|member"):
        ZipStore(str(corrupt)).get("ok")


def test_two_writers_one_after_the_other_lose_no_growth(tmp_path):
    path = str(tmp_path / "two.zip")
    with ZipStore(path, mode="w") as zs:
        zarrpp.create_array(store=zs, shape=(4,), chunks=(2,), dtype="i4", fill_value=0)[:] = [0, 1, 2, 3]
    a_store = ZipStore(path, mode="a")
    a = zarrpp.open_array(store=a_store)  # opened before b grows it
    with ZipStore(path, mode="a") as b_store:
        zarrpp.open_array(store=b_store).append(np.array([100, 101], dtype="i4"))
    a.append(np.array([200, 201], dtype="i4"))
    a_store.close()
    assert list(zarrpp.open_array(store=ZipStore(path), mode="r")[:]) == [0, 1, 2, 3, 100, 101, 200, 201]


def test_relative_paths_new_files_and_forks(tmp_path, monkeypatch):
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    monkeypatch.chdir(tmp_path / "one")
    old = os.umask(0o022)
    try:
        zs = ZipStore("data.zip", mode="w")
    finally:
        os.umask(old)
    with zipfile.ZipFile(tmp_path / "two" / "data.zip", "w") as zf:
        zf.writestr("precious", b"keep me")
    monkeypatch.chdir(tmp_path / "two")  # the store stays on the file it opened
    zs.set("new", b"1")
    if os.fork() == 0:  # a forked child shares the store: it must not write through it
        try:
            zs.set("child", b"2")
            os._exit(1)
        except RuntimeError as e:
            os._exit(0 if "another process" in str(e) else 2)
    _, status = os.wait()
    assert os.waitstatus_to_exitcode(status) == 0
    zs.close()
    assert _names(tmp_path / "one" / "data.zip") == ["new"]
    assert _names(tmp_path / "two" / "data.zip") == ["precious"]
    assert oct(os.stat(tmp_path / "one" / "data.zip").st_mode & 0o777) == oct(0o644)


def test_folders_comments_and_names_survive_a_commit_as_zipfile_reads_them(tmp_path):
    path = str(tmp_path / "f.zip")
    with zipfile.ZipFile(path, "w") as zf:
        zf.comment = b"made by hand"
        zf.writestr("g/", b"")
        zf.writestr("cafX", b"name")
    data = open(path, "rb").read().replace(b"cafX", b"caf\xe9")  # no UTF-8 flag: code page 437
    open(path, "wb").write(data)
    expected = [n for n in _names(path) if not n.endswith("/")]
    with ZipStore(path, mode="a") as zs:
        assert zs.list() == expected  # the name zipfile (and zarr-python) reads
        zs.set("k", b"1")
    with zipfile.ZipFile(path) as zf:
        assert zf.comment == b"made by hand" and "g/" in zf.namelist()
        assert sorted(n for n in zf.namelist() if not n.endswith("/")) == sorted(expected + ["k"])
