#!/usr/bin/env python3
"""Writes the rectilinear_bounded conformance corpus: arrays, expected values and manifest.json.

An independent writer of zarrpp's `rectilinear_bounded` chunk grid (docs/extensions/rectilinear_bounded):
NumPy for the values, the grid's rules written from the document (chunk first_chunk[d] starts at
coordinate origin[d], the listed sizes follow it, array index 0 is coordinate lower_bound[d]; a bare
size is regular chunks through that point) in the rectilinear corpus' writer, whose `rectilinear` is
the case of all three 0, and the codecs and shard index of the regular_bounded corpus' writer; none
of it shares code with zarrpp.

    /usr/bin/python3 conformance/rectilinear_bounded/generate.py [OUT_DIR]

OUT_DIR defaults to this folder; read/, refuse/ and manifest.json there are replaced. The output is
deterministic (the tests check the committed corpus is what this writes).
"""
import importlib.util
import json
import os
import sys

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("rg", os.path.join(_HERE, "..", "rectilinear", "generate.py"))
rg = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rg)

LE = rg.LE
NAME = "rectilinear_bounded"
ramp = rg.ramp


class Writer(rg.Writer):
    def bounded(self, name, *, first_chunk, origin, lower_bound, **kw):
        """rg.Writer.rect for the rectilinear_bounded grid: chunk first_chunk starts at origin, the
        values at coordinates lower_bound..."""
        self.rect(name, bounds={"first_chunk": first_chunk, "origin": origin, "lower_bound": lower_bound}, **kw)


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
    def cases(w):
        read_cases(w, np.random.default_rng(20261204))
        refuse_cases(w)
    rg.write_corpus(
        sys.argv[1] if len(sys.argv) > 1 else _HERE, Writer, cases, "rectilinear_bounded conformance",
        "docs/extensions/rectilinear_bounded/README.md in zarrpp",
        "For each entry with expect 'read': open the array at 'path' (a Zarr v3 array in a folder), read it "
        "whole and compare with the NumPy file 'values' (NaN equals NaN; element i is coordinate "
        "domain[d][0] + i); 'chunk_sizes' are the sizes of its chunks along each dimension within the domain "
        "(Dask's chunks), 'stored_chunks' how many of its stored keys are chunks of the array. For each entry "
        "with expect 'refuse': opening (or at the latest reading) the array must fail; 'reason' says why.")


if __name__ == "__main__":
    main()
