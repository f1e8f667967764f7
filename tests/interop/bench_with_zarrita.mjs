// Times zarrita.js reading an array on the local file system, for zarrpp-bench's peer columns.
//
//   node bench_with_zarrita.mjs --store DIR --path ARRAY_PATH [--workloads whole,chunks,boxes]
//        [--boxes BOXES.json] [--repeats 3] [--budget SECONDS]
//
// Workloads (timed inside node, so node's start-up is excluded):
//   whole   one zarr.get of the whole array;
//   chunks  one zarr.get per chunk of the grid zarrita exposes (`arr.chunks`: the inner chunk when
//           sharded), over the chunk's region clipped to the array, in C order of the chunk grid;
//   boxes   one zarr.get per box listed in BOXES.json: {"box": [bz, by, bx], "origins": [[z, y, x], ...]}
//           (the box is clipped to the array).
// Each workload runs up to --repeats times on a freshly opened array (so zarrita's shard-index cache
// starts empty every time; opening is not timed), and stops repeating once the workload's total time
// passes --budget seconds. Before timing, one chunk is read untimed, so lazily loaded codecs
// (numcodecs WebAssembly) are compiled outside the timings. chunks and boxes time only the zarr.get
// calls. After the timed runs the elements read are summed (outside the timings) so the caller can
// check the result.
//
// Prints one JSON line:
//   {"zarrita": "0.7.5", "shape": [...], "chunks": [...],
//    "whole":  {"runs": [s, ...], "median": s, "sum": "123"},
//    "chunks": {"runs": [...], "median": s, "sum": "...", "reads": N},
//    "boxes":  {"runs": [...], "median": s, "sum": "...", "reads": N}}
// or {"error": "..."} for a workload that failed (the others are still run), and
// {"error": "..."} at the top level when the array cannot be opened. The exit code is 0 unless
// the arguments are wrong (2).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { FileSystemStore } from "@zarrita/storage";
import * as zarr from "zarrita";

function parseArgs(argv) {
  const o = { workloads: ["whole", "chunks", "boxes"], repeats: 3, budget: 60, boxes: null, store: null, path: "" };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) throw new Error(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--store") o.store = v();
    else if (a === "--path") o.path = v();
    else if (a === "--workloads") o.workloads = v().split(",").filter((s) => s);
    else if (a === "--boxes") o.boxes = v();
    else if (a === "--repeats") o.repeats = Math.max(1, parseInt(v(), 10));
    else if (a === "--budget") o.budget = parseFloat(v());
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.store) throw new Error("--store is required");
  return o;
}

function errorText(err) {
  let msg = `${err?.name ?? "Error"}: ${err?.message ?? String(err)}`;
  if (err?.cause) msg += ` (cause: ${err.cause?.message ?? String(err.cause)})`;
  return msg;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

// Sum of a zarrita result's elements (any strides), as a Number (exact below 2^53).
function sumOf({ data, shape, stride }) {
  const size = shape.reduce((a, b) => a * b, 1);
  const c = new Array(shape.length);
  let s = 1;
  for (let d = shape.length - 1; d >= 0; d--) {
    c[d] = s;
    s *= shape[d];
  }
  const contiguous = shape.every((n, d) => n === 1 || stride[d] === c[d]);
  let total = 0;
  if (contiguous) {
    for (let i = 0; i < size; i++) total += data[i];
    return total;
  }
  const idx = new Array(shape.length).fill(0);
  for (let n = 0; n < size; n++) {
    let off = 0;
    for (let d = 0; d < shape.length; d++) off += idx[d] * stride[d];
    total += data[off];
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return total;
}

// Regions of the chunk grid in C order: [[start, stop] per dimension].
function* chunkRegions(shape, chunks) {
  const n = shape.map((s, d) => Math.ceil(s / chunks[d]));
  const total = n.reduce((a, b) => a * b, 1);
  const idx = new Array(shape.length).fill(0);
  for (let k = 0; k < total; k++) {
    yield idx.map((i, d) => [i * chunks[d], Math.min(shape[d], (i + 1) * chunks[d])]);
    for (let d = shape.length - 1; d >= 0; d--) {
      if (++idx[d] < n[d]) break;
      idx[d] = 0;
    }
  }
}

function boxRegions(shape, boxes) {
  return boxes.origins.map((o) => o.map((start, d) => [start, Math.min(shape[d], start + boxes.box[d])]));
}

const toSelection = (region) => region.map(([a, b]) => zarr.slice(a, b));

async function main() {
  let o;
  try {
    o = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`bench_with_zarrita: ${err.message}\n`);
    process.exit(2);
  }
  const store = new FileSystemStore(o.store);
  const loc = zarr.root(store).resolve(o.path === "" || o.path === "/" ? "/" : "/" + o.path.replace(/^\/+/, ""));
  const openArray = () => zarr.open.v3(loc, { kind: "array" });
  const out = {};
  try {
    const require = createRequire(import.meta.url);
    out.zarrita = require("zarrita/package.json").version;
  } catch {
    out.zarrita = "unknown";
  }
  let first;
  try {
    first = await openArray();
    out.shape = first.shape;
    out.chunks = first.chunks;
    // Untimed warm-up: loads and compiles the codecs.
    const [warm] = chunkRegions(first.shape, first.chunks);
    await zarr.get(first, toSelection(warm));
  } catch (err) {
    out.error = errorText(err);
    process.stdout.write(JSON.stringify(out) + "\n");
    return;
  }
  const boxes = o.boxes ? JSON.parse(readFileSync(o.boxes, "utf8")) : null;

  for (const w of o.workloads) {
    const runs = [];
    let sum = 0;
    let reads = 0;
    try {
      if (w === "boxes" && !boxes) throw new Error("no --boxes file");
      if (!["whole", "chunks", "boxes"].includes(w)) throw new Error(`unknown workload ${w}`);
      let spent = 0;
      for (let r = 0; r < o.repeats; r++) {
        const last = r === o.repeats - 1;
        const arr = await openArray();
        let t = 0;
        if (w === "whole") {
          const t0 = performance.now();
          const res = await zarr.get(arr, null);
          t = (performance.now() - t0) / 1e3;
          sum = sumOf(res);  // untimed; overwritten until the last run
          reads = 1;
        } else {
          const regions = w === "chunks" ? chunkRegions(arr.shape, arr.chunks) : boxRegions(arr.shape, boxes);
          let s = 0;
          let n = 0;
          for (const region of regions) {
            const t0 = performance.now();
            const res = await zarr.get(arr, toSelection(region));
            t += performance.now() - t0;
            s += sumOf(res);  // untimed
            n++;
          }
          t /= 1e3;
          sum = s;
          reads = n;
        }
        runs.push(t);
        spent += t;
        if (last || spent > o.budget) break;
      }
      out[w] = { runs, median: median(runs), sum: String(sum), reads };
    } catch (err) {
      out[w] = { error: errorText(err) };
    }
  }
  process.stdout.write(JSON.stringify(out) + "\n");
}

await main();
