"""Consolidated metadata never goes silently stale (issue 30, item 4), checked with the readers that
use it: a dataset written by xarray's ``ds.to_zarr(path)`` (Zarr v2, consolidated by default) is
changed by zarrpp opened at one of its variables (the Python API, and the CLI), and after each
change xarray's default open and zarr-python 2's ``open_consolidated`` see the new shape,
attributes and data. A refresh that fails (.zmetadata on a read-only bind mount, inside
``unshare -m``) leaves the change made and warns, naming the document. The C++ side, v3's inline
consolidated_metadata and the walk's limits: tests/test_consolidated.cpp."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

xr = pytest.importorskip("xarray")
zarr = pytest.importorskip("zarr")

import zarrpp  # noqa: E402
from conftest import cli_path  # noqa: E402


def _dataset(n=3):
    return xr.Dataset(
        {"temp": (("time", "x"), np.arange(n * 4, dtype="f8").reshape(n, 4), {"units": "K"}),
         "flag": (("time",), np.arange(n, dtype="i2"))},
        coords={"time": np.arange(n, dtype="f8") * 10.0, "x": [1, 2, 3, 4]},
        attrs={"title": "issue 30"})


def _write(tmp_path, nested=False):
    """ds.zarr as xarray writes it; nested: the dataset in ds.zarr/sub too, consolidated at both."""
    path = tmp_path / "ds.zarr"
    _dataset().to_zarr(str(path))
    if nested:
        _dataset().to_zarr(str(path / "sub"))  # .zmetadata at ds.zarr/sub
        zarr.consolidate_metadata(str(path))  # and at ds.zarr, listing sub's nodes too
    return path


TIME_VARS = ["time", "temp", "flag"]


def _expect(path, n, attrs=None):
    """xarray's default open (consolidated) and zarr.open_consolidated see n time steps."""
    ds = xr.open_zarr(str(path))  # consolidated=None: reads .zmetadata first
    assert ds.sizes["time"] == n
    assert np.array_equal(ds["time"].values[:3], np.arange(min(n, 3)) * 10.0)
    c = zarr.open_consolidated(str(path), mode="r")
    assert c["temp"].shape == (n, 4) and c["flag"].shape == (n,)
    for k, v in (attrs or {}).items():
        assert c["temp"].attrs[k] == v and ds["temp"].attrs[k] == v
    return ds, c


def test_python_changes_at_a_variable_keep_xarray_and_zarr_python_current(tmp_path):
    path = _write(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", zarrpp.ZarrppWarning)  # none expected
        for name in TIME_VARS:
            a = zarrpp.open_array(str(path / name), mode="r+")  # a store at the variable itself
            a.append(np.full((2,) + a.shape[1:], 9, dtype=a.dtype))
        ds, _ = _expect(path, 5)
        assert np.array_equal(ds["temp"].values[3:], np.full((2, 4), 9.0))
        for name in TIME_VARS:
            zarrpp.open_array(str(path / name), mode="r+").resize((2,) + zarrpp.open_array(str(path / name)).shape[1:])
        _, c = _expect(path, 2)
        assert np.array_equal(c["temp"][:], np.arange(8, dtype="f8").reshape(2, 4))  # no removed rows
        zarrpp.open_array(str(path / "temp"), mode="r+").attrs["units"] = "degC"
        _expect(path, 2, {"units": "degC"})
        # Nodes created, replaced and removed through a store opened at the new node's folder.
        zarrpp.create_array(str(path / "extra"), shape=(2,), dtype="i4", zarr_format=2, attributes={"v": 1})
        assert zarr.open_consolidated(str(path), mode="r")["extra"].attrs["v"] == 1
        zarrpp.create_array(str(path / "extra"), shape=(6,), dtype="i4", zarr_format=2, overwrite=True)
        assert zarr.open_consolidated(str(path), mode="r")["extra"].shape == (6,)
        g = zarrpp.open_group(str(path / "grp"), mode="w", zarr_format=2)
        g.attrs["k"] = "v"
        g.create_group("inner")
        c = zarr.open_consolidated(str(path), mode="r")
        assert c["grp"].attrs["k"] == "v" and "inner" in c["grp"]
        del zarrpp.open_group(str(path / "grp"), mode="r+")["inner"]
        del zarrpp.open_group(str(path), mode="r+")["extra"]
        c = zarr.open_consolidated(str(path), mode="r")
        assert "inner" not in c["grp"] and "extra" not in c
        assert xr.open_zarr(str(path)).sizes["time"] == 2


def test_nested_consolidated_ancestors_above_the_store_root(tmp_path):
    path = _write(tmp_path, nested=True)
    for name in TIME_VARS:
        a = zarrpp.open_array(str(path / "sub" / name), mode="r+")
        a.append(np.full((2,) + a.shape[1:], 9, dtype=a.dtype))
    _expect(path / "sub", 5)  # ds.zarr/sub/.zmetadata
    c = zarr.open_consolidated(str(path), mode="r")  # ds.zarr/.zmetadata
    assert c["sub/temp"].shape == (5, 4) and c["temp"].shape == (3, 4)
    assert np.array_equal(c["sub/temp"][3:], np.full((2, 4), 9.0))
    # A create that makes parent groups lists them too.
    zarrpp.open_group(str(path / "sub"), mode="r+").create_array("p/q", shape=(2,), dtype="i4", zarr_format=2)
    for p, pre in ((path / "sub", ""), (path, "sub/")):
        assert zarr.open_consolidated(str(p), mode="r")[pre + "p/q"].shape == (2,)


def test_cli_changes_keep_xarray_and_zarr_python_current(tmp_path):
    path = _write(tmp_path, nested=True)
    cli = cli_path()

    def run(*args):
        r = subprocess.run([cli, *map(str, args)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "warning" not in r.stderr, r.stderr
        return r

    for name, shape in (("time", (2,)), ("temp", (2, 4)), ("flag", (2,))):
        a = zarrpp.open_array(str(path / "sub" / name))
        np.save(tmp_path / f"{name}.npy", np.full(shape, 7, dtype=a.dtype))
        run("append", path / "sub" / name, "--axis", "0", "--from", tmp_path / f"{name}.npy")
    _expect(path / "sub", 5)
    assert zarr.open_consolidated(str(path), mode="r")["sub/time"].shape == (5,)
    for name, shape in (("time", "4"), ("temp", "4,4"), ("flag", "4")):
        run("resize", path / "sub" / name, "--shape", shape)
    _expect(path / "sub", 4)
    assert zarr.open_consolidated(str(path), mode="r")["sub/flag"].shape == (4,)
    run("create", path / "sub" / "made", "--shape", "3", "--chunks", "3", "--dtype", "int32", "--zarr-format", "2",
        "--attrs", '{"by": "cli"}')
    run("create", path / "sub" / "made", "--shape", "5", "--chunks", "3", "--dtype", "int32", "--zarr-format", "2",
        "--overwrite")
    run("copy", path / "sub" / "temp", path / "sub" / "copied", "--chunks", "2,2")
    for p, pre in ((path / "sub", ""), (path, "sub/")):
        c = zarr.open_consolidated(str(p), mode="r")
        assert c[pre + "made"].shape == (5,) and c[pre + "copied"].shape == (4, 4)
        assert np.array_equal(c[pre + "copied"][:], c[pre + "temp"][:])
    # Replaced by a Zarr v3 array (the CLI's default format): .zmetadata, which lists v2 nodes only,
    # forgets it.
    run("create", path / "sub" / "made", "--shape", "5", "--chunks", "3", "--dtype", "int32", "--overwrite")
    for p, pre in ((path / "sub", ""), (path, "sub/")):
        assert pre + "made" not in zarr.open_consolidated(str(p), mode="r")


def _unshare_or_skip():
    """unshare -m (a private mount namespace, to bind-mount a file read-only even as root)."""
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True, text=True)
    if r.returncode != 0:
        why = f"unshare -m is refused here ({r.stderr.strip() or r.returncode}): cannot make .zmetadata unwritable"
        if os.environ.get("CI") == "true":
            pytest.fail(why + " (under CI=true this must run)")
        print(why)
        pytest.skip(why)


def _read_only(doc, *cmd):
    """Runs cmd with `doc` bind-mounted read-only over itself (inside unshare -m)."""
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    return subprocess.run(["unshare", "-m", "sh", "-c", script, str(doc), *map(str, cmd)], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})


def test_a_failed_refresh_warns_naming_the_document_cli_and_python(tmp_path):
    _unshare_or_skip()
    path = _write(tmp_path, nested=True)
    doc = os.path.realpath(str(path / ".zmetadata"))
    before = open(doc).read()
    # The CLI: the change is made (exit 0), one warning line names the stale document.
    r = _read_only(doc, cli_path(), "resize", path / "sub" / "flag", "--shape", "7")
    assert r.returncode == 0, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("zarrpp: warning: ")]
    assert len(lines) == 1, r.stderr
    assert f"consolidated metadata at '{doc}' is stale: refreshing it failed" in lines[0], r.stderr
    assert f"zarr.consolidate_metadata('{os.path.dirname(doc)}')" in lines[0], r.stderr
    assert zarrpp.open_array(str(path / "sub" / "flag")).shape == (7,)
    assert open(doc).read() == before  # the read-only one, as it was
    assert zarr.open_consolidated(str(path / "sub"), mode="r")["flag"].shape == (7,)  # the writable one refreshed
    # Python: a zarrpp.ZarrppWarning with the same message, and the change made.
    code = ("import warnings, zarrpp\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            f"    zarrpp.open_array({str(path / 'sub' / 'flag')!r}, mode='r+').resize(6)\n"
            "print(repr([(x.category.__name__, str(x.message)) for x in w]))\n")
    r = _read_only(doc, sys.executable, "-c", code)
    assert r.returncode == 0, r.stderr
    got = eval(r.stdout.strip().splitlines()[-1])
    assert len(got) == 1 and got[0][0] == "ZarrppWarning", got
    assert f"consolidated metadata at '{doc}' is stale" in got[0][1], got
    assert zarrpp.open_array(str(path / "sub" / "flag")).shape == (6,)
    assert json.load(open(doc))["metadata"]["sub/flag/.zarray"]["shape"] == [3]  # stale, as warned
    # Once writable again, the next change brings it up to date.
    zarrpp.open_array(str(path / "sub" / "flag"), mode="r+").resize(4)
    assert zarr.open_consolidated(str(path), mode="r")["sub/flag"].shape == (4,)


def test_a_malformed_zmetadata_warns_and_w_error_raises_after_the_change(tmp_path):
    path = _write(tmp_path)
    (path / ".zmetadata").write_text("{not json")
    a = zarrpp.open_array(str(path / "flag"), mode="r+")
    with pytest.warns(zarrpp.ZarrppWarning, match=r"consolidated metadata at '.*/ds.zarr/\.zmetadata' is stale: "
                                                  r"refreshing it failed \(.*malformed JSON") as w:
        a.resize(5)
    assert w[0].filename == __file__  # pointed at the caller
    assert zarrpp.open_array(str(path / "flag")).shape == (5,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(zarrpp.ZarrppWarning):
            a.resize(6)
    assert zarrpp.open_array(str(path / "flag")).shape == (6,)  # the change was made all the same
