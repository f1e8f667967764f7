"""chunks="auto" / shards="auto" decided once (issue 68): the CLI and Python give the grids
zarr-python 3's rule gives, for every kind of data type, from the table the C++ test reads too."""
import json
import os
import subprocess

import numpy as np
import pytest

import zarrpp

from conftest import SOURCE, cli_path

with open(os.path.join(SOURCE, "tests", "data", "auto_grids.json")) as f:
    CASES = json.load(f)["cases"]


def _label(case):
    return f"{case['cli']}-{'x'.join(map(str, case['shape']))}{'-sharded' if case['sharded'] else ''}"


def _numpy_dtype(given):
    if given in ("str", "bytes"):
        return {"str": str, "bytes": bytes}[given]
    return np.dtype([tuple(f) for f in given]) if isinstance(given, list) else np.dtype(given)


def _stored_grid(path, zarr_format):
    if zarr_format == 2:
        with open(os.path.join(path, ".zarray")) as f:
            return tuple(json.load(f)["chunks"]), None
    with open(os.path.join(path, "zarr.json")) as f:
        meta = json.load(f)
    outer = tuple(meta["chunk_grid"]["configuration"]["chunk_shape"])
    sharding = [c for c in meta["codecs"] if c["name"] == "sharding_indexed"]
    if sharding:
        return tuple(sharding[0]["configuration"]["chunk_shape"]), outer
    return outer, None


@pytest.mark.parametrize("case", CASES, ids=_label)
def test_python_create_array_auto(case):
    extra = {"shards": "auto"} if case["sharded"] else {}
    z = zarrpp.create_array({}, shape=tuple(case["shape"]), dtype=_numpy_dtype(case["numpy"]), chunks="auto",
                            zarr_format=case["zarr_format"], **extra)
    assert z.chunks == tuple(case["chunks"])
    assert z.shards == (tuple(case["shards"]) if case["sharded"] else None)


@pytest.mark.parametrize("case", CASES, ids=_label)
def test_cli_create_auto(case, tmp_path):
    path = str(tmp_path / "a.zarr")
    args = [cli_path(), "create", path, "--shape", ",".join(map(str, case["shape"])) or "", "--dtype", case["cli"],
            "--chunks", "auto", "--zarr-format", str(case["zarr_format"])]
    if case["sharded"]:
        args += ["--shards", "auto"]
    r = subprocess.run(args, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    chunks, shards = _stored_grid(path, case["zarr_format"])
    assert chunks == tuple(case["chunks"])
    assert shards == (tuple(case["shards"]) if case["sharded"] else None)
