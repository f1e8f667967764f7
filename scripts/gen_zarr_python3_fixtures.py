"""Hand-written fixtures of what zarr-python 3 (3.0-3.1) writes, for tests/test_formats.cpp.

No zarr-python 3 runs here (Debian has 2.13), so the documents are written by hand following
zarr-python 3.1's source (zarr/core/group.py: "consolidated_metadata" in group zarr.json, null or
{"kind": "inline", "must_understand": false, "metadata": {path: document}}; zarr/codecs/numcodecs:
codec name "numcodecs.<id>", configuration = the numcodecs configuration without "id"; the
"string" data type with the "vlen-utf8" codec) and the chunk bytes by numcodecs 0.11 itself, which
is what zarr-python 3's numcodecs wrappers call. Run from the repository root with Debian's Python:

    /usr/bin/python3 scripts/gen_zarr_python3_fixtures.py
"""
import json
import os
import shutil

import numcodecs
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "data", "zarr_python3")


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)  # zarr-python 3 writes indent=2


def array_doc(shape, chunks, dtype, codecs, fill=0, attrs=None, dims=None):
    d = {"shape": shape, "data_type": dtype,
         "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
         "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
         "fill_value": fill, "codecs": codecs, "attributes": attrs or {},
         "zarr_format": 3, "node_type": "array", "storage_transformers": []}
    if dims is not None:
        d["dimension_names"] = dims
    return d


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    values = np.arange(10, dtype="<i4") * 3 - 7
    # numcodecs.delta -> bytes -> numcodecs.zlib, as numcodecs.zarr3.Delta / Zlib write them.
    delta_codecs = [{"name": "numcodecs.delta", "configuration": {"dtype": "<i4"}},
                    {"name": "bytes", "configuration": {"endian": "little"}},
                    {"name": "numcodecs.zlib", "configuration": {"level": 1}}]
    a_doc = array_doc([10], [5], "int32", delta_codecs, attrs={"units": "m"}, dims=["x"])
    # float64 with fixedscaleoffset (dtype left out: zarr-python 3 fills it from the array) and lz4.
    f_values = np.linspace(0, 1, 8)
    f_codecs = [{"name": "numcodecs.fixedscaleoffset", "configuration": {"offset": 0, "scale": 1000, "astype": "<i2"}},
                {"name": "bytes", "configuration": {"endian": "little"}},
                {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}]
    f_doc = array_doc([8], [8], "float64", f_codecs, fill=0.0)
    # A string array as zarr-python 3 writes it ("string", vlen-utf8, then zstd), two chunks,
    # the second missing (it reads as the fill value).
    s_values = np.array(["", "ß€😀", "plain", "x"], dtype=object)
    s_doc = array_doc([6], [4], "string", [{"name": "vlen-utf8", "configuration": {}},
                                           {"name": "zstd", "configuration": {"level": 0, "checksum": False}}],
                      fill="n/a")
    # And bytes ("variable_length_bytes", vlen-bytes; the fill value is base64 as zarr-python 3 writes it).
    b_values = np.array([b"\x00\xff", b"", b"abc"], dtype=object)
    b_doc = array_doc([3], [3], "variable_length_bytes", [{"name": "vlen-bytes", "configuration": {}}], fill="AQI=")
    sub_doc = {"attributes": {"level": 1}, "zarr_format": 3, "consolidated_metadata": None, "node_type": "group"}

    for name, consolidated in [("consolidated_null", None), ("consolidated", True)]:
        base = os.path.join(OUT, name)
        write(os.path.join(base, "a", "zarr.json"), a_doc)
        os.makedirs(os.path.join(base, "a", "c"), exist_ok=True)
        for i in range(2):
            chunk = values[5 * i:5 * i + 5]
            enc = numcodecs.Zlib(1).encode(numcodecs.Delta("<i4").encode(chunk).tobytes())
            with open(os.path.join(base, "a", "c", str(i)), "wb") as f:
                f.write(enc)
        write(os.path.join(base, "f", "zarr.json"), f_doc)
        os.makedirs(os.path.join(base, "f", "c"), exist_ok=True)
        fso = numcodecs.FixedScaleOffset(offset=0, scale=1000, dtype="<f8", astype="<i2")
        with open(os.path.join(base, "f", "c", "0"), "wb") as f:
            f.write(numcodecs.LZ4().encode(fso.encode(f_values).tobytes()))
        write(os.path.join(base, "sub", "zarr.json"), sub_doc)
        write(os.path.join(base, "strings", "zarr.json"), s_doc)
        os.makedirs(os.path.join(base, "strings", "c"), exist_ok=True)
        with open(os.path.join(base, "strings", "c", "0"), "wb") as f:
            f.write(numcodecs.Zstd(0).encode(numcodecs.VLenUTF8().encode(s_values)))
        write(os.path.join(base, "blobs", "zarr.json"), b_doc)
        os.makedirs(os.path.join(base, "blobs", "c"), exist_ok=True)
        with open(os.path.join(base, "blobs", "c", "0"), "wb") as f:
            f.write(numcodecs.VLenBytes().encode(b_values))
        cm = None
        if consolidated:
            cm = {"kind": "inline", "must_understand": False,
                  "metadata": {"a": a_doc, "blobs": b_doc, "f": f_doc, "strings": s_doc, "sub": sub_doc}}
        write(os.path.join(base, "zarr.json"), {"attributes": {"title": name}, "zarr_format": 3,
                                                "consolidated_metadata": cm, "node_type": "group"})
    np.save(os.path.join(OUT, "a_values.npy"), values)
    np.save(os.path.join(OUT, "f_values.npy"), fso.decode(fso.encode(f_values)))
    print("wrote", os.path.relpath(OUT, ROOT))


if __name__ == "__main__":
    main()
