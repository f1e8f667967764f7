// Writes a set of Zarr v3 arrays and groups with zarrita.js into a directory store, for zarrpp
// to read back, and describes them in OUT_DIR/expected.json.
//
//   node write_with_zarrita.mjs OUT_DIR
//
// expected.json:
//   {
//     "zarrita_version": "0.7.5",
//     "arrays": {PATH: {"dtype", "shape", "chunks", "codecs": [names], "fill_value",
//                       "spec_valid": bool, "note"?, "data": [C-order values]}},
//     "groups": {PATH: {"attributes": {...}}},
//     "array_attributes": {PATH: {...}},
//     "unsupported": {WHAT: "the error zarrita gave"},
//     "zarrita_bugs": {PATH: {...}}   arrays zarrita wrote but does not read back as meant
//   }
// Values in "data" use the encoding of read_with_zarrita.mjs: numbers, int64/uint64 as decimal
// strings, "NaN"/"Infinity"/"-Infinity"/"-0" for special floats, true/false for bool.
//
// Everything zarrita might write is attempted: what it cannot write (gzip, crc32c, sharding,
// float16 in 0.7.5 on Node 20) is recorded under "unsupported" with zarrita's own error, and the
// array is left out, so a newer zarrita that can write more gets tested without changes here.
// Arrays marked "spec_valid": false are zarrita's defaults (no codecs, fill_value null), which the
// Zarr v3 spec does not allow; they are there to document what zarrpp does with them.
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";

const outDir = process.argv[2];
if (!outDir) {
  process.stderr.write("usage: node write_with_zarrita.mjs OUT_DIR\n");
  process.exit(2);
}
fs.mkdirSync(outDir, { recursive: true });
const store = new FileSystemStore(outDir);
const root = zarr.root(store);

// zarrita's entry point is dist/src/index.js; its package.json is two levels above.
const zarritaVersion = JSON.parse(
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.resolve("zarrita"))), "..", "..", "package.json"), "utf8"),
).version;

const expected = {
  zarrita_version: zarritaVersion, arrays: {}, groups: {}, array_attributes: {}, unsupported: {}, zarrita_bugs: {},
};

// ---- values ----------------------------------------------------------------------------------
const INT_RANGE = {
  int8: [-128n, 127n], int16: [-32768n, 32767n], int32: [-2147483648n, 2147483647n],
  int64: [-(2n ** 63n), 2n ** 63n - 1n], uint8: [0n, 255n], uint16: [0n, 65535n],
  uint32: [0n, 4294967295n], uint64: [0n, 2n ** 64n - 1n],
};
const CTOR = {
  int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
  uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array,
  float32: Float32Array, float64: Float64Array,
};
const isBig = (dt) => dt === "int64" || dt === "uint64";
const isFloat = (dt) => dt === "float32" || dt === "float64";

// Deterministic value i of an array; `salt` varies the formula between arrays. The first
// elements are the type's extremes (and NaN/±Infinity/-0 for floats), so edge values travel too.
function valueAt(dt, i, salt) {
  if (dt === "bool") return (i * (salt + 3)) % 5 < 2;
  if (isFloat(dt)) {
    const special = [NaN, Infinity, -Infinity, -0, dt === "float32" ? 3.4028234663852886e38 : Number.MAX_VALUE,
                     dt === "float32" ? 1.401298464324817e-45 : Number.MIN_VALUE];
    if (i < special.length) return special[i];
    const v = ((i * (7 + salt)) % 100) - 20 + 0.25 * (i % 4) + (dt === "float64" ? 1e-9 * i : 0);
    return dt === "float32" ? Math.fround(v) : v;
  }
  const [lo, hi] = INT_RANGE[dt];
  let v;
  if (i === 0) v = lo;
  else if (i === 1) v = hi;
  else v = BigInt(((i * (7 + salt)) % 100) - (lo < 0n ? 20 : 0));
  return isBig(dt) ? v : Number(v);
}

function makeData(dt, n, salt) {
  const vals = Array.from({ length: n }, (_, i) => valueAt(dt, i, salt));
  return dt === "bool" ? new zarr.BoolArray(vals) : CTOR[dt].from(vals);
}

function jsonValue(v) {
  if (typeof v === "bigint") return v.toString();
  if (typeof v === "number") {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "Infinity";
    if (v === -Infinity) return "-Infinity";
    if (Object.is(v, -0)) return "-0";
  }
  return v;
}

const cStrides = (shape) => {
  const s = new Array(shape.length);
  let step = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    s[d] = step;
    step *= shape[d];
  }
  return s;
};

function defaultFill(dt, salt) {
  if (dt === "bool") return salt % 2 === 1;
  if (isFloat(dt)) return salt % 2 === 1 ? "NaN" : -1.5;
  return dt.startsWith("uint") ? 42 : -7;
}
function fillScalar(dt, fill) {
  if (isBig(dt)) return BigInt(fill);
  if (typeof fill === "string") return { NaN: NaN, Infinity: Infinity, "-Infinity": -Infinity }[fill];
  return fill;
}

const BYTES_LE = { name: "bytes", configuration: { endian: "little" } };
const BYTES_BE = { name: "bytes", configuration: { endian: "big" } };

// Writes one array. `region`: "all" writes every element; "partial" writes only the first
// half along axis 0 (whole chunks beyond it stay missing, so readers must use the fill value).
async function writeArray(p, { dtype, shape, chunks, codecs, salt = 0, fill, region = "all",
                               attributes, dimensionNames, separator, what, specValid = true, note }) {
  const n = shape.reduce((a, b) => a * b, 1);
  const fillJson = fill === undefined ? defaultFill(dtype, salt) : fill;
  let full;
  try {
    const opts = { shape, chunkShape: chunks, dtype, codecs, attributes, dimensionNames, chunkSeparator: separator };
    // A number (not a BigInt: zarr.json is written with JSON.stringify); zarrita converts it.
    if (fillJson !== null) opts.fillValue = typeof fillJson === "string" ? fillScalar(dtype, fillJson) : fillJson;
    const arr = await zarr.create(root.resolve(p), opts);
    const data = makeData(dtype, n, salt);
    if (shape.length === 0) {
      await zarr.set(arr, null, dtype === "bool" ? data.get(0) : data[0]);
      full = [dtype === "bool" ? data.get(0) : data[0]];
    } else if (region === "all") {
      await zarr.set(arr, null, { data, shape, stride: cStrides(shape) });
      full = Array.from({ length: n }, (_, i) => (dtype === "bool" ? data.get(i) : data[i]));
    } else {
      const rows = Math.ceil(shape[0] / 2);
      const subShape = [rows, ...shape.slice(1)];
      const m = subShape.reduce((a, b) => a * b, 1);
      const sub = makeData(dtype, m, salt);
      const sel = [zarr.slice(0, rows), ...shape.slice(1).map(() => null)];
      await zarr.set(arr, sel, { data: sub, shape: subShape, stride: cStrides(subShape) });
      const fv = fillScalar(dtype, fillJson);
      full = Array.from({ length: n }, (_, i) => (i < m ? (dtype === "bool" ? sub.get(i) : sub[i]) : fv));
    }
  } catch (err) {
    if (what) {
      let msg = `${err?.name ?? "Error"}: ${err?.message ?? String(err)}`;
      if (err?.cause?.message) msg += ` (${err.cause.message})`;
      expected.unsupported[what] = msg;
      fs.rmSync(path.join(outDir, p), { recursive: true, force: true });
      return false;
    }
    throw err;
  }
  // zarrita must read back what it meant to write; where it does not (a zarrita bug), the
  // array is left on disk but not handed to zarrpp as a reference.
  const meant = full.map(jsonValue);
  const back = await readBack(p);
  if (JSON.stringify(back) !== JSON.stringify(meant)) {
    expected.zarrita_bugs[p] = { dtype, codecs: (codecs ?? []).map((c) => c.configuration ? { [c.name]: c.configuration } : c.name),
                                 meant: meant.slice(0, 12), zarrita_reads_back: back.slice(0, 12) };
    return false;
  }
  expected.arrays[p] = {
    dtype, shape, chunks,
    codecs: (codecs ?? []).map((c) => c.name),
    fill_value: fillJson,
    spec_valid: specValid,
    ...(note ? { note } : {}),
    data: meant,
  };
  if (attributes) expected.array_attributes[p] = attributes;
  return true;
}

async function readBack(p) {
  const arr = await zarr.open.v3(root.resolve(p), { kind: "array" });
  const r = await zarr.get(arr);
  if (arr.shape.length === 0) return [jsonValue(r)];
  const { data, shape, stride } = r;
  const at = (i) => (typeof data.get === "function" ? data.get(i) : data[i]);
  const n = shape.reduce((a, b) => a * b, 1);
  const idx = new Array(shape.length).fill(0);
  const out = [];
  for (let k = 0; k < n; k++) {
    out.push(jsonValue(at(idx.reduce((acc, x, d) => acc + x * stride[d], 0))));
    for (let d = shape.length - 1; d >= 0 && ++idx[d] === shape[d]; d--) idx[d] = 0;
  }
  return out;
}

const DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64", "bool"];

// ---- the hierarchy ---------------------------------------------------------------------------
const rootAttrs = { title: "written by zarrita", zarrita: zarritaVersion, nested: { list: [1, 2.5, "x", null, true] } };
await zarr.create(root, { attributes: rootAttrs });
expected.groups[""] = { attributes: rootAttrs };
for (const [g, attrs] of [["dtypes", { kind: "one array per data type" }], ["dtypes_be", {}], ["zstd", {}],
                          ["blosc", {}], ["shapes", { "unicode": "ünïcødé ✓", "number": -1.5e300 }],
                          ["shapes/deeper", { depth: 2 }], ["unsupported", {}], ["defaults", {}]]) {
  await zarr.create(root.resolve(g), { attributes: attrs });
  expected.groups[g] = { attributes: attrs };
}

// Every data type, 7x5 in 3x2 chunks (partial edge chunks on both axes), both byte orders.
// dtypes_be/bool ends up under "zarrita_bugs": zarrita 0.7.5 swaps bool bytes in groups of 4
// when "endian" is "big" (on write and on read), which scrambles and loses values.
for (const [i, dt] of DTYPES.entries()) {
  await writeArray(`dtypes/${dt}`, { dtype: dt, shape: [7, 5], chunks: [3, 2], codecs: [BYTES_LE], salt: i });
  await writeArray(`dtypes_be/${dt}`, { dtype: dt, shape: [7, 5], chunks: [3, 2], codecs: [BYTES_BE], salt: i + 1 });
  await writeArray(`zstd/${dt}`, { dtype: dt, shape: [7, 5], chunks: [3, 2], salt: i + 2,
                                   codecs: [BYTES_LE, { name: "zstd", configuration: { level: 3, checksum: false } }] });
}
// zstd with "checksum": true: zarrita's zstd ignores the flag (it writes frames without one).
await writeArray("zstd/int32_checksum", { dtype: "int32", shape: [7, 5], chunks: [3, 2], salt: 5,
  codecs: [BYTES_LE, { name: "zstd", configuration: { level: 5, checksum: true } }],
  note: "zarrita's zstd writes no frame checksum even with checksum: true" });

// blosc: every cname x shuffle for a few types; chunks big enough (64x8) that blosc really
// compresses. zarrita's blosc passes the v3 shuffle string to numcodecs.js, which expects an
// integer: the frames come out unshuffled whatever "shuffle" says (valid: blosc frames are
// self-describing).
for (const cname of ["lz4", "lz4hc", "zstd", "blosclz", "zlib"]) {
  for (const shuffle of ["noshuffle", "shuffle", "bitshuffle"]) {
    for (const [i, dt] of ["uint16", "int32", "float64", "int64"].entries()) {
      const size = { uint16: 2, int32: 4, float64: 8, int64: 8 }[dt];
      await writeArray(`blosc/${cname}_${shuffle}_${dt}`, {
        dtype: dt, shape: [130, 9], chunks: [64, 8], salt: i,
        codecs: [BYTES_LE, { name: "blosc", configuration: { cname, clevel: 5, shuffle, typesize: size, blocksize: 0 } }],
      });
    }
  }
}

// Shapes: 0-d, 1-d, 3-d, 4-d, transpose, "." separator, missing chunks, attributes, dimension names.
await writeArray("shapes/scalar_f64", { dtype: "float64", shape: [], chunks: [], codecs: [BYTES_LE], salt: 0, fill: 0 });
await writeArray("shapes/scalar_i16", { dtype: "int16", shape: [], chunks: [], codecs: [BYTES_LE], salt: 3, fill: 0 });
await writeArray("shapes/d1", { dtype: "int32", shape: [13], chunks: [4], codecs: [BYTES_LE], salt: 1 });
await writeArray("shapes/d1_one_chunk", { dtype: "uint8", shape: [13], chunks: [100], codecs: [BYTES_LE], salt: 2 });
await writeArray("shapes/d3", { dtype: "float32", shape: [5, 4, 3], chunks: [2, 3, 2], codecs: [BYTES_LE], salt: 3 });
await writeArray("shapes/d3_zstd_be", { dtype: "int16", shape: [5, 4, 3], chunks: [2, 3, 2], salt: 4,
  codecs: [BYTES_BE, { name: "zstd", configuration: { level: 1, checksum: false } }] });
await writeArray("shapes/d4", { dtype: "uint32", shape: [3, 4, 2, 5], chunks: [2, 3, 2, 2], codecs: [BYTES_LE], salt: 5 });
await writeArray("shapes/transpose_2d", { dtype: "int32", shape: [7, 5], chunks: [3, 2], salt: 6,
  codecs: [{ name: "transpose", configuration: { order: [1, 0] } }, BYTES_LE] });
await writeArray("shapes/transpose_3d", { dtype: "float64", shape: [5, 4, 3], chunks: [2, 3, 2], salt: 7,
  codecs: [{ name: "transpose", configuration: { order: [2, 0, 1] } }, BYTES_BE,
           { name: "zstd", configuration: { level: 3, checksum: false } }] });
await writeArray("shapes/transpose_4d_blosc", { dtype: "uint16", shape: [3, 4, 2, 5], chunks: [2, 3, 2, 2], salt: 8,
  codecs: [{ name: "transpose", configuration: { order: [3, 1, 0, 2] } }, BYTES_LE,
           { name: "blosc", configuration: { cname: "lz4", clevel: 5, shuffle: "shuffle", typesize: 2, blocksize: 0 } }] });
await writeArray("shapes/dot_separator", { dtype: "int8", shape: [7, 5], chunks: [3, 2], codecs: [BYTES_LE], salt: 9, separator: "." });
await writeArray("shapes/missing_chunks", { dtype: "int32", shape: [9, 5], chunks: [3, 2], codecs: [BYTES_LE], salt: 10,
  region: "partial", fill: -99 });
await writeArray("shapes/missing_chunks_nan", { dtype: "float32", shape: [9, 5], chunks: [2, 2], codecs: [BYTES_LE], salt: 11,
  region: "partial", fill: "NaN" });
await writeArray("shapes/missing_chunks_bool", { dtype: "bool", shape: [9, 5], chunks: [2, 3], codecs: [BYTES_LE], salt: 12,
  region: "partial", fill: true });
await writeArray("shapes/deeper/with_attrs", { dtype: "float64", shape: [4, 6], chunks: [4, 4], codecs: [BYTES_LE], salt: 13,
  attributes: { units: "m", scale: [0.5, 2], flags: { ok: true } }, dimensionNames: ["y", "x"] });

// What zarrita 0.7.5 cannot write: recorded under "unsupported" (and written if it can).
await writeArray("unsupported/gzip", { dtype: "int32", shape: [7, 5], chunks: [3, 2], what: "gzip",
  codecs: [BYTES_LE, { name: "gzip", configuration: { level: 5 } }] });
await writeArray("unsupported/crc32c", { dtype: "int32", shape: [7, 5], chunks: [3, 2], what: "crc32c",
  codecs: [BYTES_LE, { name: "crc32c" }] });
await writeArray("unsupported/sharding", { dtype: "int32", shape: [7, 5], chunks: [4, 4], what: "sharding_indexed",
  codecs: [{ name: "sharding_indexed", configuration: { chunk_shape: [2, 2], codecs: [BYTES_LE],
             index_codecs: [BYTES_LE], index_location: "end" } }] });
await writeArray("unsupported/float16", { dtype: "float16", shape: [7, 5], chunks: [3, 2], what: "float16",
  codecs: [BYTES_LE], fill: 0 });

// zarrita's defaults: "codecs": [] and "fill_value": null, neither allowed by the v3 spec.
await writeArray("defaults/no_codecs", { dtype: "int32", shape: [7, 5], chunks: [3, 2], salt: 14, fill: 0,
  specValid: false, note: "zarrita wrote \"codecs\": [] (the spec requires an array -> bytes codec)" });
await writeArray("defaults/null_fill", { dtype: "int32", shape: [6, 4], chunks: [3, 2], codecs: [BYTES_LE], salt: 15,
  fill: null, specValid: false, note: "zarrita wrote \"fill_value\": null (the spec requires a value)" });

fs.writeFileSync(path.join(outDir, "expected.json"), JSON.stringify(expected, null, 1) + "\n");
process.stdout.write(
  `wrote ${Object.keys(expected.arrays).length} arrays and ${Object.keys(expected.groups).length} groups to ${outDir}; ` +
  `zarrita ${zarritaVersion} cannot write: ${Object.keys(expected.unsupported).join(", ") || "(nothing)"}; ` +
  `does not read back as meant: ${Object.keys(expected.zarrita_bugs).join(", ") || "(nothing)"}\n`,
);
