#!/usr/bin/env python3
"""Records what zarrita.js (tests/interop, the version its package-lock.json pins) reads from every
array of the corpus, and exactly how it misreads: zarrita.js does not check the chunk grid's name,
so it reads configuration.chunk_shape as a regular grid whose chunk 0 starts at index 0.

    PYTHONPATH=build/release/python /usr/bin/python3 conformance/regular_bounded/record_zarrita.py [--check]

Writes zarrita.json (one entry per array) and zarrita.md (the same as a table) beside this script;
with --check it writes nothing and fails when zarrita.js now reads any array differently from the
committed record (the test suite runs it so). Needs node and `npm ci` in tests/interop.

The explanation of a misread is checked, not guessed: the script builds the *shifted model* of each
array (the same folder with its grid replaced by a `regular` grid of the same chunk_shape, read by
zarrpp; element i of it is the element at coordinate origin + i) and says whether zarrita.js's
values are exactly that.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, "..", ".."))
READER = os.path.join(REPO, "tests", "interop", "read_with_zarrita.mjs")


def zarrita_read(paths):
    proc = subprocess.run(["node", READER, HERE, *paths], capture_output=True, text=True, timeout=300)
    out = {}
    for line in proc.stdout.splitlines():
        r = json.loads(line)
        out[r["path"]] = r
    missing = [p for p in paths if p not in out]
    if missing:
        raise SystemExit(f"zarrita reader printed nothing for {missing}: {proc.stderr.strip()[:500]}")
    return out


def as_array(r):
    def conv(v):
        if isinstance(v, str):
            return float(v)  # NaN, Infinity, -0 (int64 strings are not in the corpus' read arrays)
        return v
    return np.array([conv(v) for v in r["data"]], dtype=float).reshape(r["shape"])


def shifted_model(path, meta):
    """What a zero-origin regular reading of the folder gives (zarrpp reading it with the grid
    replaced by `regular`), or None when zarrpp cannot read it that way."""
    import zarrpp
    tmp = tempfile.mkdtemp()
    try:
        dst = os.path.join(tmp, "a")
        shutil.copytree(os.path.join(HERE, path), dst)
        m = dict(meta)
        m["chunk_grid"] = {"name": "regular",
                           "configuration": {"chunk_shape": meta["chunk_grid"]["configuration"]["chunk_shape"]}}
        with open(os.path.join(dst, "zarr.json"), "w") as f:
            json.dump(m, f)
        return np.asarray(zarrpp.open_array(dst, mode="r")[...], dtype=float)
    except Exception:
        return None
    finally:
        shutil.rmtree(tmp)


def same(a, b):
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def describe(entry, r):
    path = entry["path"]
    if "error" in r:
        msg = r["error"].splitlines()[0][:160]
        what = ("(an error, though not one naming the grid)" if entry["expect"] == "refuse"
                else "(a reader must read it)")
        return {"path": path, "outcome": "errors", "detail": f"fails with `{msg}` {what}"}
    got = as_array(r)
    if entry["expect"] == "refuse":
        vals = ", ".join(str(int(v)) for v in got.ravel())
        return {"path": path, "outcome": "accepts",
                "detail": f"opens and reads it although a reader must refuse it "
                          f"({entry['reason']}): shape {list(got.shape)}, values [{vals}]"}
    exp = np.load(os.path.join(HERE, entry["values"])).astype(float)
    if same(got, exp):
        meta = json.load(open(os.path.join(HERE, path, "zarr.json")))
        cfg = meta["chunk_grid"]["configuration"]
        why = ("a 0-d array has one chunk whatever the grid" if not meta["shape"] else
               "origin = lower bound, so reading from chunk 0 at index 0 happens to be right")
        return {"path": path, "outcome": "correct", "detail": f"reads it correctly: {why}"}
    meta = json.load(open(os.path.join(HERE, path, "zarr.json")))
    cfg = meta["chunk_grid"]["configuration"]
    n = exp.size
    wrong = int(np.sum(~((got == exp) | (np.isnan(got) & np.isnan(exp))))) if got.shape == exp.shape else n
    shift = [o - lb for o, lb in zip(cfg.get("origin", []), cfg.get("lower_bound", []))]
    model = shifted_model(path, meta)
    fill = meta["fill_value"]
    detail = (f"misreads it silently: element i is the one at coordinate origin + i, not lower_bound + i "
              f"(shifted by origin - lower_bound = {shift}); {wrong} of {n} elements wrong")
    if got.shape == exp.shape:
        fills = int(np.sum((got != exp) & ((got == float(fill)) if not isinstance(fill, str) else np.isnan(got))))
        if fills:
            detail += f", {fills} of them read as the fill value"
    if model is None or not same(got, model):
        detail = f"misreads it silently: {wrong} of {n} elements wrong, and not as the shifted model predicts"
        return {"path": path, "outcome": "misreads", "detail": detail, "matches_shifted_model": False}
    return {"path": path, "outcome": "misreads", "detail": detail, "matches_shifted_model": True}


def comparable_entry(a):
    """An entry as --check compares it: an error's numbers masked. zarrita.js reads a shard's inner
    chunks concurrently, so which bad offset it reports first (the number in a RangeError) varies
    from run to run; that it fails, and how, does not."""
    if a.get("outcome") != "errors":
        return a
    return dict(a, detail=re.sub(r"\d[\d_]*", "N", a["detail"]))


def comparable(record):
    return {"zarrita": record["zarrita"], "arrays": [comparable_entry(a) for a in record["arrays"]]}


def main():
    check = "--check" in sys.argv[1:]
    manifest = json.load(open(os.path.join(HERE, "manifest.json")))
    entries = manifest["arrays"]
    results = zarrita_read([e["path"] for e in entries])
    version = json.load(open(os.path.join(REPO, "tests", "interop", "node_modules", "zarrita",
                                          "package.json")))["version"]
    record = {"zarrita": version, "arrays": [describe(e, results[e["path"]]) for e in entries]}
    json_path = os.path.join(HERE, "zarrita.json")
    if check:
        old = json.load(open(json_path))
        if comparable(old) != comparable(record):
            diffs = [(a, b) for a, b in zip(old["arrays"], record["arrays"])
                     if comparable_entry(a) != comparable_entry(b)]
            raise SystemExit(f"zarrita.js {version} now reads the corpus differently from zarrita.json: {diffs[:3]} "
                             f"(versions: recorded {old['zarrita']}); run record_zarrita.py to update the record")
        print(f"zarrita.js {version}: {len(entries)} arrays read as recorded")
        return
    with open(json_path, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    counts = {}
    for a in record["arrays"]:
        counts[a["outcome"]] = counts.get(a["outcome"], 0) + 1
    lines = [f"# What zarrita.js {version} reads from the corpus", "",
             "Generated by `record_zarrita.py` (the test suite checks that zarrita.js still reads it so). "
             "zarrita.js does not",
             "check the chunk grid's name: it reads `configuration.chunk_shape` as a regular grid starting at "
             "index 0.", "",
             "Outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) + ".", "",
             "| array | outcome | how |", "|---|---|---|"]
    for a in record["arrays"]:
        lines.append(f"| `{a['path']}` | {a['outcome']} | {a['detail'].replace('|', '/')} |")
    with open(os.path.join(HERE, "zarrita.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote zarrita.json and zarrita.md ({counts})")


if __name__ == "__main__":
    main()
