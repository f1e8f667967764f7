"""dtype= and --dtype read by the core's one data-type table (issue 68): every spelling of the
shared table (tests/data/dtype_spellings.json, which the C++ test reads too) means the same type
in Python and in the CLI, and every refused one is refused by both with the same reason."""
import json
import os
import subprocess

import pytest

import zarrpp
from zarrpp import _zarrpp

from conftest import SOURCE, cli_path

with open(os.path.join(SOURCE, "tests", "data", "dtype_spellings.json")) as f:
    TABLE = json.load(f)


def _type_name(z):
    """The zarrpp data type of an array by name: NumPy's dtype says it, but for the types it holds
    as object or void (variable-length, r<bits>), which the metadata names."""
    if z.dtype.kind == "O" or (z.dtype.kind == "V" and z.dtype.names is None and isinstance(z.metadata.data_type, str)):
        return z.metadata.data_type
    return _zarrpp.data_type_name(z.dtype)


def _cli_create(path, spelling):
    return subprocess.run([cli_path(), "create", path, "--shape", "4", "--chunks", "2", "--dtype", spelling],
                          capture_output=True, text=True)


@pytest.mark.parametrize("row", TABLE["accepted"], ids=lambda r: r["spelling"])
def test_python_reads_each_spelling_as_the_table_says(row):
    _, name, endian = _zarrpp.parse_dtype(row["spelling"])
    assert (name, endian) == (row["name"], "big" if row["big_endian"] else "little")
    z = zarrpp.create_array({}, shape=(4,), chunks=(2,), dtype=row["spelling"])
    assert _type_name(z) == row["name"]


@pytest.mark.parametrize("row", TABLE["accepted"], ids=lambda r: r["spelling"])
def test_cli_reads_each_spelling_as_the_table_says(row, tmp_path):
    path = str(tmp_path / "a.zarr")
    r = _cli_create(path, row["spelling"])
    if row["big_endian"]:  # the CLI's byte order is the bytes codec's: a big-endian spelling says how to give it
        assert r.returncode != 0 and "big-endian" in r.stderr, r.stderr
        assert not os.path.exists(path)
        return
    assert r.returncode == 0, r.stderr
    assert _type_name(zarrpp.open_array(path, mode="r")) == row["name"]


@pytest.mark.parametrize("row", TABLE["refused"], ids=lambda r: r["spelling"])
def test_both_refuse_each_refused_spelling_with_its_reason(row, tmp_path):
    with pytest.raises((TypeError, ValueError), match=row["words"].replace("(", r"\(").replace("[", r"\[")):
        zarrpp.create_array({}, shape=(4,), dtype=row["spelling"])
    path = str(tmp_path / "a.zarr")
    r = _cli_create(path, row["spelling"])
    assert r.returncode != 0 and row["words"] in r.stderr, r.stderr
    assert not os.path.exists(path)
