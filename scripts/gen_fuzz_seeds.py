#!/usr/bin/python3
"""Writes the libFuzzer seed corpora under fuzz/corpus/ (deterministic). Run with /usr/bin/python3."""
import gzip
import json
import os
import struct

import numpy as np
import numcodecs

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus")


def put(target, name, data):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def crc32c(b):
    crc = 0xFFFFFFFF
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


base = {"zarr_format": 3, "node_type": "array", "shape": [9, 4], "data_type": "int32",
        "chunk_grid": {"name": "regular_bounded",
                       "configuration": {"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-3, 0]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": {}}
put("fuzz_metadata", "bounded", json.dumps(base, indent=2))
m = dict(base)
m["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": [2, 2]}}
m["data_type"] = "float32"
m["fill_value"] = "NaN"
m["codecs"] = [{"name": "transpose", "configuration": {"order": [1, 0]}},
               {"name": "bytes", "configuration": {"endian": "big"}},
               {"name": "zstd", "configuration": {"level": 3, "checksum": True}}, {"name": "crc32c"}]
put("fuzz_metadata", "regular_codecs", json.dumps(m))
m = dict(base)
m["codecs"] = [{"name": "sharding_indexed", "configuration": {
    "chunk_shape": [2, 2],
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
               {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4,
                                                   "blocksize": 0}}],
    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
    "index_location": "start"}}]
m["dimension_names"] = ["t", None]
m["ext"] = {"must_understand": False}
put("fuzz_metadata", "sharded", json.dumps(m))
put("fuzz_metadata", "group", json.dumps({"zarr_format": 3, "node_type": "group", "attributes": {"a": [1, 2.5, "x"]}}))
m = dict(base)
m["data_type"] = "complex128"
m["fill_value"] = ["NaN", "0x7ff0000000000001"]
m["chunk_key_encoding"] = "v2"
put("fuzz_metadata", "complex_v2", json.dumps(m))
put("fuzz_metadata", "zarray", json.dumps({"zarr_format": 2, "shape": [6, 5], "chunks": [4, 2], "dtype": ">f8",
                                           "compressor": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": -1,
                                                          "blocksize": 0},
                                           "fill_value": "NaN", "order": "F",
                                           "filters": [{"id": "delta", "dtype": ">f8"},
                                                       {"id": "shuffle", "elementsize": 8}],
                                           "dimension_separator": "/"}, indent=4, sort_keys=True))
put("fuzz_metadata", "zarray_object", json.dumps({"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "|O",
                                                  "compressor": None, "fill_value": "", "order": "C",
                                                  "filters": [{"id": "vlen-utf8"}]}, indent=4, sort_keys=True))
m = dict(base)
m["data_type"] = "string"
m["fill_value"] = "-"
m["codecs"] = [{"name": "vlen-utf8", "configuration": {}}]
put("fuzz_metadata", "string", json.dumps(m))

for i, k in enumerate(["c/0/0", "c/-1/0", "c.-12.3", "c", "0", "-1.0", "c/9223372036854775807", "c/-0/0", "c/01/2",
                       "../x", "a//b"]):
    put("fuzz_chunk_key", f"k{i}", k)

# fuzz_codecs inputs: a byte picking the pipeline, a byte picking the inner chunks the partial
# decoder is asked for (bit u: unit u; 0x80: decode into the output directly), the encoded bytes.
PICK = b"\x0f"
raw = (np.arange(64, dtype="<u2") * 37 % 1000).astype("<u2").tobytes()
put("fuzz_codecs", "gzip", b"\x00" + PICK + gzip.compress(raw, mtime=0))
put("fuzz_codecs", "zstd", b"\x01" + PICK + numcodecs.Zstd(level=1).encode(raw))
put("fuzz_codecs", "blosc_lz4", b"\x02" + PICK
    + numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE).encode(np.frombuffer(raw, "<u2")))
put("fuzz_codecs", "blosc_zstd", b"\x03" + PICK
    + numcodecs.Blosc(cname="zstd", clevel=5, shuffle=numcodecs.Blosc.BITSHUFFLE).encode(np.frombuffer(raw, "<u2")))
be = np.frombuffer(raw, "<u2").astype(">u2").tobytes()
put("fuzz_codecs", "crc", b"\x04" + PICK + be + struct.pack("<I", crc32c(be)))
put("fuzz_codecs", "transpose", b"\x05" + PICK + be)
# a shard of 8x8 with 4x4 inner chunks (zstd), index at the end with crc32c; inner chunk 1 empty
a = np.frombuffer(raw, "<u2").reshape(8, 8)
parts, index, off = [], [], 0
for i in range(2):
    for j in range(2):
        if (i, j) == (0, 1):
            index += [2**64 - 1, 2**64 - 1]
            continue
        enc = numcodecs.Zstd(level=1).encode(np.ascontiguousarray(a[4*i:4*i+4, 4*j:4*j+4]).tobytes())
        parts.append(enc)
        index += [off, len(enc)]
        off += len(enc)
ib = struct.pack("<8Q", *index)
put("fuzz_codecs", "shard_end", b"\x06" + PICK + b"".join(parts) + ib + struct.pack("<I", crc32c(ib)))
put("fuzz_codecs", "shard_start_empty", b"\x07" + PICK + struct.pack("<8Q", *([2**64 - 1] * 8)))
# Zarr v2 / numcodecs pipelines (indices 8..13), then vlen-utf8 + zstd (index 14).
put("fuzz_codecs", "nc_zlib", b"\x08" + PICK + numcodecs.Zlib(1).encode(raw))
put("fuzz_codecs", "nc_lz4", b"\x09" + PICK + numcodecs.LZ4().encode(raw))
put("fuzz_codecs", "nc_bz2", b"\x0a" + PICK + numcodecs.BZ2(1).encode(raw))
put("fuzz_codecs", "nc_lzma", b"\x0b" + PICK + numcodecs.LZMA().encode(raw))
d = numcodecs.Delta("<u2").encode(np.frombuffer(raw, "<u2")).astype(">u2").tobytes()
put("fuzz_codecs", "nc_delta_shuffle", b"\x0c" + PICK + numcodecs.Shuffle(2).encode(d).tobytes())
put("fuzz_codecs", "nc_astype",
    b"\x0d" + PICK + numcodecs.Zlib(1).encode((np.frombuffer(raw, "<u2") % 256).astype("u1").tobytes()))
put("fuzz_codecs", "vlen", b"\x0e" + PICK + numcodecs.Zstd(1).encode(
    numcodecs.VLenUTF8().encode(np.array(["a", "", "ß€", "x" * 9, "y", "z", "0", "1"], dtype=object))))
put("fuzz_codecs", "shard_end_direct", b"\x06\x8d" + b"".join(parts) + ib + struct.pack("<I", crc32c(ib)))

for i, s in enumerate(["", "...", "0:3, ::2", "-1", ":, 5", "[0,2,5], :", "::-1, 1:4:2, ...",
                       "[True,False,True,True,False], 0", "1:2:3:4", "[", "9223372036854775807", "-3:, :-1, 1"]):
    put("fuzz_selection", f"s{i}", s)
print("seeds written to", os.path.normpath(root))
