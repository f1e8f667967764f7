#!/usr/bin/env python3
"""Writes the rectilinear_bounded conformance corpus: arrays, expected values and manifest.json.

An independent writer of zarrpp's `rectilinear_bounded` chunk grid (docs/extensions/rectilinear_bounded):
NumPy for the values, the grid's rules written here from the document (chunk first_chunk[d] starts at
coordinate origin[d], the listed sizes follow it, array index 0 is coordinate lower_bound[d]; a bare
size is regular chunks through that point), and the codecs and shard index from the regular_bounded
corpus' writer, which shares no code with zarrpp.

    /usr/bin/python3 conformance/rectilinear_bounded/generate.py [OUT_DIR]

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
NAME = "rectilinear_bounded"


def listed(dim):
    """A listed dimension's sizes, run-length pairs expanded."""
    out = []
    for e in dim:
        out += [e[0]] * e[1] if isinstance(e, list) else [e]
    return out


def chunks_of(dim, first, origin, lower, extent):
    """(index, start coordinate, size) of every chunk holding an element of [lower, lower + extent)."""
    if extent == 0:
        return []
    if isinstance(dim, int):  # regular chunks of `dim`; chunk `first` starts at `origin`
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
    def bounded(self, name, *, description, rules, dtype, shape, chunk_shapes, first_chunk, origin, lower_bound, fill,
                values, codecs=None, shard=None, skip=(), stray=None, boundary_value=None):
        """read/<name>: `values` at coordinates lower_bound..., in chunks of the sizes `chunk_shapes`
        states from chunk first_chunk at origin (or shards: `shard` as in the rectilinear corpus).
        Chunks in `skip` are not stored, `stray` maps keys that are no chunk of the array to a value
        and buffer shape stored there anyway, `boundary_value` fills buffer positions outside the
        domain instead of the fill value (a reader must show neither)."""
        dtype = np.dtype(dtype)
        rank = len(shape)
        values = np.asarray(values, dtype=dtype).reshape(shape)
        codecs = codecs or LE
        path = os.path.join(self.out, "read", name)
        os.makedirs(path)
        per_dim = [chunks_of(chunk_shapes[d], first_chunk[d], origin[d], lower_bound[d], shape[d]) for d in range(rank)]
        expected = np.full(shape, fill, dtype=dtype)
        stored = 0
        for combo in itertools.product(*per_dim):
            k = tuple(c[0] for c in combo)
            cshape = tuple(c[2] for c in combo)
            buf = np.full(cshape, fill if boundary_value is None else boundary_value, dtype=dtype)
            inside = np.zeros(cshape, dtype=bool)
            # array indices this chunk holds, and where in its buffer
            a = [max(0, c[1] - lower_bound[d]) for d, c in enumerate(combo)]
            b = [min(shape[d], c[1] + c[2] - lower_bound[d]) for d, c in enumerate(combo)]
            src = tuple(slice(a[d], b[d]) for d in range(rank))
            dst = tuple(slice(a[d] + lower_bound[d] - combo[d][1], b[d] + lower_bound[d] - combo[d][1])
                        for d in range(rank))
            buf[dst] = values[src]
            inside[dst] = True
            if k in skip:
                continue
            if shard is None:
                if boundary_value is None and rb.is_fill(buf[inside], fill):
                    continue
                data = rb.encode(codecs, buf)
            else:
                data = self._shard(buf, inside, fill, shard)
                if data is None:
                    continue
            self._put(path, rb.key_of(k, ("default", "/")), data)
            stored += 1
            expected[src] = values[src]
        for key, (v, cshape) in (stray or {}).items():
            self._put(path, key, rb.encode(LE, np.full(cshape, v, dtype=dtype)))
        grid = {"name": NAME, "configuration": {"kind": "inline", "chunk_shapes": chunk_shapes,
                                                "first_chunk": list(first_chunk), "origin": list(origin),
                                                "lower_bound": list(lower_bound)}}
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
            "domain": [[lower_bound[d], lower_bound[d] + shape[d]] for d in range(rank)], "stored_chunks": stored,
            "chunk_sizes": [[min(c[1] + c[2], lower_bound[d] + shape[d]) - max(c[1], lower_bound[d])
                             for c in per_dim[d]] for d in range(rank)],
            "rules": rules, "description": description})


def ramp(shape, dtype, start=1):
    n = int(np.prod(shape)) if shape else 1
    return (np.arange(start, start + n) % (127 if np.dtype(dtype).itemsize == 1 else 30000)).astype(dtype).reshape(
        shape)


def read_cases(w, rng):
    w.bounded("after_one_prepend", dtype="int32", shape=(37, 6), chunk_shapes=[[7, 10, 20], [6]],
              first_chunk=[-1, 0], origin=[-7, 0], lower_bound=[-7, 0], fill=0, values=ramp((37, 6), "int32"),
              rules=["a chunk before index 0 (key c/-1/0) of its own size"],
              description="A rectilinear array of 30 rows after a prepend of 7: chunk -1 holds exactly the 7 rows.")
    w.bounded("first_chunk_partly_outside", dtype="int16", shape=(22, 5), chunk_shapes=[[10, 6, 12], [2, 3]],
              first_chunk=[-1, 0], origin=[-10, 0], lower_bound=[-4, 0], fill=-1, values=ramp((22, 5), "int16"),
              boundary_value=99,
              rules=["lower_bound inside the first chunk", "positions outside the domain are not data"],
              description="The domain starts 6 rows into chunk -1 (as after a shrink at the front); those 6 rows hold "
                          "99, which a reader must never show.")
    w.bounded("last_chunk_past_the_end", dtype="float64", shape=(20,), chunk_shapes=[[5, 10, 8]],
              first_chunk=[-1], origin=[-5], lower_bound=[-5], fill=float("nan"),
              values=rng.normal(size=20).round(3), boundary_value=99.0,
              codecs=LE + [{"name": "zstd", "configuration": {"level": 1, "checksum": False}}, {"name": "crc32c"}],
              rules=["a chunk passing the end is stored at its full size", "zstd + crc32c", "NaN fill value"],
              description="Chunk 1 covers coordinates 10..18 of a domain ending at 15; the rest hold 99.")
    w.bounded("bare_dimension_with_origin", dtype="uint16", shape=(9, 10), chunk_shapes=[[3, [4, 2]], 4],
              first_chunk=[-2, -1], origin=[-5, -3], lower_bound=[-5, -2], fill=0, values=ramp((9, 10), "uint16"),
              rules=["a bare size is regular chunks from the first chunk's start", "negative keys on both axes"],
              description="Dimension 1 is a bare 4 whose chunk -1 starts at -3, so chunk 0 starts at 1: the domain "
                          "[-2, 8) is chunks -1, 0, 1.")
    w.bounded("first_chunk_positive", dtype="int32", shape=(11,), chunk_shapes=[[5, 9]], first_chunk=[2],
              origin=[30], lower_bound=[33], fill=0, values=ramp((11,), "int32"),
              stray={"c/1": (99, (5,))},
              rules=["chunks before the first listed one are gone (a shrink at the front)",
                     "a key before the first listed chunk is no chunk of the array"],
              description="Chunks 2 (5 wide, from 30) and 3 (9 wide); c/1 is stored but lies before the first "
                          "listed chunk, so it is not part of the array.")
    w.bounded("all_negative", dtype="int8", shape=(20,), chunk_shapes=[[[5, 5]]], first_chunk=[-10], origin=[-100],
              lower_bound=[-95], fill=0, values=ramp((20,), "int8"),
              rules=["every coordinate and key negative"],
              description="Coordinates -95..-76 in chunks -10..-6 of 5, the first wholly before the domain.")
    w.bounded("missing_chunks_read_as_fill", dtype="float32", shape=(7, 9), chunk_shapes=[[2, 3, 4], [2, 2, 5]],
              first_chunk=[-1, 0], origin=[-2, 0], lower_bound=[-2, 0], fill=0.5, values=ramp((7, 9), "float32"),
              skip={(-1, 1), (1, 2)},
              rules=["a chunk not stored reads as the fill value"],
              description="Chunks c/-1/1 and c/1/2 are not stored.")
    w.bounded("empty_domain", dtype="int32", shape=(0, 4), chunk_shapes=[[10], 4], first_chunk=[0, 0],
              origin=[0, 0], lower_bound=[5, 0], fill=0, values=np.zeros((0, 4)),
              rules=["an empty domain keeps one listed chunk"], description="Shape (0, 4) at coordinate 5.")
    w.bounded("sharded_first_shard_partly_outside", dtype="int32", shape=(23, 4), chunk_shapes=[[8, 8, 12], [4]],
              first_chunk=[-1, 0], origin=[-8, 0], lower_bound=[-7, 0], fill=0, values=ramp((23, 4), "int32"),
              shard={"inner": (4, 4), "codecs": LE, "index_codecs": LE + [{"name": "crc32c"}],
                     "index_location": "end"},
              rules=["a prepended shard rounded up to whole inner chunks", "its first inner chunk partly filled"],
              description="After a prepend of 7 rows onto shards of 8 and 12 with inner chunks of 4: shard -1 "
                          "starts at -8, one row before the domain.")
    w.bounded("sharded_index_start", dtype="uint8", shape=(11,), chunk_shapes=[[6, 9]], first_chunk=[-1],
              origin=[-6], lower_bound=[-5], fill=7, values=ramp((11,), "uint8", 20),
              shard={"inner": (3,), "codecs": LE, "index_codecs": LE, "index_location": "start"},
              rules=["shard index at the start", "inner chunks wholly outside the domain are empty"],
              description="Shard -1 starts one element before the domain; shard 0 covers 0..9 of a domain ending "
                          "at 6, so its third inner chunk is empty.")


def refuse_cases(w):
    good = {"kind": "inline", "chunk_shapes": [[2, 4], 4], "first_chunk": [-1, 0], "origin": [-2, 0],
            "lower_bound": [-2, 0]}

    def grid(**change):
        cfg = {k: v for k, v in {**good, **change}.items() if v is not None}
        return {"name": NAME, "configuration": cfg}
    g = {"rules": ["the document's rules"]}
    for key in ("first_chunk", "origin", "lower_bound", "kind", "chunk_shapes"):
        w.refuse(f"{key}_missing", grid=grid(**{key: None}), reason=f"configuration.{key} is required", **g)
    w.refuse("origin_after_lower_bound", grid=grid(origin=[-1, 0]),
             reason="the first chunk starts after the domain's start (origin > lower_bound)", **g)
    w.refuse("sizes_short_of_the_domain", grid=grid(chunk_shapes=[[2, 3], 4]),
             reason="the chunks end at 3, before the domain's end 4 (origin + sizes < lower_bound + shape)", **g)
    w.refuse("first_chunk_rank_differs", grid=grid(first_chunk=[-1]), reason="one first_chunk per dimension", **g)
    w.refuse("lower_bound_fraction", grid=grid(lower_bound=[-2.0, 0]), reason="integers only", **g)
    w.refuse("first_chunk_boolean", grid=grid(first_chunk=[False, 0]), reason="integers, not booleans", **g)
    w.refuse("chunk_shape_field", grid=grid(chunk_shape=[2, 4]),
             reason="no other configuration fields (a chunk_shape would let readers that look only at it, such as "
                    "zarrita.js, misread the array)", **g)
    w.refuse("size_zero", grid=grid(chunk_shapes=[[0, 6], 4]), reason="sizes must be >= 1", **g)
    w.refuse("must_understand_false", grid={**grid(), "must_understand": False},
             reason="must_understand false is not allowed for a chunk grid (core specification)", **g)
    w.refuse("bounded_fields_under_rectilinear", grid={"name": "rectilinear", "configuration": good},
             reason="rectilinear has no first_chunk, origin or lower_bound: read as rectilinear (zarr-python and zarrs "
                    "ignore the fields) the first chunk would be chunk 0 at coordinate 0, so a reader must refuse",
             rules=["the fields belong to rectilinear_bounded only"])
    w.refuse_text("first_chunk_overflows_int64", reason="first_chunk + the number of chunks overflows int64",
                  rules=["the document's rules"], text=json.dumps({
                      "zarr_format": 3, "node_type": "array", "shape": [6, 4], "data_type": "int32",
                      "chunk_grid": grid(first_chunk=[9223372036854775807, 0]),
                      "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                      "fill_value": 0, "codecs": LE, "attributes": {}}, indent=2) + "\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else _HERE
    os.makedirs(out, exist_ok=True)
    for d in ("read", "refuse"):
        shutil.rmtree(os.path.join(out, d), ignore_errors=True)
    os.makedirs(os.path.join(out, "read"))
    w = Writer(out)
    read_cases(w, np.random.default_rng(20261204))
    refuse_cases(w)
    manifest = {
        "corpus": "rectilinear_bounded conformance",
        "version": 1,
        "extension": "docs/extensions/rectilinear_bounded/README.md in zarrpp",
        "how": "For each entry with expect 'read': open the array at 'path' (a Zarr v3 array in a folder), read it "
               "whole and compare with the NumPy file 'values' (NaN equals NaN; element i is coordinate "
               "domain[d][0] + i); 'chunk_sizes' are the sizes of its chunks along each dimension within the domain "
               "(Dask's chunks), 'stored_chunks' how many of its stored keys are chunks of the array. For each entry "
               "with expect 'refuse': opening (or at the latest reading) the array must fail; 'reason' says why.",
        "arrays": sorted(w.manifest, key=lambda e: (e["expect"], e["path"])),
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2)
        f.write("\n")
    rb.write_readme_tables(out, manifest["arrays"])


if __name__ == "__main__":
    main()
