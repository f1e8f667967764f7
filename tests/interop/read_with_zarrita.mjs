// Reads Zarr arrays from a local directory store with zarrita.js, an independent implementation,
// and prints what it read as JSON, one line per array.
//
//   node read_with_zarrita.mjs STORE_DIR ARRAY_PATH [ARRAY_PATH ...]
//   node read_with_zarrita.mjs --attrs STORE_DIR NODE_PATH [NODE_PATH ...]
//
// Without --attrs each line is
//   {"path": P, "shape": [...], "dtype": "int32", "chunks": [...], "data": [...]}
// where data holds every element in C order: numbers as JSON numbers, int64/uint64 as decimal
// strings, NaN/Infinity/-Infinity/-0 as strings, bool as true/false.
// With --attrs each line is {"path": P, "kind": "array"|"group", "attributes": {...}}.
// A path that zarrita cannot open or read gives {"path": P, "error": "..."} and the exit code 1;
// the other paths are still read. "" or "/" is the store root.
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";

function jsonValue(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "Infinity";
    if (v === -Infinity) return "-Infinity";
    if (Object.is(v, -0)) return "-0";
    return v;
  }
  return v; // boolean
}

// Flattens zarrita's strided result ({data, shape, stride}) in C order, whatever its strides
// (a transpose codec gives a non-C-order result).
function flatten({ data, shape, stride }) {
  const get = typeof data.get === "function" && !ArrayBuffer.isView(data) ? (i) => data.get(i) : (i) => data[i];
  const size = shape.reduce((a, b) => a * b, 1);
  const out = new Array(size);
  const idx = new Array(shape.length).fill(0);
  for (let n = 0; n < size; n++) {
    let off = 0;
    for (let d = 0; d < shape.length; d++) off += idx[d] * stride[d];
    out[n] = jsonValue(get(off));
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

function nodePath(p) {
  return p === "" || p === "/" ? "/" : "/" + p.replace(/^\/+/, "");
}

async function readOne(store, path, attrsOnly) {
  const loc = zarr.root(store).resolve(nodePath(path));
  if (attrsOnly) {
    const node = await zarr.open.v3(loc);
    return { path, kind: node.kind, attributes: node.attrs };
  }
  const arr = await zarr.open.v3(loc, { kind: "array" });
  const result = await zarr.get(arr);
  // A 0-d array comes back as a bare scalar.
  const data = arr.shape.length === 0 && (typeof result !== "object" || result === null) ? [jsonValue(result)] : flatten(result);
  const shape = arr.shape.length === 0 ? [] : result.shape;
  return { path, shape, dtype: arr.dtype, chunks: arr.chunks, data };
}

async function main() {
  const args = process.argv.slice(2);
  const attrsOnly = args[0] === "--attrs";
  if (attrsOnly) args.shift();
  if (args.length < 2) {
    process.stderr.write("usage: node read_with_zarrita.mjs [--attrs] STORE_DIR PATH [PATH ...]\n");
    process.exit(2);
  }
  const [dir, ...paths] = args;
  const store = new FileSystemStore(dir);
  let failed = false;
  for (const path of paths) {
    let line;
    try {
      line = await readOne(store, path, attrsOnly);
    } catch (err) {
      failed = true;
      let msg = `${err?.name ?? "Error"}: ${err?.message ?? String(err)}`;
      if (err?.cause) msg += ` (cause: ${err.cause?.message ?? String(err.cause)})`;
      line = { path, error: msg };
    }
    process.stdout.write(JSON.stringify(line) + "\n");
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
