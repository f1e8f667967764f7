#!/usr/bin/python3
"""Writes Zarr v3 arrays byte by byte from the specification, with NumPy and numcodecs only (no
Zarr library), into tests/data/arrays/ (valid, each with <name>.expected.npy) and
tests/data/broken/ (arrays zarrpp must refuse). Deterministic. Run with /usr/bin/python3."""
import gzip
import json
import os
import shutil
import struct

import numpy as np
import numcodecs

here = os.path.dirname(os.path.abspath(__file__))
out_valid = os.path.join(here, "..", "tests", "data", "arrays")
out_broken = os.path.join(here, "..", "tests", "data", "broken")
for d in (out_valid, out_broken):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)


def crc32c(b):
    crc = 0xFFFFFFFF
    for x in b:
        crc ^= x
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def write(root, key, data):
    p = os.path.join(root, *key.split("/"))
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)


def meta(root, m):
    write(root, "zarr.json", json.dumps(m, indent=2).encode())


def chunk_iter(shape, chunks):
    grid = [-(-s // c) for s, c in zip(shape, chunks)]
    for idx in np.ndindex(*grid):
        yield idx


def chunk_of(a, idx, chunks, fill):
    """The full-size chunk buffer of chunk idx (edge chunks padded with the fill value)."""
    buf = np.full(chunks, fill, dtype=a.dtype)
    sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, a.shape))
    sub = a[sl]
    buf[tuple(slice(0, n) for n in sub.shape)] = sub
    return buf


def gzip_bytes(b):
    return gzip.compress(b, compresslevel=6, mtime=0)


# 1. Sharded, big-endian inner chunks compressed with gzip, index at the START with crc32c; all-fill
#    inner chunks are absent from the index; one whole shard is all fill and not stored.
def sharded_start():
    name = "uint16_sharded_gzip_index_start_big_endian"
    root = os.path.join(out_valid, name)
    shape, shard, inner, fill = (10, 7), (4, 4), (2, 2), 9
    a = (np.arange(70, dtype=np.uint16).reshape(shape) * 13 + 100)
    a[0:2, 2:4] = fill          # an all-fill inner chunk
    a[4:8, 4:7] = fill          # shard (1, 1) entirely fill -> not stored
    cps = [s // i for s, i in zip(shard, inner)]
    n_inner = cps[0] * cps[1]
    index_size = n_inner * 16 + 4
    for sidx in chunk_iter(shape, shard):
        sbuf = chunk_of(a, sidx, shard, fill)
        parts, entries, off = [], [], index_size
        for iidx in np.ndindex(*cps):
            ib = sbuf[iidx[0] * 2:(iidx[0] + 1) * 2, iidx[1] * 2:(iidx[1] + 1) * 2]
            if (ib == fill).all():
                entries += [2**64 - 1, 2**64 - 1]
                continue
            enc = gzip_bytes(ib.astype(">u2").tobytes())
            parts.append(enc)
            entries += [off, len(enc)]
            off += len(enc)
        if not parts:
            continue
        idx = struct.pack("<%dQ" % (2 * n_inner), *entries)
        write(root, "c/%d/%d" % sidx, idx + struct.pack("<I", crc32c(idx)) + b"".join(parts))
    meta(root, {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "uint16",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(shard)}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": fill,
                "codecs": [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": list(inner),
                    "codecs": [{"name": "bytes", "configuration": {"endian": "big"}},
                               {"name": "gzip", "configuration": {"level": 6}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                    "index_location": "start"}}],
                "attributes": {"written_by": "gen_array_fixtures.py"}})
    np.save(os.path.join(out_valid, name + ".expected.npy"), a)


# 2. float32 with transpose + zstd, v2 chunk keys, NaN fill, a missing chunk.
def transpose_v2():
    name = "float32_transpose_zstd_v2_keys"
    root = os.path.join(out_valid, name)
    shape, chunks = (5, 6, 4), (2, 3, 4)
    a = (np.arange(120, dtype=np.float32).reshape(shape) / 7).astype(np.float32)
    a[4, 3:6, :] = np.nan   # chunk (2, 1, 0) holds rows 4..5 (5 is past the end): all NaN -> missing
    for idx in chunk_iter(shape, chunks):
        buf = chunk_of(a, idx, chunks, np.float32("nan"))
        if np.isnan(buf).all():
            continue
        t = np.ascontiguousarray(np.transpose(buf, (2, 0, 1)))
        write(root, ".".join(map(str, idx)), numcodecs.Zstd(level=5).encode(t.astype("<f4").tobytes()))
    meta(root, {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "float32",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                "chunk_key_encoding": {"name": "v2", "configuration": {"separator": "."}},
                "fill_value": "NaN",
                "codecs": [{"name": "transpose", "configuration": {"order": [2, 0, 1]}},
                           {"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "zstd", "configuration": {"level": 5, "checksum": False}}],
                "dimension_names": ["z", "y", None]})
    np.save(os.path.join(out_valid, name + ".expected.npy"), a)


# 3. int64 1-d, blosc zstd bitshuffle, '.' separator, fill -7 with missing chunks.
def blosc_1d():
    name = "int64_blosc_bitshuffle_dot_separator"
    root = os.path.join(out_valid, name)
    shape, chunks, fill = (23,), (5,), -7
    a = np.arange(23, dtype=np.int64) * -1000003
    a[5:10] = fill
    for idx in chunk_iter(shape, chunks):
        buf = chunk_of(a, idx, chunks, fill)
        if (buf == fill).all():
            continue
        enc = numcodecs.Blosc(cname="zstd", clevel=3, shuffle=numcodecs.Blosc.BITSHUFFLE,
                              blocksize=0).encode(buf.astype("<i8"))
        write(root, "c.%d" % idx, enc)
    meta(root, {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "int64",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "."}},
                "fill_value": fill,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                           {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 3, "shuffle": "bitshuffle",
                                                               "typesize": 8, "blocksize": 0}}]})
    np.save(os.path.join(out_valid, name + ".expected.npy"), a)


# 4. bool with crc32c; complex128 big-endian; 0-d float64.
def small_ones():
    name = "bool_crc32c"
    root = os.path.join(out_valid, name)
    shape, chunks = (3, 5), (2, 2)
    a = (np.arange(15).reshape(shape) % 3 == 0)
    for idx in chunk_iter(shape, chunks):
        b = chunk_of(a, idx, chunks, False).astype(np.uint8).tobytes()
        write(root, "c/%d/%d" % idx, b + struct.pack("<I", crc32c(b)))
    meta(root, {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "bool",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": False,
                "codecs": [{"name": "bytes"}, {"name": "crc32c"}]})
    np.save(os.path.join(out_valid, name + ".expected.npy"), a)

    name = "complex128_big_endian"
    root = os.path.join(out_valid, name)
    shape, chunks = (4,), (3,)
    a = np.array([1 + 2j, -0.5j, np.inf - 1j, 3.25], dtype=np.complex128)
    for idx in chunk_iter(shape, chunks):
        write(root, "c/%d" % idx, chunk_of(a, idx, chunks, 0).astype(">c16").tobytes())
    meta(root, {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "complex128",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(chunks)}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": [0.0, 0.0],
                "codecs": [{"name": "bytes", "configuration": {"endian": "big"}}]})
    np.save(os.path.join(out_valid, name + ".expected.npy"), a)

    name = "float64_0d"
    root = os.path.join(out_valid, name)
    a = np.array(-2.5, dtype=np.float64)
    write(root, "c", a.astype("<f8").tobytes())
    meta(root, {"zarr_format": 3, "node_type": "array", "shape": [], "data_type": "float64",
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": []}},
                "chunk_key_encoding": {"name": "default"}, "fill_value": "0x7ff8000000000001",
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})
    np.save(os.path.join(out_valid, name + ".expected.npy"), a)


# Broken arrays: each must be refused with a clear error (the test names the expected words).
def broken():
    good = {"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int32",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [4]}},
            "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}]}
    payload = np.arange(4, dtype="<i4").tobytes()

    def case(name, m, chunks):
        root = os.path.join(out_broken, name)
        meta(root, m)
        for k, v in chunks.items():
            write(root, k, v)
    m = dict(good)
    m["zarr_format"] = 2
    case("wrong_zarr_format", m, {})
    m = dict(good)
    m["codecs"] = [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "lzma"}]
    case("unknown_codec", m, {"c/0": payload})
    case("bad_checksum", good, {"c/0": payload + struct.pack("<I", crc32c(payload) ^ 1)})
    case("truncated_chunk", good, {"c/0": (payload + struct.pack("<I", crc32c(payload)))[:-6]})
    m = dict(good)
    m["chunk_grid"] = {"name": "rectilinear", "configuration": {"chunk_shapes": [[2, 2]]}}
    case("unknown_chunk_grid", m, {})
    m = dict(good)
    m["shape"] = [8]
    m["chunk_grid"] = {"name": "regular", "configuration": {"chunk_shape": [8]}}
    m["codecs"] = [{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [4], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                    "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
                    "index_location": "end"}}]
    idx = struct.pack("<4Q", 0, 16, 16, 16)
    shard = payload + payload + idx + struct.pack("<I", crc32c(idx))
    case("truncated_shard", m, {"c/0": shard[:20] + shard[-36:]})   # the data is cut, the index is whole
    idx2 = struct.pack("<4Q", 0, 16, 1 << 40, 16)
    case("shard_index_out_of_range", m, {"c/0": payload + payload + idx2 + struct.pack("<I", crc32c(idx2))})
    m = dict(good)
    m["must_be_understood"] = {"x": 1}
    case("unknown_field", m, {})
    m = dict(good)
    m["fill_value"] = "1.5"
    case("bad_fill_value", m, {})


sharded_start()
transpose_v2()
blosc_1d()
small_ones()
broken()
print("fixtures written to", os.path.normpath(out_valid), "and", os.path.normpath(out_broken))
