#!/usr/bin/env python3
"""Writes the regular_bounded conformance corpus: arrays, expected values and manifest.json.

An independent writer: NumPy and numcodecs for the compressors, CRC32C and the shard index by hand
from the Zarr v3 specification. It shares no code with zarrpp, so zarrpp reading the corpus is a
check of both against the extension document (docs/extensions/regular_bounded/README.md).

    /usr/bin/python3 conformance/regular_bounded/generate.py [OUT_DIR]

OUT_DIR defaults to the folder of this script. It replaces read/, refuse/ and manifest.json there
and is deterministic: running it again gives the same bytes (tests check that the committed corpus
is what this script writes). The four arrays under read/ whose names start with `independent_`
were written by another independent writer (the project's reference fixtures) and are copied, not
generated; this script leaves them in place and lists them in the manifest.
"""
import gzip
import json
import os
import shutil
import struct
import sys

import numcodecs
import numpy as np

# ---- CRC32C (Castagnoli), as the crc32c codec appends it: 4 bytes little-endian -------------------
_CRC_TABLE = []
for _n in range(256):
    _c = _n
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _CRC_TABLE.append(_c)


def crc32c(data: bytes) -> int:
    c = 0xFFFFFFFF
    for b in data:
        c = _CRC_TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283  # the standard check value


# ---- codecs ---------------------------------------------------------------------------------------
def encode(codecs, chunk: np.ndarray) -> bytes:
    """Encodes a chunk (C order, the array's dtype) through a list of v3 codec descriptions."""
    data = None
    for c in codecs:
        name, cfg = c["name"], c.get("configuration", {})
        if name == "bytes":
            endian = cfg.get("endian", "little")
            dt = (chunk.dtype.newbyteorder("<" if endian == "little" else ">") if chunk.dtype.itemsize > 1
                  else chunk.dtype)
            data = np.ascontiguousarray(chunk.astype(dt)).tobytes()
        elif name == "zstd":
            data = numcodecs.Zstd(level=cfg["level"]).encode(data)
        elif name == "gzip":
            data = gzip.compress(data, compresslevel=cfg["level"], mtime=0)  # deterministic header
        elif name == "blosc":
            shuffle = {"noshuffle": 0, "shuffle": 1, "bitshuffle": 2}[cfg["shuffle"]]
            codec = numcodecs.Blosc(cname=cfg["cname"], clevel=cfg["clevel"], shuffle=shuffle,
                                    blocksize=cfg["blocksize"])
            data = bytes(codec.encode(np.frombuffer(
                data, dtype=f"u{cfg['typesize']}" if cfg["typesize"] in (1, 2, 4, 8) else "u1")))
        elif name == "crc32c":
            data = data + struct.pack("<I", crc32c(data))
        else:
            raise ValueError(f"this writer does not implement codec {name}")
    return bytes(data)


# ---- the grid (the extension document's formulas, per dimension) --------------------------------
def chunk_range(L, origin, c, n):
    """First and one-past-last chunk index along one dimension."""
    if n == 0:
        return 0, 0
    return (L - origin) // c, (L + n - 1 - origin) // c + 1


def key_of(idx, encoding):
    name, sep = encoding
    if name == "default":
        return "c" + "".join(sep + str(k) for k in idx)
    return sep.join(str(k) for k in idx) if idx else "0"


def is_fill(a, fill):
    a = np.asarray(a)
    if a.dtype.kind == "f" and np.isnan(fill):
        return bool(np.all(np.isnan(a)))
    return bool(np.all(a == fill))


def fill_json(fill, dtype):
    if dtype.kind == "f" and np.isnan(fill):
        return "NaN"
    if dtype.kind == "b":
        return bool(fill)
    return fill.item() if hasattr(fill, "item") else fill


V3_NAMES = {"b": "bool", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64", "u1": "uint8", "u2": "uint16",
            "u4": "uint32", "u8": "uint64", "f4": "float32", "f8": "float64"}


def v3_name(dtype):
    return "bool" if dtype.kind == "b" else V3_NAMES[dtype.kind + str(dtype.itemsize)]


class Writer:
    def __init__(self, out):
        self.out = out
        self.manifest = []

    def array(self, name, *, description, rules, dtype, shape, chunk_shape, origin, lower_bound, fill, values,
              codecs=None, encoding=("default", "/"), shard=None, skip=(), stray=None, boundary_value=None):
        """Writes read/<name>: `values` (shape `shape`) at coordinates lower_bound..., chunks of the
        regular_bounded grid (or shards: `shard` = dict(inner=..., codecs=..., index_codecs=...,
        index_location=...)). Chunks in `skip` are not stored; `stray` maps extra keys to a value
        whose full chunk is stored there (keys a reader must ignore); `boundary_value` is written at
        buffer positions outside the domain instead of the fill value (a reader must not show it)."""
        dtype = np.dtype(dtype)
        rank = len(shape)
        values = np.asarray(values, dtype=dtype).reshape(shape)
        codecs = codecs or [{"name": "bytes", "configuration": {"endian": "little"}}]
        path = os.path.join(self.out, "read", name)
        os.makedirs(path)
        expected = np.full(shape, fill, dtype=dtype)
        stored = 0
        ranges = [chunk_range(lower_bound[d], origin[d], chunk_shape[d], shape[d]) for d in range(rank)]
        for idx in np.ndindex(*[hi - lo for lo, hi in ranges]) if rank else [()]:
            k = tuple(ranges[d][0] + idx[d] for d in range(rank))
            buf = np.full(chunk_shape, fill if boundary_value is None else boundary_value, dtype=dtype)
            inside = np.zeros(chunk_shape, dtype=bool)
            src, dst = [], []
            for d in range(rank):
                start = origin[d] + k[d] * chunk_shape[d]  # coordinate of buffer position 0
                lo = max(start, lower_bound[d])
                hi = min(start + chunk_shape[d], lower_bound[d] + shape[d])
                src.append(slice(lo - lower_bound[d], hi - lower_bound[d]))
                dst.append(slice(lo - start, hi - start))
            buf[tuple(dst)] = values[tuple(src)]
            inside[tuple(dst)] = True
            if k in skip:
                continue
            if shard is None:
                if boundary_value is None and is_fill(buf[inside], fill):
                    continue  # an all-fill chunk is not stored (missing chunks read as fill)
                data = encode(codecs, buf)
            else:
                data = self._shard(buf, inside, fill, shard)
                if data is None:
                    continue
            self._put(path, key_of(k, encoding), data)
            stored += 1
            expected[tuple(src)] = values[tuple(src)]
        for key, v in (stray or {}).items():
            self._put(path, key,
                      encode(codecs if shard is None else [{"name": "bytes", "configuration": {"endian": "little"}}],
                             np.full(chunk_shape, v, dtype=dtype)))
        grid = {"name": "regular_bounded",
                "configuration": {"chunk_shape": list(chunk_shape), "origin": list(origin),
                                  "lower_bound": list(lower_bound)}}
        cke = {"name": encoding[0], "configuration": {"separator": encoding[1]}}
        meta_codecs = codecs if shard is None else [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(shard["inner"]), "codecs": shard["codecs"], "index_codecs": shard["index_codecs"],
            "index_location": shard["index_location"]}}]
        meta = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": v3_name(dtype),
                "chunk_grid": grid, "chunk_key_encoding": cke, "fill_value": fill_json(fill, dtype),
                "codecs": meta_codecs, "attributes": {}}
        with open(os.path.join(path, "zarr.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
        np.save(os.path.join(self.out, "read", name + ".npy"), expected.astype(expected.dtype.newbyteorder("<")))
        self.manifest.append({"path": f"read/{name}", "expect": "read", "values": f"read/{name}.npy",
                              "domain": [[lower_bound[d], lower_bound[d] + shape[d]] for d in range(rank)],
                              "stored_chunks": stored, "rules": rules, "description": description})

    def _shard(self, buf, inside, fill, shard):
        inner = shard["inner"]
        per = [buf.shape[d] // inner[d] for d in range(buf.ndim)]
        chunks, index = [], []
        offset = 0
        for j in np.ndindex(*per):
            sl = tuple(slice(j[d] * inner[d], (j[d] + 1) * inner[d]) for d in range(buf.ndim))
            part, ins = buf[sl], inside[sl]
            if not ins.any() or is_fill(part[ins], fill):
                index.append((2**64 - 1, 2**64 - 1))  # empty: no element of the domain, or all fill
                continue
            data = encode(shard["codecs"], np.ascontiguousarray(part))
            index.append((offset, len(data)))
            chunks.append(data)
            offset += len(data)
        if not chunks:
            return None
        raw = np.array(index, dtype="<u8").reshape(per + [2])
        idx_bytes = encode(shard["index_codecs"], raw)
        if shard["index_location"] == "start":
            shift = len(idx_bytes)
            raw = np.array([(o + shift, n) if o != 2**64 - 1 else (o, n) for o, n in index],
                           dtype="<u8").reshape(per + [2])
            return encode(shard["index_codecs"], raw) + b"".join(chunks)
        return b"".join(chunks) + idx_bytes

    def _put(self, path, key, data):
        p = os.path.join(path, *key.split("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)

    def refuse(self, name, *, reason, rules, grid=None, shape=(6, 4), extra=None, chunk=True):
        """Writes refuse/<name>: a zarr.json a reader must refuse (and, so that a reader that does
        not refuse it has something to misread, chunk c/0/0 holding 1..16)."""
        path = os.path.join(self.out, "refuse", name)
        os.makedirs(path)
        meta = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": "int32", "chunk_grid": grid,
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0,
                "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": {}}
        meta.update(extra or {})
        text = meta if isinstance(meta, str) else json.dumps(meta, indent=2)
        with open(os.path.join(path, "zarr.json"), "w") as f:
            f.write(text + "\n")
        if chunk:
            # Chunks as the grid's declared chunk_shape would have them (c/0/0 a full 4x4), and
            # for the clipped form as zarrs stores them: the edge chunk clipped to the shape
            # (c/1/0 2x4 for shape [6, 4]; c/0/1 4x2 for shape [4, 6]), values 1.. in C order.
            clipped = (grid or {}).get("name") in ("regular_bounded", "zarrs.regular_bounded") and \
                set((grid.get("configuration") or {})) == {"chunk_shape"}
            if clipped:
                full = np.arange(1, 25, dtype="<i4").reshape(shape)
                self._put(path, "c/0/0", np.ascontiguousarray(full[:4, :4]).tobytes())
                self._put(path, "c/1/0" if shape[0] > 4 else "c/0/1",
                          np.ascontiguousarray(full[4:, :] if shape[0] > 4 else full[:, 4:]).tobytes())
            else:
                self._put(path, "c/0/0", np.arange(1, 17, dtype="<i4").tobytes())
        self.manifest.append({"path": f"refuse/{name}", "expect": "refuse", "reason": reason, "rules": rules})

    def refuse_text(self, name, *, reason, rules, text):
        """A zarr.json given as text (for what JSON libraries would not write: 1.0, 1e2, huge numbers)."""
        path = os.path.join(self.out, "refuse", name)
        os.makedirs(path)
        with open(os.path.join(path, "zarr.json"), "w") as f:
            f.write(text)
        self._put(path, "c/0/0", np.arange(1, 17, dtype="<i4").tobytes())
        self.manifest.append({"path": f"refuse/{name}", "expect": "refuse", "reason": reason, "rules": rules})


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    os.makedirs(out, exist_ok=True)
    keep = {}
    read_dir = os.path.join(out, "read")
    if os.path.isdir(read_dir):  # the copied arrays of the other writer stay
        for n in os.listdir(read_dir):
            if n.startswith("independent_"):
                keep[n] = os.path.join(read_dir, n)
    tmp_keep = os.path.join(out, ".keep_tmp")
    if keep:
        os.makedirs(tmp_keep, exist_ok=True)
        for n, p in keep.items():
            shutil.move(p, os.path.join(tmp_keep, n))
    for d in ("read", "refuse"):
        shutil.rmtree(os.path.join(out, d), ignore_errors=True)
    os.makedirs(read_dir)
    for n in keep:
        shutil.move(os.path.join(tmp_keep, n), os.path.join(read_dir, n))
    if keep:
        os.rmdir(tmp_keep)
    w = Writer(out)
    rng = np.random.default_rng(20261201)

    def ramp(shape, dtype, start=1):
        n = int(np.prod(shape)) if shape else 1
        return (np.arange(start, start + n)
                % (127 if np.dtype(dtype).itemsize == 1 else 30000)).astype(dtype).reshape(shape)

    le = [{"name": "bytes", "configuration": {"endian": "little"}}]
    # ---- arrays a reader must read -----------------------------------------------------------
    w.array("worked_example", dtype="int32", shape=(25,), chunk_shape=(10,), origin=(0,), lower_bound=(-5,), fill=0,
            values=ramp((25,), "int32"), rules=["formulas", "negative lower bound", "partly filled first chunk"],
            description="The extension document's worked example: L=-5, O=0, c=10, n=25; keys c/-1 (indices 0-4 at "
                        "buffer positions 5-9), c/0, c/1.")
    w.array("positive_lower_bound", dtype="uint16", shape=(10,), chunk_shape=(4,), origin=(0,), lower_bound=(13,),
            fill=7, values=ramp((10,), "uint16", 100),
            rules=["positive lower bound", "partly filled first and last chunks"],
            description="L=13 > O=0: the first chunk is c/3 (coordinates 12-15, index 0 at buffer position 1), "
                        "the last c/5.")
    w.array("origin_not_lower_bound", dtype="int16", shape=(17,), chunk_shape=(5,), origin=(3,), lower_bound=(-6,),
            fill=-1, values=ramp((17,), "int16", 50), codecs=[{"name": "bytes", "configuration": {"endian": "big"}}],
            rules=["origin differs from lower bound", "negative origin offset", "big-endian bytes"],
            description="O=3, L=-6, c=5: chunk k covers coordinates [3+5k, 8+5k); first chunk c/-2 (buffer offset 1), "
                        "last c/1.")
    w.array("negative_origin_two_axes", dtype="float64", shape=(9, 7), chunk_shape=(4, 3), origin=(-7, -2),
            lower_bound=(-10, 5), fill=float("nan"), values=rng.normal(size=(9, 7)).round(3),
            codecs=le + [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}, {"name": "crc32c"}],
            rules=["negative origin", "partly filled first and last chunks on two axes", "NaN fill value"],
            description="Two axes with negative origins; first chunk c/-1/2, last c/1/4; zstd + crc32c.")
    w.array("partial_chunks_three_axes", dtype="uint8", shape=(5, 6, 4), chunk_shape=(3, 4, 3), origin=(1, -1, 0),
            lower_bound=(-3, 2, -1), fill=255, values=ramp((5, 6, 4), "uint8"),
            codecs=le + [{"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "noshuffle",
                                                             "typesize": 1, "blocksize": 0}}],
            rules=["partly filled first and last chunks on three axes", "origin differs from lower bound"],
            description="Every axis starts inside a chunk, the first two also end inside one; keys such as c/-2/0/-1; "
                        "blosc.")
    for enc, sep, label in [("default", ".", "default_dot"), ("v2", ".", "v2_dot"), ("v2", "/", "v2_slash"),
                            ("default", "/", "default_slash")]:
        w.array(f"keys_{label}", dtype="int32", shape=(7, 5), chunk_shape=(3, 2), origin=(0, 0), lower_bound=(-4, -3),
                fill=0, values=ramp((7, 5), "int32", 10), encoding=(enc, sep),
                rules=["chunk key encoding " + enc + " with separator " + sep, "negative chunk indices in keys"],
                description=f"Negative indices under the {enc} encoding with '{sep}': keys such as "
                            f"{key_of((-2, -2), (enc, sep))} and {key_of((0, 0), (enc, sep))}.")
    w.array("sharded_first_shard_partly_outside", dtype="uint16", shape=(11, 8), chunk_shape=(8, 8), origin=(0, 0),
            lower_bound=(-5, 0), fill=0, values=ramp((11, 8), "uint16", 1000),
            shard={"inner": (4, 4), "codecs": le + [{"name": "gzip", "configuration": {"level": 1}}],
                   "index_codecs": le + [{"name": "crc32c"}], "index_location": "end"},
            rules=["sharding: negative shard keys",
                   "sharding: inner chunks without an element of the domain are empty in the index"],
            description="Shards 8x8 of 4x4 inner chunks; shard c/-1/0 holds coordinates -8..-1 of which -5..-1 are in "
                        "the domain: its first inner row (coordinates -8..-5) holds -5 only, so it is stored; index at "
                        "the end with crc32c.")
    w.array("sharded_index_start_empty_inner_row", dtype="int32", shape=(6, 4), chunk_shape=(8, 4), origin=(0, 0),
            lower_bound=(-3, 0), fill=-9, values=ramp((6, 4), "int32", 1),
            shard={"inner": (2, 4), "codecs": le, "index_codecs": le, "index_location": "start"},
            rules=["sharding: inner chunks without an element of the domain are empty in the index",
                   "index at the start"],
            description="Shard c/-1/0 covers coordinates -8..-1 of which -3..-1 are in the domain: its inner chunks 0 "
                        "and 1 (coordinates -8..-5) hold no element and are empty in the index; index at the start.")
    w.array("zero_d", dtype="float32", shape=(), chunk_shape=(), origin=(), lower_bound=(), fill=0.5,
            values=np.float32(2.25), rules=["0-d array: empty configuration arrays, key c"],
            description="A 0-d array: chunk_shape, origin and lower_bound are all []; its one chunk is c.")
    w.array("zero_d_v2_keys", dtype="int8", shape=(), chunk_shape=(), origin=(), lower_bound=(), fill=0,
            values=np.int8(-7), encoding=("v2", "."), rules=["0-d array under the v2 key encoding: key 0"],
            description="A 0-d array with the v2 chunk key encoding: its one chunk is 0.")
    w.array("one_element", dtype="int64", shape=(1,), chunk_shape=(7,), origin=(5,), lower_bound=(-1000,), fill=0,
            values=[123456789012], rules=["1-element array", "origin far from lower bound"],
            description="n=1 at coordinate -1000 with O=5, c=7: its chunk is c/-144 (coordinates -1003..-997), buffer "
                        "position 3.")
    w.array("js_safe_limits", dtype="uint8", shape=(3,), chunk_shape=(2,), origin=(0,), lower_bound=(-(2**53 - 1),),
            fill=0, values=[1, 2, 3], rules=["lower bound at -(2^53-1), the most negative value writers may use"],
            description="Coordinates -(2^53-1) .. -(2^53-3); chunk keys c/-4503599627370496 and c/-4503599627370495.")
    w.array("zero_bounds_is_regular", dtype="int32", shape=(5, 3), chunk_shape=(2, 2), origin=(0, 0),
            lower_bound=(0, 0), fill=0, values=ramp((5, 3), "int32"),
            rules=["all-zero origin and lower bound read exactly like regular"],
            description="origin = lower_bound = 0: the same keys and chunk contents as a regular grid.")
    w.array("missing_chunks_read_as_fill", dtype="float32", shape=(10, 4), chunk_shape=(3, 4), origin=(0, 0),
            lower_bound=(-4, 0), fill=-1.5, values=rng.normal(size=(10, 4)).astype("float32").round(2),
            skip={(-2, 0), (1, 0)},
            rules=["missing chunks read as the fill value, in front of the origin too"],
            description="Chunks c/-2/0 and c/1/0 are not stored: their elements read as the fill value -1.5.")
    # ---- keys a reader must ignore ------------------------------------------------------------
    w.array("ignore_chunks_outside_domain", dtype="int32", shape=(8,), chunk_shape=(4,), origin=(0,), lower_bound=(-2,),
            fill=0, values=ramp((8,), "int32", 1), stray={"c/-2": 99, "c/2": 99, "c/-1000": 99},
            rules=["a key whose index lies outside the chunk range is not a chunk of the array"],
            description="The chunk range is -1..1; c/-2, c/2 and c/-1000 hold 99 everywhere and must not be read.")
    w.array("ignore_malformed_keys", dtype="int32", shape=(2, 6), chunk_shape=(2, 3), origin=(0, 0),
            lower_bound=(0, -3), fill=0, values=ramp((2, 6), "int32", 1), skip={(0, 0)},
            stray={"c/0/-0": 99, "c/-0/0": 99, "c/0/+0": 99, "c/0/00": 99, "c/+0/0": 99, "c/00/-1": 99, "c/0/-01": 99,
                   "c/0/ 0": 99, "c/0/0 ": 99},
            rules=["-0, +0, leading zeros, spaces are not chunk keys", "missing chunks read as the fill value"],
            description="Chunk c/0/0 is missing; -0, +0, 00, -01 and space-padded spellings of its and c/0/-1's "
                        "indices hold 99 and are not chunk keys: c/0/0's elements read as fill, c/0/-1 as stored.")
    w.array("ignore_malformed_keys_v2", dtype="int32", shape=(2, 6), chunk_shape=(2, 3), origin=(0, 0),
            lower_bound=(0, -3), fill=0, values=ramp((2, 6), "int32", 1), encoding=("v2", "."), skip={(0, 0)},
            stray={"0.-0": 99, "-0.0": 99, "+0.0": 99, "0.+0": 99, "00.0": 99, "0.-01": 99},
            rules=["-0, +0, leading zeros are not chunk keys (v2 encoding)"],
            description="As ignore_malformed_keys, under the v2 encoding (keys 0.-1 and 0.0).")
    w.array("ignore_buffer_positions_outside_domain", dtype="int16", shape=(5,), chunk_shape=(4,), origin=(0,),
            lower_bound=(-3,), fill=0, values=ramp((5,), "int16", 1), boundary_value=77,
            rules=["buffer positions outside the domain are not elements of the array"],
            description="The chunks' buffer positions outside [-3, 2) hold 77 instead of the fill value; no 77 may "
                        "appear.")

    # ---- arrays a reader must refuse ------------------------------------------------------------
    def g(**cfg):
        return {"name": "regular_bounded", "configuration": cfg}

    cs, o, lb = [4, 4], [0, 0], [-2, 0]
    w.refuse("missing_origin", grid=g(chunk_shape=cs, lower_bound=lb), reason="configuration has no origin",
             rules=["configuration holds exactly chunk_shape, origin and lower_bound"])
    w.refuse("missing_lower_bound", grid=g(chunk_shape=cs, origin=o), reason="configuration has no lower_bound",
             rules=["configuration holds exactly chunk_shape, origin and lower_bound"])
    w.refuse("missing_chunk_shape", grid=g(origin=o, lower_bound=lb), reason="configuration has no chunk_shape",
             rules=["configuration holds exactly chunk_shape, origin and lower_bound"])
    w.refuse("missing_configuration", grid={"name": "regular_bounded"}, reason="the grid has no configuration",
             rules=["configuration holds exactly chunk_shape, origin and lower_bound"])
    w.refuse("unknown_configuration_key", grid=g(chunk_shape=cs, origin=o, lower_bound=lb, upper_bound=[4, 4]),
             reason="configuration has an unknown key (upper_bound)",
             rules=["configuration holds exactly chunk_shape, origin and lower_bound"])
    w.refuse("origin_not_an_array", grid=g(chunk_shape=cs, origin="0,0", lower_bound=lb), reason="origin is a string",
             rules=["each field is an array of JSON integers"])
    w.refuse("lower_bound_boolean", grid=g(chunk_shape=cs, origin=o, lower_bound=[True, 0]),
             reason="lower_bound[0] is a boolean", rules=["each field is an array of JSON integers"])
    w.refuse("lower_bound_fraction", grid=g(chunk_shape=cs, origin=o, lower_bound=[-1.5, 0]),
             reason="lower_bound[0] is -1.5", rules=["each field is an array of JSON integers"])
    base = ('{"zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "int32", '
            '"chunk_grid": {"name": "regular_bounded", "configuration": %s}, '
            '"chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}}, "fill_value": 0, '
            '"codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "attributes": {}}\n')
    w.refuse_text("lower_bound_written_with_fraction",
                  reason="lower_bound[0] is written -2.0 (a fraction, though integral)",
                  rules=["no fraction or exponent"],
                  text=base % '{"chunk_shape": [4, 4], "origin": [0, 0], "lower_bound": [-2.0, 0]}')
    w.refuse_text("origin_written_with_exponent", reason="origin[0] is written 1e1 (an exponent)",
                  rules=["no fraction or exponent"],
                  text=base % '{"chunk_shape": [4, 4], "origin": [1e1, 0], "lower_bound": [-2, 0]}')
    w.refuse("origin_rank_differs", grid=g(chunk_shape=cs, origin=[0], lower_bound=lb),
             reason="origin has 1 entry for a 2-d array", rules=["one entry per dimension of shape"])
    w.refuse("lower_bound_rank_differs", grid=g(chunk_shape=cs, origin=o, lower_bound=[-2, 0, 0]),
             reason="lower_bound has 3 entries for a 2-d array", rules=["one entry per dimension of shape"])
    w.refuse("chunk_shape_rank_differs", grid=g(chunk_shape=[4], origin=o, lower_bound=lb),
             reason="chunk_shape has 1 entry for a 2-d array", rules=["one entry per dimension of shape"])
    w.refuse("chunk_shape_zero", grid=g(chunk_shape=[0, 4], origin=o, lower_bound=lb), reason="chunk_shape[0] is 0",
             rules=["chunk_shape[d] >= 1"])
    w.refuse("chunk_shape_negative", grid=g(chunk_shape=[-4, 4], origin=o, lower_bound=lb),
             reason="chunk_shape[0] is -4", rules=["chunk_shape[d] >= 1"])
    w.refuse("upper_bound_overflows", grid=g(chunk_shape=cs, origin=o, lower_bound=[2**63 - 3, 0]),
             reason="lower_bound[0] + shape[0] = 2^63 + 3 does not fit int64", rules=["lower_bound + shape fits int64"])
    w.refuse("origin_offset_overflows", grid=g(chunk_shape=cs, origin=[2**63 - 1, 0], lower_bound=[-(2**63 - 8), 0]),
             reason="lower_bound[0] - origin[0] does not fit int64 (so chunk indices cannot be computed)",
             rules=["every chunk index fits int64"])
    w.refuse_text("origin_beyond_int64", reason="origin[0] is 2^64, beyond int64", rules=["origin fits int64"],
                  text=base % '{"chunk_shape": [4, 4], "origin": [18446744073709551616, 0], "lower_bound": [-2, 0]}')
    w.refuse("must_understand_false", grid=dict(g(chunk_shape=cs, origin=o, lower_bound=lb), must_understand=False),
             reason='the chunk grid is marked "must_understand": false, which no chunk grid may be',
             rules=["a chunk grid must not be marked must_understand: false"])
    w.refuse("clipped_grid_form", grid=g(chunk_shape=cs), shape=(6, 4),
             reason="zarrs' clipped-edge grid (chunk_shape only): edge chunks stored at their clipped shapes, "
                    "not this grid",
             rules=["the clipped-grid form is another grid"])
    w.refuse("clipped_grid_form_last_axis", grid=g(chunk_shape=cs), shape=(4, 6),
             reason="zarrs' clipped-edge grid (chunk_shape only), clipped along the last axis: edge chunk c/0/1 "
                    "stored as 4x2",
             rules=["the clipped-grid form is another grid"])
    w.refuse("zarrs_prefixed_name_last_axis",
             grid={"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": cs}},
             shape=(4, 6), reason="zarrs.regular_bounded, clipped along the last axis: edge chunk c/0/1 stored as 4x2",
             rules=["the clipped-grid form is another grid"])
    w.refuse("zarrs_prefixed_name", grid={"name": "zarrs.regular_bounded", "configuration": {"chunk_shape": cs}},
             reason="zarrs.regular_bounded is zarrs' clipped-edge grid, another grid",
             rules=["the clipped-grid form is another grid"])

    manifest = {
        "corpus": "regular_bounded conformance",
        "version": 1,
        "extension": "docs/extensions/regular_bounded/README.md",
        "how": "For each entry with expect 'read': open the array at 'path' (a Zarr v3 array in a folder), check its "
               "domain [[inclusive_min, exclusive_max], ...] per dimension (coordinates: index 0 is the lower bound), "
               "read it whole and compare with the NumPy file 'values' (its element 0 is the lower bound; NaN equals "
               "NaN). For each entry with expect 'refuse': opening (or at the latest reading) the array must fail; "
               "'reason' says why.",
        "arrays": sorted(w.manifest + independent_entries(read_dir), key=lambda e: (e["expect"], e["path"])),
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    write_readme_tables(out, manifest["arrays"])


def write_readme_tables(out, entries):
    """Replaces the README's "## The arrays" section with tables made from the manifest."""
    readme = os.path.join(out, "README.md")
    if not os.path.exists(readme):
        return
    head = open(readme).read().split("## The arrays")[0]
    rows_r = "\n".join(f"| `{e['path']}` | {e['domain']} | {e['description']} |"
                       for e in entries if e["expect"] == "read")
    rows_f = "\n".join(f"| `{e['path']}` | {e['reason']} |" for e in entries if e["expect"] == "refuse")
    with open(readme, "w") as f:
        f.write(head + "## The arrays\n\n(Generated from manifest.json by generate.py.)\n\n### Must read\n\n"
                "| array | domain | what it exercises |\n|---|---|---|\n" + rows_r +
                "\n\n### Must refuse\n\n| array | why |\n|---|---|\n" + rows_f + "\n")


def independent_entries(read_dir):
    """The copied arrays of the other independent writer (their domains are stated in their metadata)."""
    out = []
    notes = {
        "independent_seed_example": "The upstream example after its prepend: c/-1/0 has buffer offset 1.",
        "independent_float64_zstd_crc32c_two_axes":
            "Prepends on two axes; partly filled first chunks on both; keys c/-1/-2/0.",
        "independent_uint16_sharded_gzip_partial_first_shard":
            "A partly filled first shard whose empty inner chunks are absent from the index.",
        "independent_int16_created_with_domain_blosc_dot_keys":
            "Created with a domain (origin = lower bound), then appended; '.' separator.",
    }
    for name in sorted(os.listdir(read_dir)):
        if not name.startswith("independent_") or name.endswith(".npy"):
            continue
        meta = json.load(open(os.path.join(read_dir, name, "zarr.json")))
        lb = meta["chunk_grid"]["configuration"]["lower_bound"]
        out.append({"path": f"read/{name}", "expect": "read", "values": f"read/{name}.npy",
                    "domain": [[lb[d], lb[d] + n] for d, n in enumerate(meta["shape"])],
                    "rules": ["written by another independent writer"], "description": notes.get(name, "")})
    return out


if __name__ == "__main__":
    main()
