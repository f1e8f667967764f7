#!/usr/bin/env python3
"""Writes the rectilinear conformance corpus: arrays, expected values and manifest.json.

An independent writer of the zarr-extensions `rectilinear` chunk grid (chunk-grids/rectilinear in
github.com/zarr-developers/zarr-extensions): NumPy for the values, the grid's rules written here
from the document (sizes expanded from bare integers and [size, count] pairs, a chunk of every
listed size stored at its full size, chunks wholly past the shape not part of the array), and the
codecs and shard index from the regular_bounded corpus' writer, which shares no code with zarrpp.

    /usr/bin/python3 conformance/rectilinear/generate.py [OUT_DIR]

OUT_DIR defaults to this folder; read/, refuse/ and manifest.json there are replaced. The output is
deterministic (the tests check the committed corpus is what this writes).
"""
import importlib.util
import itertools
import json
import os
import shutil
import sys

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("rb", os.path.join(_HERE, "..", "regular_bounded", "generate.py"))
rb = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rb)

LE = [{"name": "bytes", "configuration": {"endian": "little"}}]


def encode(codecs, chunk):
    """rb.encode, with a leading transpose filter applied here (the chunk's axes in its order)."""
    if codecs and codecs[0]["name"] == "transpose":
        return rb.encode(codecs[1:], np.ascontiguousarray(chunk.transpose(codecs[0]["configuration"]["order"])))
    return rb.encode(codecs, chunk)


def listed(dim):
    """A listed dimension's sizes, run-length pairs expanded."""
    out = []
    for e in dim:
        out += [e[0]] * e[1] if isinstance(e, list) else [e]
    return out


def chunks_of(dim, first, origin, lower, extent):
    """(index, start coordinate, size) of every chunk holding an element of [lower, lower + extent),
    chunk `first` starting at `origin` (all 0 for `rectilinear`); a bare integer is regular chunks
    through that point (the document's "repeated until the extent is covered")."""
    if extent == 0:
        return []
    if isinstance(dim, int):
        zero = origin - first * dim
        k0, k1 = (lower - zero) // dim, (lower + extent - 1 - zero) // dim
        return [(k, zero + k * dim, dim) for k in range(k0, k1 + 1)]
    out, x = [], origin
    for i, s in enumerate(listed(dim)):
        if x < lower + extent and x + s > lower:
            out.append((first + i, x, s))
        x += s
    return out


class Writer(rb.Writer):
    def rect(self, name, *, description, rules, dtype, shape, chunk_shapes, fill, values, codecs=None, shard=None,
             skip=(), stray=None, boundary_value=None, bounds=None):
        """read/<name>: `values` in chunks of the sizes `chunk_shapes` states (or shards of them with
        `shard` = dict(inner=..., codecs=..., index_codecs=..., index_location=...)). Chunks in
        `skip` are not stored, `stray` maps keys that are no chunk of the array to a value and
        buffer shape stored there anyway (a reader must not show it), `boundary_value` fills buffer
        positions outside the domain instead of the fill value. `bounds`: the rectilinear_bounded
        grid's dict(first_chunk=..., origin=..., lower_bound=...), values at coordinates lower_bound..."""
        dtype = np.dtype(dtype)
        rank = len(shape)
        values = np.asarray(values, dtype=dtype).reshape(shape)
        codecs = codecs or LE
        path = os.path.join(self.out, "read", name)
        os.makedirs(path)
        first, origin, lower = ((bounds["first_chunk"], bounds["origin"], bounds["lower_bound"]) if bounds
                                else ([0] * rank,) * 3)
        per_dim = [chunks_of(chunk_shapes[d], first[d], origin[d], lower[d], shape[d]) for d in range(rank)]
        expected = np.full(shape, fill, dtype=dtype)
        stored = 0
        for combo in itertools.product(*per_dim):
            k = tuple(c[0] for c in combo)
            cshape = tuple(c[2] for c in combo)
            buf = np.full(cshape, fill if boundary_value is None else boundary_value, dtype=dtype)
            inside = np.zeros(cshape, dtype=bool)
            # the array indices this chunk holds, and where they sit in its buffer
            a = [max(0, c[1] - lower[d]) for d, c in enumerate(combo)]
            b = [min(shape[d], c[1] + c[2] - lower[d]) for d, c in enumerate(combo)]
            src = tuple(slice(a[d], b[d]) for d in range(rank))
            dst = tuple(slice(a[d] + lower[d] - combo[d][1], b[d] + lower[d] - combo[d][1]) for d in range(rank))
            buf[dst] = values[src]
            inside[dst] = True
            if k in skip:
                continue
            if shard is None:
                if boundary_value is None and rb.is_fill(buf[inside], fill):
                    continue
                data = encode(codecs, buf)
            else:
                data = self._shard(buf, inside, fill, shard)
                if data is None:
                    continue
            self._put(path, rb.key_of(k, ("default", "/")), data)
            stored += 1
            expected[src] = values[src]
        for key, (v, cshape) in (stray or {}).items():
            self._put(path, key, rb.encode(LE, np.full(cshape, v, dtype=dtype)))
        cfg = {"kind": "inline", "chunk_shapes": chunk_shapes}
        cfg.update({k: list(v) for k, v in (bounds or {}).items()})
        grid = {"name": "rectilinear_bounded" if bounds else "rectilinear", "configuration": cfg}
        meta_codecs = codecs if shard is None else [{"name": "sharding_indexed", "configuration": {
            "chunk_shape": list(shard["inner"]), "codecs": shard["codecs"], "index_codecs": shard["index_codecs"],
            "index_location": shard["index_location"]}}]
        meta = {"zarr_format": 3, "node_type": "array", "shape": list(shape), "data_type": rb.v3_name(dtype),
                "chunk_grid": grid, "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": rb.fill_json(fill, dtype), "codecs": meta_codecs, "attributes": {}}
        with open(os.path.join(path, "zarr.json"), "w") as f:
            json.dump(meta, f, indent=2)
            f.write("\n")
        np.save(os.path.join(self.out, "read", name + ".npy"), expected.astype(expected.dtype.newbyteorder("<")))
        self.manifest.append({
            "path": f"read/{name}", "expect": "read", "values": f"read/{name}.npy",
            "domain": [[lower[d], lower[d] + shape[d]] for d in range(rank)], "stored_chunks": stored,
            "chunk_sizes": [[min(c[1] + c[2], lower[d] + shape[d]) - max(c[1], lower[d]) for c in per_dim[d]]
                            for d in range(rank)],
            "rules": rules, "description": description})


def ramp(shape, dtype, start=1):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(start, start + n) % (127 if np.dtype(dtype).itemsize == 1 else 30000)).astype(dtype).reshape(
        shape)


def read_cases(w, rng):
    w.rect("explicit_per_dim", dtype="int32", shape=(100, 50), chunk_shapes=[[10, 20, 30, 40], [50]], fill=0,
           values=ramp((100, 50), "int32"), rules=["explicit sizes", "a dimension of one chunk"],
           description="zarr-python's zarr-metadata case explicit_per_dim: sizes listed on both axes.")
    w.rect("uniform_dim_shorthand", dtype="float64", shape=(100, 100), chunk_shapes=[[10, 20, 30, 40], 50],
           fill=float("nan"), values=rng.normal(size=(100, 100)).round(3),
           codecs=LE + [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}, {"name": "crc32c"}],
           rules=["a bare integer is a regular dimension", "zstd + crc32c", "NaN fill value"],
           description="zarr-python's case uniform_dim_shorthand (and its array fixture rectilinear_grid): a bare 50.")
    w.rect("with_rle_pair", dtype="int16", shape=(60, 30), chunk_shapes=[[[10, 5], 5, 5], [15, 15]], fill=0,
           values=ramp((60, 30), "int16"), rules=["run-length pair mixed with sizes"],
           description="zarr-python's case with_rle_pair (array fixture rectilinear_grid_with_rle): 10 x5, then 5, 5.")
    w.rect("document_example", dtype="uint8", shape=(6, 6, 6, 6, 6),
           chunk_shapes=[4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]], fill=0, values=ramp((6,) * 5, "uint8"),
           rules=["every form of the document's example", "chunks wholly past the end are not part of the array"],
           description="The document's five-dimensional example: 4 -> 4, 4; [[4, 2]]; [[1, 3], 3] -> 1, 1, 1, 3; "
                       "[4, 4, 4] overflows 6 by a whole chunk.")
    w.rect("last_chunk_past_the_end", dtype="int32", shape=(45, 100), chunk_shapes=[[10, 20, 30], [40, 40, 40]],
           fill=-1, values=ramp((45, 100), "int32"), boundary_value=99,
           rules=["a chunk passing the end is stored at its full size", "positions past the end are not data"],
           description="Chunk c/2/2 holds 30x40 elements of which 15x20 are the array's; the rest hold 99, which a "
                       "reader must never show.")
    w.rect("chunks_wholly_past_the_end", dtype="int32", shape=(50,), chunk_shapes=[[10, 20, 30, 40]], fill=0,
           values=ramp((50,), "int32"), stray={"c/3": (99, (40,))},
           rules=["chunks wholly past the end are not part of the array"],
           description="As after shrinking: sizes 10, 20, 30, 40 for 50 elements; c/3 is stored but starts at 60, past "
                       "the end, so it is no chunk of the array (3 stored chunks).")
    w.rect("missing_chunks_read_as_fill", dtype="float32", shape=(7, 9), chunk_shapes=[[3, 4], [2, 2, 5]], fill=0.5,
           values=ramp((7, 9), "float32"), skip={(0, 1), (1, 2)},
           rules=["a chunk not stored reads as the fill value"],
           description="Chunks c/0/1 and c/1/2 are not stored.")
    w.rect("transpose_filter", dtype="uint16", shape=(7, 5), chunk_shapes=[[3, 4], [2, 3]], fill=0,
           values=ramp((7, 5), "uint16"),
           codecs=[{"name": "transpose", "configuration": {"order": [1, 0]}}] + LE,
           rules=["a codec that depends on the chunk's shape sees each chunk's own shape"],
           description="A transpose filter: chunk c/1/1 (4x3) is stored as its 3x4 transpose.")
    w.rect("single_chunk", dtype="int8", shape=(20,), chunk_shapes=[[20]], fill=0, values=ramp((20,), "int8"),
           rules=["one listed size"], description="[[20]]: one chunk, listed.")
    w.rect("empty_extent", dtype="int32", shape=(0, 4), chunk_shapes=[[10, 20], 4], fill=0, values=np.zeros((0, 4)),
           rules=["an extent of 0 has no chunks"], description="Shape (0, 4): nothing to read.")
    w.rect("sharded", dtype="int32", shape=(120, 100), chunk_shapes=[[60, 40, 20], [[50, 2]]], fill=0,
           values=ramp((120, 100), "int32"),
           shard={"inner": (10, 10), "codecs": LE, "index_codecs": LE + [{"name": "crc32c"}], "index_location": "end"},
           rules=["rectilinear shard boundaries with regular inner chunks", "shards of different numbers of chunks"],
           description="zarr-python's user guide example: shards 60, 40, 20 x 50, 50 of 10x10 inner chunks.")
    w.rect("sharded_past_the_end_index_start", dtype="uint16", shape=(50,), chunk_shapes=[[20, 40]], fill=7,
           values=ramp((50,), "uint16", 100),
           shard={"inner": (10,), "codecs": LE, "index_codecs": LE, "index_location": "start"},
           rules=["a shard passing the end: inner chunks without an element are empty in the index"],
           description="Shard c/1 covers 20..60 of 50 elements: its last inner chunk is empty.")


def refuse_cases(w):
    def grid(shapes, kind="inline"):
        cfg = {"chunk_shapes": shapes} if kind is None else {"kind": kind, "chunk_shapes": shapes}
        return {"name": "rectilinear", "configuration": cfg}
    g = {"rules": ["the document's rules"]}
    w.refuse("kind_missing", grid=grid([[2, 4], 4], kind=None), reason="configuration.kind is required", **g)
    w.refuse("kind_unknown", grid=grid([[2, 4], 4], kind="reference"),
             reason="configuration.kind: only \"inline\" is defined", **g)
    w.refuse("chunk_shapes_missing", grid={"name": "rectilinear", "configuration": {"kind": "inline"}},
             reason="configuration.chunk_shapes is required", **g)
    w.refuse_text("short_hand_name", reason="the grid needs its configuration", rules=g["rules"], text=json.dumps({
        "zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "int32", "chunk_grid": "rectilinear",
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": LE, "attributes": {}}, indent=2) + "\n")
    w.refuse("rank_differs", grid=grid([[2, 4]]), reason="chunk_shapes has one entry per dimension", **g)
    w.refuse("sizes_short_of_the_shape", grid=grid([[2, 3], 4]),
             reason="the sizes must add up to the extent or more (5 < 6)", **g)
    w.refuse("size_zero", grid=grid([[0, 6], 4]), reason="sizes must be >= 1", **g)
    w.refuse("size_negative", grid=grid([[-2, 8], 4]), reason="sizes must be >= 1", **g)
    w.refuse("bare_size_zero", grid=grid([6, 0]), reason="sizes must be >= 1", **g)
    w.refuse("run_count_zero", grid=grid([[[2, 0], 6], 4]), reason="a run's count must be >= 1", **g)
    w.refuse("run_size_zero", grid=grid([[[0, 3], 6], 4]), reason="a run's size must be >= 1", **g)
    w.refuse("run_of_three", grid=grid([[[2, 2, 1], 2], 4]), reason="a run-length pair is [size, count]", **g)
    w.refuse("run_of_one", grid=grid([[[6]], 4]), reason="a run-length pair is [size, count]", **g)
    w.refuse("run_nested_deeper", grid=grid([[[[2, 3]]], 4]), reason="a run-length pair holds two integers", **g)
    w.refuse("dimension_empty", grid=grid([[], 4]), reason="a dimension needs at least one size", **g)
    w.refuse("size_fraction", grid=grid([[2.5, 4], 4]), reason="sizes are integers", **g)
    w.refuse("size_boolean", grid=grid([[True, 5], 4]), reason="sizes are integers, not booleans", **g)
    w.refuse("size_string", grid=grid([["6"], 4]), reason="sizes are integers", **g)
    w.refuse("dimension_null", grid=grid([None, 4]), reason="a dimension is an integer or a list", **g)
    w.refuse("must_understand_false", grid={**grid([[2, 4], 4]), "must_understand": False},
             reason="must_understand false is not allowed for a chunk grid (core specification)", **g)
    w.refuse_text("sum_overflows_int64", reason="the sizes add up to more than any array can hold",
                  rules=["the document's rules"], text=json.dumps({
                      "zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "int32",
                      "chunk_grid": grid([[[9223372036854775807, 2]], 4]),
                      "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                      "fill_value": 0, "codecs": LE, "attributes": {}}, indent=2) + "\n")
    w.refuse("shard_not_whole_inner_chunks", grid=grid([[4, 2], 4]),
             extra={"codecs": [{"name": "sharding_indexed", "configuration": {
                 "chunk_shape": [4, 4], "codecs": LE, "index_codecs": LE, "index_location": "end"}}]},
             reason="every shard size must be a multiple of the inner chunk size (the second shard, 2, is not of 4)",
             rules=["sharding: the inner chunk divides each shard"])


def write_corpus(out, writer, cases, corpus, extension, how):
    """Writes a corpus to `out`: read/ and refuse/ replaced by `cases(writer)`, then manifest.json
    and the README's tables."""
    os.makedirs(out, exist_ok=True)
    for d in ("read", "refuse"):
        shutil.rmtree(os.path.join(out, d), ignore_errors=True)
    os.makedirs(os.path.join(out, "read"))
    w = writer(out)
    cases(w)
    manifest = {"corpus": corpus, "version": 1, "extension": extension, "how": how,
                "arrays": sorted(w.manifest, key=lambda e: (e["expect"], e["path"]))}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    rb.write_readme_tables(out, manifest["arrays"])


def main():
    def cases(w):
        read_cases(w, np.random.default_rng(20261203))
        refuse_cases(w)
    write_corpus(
        sys.argv[1] if len(sys.argv) > 1 else _HERE, Writer, cases, "rectilinear conformance",
        "https://github.com/zarr-developers/zarr-extensions/tree/main/chunk-grids/rectilinear",
        "For each entry with expect 'read': open the array at 'path' (a Zarr v3 array in a folder), read it "
        "whole and compare with the NumPy file 'values' (NaN equals NaN); 'chunk_sizes' are the sizes of its "
        "chunks along each dimension within the shape (Dask's chunks), 'stored_chunks' how many of its "
        "stored keys are chunks of the array. For each entry with expect 'refuse': opening (or at the latest "
        "reading) the array must fail; 'reason' says why.")


if __name__ == "__main__":
    main()
