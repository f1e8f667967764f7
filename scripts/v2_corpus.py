#!/usr/bin/python3
"""A corpus of the Zarr v2 data users already have, written by zarr-python 2.13 and xarray, and of
v2 data zarrpp writes; each case compared with the reference readers.

    /usr/bin/python3 scripts/v2_corpus.py --cases 400 --seed 1 [--keep DIR]

Needs zarrpp importable (PYTHONPATH=build/release/python) and Debian's zarr 2.13, numcodecs and
xarray. Cases are drawn at random from a seed (the same seed gives the same corpus):

  array    zarr-python 2 writes an array (any dtype it stores, structured ones included, both byte
           orders, C/F order, both
           separators, a fill value of the dtype's kinds, a compressor, filters, chunks missing or
           partly written, attributes); zarrpp reads it: values (bit for bit, element types of
           object arrays), dtype, shape, fill value, attributes. Then zarrpp appends a block
           (zarr-python 2 reads it as zarrpp does) and converts it to v3 (read again).
  reverse  zarrpp writes a v2 array of the same kinds; zarr-python 2 reads it as zarrpp does.
  dataset  xarray writes a dataset (CF-packed ints, floats with NaN, times, durations, string
           coordinates, bytes, bools, object text); engine="zarrpp" reads it as engine="zarr" does
           (xr.testing.assert_identical, eager and with chunks={}, decoded or not), also after
           `to_zarrpp(append_dim=)` against xarray's own append, and after conversion to v3.

Every case ends identical, refused (a zarrpp error, recorded with its message) or DIFFERENT (a
silent difference, the failure this corpus exists to find). A difference `convert` states in its
notes is counted as noted, not silent. An error is "refused" when zarrpp raised it, "REFERENCE
FAILED" when zarr-python or xarray could not write the case; zarr-python failing to read what zarrpp
wrote is DIFFERENT. Exit status 1 when any case is DIFFERENT (or the script itself failed).
"""
import argparse
import functools
import json
import math
import os
import shutil
import sys
import tempfile
import traceback
import warnings

import numcodecs
import numpy as np
import zarr

import zarrpp

DTYPES = ["|b1", "|i1", "<i2", ">i2", "<i4", ">i4", "<i8", ">i8", "|u1", "<u2", ">u2", "<u4", ">u4", "<u8",
          ">u8", "<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c8", "<c16", ">c16", "<M8[ns]", ">M8[s]",
          "<M8[D]", "<M8[ms]", "<m8[us]", ">m8[h]", "<m8[10ms]", "<U1", "<U7", ">U4", "|S1", "|S6", "|V3",
          "str", "bytes", "struct0", "struct1", "struct2"]
# Structured types (named in DTYPES as structN): subarray fields, nested records, text, times,
# big-endian fields.
STRUCTS = {"struct0": [("a", "<i4"), ("b", "<f8", (2,)), ("c", "S3")],
           "struct1": [("a", ">i8"), ("n", [("x", ">u2"), ("y", "|u1")], (2,)), ("f", ">f4")],
           "struct2": [("t", "<M8[s]"), ("u", "<U2"), ("z", "<c8"), ("k", "|b1")]}
COMPRESSORS = [None, numcodecs.Zstd(1), numcodecs.Blosc("lz4", 5, numcodecs.Blosc.SHUFFLE),
               numcodecs.Blosc("zstd", 2, numcodecs.Blosc.BITSHUFFLE), numcodecs.GZip(3), numcodecs.Zlib(1),
               numcodecs.LZ4(), numcodecs.BZ2(2), numcodecs.LZMA()]


class Different(Exception):
    """A silent difference: zarrpp gave something other than the reference, without an error."""


def kind_of(dt):
    """NumPy's kind letter; "O" for object (str / bytes) and "R" for structured types."""
    return "O" if dt in ("str", "bytes") else "R" if dt in STRUCTS else np.dtype(dt).kind


def numpy_dtype(dt):
    return np.dtype(object) if dt in ("str", "bytes") else np.dtype(STRUCTS.get(dt, dt))


def records(d, shape, rng):
    """Structured values: every leaf field random in its type (nested records too)."""
    out = np.zeros(shape, dtype=d)
    for name in d.names:
        base, field = d[name].base, out[name]
        if base.names is not None:
            field[...] = records(base, field.shape, rng)
        elif base.kind in "US":
            field[...] = rng.integers(0, 1000, field.shape).astype(str)
        elif base.kind in "mM":
            field[...] = rng.integers(-10**9, 10**9, field.shape).astype(base.newbyteorder("=").str)
        elif base.kind == "b":
            field[...] = rng.integers(0, 2, field.shape).astype(bool)
        else:
            field[...] = rng.normal(0, 50, field.shape) if base.kind in "fc" else rng.integers(0, 100, field.shape)
    return out


def fills(dt):
    """Fill values of a dtype's kinds, as zarr-python 2 takes them."""
    k = kind_of(dt)
    if dt == "bytes":
        return [None, 0]
    if k == "R":  # zarr-python 2.13 takes a structured fill value as one element's bytes only
        d = numpy_dtype(dt)
        return [None, np.zeros((), d).tobytes(), records(d, (), np.random.default_rng(len(dt))).tobytes()]
    return {"b": [None, False, True], "i": [None, 0, -1, 7], "u": [None, 0, 255], "V": [None, b"\x01\x00\x02"],
            "f": [None, 0.0, -0.0, np.nan, np.inf, -np.inf, 1.5e-3], "c": [None, 0j, complex(1, np.nan)],
            "M": [None, 0, np.datetime64("NaT"), np.datetime64("2001-02-03")], "m": [None, 0, np.timedelta64("NaT")],
            "U": [None, "", "é", "0"], "S": [None, b"", b"a"], "O": [None, 0, "", "n/a"]}[k]


def values(dt, shape, rng):
    d, n, k = numpy_dtype(dt), int(np.prod(shape)), kind_of(dt)
    if k == "R":
        return records(d, shape, rng)
    if k == "b":
        v = rng.integers(0, 2, n).astype(bool)
    elif k in "iu":
        info = np.iinfo(d)
        v = rng.integers(info.min, info.max, n, dtype=np.uint64 if k == "u" and d.itemsize == 8 else np.int64,
                         endpoint=True)
    elif k in "fc":
        v = rng.normal(0, 100, n) * (1 if k == "f" else 1 + 1j)
        v[:: 7] = [np.nan, -0.0, np.inf][n % 3]
    elif k in "mM":
        v = rng.integers(-10**12, 10**12, n).view(d.newbyteorder("=").str)
        v[::5] = np.datetime64("NaT") if k == "M" else np.timedelta64("NaT")
    elif k == "U" or dt == "str":
        abc = list("ab é\u4e2d\U0001f600\x00z")
        width = d.itemsize // 4 if k == "U" else 6
        v = ["".join(rng.choice(abc, int(rng.integers(0, width + 1)))).rstrip("\x00") for _ in range(n)]
    else:  # S, V, bytes
        width = d.itemsize if k in "SV" else 5
        v = [bytes(rng.integers(0, 256, int(rng.integers(0, width + 1)) if k != "V" else width).astype(np.uint8))
             for _ in range(n)]
    out = np.empty(n, dtype=d)
    out[...] = v if k != "O" else np.array(v + [None], dtype=object)[:-1]
    return out.reshape(shape)


def filters_for(dt, rng):
    d, k = numpy_dtype(dt), kind_of(dt)
    choices = [None]
    if k in "iufb" and d.itemsize > 1:
        choices.append([numcodecs.Shuffle(d.itemsize)])
    if k in "iu" or (k == "f" and d.itemsize > 2):
        choices.append([numcodecs.Delta(dtype=d.str)])
    if k == "f" and d.itemsize > 2:
        choices += [[numcodecs.FixedScaleOffset(offset=1.5, scale=10, dtype=d.str, astype=d.str[0] + "i8")],
                    [numcodecs.Quantize(digits=2, dtype=d.str)]]
        if d.str[0] == "<":
            choices.append([numcodecs.BitRound(keepbits=5)])
    if d.itemsize == 1 and k in "biu":
        choices.append([numcodecs.PackBits()])
    if k == "U":
        choices.append([numcodecs.Categorize(["", "a", "é"], dtype=d.str)])
    if dt == "str":
        return [numcodecs.VLenUTF8()] if rng.integers(0, 4) else [numcodecs.Categorize(["a", "b"], dtype=object)]
    if dt == "bytes":
        return [numcodecs.VLenBytes()]
    return choices[int(rng.integers(0, len(choices)))]


def draw_array(rng):
    dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
    rank = int(rng.integers(0, 4))
    shape = tuple(int(rng.integers(0 if rng.integers(0, 8) == 0 else 1, 7)) for _ in range(rank))
    chunks = tuple(int(rng.integers(1, 5)) for _ in range(rank))
    fill_choices = fills(dt)
    return {"dtype": dt, "shape": shape, "chunks": chunks, "order": "CF"[int(rng.integers(0, 2))],
            "sep": "./"[int(rng.integers(0, 2))], "fill": fill_choices[int(rng.integers(0, len(fill_choices)))],
            "compressor": COMPRESSORS[int(rng.integers(0, len(COMPRESSORS)))], "filters": filters_for(dt, rng),
            "written": ["all", "part", "none"][int(rng.integers(0, 3))],
            "attrs": {"units": "m", "note": "é😀", "n": [1, 2.5, None], "nan": float("nan")}
            if rng.integers(0, 2) else {}}


# ---- comparing --------------------------------------------------------------------------------------

def as_le(a):
    a = np.asarray(a)
    keep = a.dtype.kind in "OV" and a.dtype.names is None  # objects and raw bytes have no byte order
    return np.ascontiguousarray(a if keep else a.astype(a.dtype.newbyteorder("<")))


def same_array(ref, got, what):
    """Bit for bit (NumPy types up to byte order), element types for object arrays."""
    ref, got = np.asarray(ref), np.asarray(got)
    if ref.shape != got.shape:
        raise Different(f"{what}: shape {got.shape}, reference {ref.shape}")
    if ref.dtype.newbyteorder("=") != got.dtype.newbyteorder("="):
        raise Different(f"{what}: dtype {got.dtype}, reference {ref.dtype}")
    if ref.dtype.kind == "O":
        mine, theirs = [(type(x), x) for x in got.ravel()], [(type(x), x) for x in ref.ravel()]
        if mine != theirs:
            at = next(i for i, (a, b) in enumerate(zip(mine, theirs)) if a != b)
            raise Different(f"{what}: element {at} is {mine[at]!r}, reference {theirs[at]!r}")
    elif as_le(ref).tobytes() != as_le(got).tobytes():
        bad = np.flatnonzero(as_le(ref).view(np.uint8).reshape(ref.size, -1).tolist() !=
                             as_le(got).view(np.uint8).reshape(got.size, -1).tolist()) if ref.size else []
        raise Different(f"{what}: values differ ({got.ravel()[:6]!r} vs reference {ref.ravel()[:6]!r}; {bad!r})")


def norm_fill(v, dtype):
    if isinstance(v, (np.str_, np.bytes_)):  # NumPy's text scalars are str / bytes
        v = v.item()
    if v is None or isinstance(v, (str, bytes)) or dtype.kind == "O":
        return (type(v).__name__, v if not isinstance(v, float) or not math.isnan(v) else "nan")
    return ("bits", as_le(np.array(v, dtype=dtype)).tobytes())


def same_meta(ref, got, what):
    if norm_fill(ref.fill_value, ref.dtype) != norm_fill(got.fill_value, ref.dtype):
        raise Different(f"{what}: fill_value {got.fill_value!r}, reference {ref.fill_value!r}")
    mine, theirs = json.dumps(dict(got.attrs), sort_keys=True), json.dumps(dict(ref.attrs), sort_keys=True)
    if mine != theirs:
        raise Different(f"{what}: attributes {mine}, reference {theirs}")


def quiet_zarr_open(path, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return zarr.open(path, **kw)


# ---- the cases ----------------------------------------------------------------------------------------

def labels_of(filters):
    return next((list(f.labels) for f in filters or [] if isinstance(f, numcodecs.Categorize)), None)


def case_values(spec, shape, rng):
    v = values(spec["dtype"], shape, rng)
    labels = labels_of(spec["filters"])
    if labels:  # categorize stores labels only
        v = np.asarray(rng.choice(labels, v.shape) if v.size else v, dtype=v.dtype).reshape(shape)
    return v


def write_ref(path, spec, rng):
    dt = numpy_dtype(spec["dtype"])
    obj = {"str": numcodecs.VLenUTF8(), "bytes": numcodecs.VLenBytes()}.get(spec["dtype"])
    filters = spec["filters"]
    if obj is not None and filters and isinstance(filters[0], type(obj)):
        filters = filters[1:] or None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # zarr.open turns a structured type's fill value into a record, which zarr-python 2.13
        # then cannot check (it compares it with 0); zarr.create takes its bytes.
        make = zarr.create if dt.names is not None else functools.partial(zarr.open, mode="w")
        z = make(store=path, shape=spec["shape"], chunks=spec["chunks"] or True, dtype=dt,
                 compressor=spec["compressor"], filters=filters, order=spec["order"],
                 dimension_separator=spec["sep"], fill_value=spec["fill"],
                 **({"object_codec": obj} if obj is not None and not labels_of(filters) else {}))
        data = case_values(spec, spec["shape"], rng)
        if spec["written"] == "all" or (spec["fill"] is None and dt.kind != "O"):
            z[...] = data
        elif spec["written"] == "part" and z.ndim and z.shape[0]:
            z[: max(1, z.shape[0] // 2)] = data[: max(1, z.shape[0] // 2)]
        z.attrs.update(spec["attrs"])
    return z


def run_array(root, spec, rng):
    path = os.path.join(root, "a")
    write_ref(path, spec, rng)
    ref = quiet_zarr_open(path, mode="r")
    z = zarrpp.open_array(path, mode="r+")
    same_array(ref[...], z[...], "read")
    same_meta(ref, z, "read")
    if ref.ndim:
        block = case_values(spec, (2,) + ref.shape[1:], rng)
        z.append(block)
        _, grown = reference_reads(path)
        same_array(grown, zarrpp.open_array(path)[...], "after append")
    before = quiet_zarr_open(path, mode="r")
    notes = zarrpp.convert_to_v3(path, dst=os.path.join(root, "v3"))["notes"]
    return after_convert(lambda: same_array(before[...], zarrpp.open_array(os.path.join(root, "v3"))[...],
                                            "after convert"), notes)


def after_convert(check, notes):
    """A difference after conversion is noted, not silent, when `convert` said something."""
    try:
        check()
    except Different as e:
        if not notes:
            raise
        return f"noted: {str(e)[:200]} ({'; '.join(notes)[:200]})"
    return "identical"


def run_reverse(root, spec, rng):
    path = os.path.join(root, "r")
    dt = spec["dtype"] if spec["dtype"] in ("str", "bytes") else numpy_dtype(spec["dtype"]).newbyteorder("<")
    filters = [f for f in spec["filters"] or [] if not isinstance(f, (numcodecs.VLenUTF8, numcodecs.VLenBytes))]
    kw = {} if spec["fill"] is None and rng.integers(0, 2) else {"fill_value": spec["fill"]}
    z = zarrpp.create_array(path, shape=spec["shape"], chunks=spec["chunks"] or None, dtype=dt, zarr_format=2,
                            compressors=spec["compressor"], filters=filters or None, order=spec["order"],
                            dimension_separator=spec["sep"], attributes=spec["attrs"] or None, **kw)
    data = case_values(spec, spec["shape"], rng)
    if spec["written"] != "none" and z.ndim and z.shape[0]:
        z[: max(1, z.shape[0] // 2)] = data[: max(1, z.shape[0] // 2)]
    elif spec["written"] == "all" or not z.ndim:
        z[...] = data
    ref, want = reference_reads(path)
    got = zarrpp.open_array(path)[...]
    if ref.fill_value is None and ref.dtype.kind != "O" and z.ndim:
        # zarr-python 2 returns np.empty for a missing chunk of an array without fill value: only
        # what is stored is compared.
        half = max(1, z.shape[0] // 2) if spec["written"] != "none" else 0
        want, got = want[:half], got[:half]
    same_array(want, got, "zarr-python 2 reads")
    same_meta(ref, zarrpp.open_array(path), "zarr-python 2 reads")
    return "identical"


def draw_dataset(rng, n):
    """A dataset as xarray users write them: variables of the kinds xarray encodes differently."""
    import pandas as pd
    import xarray as xr
    t = pd.date_range("2020-01-01", periods=n, freq=["D", "h", "6h"][int(rng.integers(0, 3))])
    temp = np.round(rng.normal(280, 5, (n, 3)), 2)  # what int16 with scale_factor 0.01 holds exactly
    temp[rng.random((n, 3)) < 0.2] = np.nan
    pool = {
        "temp": (("time", "site"), temp, {"units": "K", "long_name": "température"}),
        "count": (("time",), rng.integers(-5, 100, n).astype("i4"), {}),
        "flag": (("time",), rng.integers(0, 2, n).astype(bool), {}),
        "lead": (("time",), (rng.integers(0, 48, n) * 3600 * 10**9).astype("m8[ns]"), {}),
        "code": (("site",), np.array([b"PAR", b"", b"N\x00C"]), {}),
        "label": (("time",), np.array([["a", "bé", ""][i % 3] for i in range(n)], dtype=object), {}),
        "stamp": (("time",), t.values[::-1].copy(), {}),
    }
    names = [k for k in pool if rng.integers(0, 3)] or ["temp"]
    ds = xr.Dataset({k: pool[k] for k in names},
                    coords={"time": t, "site": ["paris", "lyon", "nicé"][: 3]},
                    attrs={"title": "corpus", "history": "é😀", "version": 2})
    encoding = {}
    if "temp" in names and rng.integers(0, 2):
        encoding["temp"] = {"dtype": "i2", "scale_factor": 0.01, "add_offset": 280.0, "_FillValue": -32768}
    if rng.integers(0, 2):
        encoding["time"] = {"units": ["days since 2000-01-01", "hours since 1970-01-01 00:00"][int(rng.integers(0, 2))]}
    if "count" in names and rng.integers(0, 2):
        encoding["count"] = {"_FillValue": -1}
    chunk = int(rng.integers(1, n + 1))
    for k in names:
        if "time" in pool[k][0]:
            encoding.setdefault(k, {})["chunks"] = (chunk,) + (3,) * (len(pool[k][0]) - 1)
    return ds, encoding


def same_datasets(mine, theirs, what):
    import xarray as xr
    for kw in ({}, {"chunks": {}}):
        for decode in ({}, {"decode_times": False}, {"mask_and_scale": False}):
            a = xr.open_dataset(theirs, engine="zarr", consolidated=False, **kw, **decode).load()
            b = xr.open_dataset(mine, engine=zarrpp.xarray.ZarrppBackendEntrypoint, **kw, **decode).load()
            try:
                xr.testing.assert_identical(b, a)
            except AssertionError as e:
                raise Different(f"{what} {kw} {decode}: {str(e)[:400]}")


def run_dataset(root, rng):
    import zarrpp.xarray  # noqa: F401 (registers the module attribute used above)
    n = int(rng.integers(2, 9))
    ds, encoding = draw_dataset(rng, n)
    path = os.path.join(root, "d.zarr")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ds.to_zarr(path, encoding=encoding, consolidated=bool(rng.integers(0, 2)))
    same_datasets(path, path, "read")
    more, _ = draw_dataset(np.random.default_rng(int(rng.integers(0, 2**31))), int(rng.integers(1, 4)))
    step = np.arange(1, more.sizes["time"] + 1) * np.timedelta64(1, "D")
    more = more.assign_coords(time=ds.time.values[-1] + step)
    more = more[[k for k in ds.data_vars if k in more.data_vars and "time" in ds[k].dims]]
    ours, theirs = os.path.join(root, "ours.zarr"), os.path.join(root, "theirs.zarr")
    shutil.copytree(path, ours)
    shutil.copytree(path, theirs)
    if more.data_vars and all(k in more for k in ds.data_vars if "time" in ds[k].dims):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            more.to_zarr(theirs, append_dim="time", consolidated=False)
        zarrpp.xarray.to_zarrpp(more, ours, append_dim="time")
        same_datasets(ours, theirs, "after append")
    notes = zarrpp.convert_to_v3(path, dst=os.path.join(root, "d3.zarr"))["notes"]
    return after_convert(lambda: same_datasets(os.path.join(root, "d3.zarr"), path, "after convert"), notes)


# ---- running ------------------------------------------------------------------------------------------

def raised_by(e):
    """refused (zarrpp's package or core raised it), REFERENCE FAILED (zarr-python, numcodecs or
    xarray could not write the case: Debian's packages), or CORPUS ERROR (this script)."""
    where = traceback.extract_tb(e.__traceback__)[-1].filename
    package = os.path.dirname(os.path.abspath(zarrpp.__file__))
    if os.path.abspath(where).startswith(package + os.sep):
        return "refused"
    if os.path.abspath(where).startswith(os.path.dirname(os.path.abspath(__file__))):
        return "CORPUS ERROR"
    return "REFERENCE FAILED"


def reference_reads(path):
    """zarr-python 2 reading what zarrpp wrote: failing to is a difference, not the reference's."""
    try:
        z = quiet_zarr_open(path, mode="r")
        return z, z[...]
    except Exception as e:  # noqa: B902
        raise Different(f"zarr-python 2 cannot read what zarrpp wrote: {type(e).__name__}: {e}")


def run_case(i, seed, keep):
    rng = np.random.default_rng([seed, i])
    kind = ["array", "reverse", "dataset"][i % 3]
    root = tempfile.mkdtemp(prefix=f"corpus{i}_", dir=keep)
    spec = draw_array(rng) if kind != "dataset" else None
    try:
        if kind == "array":
            result = run_array(root, spec, rng)
        elif kind == "reverse":
            result = run_reverse(root, spec, rng)
        else:
            result = run_dataset(root, rng)
    except Different as e:
        result = f"DIFFERENT: {e}"
    except Exception as e:  # noqa: B902 (classified by where it was raised)
        result = f"{raised_by(e)}: {type(e).__name__}: {(str(e).splitlines() or [''])[0][:300]}"
    if keep is None or not result.startswith("DIFFERENT"):
        shutil.rmtree(root, ignore_errors=True)
    return kind, spec, result


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", help="keep each DIFFERENT case's files under this folder")
    ap.add_argument("--verbose", action="store_true", help="print every case")
    args = ap.parse_args(argv)
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    counts = {}
    different = []
    for i in range(args.cases):
        kind, spec, result = run_case(i, args.seed, args.keep)
        cls = result.split(":")[0].split(" (")[0]
        counts[cls] = counts.get(cls, 0) + 1
        line = f"{i:4d} {kind:8s} {result}" + (f"\n     {spec}" if spec and not result.startswith("ident") else "")
        if args.verbose or not result.startswith("identical"):
            print(line, flush=True)
        if result.startswith(("DIFFERENT", "CORPUS ERROR")):
            different.append(line)
    print(f"{args.cases} cases (seed {args.seed}): " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
