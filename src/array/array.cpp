#include "zarrpp/array/array.hpp"

#include <emmintrin.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "../codec/codec_impl.hpp"
#include "plan.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/thread_pool.hpp"
#include "zarrpp/grid/chunk_grid.hpp"
#include "zarrpp/store/url.hpp"

namespace zarrpp {

// ---- immutable view of one version of the array's metadata ---------------------------------------
struct Snapshot {
  ArrayMetadata meta;
  Bytes meta_bytes;          // exactly what is stored, for compare-and-swap
  ChunkGrid grid;            // storage units (shards when sharded)
  ChunkGrid unit_grid;       // read/write units (inner chunks when sharded)
  CodecPipeline pipeline;    // for a storage unit
  const ShardingCodec* sharding = nullptr;
  ChunkSpec unit_spec;       // decoded read/write unit
  Shape units_per_storage;   // chunks per shard (all 1 when not sharded)
};

namespace {

std::string meta_key(const std::string& prefix) { return prefix + "zarr.json"; }
std::string node_prefix(const std::string& path) { return path.empty() ? std::string() : path + "/"; }

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

std::shared_ptr<const Snapshot> make_snapshot(ArrayMetadata meta, std::optional<Bytes> stored_bytes) {
  auto s = std::make_shared<Snapshot>();
  s->meta = std::move(meta);
  s->grid = ChunkGrid::from_metadata(s->meta);
  const ChunkSpec storage_spec{s->meta.chunk_grid.chunk_shape, s->meta.data_type, s->meta.fill_value};
  s->pipeline = CodecPipeline::from_metadata(s->meta.codecs, storage_spec);
  s->sharding = s->pipeline.impl().sharding();
  if (s->sharding) {
    s->unit_grid = ChunkGrid(s->meta.shape, s->sharding->inner_shape(), s->meta.chunk_grid.origin,
                             s->meta.chunk_grid.lower_bound);
    s->unit_spec = ChunkSpec{s->sharding->inner_shape(), s->meta.data_type, s->meta.fill_value};
    s->units_per_storage = s->sharding->chunks_per_shard();
  } else {
    s->unit_grid = s->grid;
    s->unit_spec = storage_spec;
    s->units_per_storage.assign(s->meta.rank(), 1);
  }
  s->meta_bytes = stored_bytes ? std::move(*stored_bytes) : to_bytes(s->meta.dump());
  return s;
}

std::shared_ptr<const Snapshot> load_snapshot(Store& store, const std::string& prefix, const std::string& path) {
  auto bytes = store.get(meta_key(prefix));
  if (!bytes) throw NotFoundError("no array at '" + (path.empty() ? "/" : path) + "' in " + store.describe() + " (no zarr.json)");
  const std::string text(bytes->begin(), bytes->end());
  const Json j = parse_json_document(text, "zarr.json of '" + path + "'");
  if (j.is_object() && j.contains("node_type") && j["node_type"] == "group")
    throw MetadataError("'" + (path.empty() ? "/" : path) + "' is a group, not an array");
  return make_snapshot(ArrayMetadata::from_json(j), std::move(bytes));
}

// ---- copying between chunk buffers and caller views ----------------------------------------------

inline void copy_elem(std::byte* dst, const std::byte* src, std::size_t es) {
  switch (es) {
    case 1: *dst = *src; break;
    case 2: std::memcpy(dst, src, 2); break;
    case 4: std::memcpy(dst, src, 4); break;
    case 8: std::memcpy(dst, src, 8); break;
    default: std::memcpy(dst, src, es);
  }
}

// Copies with non-temporal stores: a large output is written once and not read back soon, so
// its lines need not be read into the cache first (as ordinary stores do) nor evict what is
// hot. Callers issue _mm_sfence() before the data is handed to another thread.
inline void copy_streaming(std::byte* dst, const std::byte* src, std::size_t len) {
  std::size_t head = (16 - (reinterpret_cast<std::uintptr_t>(dst) & 15)) & 15;
  if (head > len) head = len;
  std::memcpy(dst, src, head);
  dst += head;
  src += head;
  len -= head;
  auto* d = reinterpret_cast<__m128i*>(dst);
  const auto* q = reinterpret_cast<const __m128i*>(src);
  const std::size_t n = len / 16;
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m128i a = _mm_loadu_si128(q + i), b = _mm_loadu_si128(q + i + 1), c = _mm_loadu_si128(q + i + 2),
                  e = _mm_loadu_si128(q + i + 3);
    _mm_stream_si128(d + i, a);
    _mm_stream_si128(d + i + 1, b);
    _mm_stream_si128(d + i + 2, c);
    _mm_stream_si128(d + i + 3, e);
  }
  for (; i < n; ++i) _mm_stream_si128(d + i, _mm_loadu_si128(q + i));
  std::memcpy(dst + n * 16, src + n * 16, len - n * 16);
}

struct OrthoCopy {
  const ChunkTask& task;
  const std::vector<std::int64_t>& chunk_strides;  // bytes, per array dim
  std::vector<std::int64_t> view_strides;          // bytes, per array dim (0 for dropped dims)
  std::size_t es;
  bool to_chunk;  // true: view -> chunk (write); false: chunk -> view (read)
  // From dimension flat_from on, the selected box is one contiguous run of flat_bytes in both the
  // chunk and the view: copied with one memcpy.
  std::size_t flat_from = SIZE_MAX;
  std::size_t flat_bytes = 0;
  bool stream = false;  // reads into a large output: non-temporal stores for runs of 64 bytes or more

  void out(std::byte* v, const std::byte* c, std::size_t len) const {
    if (stream && len >= 64) copy_streaming(v, c, len);
    else std::memcpy(v, c, len);
  }
  std::int64_t flat_chunk_off = 0, flat_view_off = 0;  // where the run starts, from dimension flat_from on

  void find_flat(const Shape& chunk_shape) {
    const std::size_t r = task.dims.size();
    const auto e = static_cast<std::int64_t>(es);
    if (r == 0 || !task.dims[r - 1]->unit() || chunk_strides[r - 1] != e || view_strides[r - 1] != e) return;
    std::size_t f = r - 1;
    std::int64_t run = task.dims[r - 1]->count;  // elements in the contiguous run from f on
    while (f > 0) {
      const auto& m = *task.dims[f];
      const auto& p = *task.dims[f - 1];
      // Dimension f spans its whole chunk extent, so stepping f-1 continues the run in both.
      if (!p.unit() || m.chunk_start != 0 || m.count != chunk_shape[f] || chunk_strides[f - 1] != run * e ||
          view_strides[f - 1] != run * e)
        break;
      --f;
      run *= p.count;
    }
    flat_from = f;
    flat_bytes = static_cast<std::size_t>(run) * es;
    for (std::size_t d = f; d < r; ++d) {
      flat_chunk_off += task.dims[d]->chunk_start * chunk_strides[d];
      flat_view_off += task.dims[d]->out_start * view_strides[d];
    }
  }

  void run(std::byte* chunk, std::byte* view, std::size_t d) const {
    if (d == flat_from) {
      if (to_chunk) std::memcpy(chunk + flat_chunk_off, view + flat_view_off, flat_bytes);
      else out(view + flat_view_off, chunk + flat_chunk_off, flat_bytes);
      return;
    }
    const auto& m = *task.dims[d];
    const std::int64_t n = m.count;
    const auto cs = chunk_strides[d], vs = view_strides[d];
    if (d + 2 == task.dims.size() && !m.is_list) {
      // Rows: the last dimension a contiguous run in both; step along this one with pointers.
      const auto& last = *task.dims[d + 1];
      const auto e = static_cast<std::int64_t>(es);
      if (last.unit() && chunk_strides[d + 1] == e && view_strides[d + 1] == e) {
        std::byte* c = chunk + m.chunk_start * cs + last.chunk_start * e;
        std::byte* v = view + m.out_start * vs + last.out_start * e;
        const std::int64_t cstep = m.chunk_step * cs, vstep = m.out_step * vs;
        const auto len = static_cast<std::size_t>(last.count) * es;
        if (to_chunk)
          for (std::int64_t i = 0; i < n; ++i, c += cstep, v += vstep) std::memcpy(c, v, len);
        else
          for (std::int64_t i = 0; i < n; ++i, c += cstep, v += vstep) out(v, c, len);
        return;
      }
    }
    if (d + 1 == task.dims.size()) {
      if (m.unit() && vs == static_cast<std::int64_t>(es) && cs == static_cast<std::int64_t>(es)) {
        std::byte* c = chunk + m.chunk_start * cs;
        std::byte* v = view + m.out_start * vs;
        if (to_chunk) std::memcpy(c, v, static_cast<std::size_t>(n) * es);
        else out(v, c, static_cast<std::size_t>(n) * es);
        return;
      }
      for (std::int64_t i = 0; i < n; ++i) {
        std::byte* c = chunk + m.cpos(i) * cs;
        std::byte* v = view + m.opos(i) * vs;
        if (to_chunk) copy_elem(c, v, es);
        else copy_elem(v, c, es);
      }
      return;
    }
    for (std::int64_t i = 0; i < n; ++i) run(chunk + m.cpos(i) * cs, view + m.opos(i) * vs, d + 1);
  }
};

// Strides of the caller's view per array dimension (dropped dimensions contribute nothing).
std::vector<std::int64_t> view_strides_per_dim(const Plan& plan, const NDView& view) {
  std::vector<std::int64_t> s(plan.out_dim_of.size(), 0);
  for (std::size_t d = 0; d < s.size(); ++d)
    if (plan.out_dim_of[d] != SIZE_MAX) s[d] = view.strides()[plan.out_dim_of[d]];
  return s;
}

void copy_task(const Plan& plan, const ChunkTask& task, std::byte* chunk, const ChunkSpec& spec, const NDView& view,
               bool to_chunk) {
  const std::size_t es = spec.dtype.size();
  if (plan.points) {
    const std::int64_t vs = view.ndim() ? view.strides()[0] : 0;
    for (const auto& [off, k] : task.points) {
      std::byte* c = chunk + off * static_cast<std::int64_t>(es);
      std::byte* v = view.data() + k * vs;
      if (to_chunk) copy_elem(c, v, es);
      else copy_elem(v, c, es);
    }
    return;
  }
  if (task.dims.empty()) {  // 0-d
    if (to_chunk) copy_elem(chunk, view.data(), es);
    else copy_elem(view.data(), chunk, es);
    return;
  }
  const auto cstr = c_strides(spec.shape, es);
  OrthoCopy oc{task, cstr, view_strides_per_dim(plan, view), es, to_chunk};
  oc.find_flat(spec.shape);
  // Outputs larger than the last-level cache are written with non-temporal stores.
  constexpr std::uint64_t kStreamOutput = std::uint64_t{64} << 20;
  std::uint64_t out_bytes = es;
  for (auto n : view.shape()) out_bytes *= static_cast<std::uint64_t>(n);
  oc.stream = !to_chunk && out_bytes >= kStreamOutput;
  oc.run(chunk, view.data(), 0);
  if (oc.stream) _mm_sfence();
}

// Writes the fill value at the view positions a task selects (a read of a missing chunk),
// straight from the one fill element: no chunk-sized buffer, however large the chunk.
void fill_task(const Plan& plan, const ChunkTask& task, const ChunkSpec& spec, const NDView& view) {
  const std::size_t es = spec.dtype.size();
  auto* fill = reinterpret_cast<std::byte*>(const_cast<std::uint8_t*>(spec.fill_value.data()));
  if (plan.points) {
    const std::int64_t vs = view.ndim() ? view.strides()[0] : 0;
    for (const auto& p : task.points) copy_elem(view.data() + p.second * vs, fill, es);
    return;
  }
  if (task.dims.empty()) {
    copy_elem(view.data(), fill, es);
    return;
  }
  const std::vector<std::int64_t> zero(task.dims.size(), 0);  // every chunk position reads the fill
  OrthoCopy oc{task, zero, view_strides_per_dim(plan, view), es, false};
  oc.run(fill, view.data(), 0);
}

// Chunks are decoded whole into memory: refuse sizes no machine can hold, with a clear error
// instead of a failed allocation.
constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{4} << 30;
void check_chunk_size(const ChunkSpec& spec, const char* what) {
  std::int64_t n = 1;
  for (auto d : spec.shape)
    if (__builtin_mul_overflow(n, d, &n)) n = INT64_MAX;
  std::uint64_t bytes;
  if (__builtin_mul_overflow(static_cast<std::uint64_t>(n), spec.dtype.size(), &bytes) || bytes > kMaxChunkBytes)
    throw LimitError(std::string("cannot ") + what + ": a chunk of shape " + shape_str(spec.shape) + " and data type " +
                spec.dtype.name() + " exceeds zarrpp's limit of 4 GiB per decoded chunk");
}

// The box of chunk positions inside a grid's domain: [lo, lo + ext) per dimension.
struct PosBox {
  Shape lo, ext;
  bool empty = false, full = true;
};
PosBox domain_box(const ChunkGrid& g, const std::vector<std::int64_t>& chunk, const ChunkSpec& spec) {
  const std::size_t r = g.rank();
  PosBox b{Shape(r), Shape(r)};
  for (std::size_t d = 0; d < r; ++d) {
    const auto [a, e] = g.index_range(d, chunk[d]);
    const auto start = g.chunk_start_index(d, chunk[d]);
    b.lo[d] = std::max<std::int64_t>(a - start, 0);
    b.ext[d] = std::max<std::int64_t>(e - a, 0);
    if (b.lo[d] != 0 || b.ext[d] != spec.shape[d]) b.full = false;
    if (b.ext[d] == 0) b.empty = true;
  }
  return b;
}

// Resets buffer positions outside the array's domain (and outside `keep`'s, while a domain
// change is under way) to the fill value, so no stale element can ever re-enter the domain and
// no element still visible is lost.
void clear_outside_domain(std::span<std::uint8_t> buf, const ChunkGrid& g, const ChunkGrid* keep,
                          const std::vector<std::int64_t>& chunk, const ChunkSpec& spec) {
  std::vector<PosBox> boxes = {domain_box(g, chunk, spec)};
  if (keep) boxes.push_back(domain_box(*keep, chunk, spec));
  for (const auto& b : boxes)
    if (b.full) return;
  const std::size_t es = spec.dtype.size();
  std::vector<Bytes> saved;
  for (const auto& b : boxes) {
    saved.emplace_back();
    if (b.empty) continue;
    saved.back().resize(static_cast<std::size_t>(shape_size(b.ext)) * es);
    extract_box(buf.data(), spec.shape, b.lo, b.ext, saved.back().data(), es);
  }
  fill_with(buf, spec.fill_value);
  for (std::size_t i = 0; i < boxes.size(); ++i)
    if (!boxes[i].empty) insert_box(saved[i].data(), boxes[i].ext, buf.data(), spec.shape, boxes[i].lo, es);
}

// Where a task's chunk lies in the caller's view when it maps onto one contiguous C-order block
// of it (so the chunk can be decoded straight into, or encoded straight from, the caller's memory).
std::byte* contiguous_target(const Plan& plan, const ChunkTask& task, const ChunkGrid& g, const NDView& view) {
  if (plan.points || task.dims.empty() || !view.is_c_contiguous()) return nullptr;
  if (!g.chunk_is_full(task.chunk)) return nullptr;
  const auto& cs = g.chunk_shape();
  for (std::size_t d = 0; d < task.dims.size(); ++d) {
    const auto& m = *task.dims[d];
    if (plan.out_dim_of[d] == SIZE_MAX || !m.unit() || m.chunk_start != 0 || m.count != cs[d])
      return nullptr;
  }
  // The box is contiguous when every dimension after the first non-trivial one spans the view.
  std::size_t f = 0;
  while (f < cs.size() && cs[f] == 1) ++f;
  for (std::size_t d = f + 1; d < cs.size(); ++d)
    if (cs[d] != view.shape()[plan.out_dim_of[d]]) return nullptr;
  std::int64_t off = 0;
  for (std::size_t d = 0; d < task.dims.size(); ++d) off += task.dims[d]->out_start * view.strides()[plan.out_dim_of[d]];
  return view.data() + off;
}

// ---- grouping read/write units by the stored object that holds them ------------------------------

struct Group {
  std::vector<std::int64_t> storage;  // storage grid index
  std::vector<std::size_t> tasks;     // indices into plan.tasks
};

std::vector<Group> group_tasks(const Plan& plan, const Snapshot& s) {
  if (!s.sharding) {
    std::vector<Group> out(plan.tasks.size());
    for (std::size_t i = 0; i < plan.tasks.size(); ++i) out[i] = Group{plan.tasks[i].chunk, {i}};
    return out;
  }
  std::map<std::vector<std::int64_t>, std::size_t> idx;
  std::vector<Group> out;
  for (std::size_t i = 0; i < plan.tasks.size(); ++i) {
    std::vector<std::int64_t> sh(plan.tasks[i].chunk.size());
    for (std::size_t d = 0; d < sh.size(); ++d) sh[d] = checked::floor_div(plan.tasks[i].chunk[d], s.units_per_storage[d]);
    auto [it, ins] = idx.try_emplace(sh, out.size());
    if (ins) out.push_back(Group{sh, {}});
    out[it->second].tasks.push_back(i);
  }
  return out;
}

// Flat C-order index of an inner chunk inside its shard.
std::size_t inner_index(const std::vector<std::int64_t>& unit, const Shape& per) {
  std::size_t f = 0;
  for (std::size_t d = 0; d < unit.size(); ++d)
    f = f * static_cast<std::size_t>(per[d]) + static_cast<std::size_t>(checked::floor_mod(unit[d], per[d]));
  return f;
}
// Grid index of inner chunk `flat` of shard `shard`.
std::vector<std::int64_t> unit_of(const std::vector<std::int64_t>& shard, std::size_t flat, const Shape& per) {
  std::vector<std::int64_t> u(shard.size());
  for (std::size_t d = shard.size(); d-- > 0;) {
    u[d] = shard[d] * per[d] + static_cast<std::int64_t>(flat % static_cast<std::size_t>(per[d]));
    flat /= static_cast<std::size_t>(per[d]);
  }
  return u;
}

bool unit_intersects_domain(const ChunkGrid& g, const std::vector<std::int64_t>& unit) {
  for (std::size_t d = 0; d < unit.size(); ++d) {
    const auto [a, b] = g.index_range(d, unit[d]);
    if (a >= b) return false;
  }
  return true;
}

template <class F>
auto with_key_context(const std::string& key, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const CodecError& e) {
    throw CodecError("chunk '" + key + "': " + e.what());
  }
}

// ---- executing plans ----------------------------------------------------------------------------

struct Engine {
  Store& store;
  const Snapshot& s;
  std::string prefix;
  std::size_t concurrency;
  bool write_empty;
  // While a domain change is under way: the current (old) domain's unit grid, whose elements
  // every chunk write must preserve until the new metadata is in place.
  const ChunkGrid* keep = nullptr;

  bool holds_kept(const std::vector<std::int64_t>& unit) const { return keep && unit_intersects_domain(*keep, unit); }

  std::string key_of(const std::vector<std::int64_t>& storage) const {
    return prefix + s.meta.chunk_key_encoding.encode(storage);
  }

  void read(const Plan& plan, const NDView& out) const {
    const auto groups = group_tasks(plan, s);
    ThreadPool::global().parallel_for(groups.size(), concurrency, [&](std::size_t gi) {
      const auto& g = groups[gi];
      const std::string key = key_of(g.storage);
      with_key_context(key, [&] { s.sharding ? read_shard(plan, g, key, out) : read_chunk(plan, g, key, out); });
    });
  }

  // Uncompressed chunks (native bytes, at most a crc32c after them) are read in pieces of whole
  // dimension-0 slabs through a small buffer that stays in cache, each piece scattered to the
  // output as it arrives: one pass over memory, like memcpy, instead of reading the whole chunk
  // into memory and copying it again. Without a checksum only the slabs the selection touches are
  // read. False when the chunk or the selection does not qualify.
  bool read_chunk_streamed(const Plan& plan, const ChunkTask& task, const std::string& key, const NDView& out) const {
    const auto trailer = s.pipeline.impl().plain_trailer();
    if (!trailer || plan.points || task.dims.empty() || !store.capabilities().native_streaming) return false;
    const DimChunkMap& m0 = *task.dims[0];
    if (m0.is_list || m0.chunk_step != 1 || (m0.out_step != 1 && m0.count > 1)) return false;
    check_chunk_size(s.unit_spec, "read");
    const auto& cs = s.unit_spec.shape;
    std::uint64_t slab = s.unit_spec.dtype.size();
    for (std::size_t d = 1; d < cs.size(); ++d) slab *= static_cast<std::uint64_t>(cs[d]);
    const std::uint64_t payload = s.unit_spec.nbytes(), expected = payload + *trailer;
    if (slab == 0 || payload == 0) return false;
    const std::uint64_t per = std::max<std::uint64_t>(1, (std::uint64_t{256} << 10) / slab);
    const std::size_t piece = static_cast<std::size_t>(per * slab);
    const std::uint64_t first = static_cast<std::uint64_t>(m0.chunk_start) * slab;
    const std::uint64_t want_end = *trailer ? expected : first + static_cast<std::uint64_t>(m0.count) * slab;
    const ByteRange range = *trailer ? ByteRange::all() : ByteRange::range(first, want_end - first);
    std::uint32_t crc = kCrc32cStart;
    std::uint8_t stored_crc[4] = {};
    std::uint64_t next = *trailer ? 0 : first;  // the next byte we expect
    DimChunkMap part = m0;
    ChunkTask sub = task;
    sub.dims[0] = &part;
    const bool found = store.get_streamed(key, range, piece, [&](std::uint64_t total, std::uint64_t off, std::span<const std::uint8_t> b) {
      if (total != expected)
        throw CodecError("codec bytes: expected " + std::to_string(expected) + " bytes for a chunk of shape " +
                         shape_str(cs) + " and data type " + s.unit_spec.dtype.name() +
                         (*trailer ? " (plus its crc32c)" : "") + ", got " + std::to_string(total));
      if (off != next) throw StoreError("internal: pieces of '" + key + "' arrived out of order");
      next = off + b.size();
      // The trailer's bytes (when the piece runs into it) are kept, not scattered.
      for (std::uint64_t i = std::max(off, payload); i < off + b.size(); ++i) stored_crc[i - payload] = b[i - off];
      const std::uint64_t pend = std::min<std::uint64_t>(off + b.size(), payload);
      if (pend <= off) return;
      const auto data = b.first(static_cast<std::size_t>(pend - off));
      if (*trailer) crc = crc32c_update(crc, data);
      // The slabs [z0, z1) of this piece that the selection wants, scattered from the piece.
      const std::int64_t z0 = static_cast<std::int64_t>(off / slab), z1 = static_cast<std::int64_t>(pend / slab);
      const std::int64_t a = std::max(z0, m0.chunk_start), e = std::min(z1, m0.chunk_start + m0.count);
      if (a >= e) return;
      part.chunk_start = a - z0;
      part.count = e - a;
      part.out_start = m0.out_start + (a - m0.chunk_start) * m0.out_step;
      copy_task(plan, sub, reinterpret_cast<std::byte*>(const_cast<std::uint8_t*>(data.data())), s.unit_spec, out, false);
    });
    if (!found) {
      fill_task(plan, task, s.unit_spec, out);
      return true;
    }
    if (next != want_end)
      throw CodecError("codec bytes: chunk ended after " + std::to_string(next) + " of " + std::to_string(expected) +
                       " bytes (truncated while being read?)");
    if (*trailer) {
      std::uint32_t want = 0;
      for (int i = 0; i < 4; ++i) want |= static_cast<std::uint32_t>(stored_crc[i]) << (8 * i);
      if (crc32c_finish(crc) != want) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "stored 0x%08x, computed 0x%08x", want, crc32c_finish(crc));
        throw CodecError(std::string("codec crc32c: checksum mismatch: ") + buf);
      }
    }
    return true;
  }

  void read_chunk(const Plan& plan, const Group& g, const std::string& key, const NDView& out) const {
    const auto& task = plan.tasks[g.tasks[0]];
    if (read_chunk_streamed(plan, task, key, out)) return;
    auto bytes = store.get(key);
    if (!bytes) return fill_task(plan, task, s.unit_spec, out);
    check_chunk_size(s.unit_spec, "read");
    std::byte* target = contiguous_target(plan, task, s.unit_grid, out);
    // Uncompressed: copy straight from the stored bytes (checksums verified in place).
    if (const auto v = s.pipeline.impl().decode_view(*bytes)) {
      if (target) std::memcpy(target, v->data(), v->size());
      else copy_task(plan, task, reinterpret_cast<std::byte*>(const_cast<std::uint8_t*>(v->data())), s.unit_spec, out, false);
      return;
    }
    if (target) {
      s.pipeline.decode(*bytes, std::span<std::uint8_t>(reinterpret_cast<std::uint8_t*>(target), s.unit_spec.nbytes()));
      return;
    }
    thread_local Bytes buf;
    buf.resize(s.unit_spec.nbytes());
    s.pipeline.decode(*bytes, buf);
    copy_task(plan, task, reinterpret_cast<std::byte*>(buf.data()), s.unit_spec, out, false);
  }

  void read_shard(const Plan& plan, const Group& g, const std::string& key, const NDView& out) const {
    const auto& sc = *s.sharding;
    auto index = store.get(key, sc.index_range());
    if (!index) {
      for (auto ti : g.tasks) fill_task(plan, plan.tasks[ti], s.unit_spec, out);
      return;
    }
    check_chunk_size(s.unit_spec, "read");
    if (index->size() != sc.index_size())
      throw CodecError("codec sharding_indexed: shard is too small for its " + std::to_string(sc.index_size()) +
                       "-byte index (truncated?)");
    // With the index at the end, only the shard's size shows where the data must stop (a range
    // running into the index would be misread silently): ask for it. At the start, a short
    // read of a range already shows truncation.
    std::optional<std::uint64_t> shard_size;
    if (sc.index_at_end()) {
      shard_size = store.size(key);
      if (!shard_size) throw CodecError("codec sharding_indexed: shard disappeared while being read");
    }
    const auto entries = sc.decode_index(*index, shard_size);
    struct Need {
      std::size_t task;
      ShardingCodec::Entry e;
    };
    std::vector<Need> needs;
    for (auto ti : g.tasks) {
      const auto& e = entries[inner_index(plan.tasks[ti].chunk, s.units_per_storage)];
      if (e.empty()) fill_task(plan, plan.tasks[ti], s.unit_spec, out);
      else needs.push_back({ti, e});
    }
    std::sort(needs.begin(), needs.end(), [](const Need& a, const Need& b) { return a.e.offset < b.e.offset; });
    // Coalesce neighbouring inner chunks into one range request when the gap is small.
    // Local files: ranges of about 1 MiB, so each stays in cache between reading and decoding;
    // remote stores: as long as it takes, since every request costs a round trip.
    constexpr std::uint64_t kGap = 16 * 1024;
    const std::uint64_t max_range = store.capabilities().native_streaming ? std::uint64_t{1} << 20 : UINT64_MAX;
    thread_local Bytes buf;
    buf.resize(s.unit_spec.nbytes());
    for (std::size_t i = 0; i < needs.size();) {
      std::size_t j = i + 1;
      std::uint64_t end = needs[i].e.offset + needs[i].e.nbytes;
      while (j < needs.size() && needs[j].e.offset <= end + kGap && end - needs[i].e.offset < max_range) {
        end = std::max(end, needs[j].e.offset + needs[j].e.nbytes);
        ++j;
      }
      const std::uint64_t begin = needs[i].e.offset;
      auto data = store.get(key, ByteRange::range(begin, end - begin));
      if (!data || data->size() != end - begin)
        throw CodecError("codec sharding_indexed: index points outside the shard (bytes " + std::to_string(begin) + ".." +
                         std::to_string(end) + " requested, shard truncated or changed)");
      for (std::size_t k = i; k < j; ++k) {
        const auto& n = needs[k];
        const std::span<const std::uint8_t> enc(data->data() + (n.e.offset - begin), n.e.nbytes);
        if (const auto v = sc.inner().impl().decode_view(enc)) {
          copy_task(plan, plan.tasks[n.task], reinterpret_cast<std::byte*>(const_cast<std::uint8_t*>(v->data())), s.unit_spec, out, false);
          continue;
        }
        sc.inner().decode(enc, buf);
        copy_task(plan, plan.tasks[n.task], reinterpret_cast<std::byte*>(buf.data()), s.unit_spec, out, false);
      }
      i = j;
    }
  }

  void write(const Plan& plan, const NDView& data) const {
    if (!plan.tasks.empty()) check_chunk_size(s.unit_spec, "write");
    const auto groups = group_tasks(plan, s);
    ThreadPool::global().parallel_for(groups.size(), concurrency, [&](std::size_t gi) {
      const auto& g = groups[gi];
      const std::string key = key_of(g.storage);
      with_key_context(key, [&] { s.sharding ? write_shard(plan, g, key, data) : write_chunk(plan, g, key, data); });
    });
  }

  // Builds a unit's new contents: fill (full cover) or its old contents (partial), then the data.
  void build_unit(const Plan& plan, const ChunkTask& task, std::span<std::uint8_t> buf, const NDView& data,
                  const std::function<bool(std::span<std::uint8_t>)>& load_old) const {
    const bool covered = task.covers_domain && !holds_kept(task.chunk);
    if (covered || !load_old(buf)) fill_with(buf, s.unit_spec.fill_value);
    else clear_outside_domain(buf, s.unit_grid, keep, task.chunk, s.unit_spec);
    copy_task(plan, task, reinterpret_cast<std::byte*>(buf.data()), s.unit_spec, data, true);
  }

  void write_chunk(const Plan& plan, const Group& g, const std::string& key, const NDView& data) const {
    const auto& task = plan.tasks[g.tasks[0]];
    if (task.covers_domain && !holds_kept(task.chunk)) {
      if (const std::byte* src = contiguous_target(plan, task, s.unit_grid, data)) {
        const std::span<const std::uint8_t> chunk(reinterpret_cast<const std::uint8_t*>(src), s.unit_spec.nbytes());
        if (!write_empty && all_equal(chunk, s.unit_spec.fill_value)) store.erase(key);
        else store.set(key, s.pipeline.encode(chunk));
        return;
      }
    }
    thread_local Bytes buf;
    buf.resize(s.unit_spec.nbytes());
    build_unit(plan, task, buf, data, [&](std::span<std::uint8_t> b) {
      auto old = store.get(key);
      if (!old) return false;
      s.pipeline.decode(*old, b);
      return true;
    });
    if (!write_empty && all_equal(buf, s.unit_spec.fill_value)) store.erase(key);
    else if (s.pipeline.impl().encodes_as_is()) store.set(key, buf);  // uncompressed: no second copy
    else store.set(key, s.pipeline.encode(buf));
  }

  void write_shard(const Plan& plan, const Group& g, const std::string& key, const NDView& data) const {
    const auto& sc = *s.sharding;
    const std::size_t n = sc.num_inner();
    std::vector<std::int64_t> touched(n, -1);  // inner -> task index
    for (auto ti : g.tasks) touched[inner_index(plan.tasks[ti].chunk, s.units_per_storage)] = static_cast<std::int64_t>(ti);
    // The shard is covered when every inner chunk holding in-domain elements is fully written.
    bool covered = true;
    for (std::size_t i = 0; i < n && covered; ++i) {
      const auto unit = unit_of(g.storage, i, s.units_per_storage);
      if (holds_kept(unit)) {
        covered = false;
        break;
      }
      if (!unit_intersects_domain(s.unit_grid, unit)) continue;
      covered = covered && touched[i] >= 0 && plan.tasks[static_cast<std::size_t>(touched[i])].covers_domain;
    }
    std::optional<Bytes> old;
    std::vector<ShardingCodec::Entry> entries;
    if (!covered) {
      old = store.get(key);
      if (old) {
        if (old->size() < sc.index_size())
          throw CodecError("codec sharding_indexed: shard of " + std::to_string(old->size()) +
                           " bytes is too small for its index (truncated?)");
        const auto ib = sc.index_at_end() ? std::span<const std::uint8_t>(*old).subspan(old->size() - sc.index_size())
                                          : std::span<const std::uint8_t>(*old).first(sc.index_size());
        entries = sc.decode_index(ib, old->size());
      }
    }
    std::vector<std::optional<Bytes>> inner(n);
    ThreadPool::global().parallel_for(n, concurrency, [&](std::size_t i) {
      const auto unit = unit_of(g.storage, i, s.units_per_storage);
      if (!unit_intersects_domain(s.unit_grid, unit) && !holds_kept(unit)) return;  // stays empty: nothing stale survives
      const bool has_old = old && !entries[i].empty();
      if (touched[i] < 0) {  // untouched: keep its encoded bytes exactly
        if (has_old) inner[i] = Bytes(old->begin() + static_cast<std::ptrdiff_t>(entries[i].offset),
                                      old->begin() + static_cast<std::ptrdiff_t>(entries[i].offset + entries[i].nbytes));
        return;
      }
      Bytes buf(s.unit_spec.nbytes());
      build_unit(plan, plan.tasks[static_cast<std::size_t>(touched[i])], buf, data, [&](std::span<std::uint8_t> b) {
        if (!has_old) return false;
        sc.inner().decode(std::span<const std::uint8_t>(*old).subspan(entries[i].offset, entries[i].nbytes), b);
        return true;
      });
      if (!write_empty && all_equal(buf, s.unit_spec.fill_value)) return;
      inner[i] = sc.inner().encode(buf);
    });
    const Bytes shard = sc.assemble(inner);
    if (shard.empty()) store.erase(key);
    else store.set(key, shard);
  }
};

// NumPy broadcasting of `data` to `shape` (as a strided view with zero strides).
NDView broadcast_to(const NDView& data, const Shape& shape, const DataType& dtype) {
  if (!(data.dtype() == dtype))
    throw SelectionError(ErrorCode::dtype_mismatch, "data type mismatch: array holds " + dtype.name() + ", data is " + data.dtype().name());
  if (data.shape() == shape) return data;
  if (data.ndim() > shape.size()) {
    // NumPy accepts extra leading dimensions of length 1.
    std::size_t extra = data.ndim() - shape.size();
    bool ones = true;
    for (std::size_t d = 0; d < extra; ++d) ones = ones && data.shape()[d] == 1;
    if (ones) {
      const Shape s(data.shape().begin() + static_cast<std::ptrdiff_t>(extra), data.shape().end());
      const std::vector<std::int64_t> st(data.strides().begin() + static_cast<std::ptrdiff_t>(extra), data.strides().end());
      return broadcast_to(NDView(data.data(), data.dtype(), s, st), shape, dtype);
    }
  }
  if (data.ndim() > shape.size())
    throw SelectionError(ErrorCode::shape_mismatch, "data of shape " + shape_str(data.shape()) + " cannot be broadcast to the selection's shape " +
                         shape_str(shape));
  std::vector<std::int64_t> strides(shape.size(), 0);
  const std::size_t off = shape.size() - data.ndim();
  for (std::size_t d = 0; d < data.ndim(); ++d) {
    const auto n = data.shape()[d];
    if (n == shape[off + d]) strides[off + d] = data.strides()[d];
    else if (n != 1)
      throw SelectionError(ErrorCode::shape_mismatch, "data of shape " + shape_str(data.shape()) + " cannot be broadcast to the selection's shape " +
                           shape_str(shape) + " (dimension " + std::to_string(off + d) + ")");
  }
  return NDView(data.data(), dtype, shape, strides);
}

void check_out_view(const NDView& out, const Shape& shape, const DataType& dtype) {
  if (!(out.dtype() == dtype))
    throw SelectionError(ErrorCode::dtype_mismatch, "data type mismatch: array holds " + dtype.name() + ", output buffer is " + out.dtype().name());
  if (out.shape() != shape)
    throw SelectionError(ErrorCode::shape_mismatch, "output buffer of shape " + shape_str(out.shape()) + " does not match the selection's shape " +
                         shape_str(shape));
}

}  // namespace

// ---- Array state --------------------------------------------------------------------------------

struct Array::State {
  StorePtr store;
  std::string path, prefix;
  mutable std::mutex mu;
  std::shared_ptr<const Snapshot> snap;
  std::atomic<std::size_t> concurrency{default_concurrency()};
  std::atomic<bool> write_empty{false};

  std::shared_ptr<const Snapshot> current() const {
    std::lock_guard lk(mu);
    return snap;
  }
  void publish(std::shared_ptr<const Snapshot> s) {
    std::lock_guard lk(mu);
    snap = std::move(s);
  }
  Engine engine(const Snapshot& s) const { return Engine{*store, s, prefix, concurrency.load(), write_empty.load(), nullptr}; }

  // Changes zarr.json under the array's lock: reload, compute, do the data work that must come
  // first, then compare-and-swap the metadata; `after` runs once the new metadata is in place.
  void modify(const std::function<ArrayMetadata(const Snapshot&)>& compute,
              const std::function<void(const Snapshot& cur, const Snapshot& next)>& before,
              const std::function<void(const Snapshot& cur, const Snapshot& next)>& after) {
    // Growth writes chunk data before the metadata and shrinking deletes chunks after it, so two
    // domain changes must not interleave: that needs the store's lock. Metadata-only changes are
    // safe with compare-and-swap alone and take no lock (on S3 a lock costs requests).
    std::unique_ptr<StoreLock> lock;
    if (before || after) {
      if (!store->capabilities().locking)
        throw ConflictError("store " + store->describe() +
                            " cannot lock, so growing or resizing the array concurrently could lose data; "
                            "growth needs a store with locks (local files, memory, S3 with conditional writes)");
      lock = store->lock(meta_key(prefix));
    }
    for (int attempt = 0; attempt < 5; ++attempt) {
      if (lock) lock->check();
      auto cur = load_snapshot(*store, prefix, path);
      ArrayMetadata m = compute(*cur);
      m.validate_for_write();
      auto next = make_snapshot(std::move(m), std::nullopt);
      if (before) before(*cur, *next);
      if (lock) lock->check();  // a lease lost during the data work: stop before the switch
      if (store->compare_and_set(meta_key(prefix), cur->meta_bytes, next->meta_bytes)) {
        publish(next);
        if (after) after(*cur, *next);
        return;
      }
    }
    throw ConflictError("zarr.json of '" + path + "' kept changing underneath (compare-and-swap failed 5 times)");
  }
};

Array::Array(std::shared_ptr<State> st) : st_(std::move(st)) {}
Array::Array(const Array& o) : st_(std::make_shared<State>()) {
  st_->store = o.st_->store;
  st_->path = o.st_->path;
  st_->prefix = o.st_->prefix;
  st_->snap = o.st_->current();
  st_->concurrency = o.st_->concurrency.load();
  st_->write_empty = o.st_->write_empty.load();
}
Array& Array::operator=(const Array& o) {
  if (this != &o) *this = Array(o);
  return *this;
}
Array::Array(Array&&) noexcept = default;
Array& Array::operator=(Array&&) noexcept = default;
Array::~Array() = default;

namespace {
std::vector<codec::Any> build_codecs(const ArraySpec& spec) {
  if (spec.codecs) return *spec.codecs;
  std::vector<codec::Any> inner = {codec::BytesCodec{spec.endian}};
  if (spec.compressor) inner.push_back(*spec.compressor);
  if (spec.crc32c) inner.push_back(codec::Crc32c{});
  if (!spec.shards) return inner;
  auto sh = std::make_shared<codec::Sharding>();
  sh->chunk_shape = spec.chunks;
  sh->codecs = inner;
  return {sh};
}

void ensure_parent_groups(Store& store, const std::string& path) {
  std::string cur;
  std::size_t pos = 0;
  while ((pos = path.find('/', pos)) != std::string::npos) {
    cur = path.substr(0, pos);
    const std::string key = cur + "/zarr.json";
    if (auto b = store.get(key)) {
      const auto j = parse_json_document(std::string(b->begin(), b->end()), "zarr.json of '" + cur + "'");
      if (!j.is_object() || !j.contains("node_type") || j["node_type"] != "group")
        throw MetadataError("cannot create a node under '" + cur + "': it is not a group");
    } else {
      store.set(key, to_bytes(GroupMetadata{}.dump()));
    }
    ++pos;
  }
  if (!path.empty() && !store.exists("zarr.json")) store.set("zarr.json", to_bytes(GroupMetadata{}.dump()));
}
}  // namespace

Array Array::create(StorePtr store, const std::string& path_in, const ArraySpec& spec) {
  if (!store) throw StoreError("Array::create: no store given");
  const std::string path = normalize_node_path(path_in);
  const std::size_t r = spec.shape.size();
  auto need_rank = [&](const Shape& v, const char* what) {
    if (v.size() != r)
      throw MetadataError(std::string(what) + ": " + shape_str(v) + " has " + std::to_string(v.size()) +
                          " entries, the shape " + shape_str(spec.shape) + " has " + std::to_string(r));
  };
  need_rank(spec.chunks, "chunks");
  for (std::size_t d = 0; d < r; ++d)
    if (spec.chunks[d] < 1) throw MetadataError("chunks[" + std::to_string(d) + "]: must be >= 1, got " + std::to_string(spec.chunks[d]));
  Shape grid_chunks = spec.chunks;
  if (spec.shards && !spec.codecs) {
    need_rank(*spec.shards, "shards");
    for (std::size_t d = 0; d < r; ++d)
      if ((*spec.shards)[d] < 1 || (*spec.shards)[d] % spec.chunks[d] != 0)
        throw MetadataError("shards[" + std::to_string(d) + "]: " + std::to_string((*spec.shards)[d]) +
                            " must be a positive multiple of chunks[" + std::to_string(d) + "] = " + std::to_string(spec.chunks[d]));
    grid_chunks = *spec.shards;
  }
  ArrayMetadata m;
  m.shape = spec.shape;
  m.data_type = spec.dtype;
  if (spec.lower_bound || spec.origin) {
    const Shape lower = spec.lower_bound ? *spec.lower_bound : Shape(r, 0);
    const Shape origin = spec.origin ? *spec.origin : lower;
    need_rank(lower, "lower_bound");
    need_rank(origin, "origin");
    m.chunk_grid = ChunkGridMetadata::regular_bounded(grid_chunks, origin, lower);
  } else {
    m.chunk_grid = ChunkGridMetadata::regular(grid_chunks);
  }
  m.chunk_key_encoding = spec.chunk_key_encoding;
  m.fill_value = spec.fill_value ? parse_fill_value(*spec.fill_value, spec.dtype) : default_fill_value(spec.dtype);
  m.codecs = codec::to_metadata(build_codecs(spec), spec.dtype);
  if (!spec.attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  m.attributes = spec.attributes;
  m.dimension_names = spec.dimension_names;
  return create(std::move(store), path, m, spec.overwrite);
}

Array Array::create(StorePtr store, const std::string& path_in, const ArrayMetadata& meta, bool overwrite) {
  if (!store) throw StoreError("Array::create: no store given");
  const std::string path = normalize_node_path(path_in);
  ArrayMetadata m = meta;
  m.validate_for_write();
  // Validate everything (including every codec) before anything is written, and write the
  // codecs with their automatic parameters resolved.
  auto snap = make_snapshot(m, std::nullopt);
  m.codecs = snap->pipeline.to_metadata();
  snap = make_snapshot(m, std::nullopt);
  // What we write must parse back to the same metadata.
  ArrayMetadata::parse(std::string(snap->meta_bytes.begin(), snap->meta_bytes.end()));

  const std::string prefix = node_prefix(path);
  if (store->exists(meta_key(prefix))) {
    if (!overwrite)
      throw MetadataError("a node already exists at '" + (path.empty() ? "/" : path) + "' (use overwrite to replace it)");
    store->erase_prefix(prefix);
  }
  ensure_parent_groups(*store, path);
  store->set(meta_key(prefix), snap->meta_bytes);
  auto st = std::make_shared<State>();
  st->store = std::move(store);
  st->path = path;
  st->prefix = prefix;
  st->snap = snap;
  return Array(st);
}

Array Array::open(StorePtr store, const std::string& path_in) {
  if (!store) throw StoreError("Array::open: no store given");
  const std::string path = normalize_node_path(path_in);
  auto st = std::make_shared<State>();
  st->store = std::move(store);
  st->path = path;
  st->prefix = node_prefix(path);
  st->snap = load_snapshot(*st->store, st->prefix, path);
  return Array(st);
}

Array Array::open(const std::string& url) {
  auto opened = open_store(url, OpenStoreOptions{.file = FileStore::Options{.create = false}});
  return open(opened.store, opened.path);
}

void Array::refresh() { st_->publish(load_snapshot(*st_->store, st_->prefix, st_->path)); }

Shape Array::shape() const { return st_->current()->meta.shape; }
std::size_t Array::ndim() const { return st_->current()->meta.rank(); }
DataType Array::dtype() const { return st_->current()->meta.data_type; }
Shape Array::chunks() const { return st_->current()->unit_grid.chunk_shape(); }
std::optional<Shape> Array::shards() const {
  auto s = st_->current();
  if (!s->sharding) return std::nullopt;
  return s->grid.chunk_shape();
}
Bytes Array::fill_value() const { return st_->current()->meta.fill_value; }
Json Array::fill_value_json() const {
  auto s = st_->current();
  return fill_value_to_json(s->meta.fill_value, s->meta.data_type);
}
ArrayMetadata Array::metadata() const { return st_->current()->meta; }
const std::string& Array::path() const { return st_->path; }
const StorePtr& Array::store() const { return st_->store; }
Json Array::attributes() const { return st_->current()->meta.attributes; }
void Array::set_concurrency(std::size_t n) { st_->concurrency = std::max<std::size_t>(n, 1); }
std::size_t Array::concurrency() const { return st_->concurrency; }
void Array::set_write_empty_chunks(bool on) { st_->write_empty = on; }
void Array::check_dtype(const DataType& t) const {
  if (!(t == dtype())) throw SelectionError(ErrorCode::dtype_mismatch, "data type mismatch: array holds " + dtype().name() + ", requested " + t.name());
}

Domain Array::domain() const {
  auto s = st_->current();
  Domain d;
  for (std::size_t i = 0; i < s->meta.rank(); ++i)
    d.push_back({s->meta.chunk_grid.lower_bound[i], s->meta.chunk_grid.lower_bound[i] + s->meta.shape[i]});
  return d;
}
Shape Array::lower_bound() const { return st_->current()->meta.chunk_grid.lower_bound; }
std::int64_t Array::nchunks() const { return st_->current()->grid.total_chunks(); }

std::string Array::chunk_key(const std::vector<std::int64_t>& idx) const {
  auto s = st_->current();
  return st_->prefix + s->meta.chunk_key_encoding.encode(idx);
}

std::vector<std::string> Array::stored_chunk_keys() const {
  auto s = st_->current();
  const auto& enc = s->meta.chunk_key_encoding;
  std::vector<std::pair<std::vector<std::int64_t>, std::string>> found;
  for (const auto& key : st_->store->list_prefix(st_->prefix + enc.prefix())) {
    const auto rel = std::string_view(key).substr(st_->prefix.size());
    auto idx = enc.decode(rel, s->meta.rank());
    if (idx && s->grid.contains_chunk(*idx)) found.emplace_back(std::move(*idx), key);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::int64_t Array::nchunks_stored() const { return static_cast<std::int64_t>(stored_chunk_keys().size()); }

std::uint64_t Array::nbytes_stored() const {
  std::uint64_t n = 0;
  auto s = st_->current();
  n += s->meta_bytes.size();
  for (const auto& k : stored_chunk_keys()) {
    if (auto b = st_->store->get(k)) n += b->size();
  }
  return n;
}

void Array::set_attributes(const Json& attributes) {
  if (!attributes.is_object()) throw MetadataError("attributes: must be a JSON object");
  st_->modify([&](const Snapshot& cur) {
    ArrayMetadata m = cur.meta;
    m.attributes = attributes;
    return m;
  }, nullptr, nullptr);
}

void Array::update_attributes(const Json& patch) {
  if (!patch.is_object()) throw MetadataError("attributes: the update must be a JSON object");
  st_->modify([&](const Snapshot& cur) {
    ArrayMetadata m = cur.meta;
    for (auto it = patch.begin(); it != patch.end(); ++it) m.attributes[it.key()] = it.value();
    return m;
  }, nullptr, nullptr);
}

// ---- selections ---------------------------------------------------------------------------------

Shape Array::selection_shape(const Selection& sel) const {
  auto s = st_->current();
  Shape out;
  for (const auto& d : normalize_selection(sel, s->meta.shape))
    if (!d.dropped()) out.push_back(d.size());
  return out;
}

NDArray Array::read(const Selection& sel) const {
  auto s = st_->current();
  const auto plan = plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid);
  NDArray out = NDArray::uninitialized(s->meta.data_type, plan.out_shape);  // the plan writes every element
  st_->engine(*s).read(plan, out.view());
  return out;
}

void Array::read_into(const Selection& sel, const NDView& out) const {
  auto s = st_->current();
  const auto plan = plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid);
  check_out_view(out, plan.out_shape, s->meta.data_type);
  st_->engine(*s).read(plan, out);
}

void Array::write(const Selection& sel, const NDView& data) {
  auto s = st_->current();
  const auto plan = plan_orthogonal(normalize_selection(sel, s->meta.shape), s->unit_grid);
  st_->engine(*s).write(plan, broadcast_to(data, plan.out_shape, s->meta.data_type));
}

NDArray Array::read_points(const Coordinates& coords) const {
  auto s = st_->current();
  const auto plan = plan_points(normalize_coordinates(coords, s->meta.shape), s->unit_grid);
  NDArray out = NDArray::uninitialized(s->meta.data_type, plan.out_shape);  // the plan writes every element
  st_->engine(*s).read(plan, out.view());
  return out;
}

void Array::write_points(const Coordinates& coords, const NDView& data) {
  auto s = st_->current();
  const auto plan = plan_points(normalize_coordinates(coords, s->meta.shape), s->unit_grid);
  st_->engine(*s).write(plan, broadcast_to(data, plan.out_shape, s->meta.data_type));
}

NDArray Array::read_mask(const NDView& mask) const {
  auto s = st_->current();
  const auto coords = mask_to_coordinates(mask, s->meta.shape);
  if (s->meta.rank() == 0 && *reinterpret_cast<const std::uint8_t*>(mask.data()) == 0) return NDArray(s->meta.data_type, {0});
  const auto plan = plan_points(coords, s->unit_grid);
  NDArray out = NDArray::uninitialized(s->meta.data_type, plan.out_shape);  // the plan writes every element
  st_->engine(*s).read(plan, out.view());
  return out;
}

void Array::write_mask(const NDView& mask, const NDView& data) {
  auto s = st_->current();
  const auto coords = mask_to_coordinates(mask, s->meta.shape);
  if (s->meta.rank() == 0 && *reinterpret_cast<const std::uint8_t*>(mask.data()) == 0) return;
  const auto plan = plan_points(coords, s->unit_grid);
  st_->engine(*s).write(plan, broadcast_to(data, plan.out_shape, s->meta.data_type));
}

NDArray Array::read_blocks(const Selection& sel) const {
  auto s = st_->current();
  const auto plan = plan_orthogonal(normalize_block_selection(sel, s->unit_grid), s->unit_grid);
  NDArray out = NDArray::uninitialized(s->meta.data_type, plan.out_shape);  // the plan writes every element
  st_->engine(*s).read(plan, out.view());
  return out;
}

void Array::write_blocks(const Selection& sel, const NDView& data) {
  auto s = st_->current();
  const auto plan = plan_orthogonal(normalize_block_selection(sel, s->unit_grid), s->unit_grid);
  st_->engine(*s).write(plan, broadcast_to(data, plan.out_shape, s->meta.data_type));
}

// ---- growth -------------------------------------------------------------------------------------

namespace {

ArrayMetadata as_bounded(const ArrayMetadata& in) {
  ArrayMetadata m = in;
  if (m.chunk_grid.kind == ChunkGridMetadata::Kind::Regular)
    m.chunk_grid = ChunkGridMetadata::regular_bounded(m.chunk_grid.chunk_shape, Shape(m.rank(), 0), Shape(m.rank(), 0));
  return m;
}

void check_growth_data(const Snapshot& cur, const NDView& data, std::size_t axis, const char* op) {
  const auto& m = cur.meta;
  if (axis >= m.rank())
    throw SelectionError(ErrorCode::index_out_of_bounds, std::string(op) + ": axis " + std::to_string(axis) + " is out of range for a " +
                         std::to_string(m.rank()) + "-d array");
  if (!(data.dtype() == m.data_type))
    throw SelectionError(ErrorCode::dtype_mismatch, std::string(op) + ": data type " + data.dtype().name() + " does not match the array's " +
                         m.data_type.name());
  if (data.ndim() != m.rank())
    throw SelectionError(ErrorCode::shape_mismatch, std::string(op) + ": data has " + std::to_string(data.ndim()) + " dimensions, the array has " +
                         std::to_string(m.rank()));
  for (std::size_t d = 0; d < m.rank(); ++d)
    if (d != axis && data.shape()[d] != m.shape[d])
      throw SelectionError(ErrorCode::shape_mismatch, std::string(op) + ": data of shape " + shape_str(data.shape()) + " does not match the array's shape " +
                           shape_str(m.shape) + " in dimension " + std::to_string(d));
}

// Boxes (in the new array's index space) that cover new-domain elements outside the old domain.
std::vector<std::vector<DimSel>> entering_boxes(const Domain& oldd, const Domain& newd) {
  std::vector<std::vector<DimSel>> boxes;
  const std::size_t r = newd.size();
  for (std::size_t d = 0; d < r; ++d) {
    // dims < d inside old ∩ new, dim d outside old, dims > d anywhere in new.
    auto make = [&](std::int64_t lo, std::int64_t hi) {
      if (lo >= hi) return;
      std::vector<DimSel> box(r);
      for (std::size_t e = 0; e < r; ++e) {
        std::int64_t a, b;
        if (e < d) {
          a = std::max(oldd[e].inclusive_min, newd[e].inclusive_min);
          b = std::min(oldd[e].exclusive_max, newd[e].exclusive_max);
        } else if (e == d) {
          a = lo;
          b = hi;
        } else {
          a = newd[e].inclusive_min;
          b = newd[e].exclusive_max;
        }
        if (a >= b) return;
        box[e].kind = DimSel::Kind::Range;
        box[e].start = a - newd[e].inclusive_min;
        box[e].step = 1;
        box[e].count = b - a;
      }
      boxes.push_back(std::move(box));
    };
    make(newd[d].inclusive_min, std::min(oldd[d].inclusive_min, newd[d].exclusive_max));
    make(std::max(oldd[d].exclusive_max, newd[d].inclusive_min), newd[d].exclusive_max);
  }
  return boxes;
}

Domain domain_of(const ArrayMetadata& m) {
  Domain d;
  for (std::size_t i = 0; i < m.rank(); ++i)
    d.push_back({m.chunk_grid.lower_bound[i], m.chunk_grid.lower_bound[i] + m.shape[i]});
  return d;
}

}  // namespace

void Array::prepend(const NDView& data, std::size_t axis) {
  st_->modify(
      [&](const Snapshot& cur) {
        check_growth_data(cur, data, axis, "prepend");
        ArrayMetadata m = as_bounded(cur.meta);
        const std::int64_t p = data.shape()[axis];
        m.chunk_grid.lower_bound[axis] = checked::sub(m.chunk_grid.lower_bound[axis], p, "the new lower bound");
        m.shape[axis] = checked::add(m.shape[axis], p, "the new shape");
        return m;
      },
      [&](const Snapshot&, const Snapshot& next) {
        // Data first, into chunks outside the old domain: no reader sees it before the metadata.
        Selection sel(next.meta.rank(), all);
        sel[axis] = slice(0, data.shape()[axis]);
        const auto plan = plan_orthogonal(normalize_selection(sel, next.meta.shape), next.unit_grid);
        st_->engine(next).write(plan, broadcast_to(data, plan.out_shape, next.meta.data_type));
      },
      nullptr);
}

void Array::append(const NDView& data, std::size_t axis) {
  std::int64_t old_n = 0;
  st_->modify(
      [&](const Snapshot& cur) {
        check_growth_data(cur, data, axis, "append");
        ArrayMetadata m = cur.meta;
        old_n = m.shape[axis];
        m.shape[axis] = checked::add(m.shape[axis], data.shape()[axis], "the new shape");
        return m;
      },
      [&](const Snapshot&, const Snapshot& next) {
        Selection sel(next.meta.rank(), all);
        sel[axis] = slice(old_n, next.meta.shape[axis]);
        const auto plan = plan_orthogonal(normalize_selection(sel, next.meta.shape), next.unit_grid);
        st_->engine(next).write(plan, broadcast_to(data, plan.out_shape, next.meta.data_type));
      },
      nullptr);
}

namespace {

// Units of the unit grid a box touches (checked; saturates instead of overflowing).
std::int64_t units_touched(const std::vector<DimSel>& box, const ChunkGrid& g) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < box.size(); ++d) {
    if (box[d].count == 0) return 0;
    const auto a = g.locate(d, box[d].start).chunk;
    const auto b = g.locate(d, box[d].start + box[d].count - 1).chunk;
    if (__builtin_mul_overflow(n, b - a + 1, &n)) return INT64_MAX;
  }
  return n;
}

// Writes the fill value over `box` of the new snapshot, in chunks that may hold stale data.
void clear_box(Store& store, const std::string& prefix, const Engine& e, const Snapshot& next,
               const std::vector<DimSel>& box) {
  NDArray fill(next.meta.data_type, {});
  std::memcpy(fill.raw_data(), next.meta.fill_value.data(), next.meta.fill_value.size());
  constexpr std::int64_t kEnumerateLimit = 1 << 16;
  if (units_touched(box, next.unit_grid) <= kEnumerateLimit) {
    const auto plan = plan_orthogonal(box, next.unit_grid);
    e.write(plan, broadcast_to(fill.view(), plan.out_shape, next.meta.data_type));
    return;
  }
  // Huge growth: only chunks that exist can hold stale data, so visit just those.
  const auto& enc = next.meta.chunk_key_encoding;
  for (const auto& key : store.list_prefix(prefix + enc.prefix())) {
    auto idx = enc.decode(std::string_view(key).substr(prefix.size()), next.meta.rank());
    if (!idx) continue;
    std::vector<DimSel> part = box;
    bool hit = true;
    for (std::size_t d = 0; d < part.size() && hit; ++d) {
      const auto lo = next.grid.chunk_start_index(d, (*idx)[d]);
      const auto hi = lo + next.grid.chunk_shape()[d];
      const auto a = std::max(lo, box[d].start), b = std::min(hi, box[d].start + box[d].count);
      hit = a < b;
      part[d].start = a;
      part[d].count = b - a;
    }
    if (!hit) continue;
    const auto plan = plan_orthogonal(part, next.unit_grid);
    e.write(plan, broadcast_to(fill.view(), plan.out_shape, next.meta.data_type));
  }
}

}  // namespace

// Every change of the domain: clear what enters it (before), switch the metadata, then delete
// chunks wholly outside the new domain (after). `target` computes the new domain from the
// metadata read under the lock.
void Array::change_domain(const std::function<Domain(const ArrayMetadata&)>& target) {
  st_->modify(
      [&](const Snapshot& cur) {
        const Domain nd = target(cur.meta);
        ArrayMetadata m = cur.meta;
        bool moves_lower = false;
        for (std::size_t i = 0; i < m.rank(); ++i) moves_lower = moves_lower || nd[i].inclusive_min != m.chunk_grid.lower_bound[i];
        if (moves_lower) m = as_bounded(m);
        for (std::size_t i = 0; i < m.rank(); ++i) {
          m.chunk_grid.lower_bound[i] = nd[i].inclusive_min;
          m.shape[i] = checked::sub(nd[i].exclusive_max, nd[i].inclusive_min, "the new shape");
        }
        return m;
      },
      [&](const Snapshot& cur, const Snapshot& next) {
        Engine e = st_->engine(next);
        e.keep = &cur.unit_grid;  // a failure before the switch must leave the old domain intact
        for (const auto& box : entering_boxes(domain_of(cur.meta), domain_of(next.meta)))
          clear_box(*st_->store, st_->prefix, e, next, box);
      },
      [&](const Snapshot&, const Snapshot& next) {
        const auto& enc = next.meta.chunk_key_encoding;
        for (const auto& key : st_->store->list_prefix(st_->prefix + enc.prefix())) {
          auto idx = enc.decode(std::string_view(key).substr(st_->prefix.size()), next.meta.rank());
          if (idx && !next.grid.contains_chunk(*idx)) st_->store->erase(key);
        }
      });
}

void Array::resize(const Shape& new_shape) {
  if (new_shape.size() != ndim())
    throw SelectionError("resize: new shape " + shape_str(new_shape) + " has " + std::to_string(new_shape.size()) +
                         " dimensions, the array has " + std::to_string(ndim()));
  for (std::size_t i = 0; i < new_shape.size(); ++i)
    if (new_shape[i] < 0) throw SelectionError("resize: shape[" + std::to_string(i) + "] must be >= 0, got " + std::to_string(new_shape[i]));
  // The lower bound is taken under the lock, so a concurrent prepend keeps its elements.
  change_domain([&](const ArrayMetadata& m) {
    Domain d;
    for (std::size_t i = 0; i < new_shape.size(); ++i) {
      const auto lo = m.chunk_grid.lower_bound[i];
      d.push_back({lo, checked::add(lo, new_shape[i], "the new upper bound")});
    }
    return d;
  });
}

void Array::resize_domain(const Domain& new_domain) {
  if (new_domain.size() != ndim())
    throw SelectionError("resize_domain: " + std::to_string(new_domain.size()) + " bounds given for a " +
                         std::to_string(ndim()) + "-d array");
  for (std::size_t i = 0; i < new_domain.size(); ++i)
    if (new_domain[i].inclusive_min > new_domain[i].exclusive_max)
      throw SelectionError("resize_domain: dimension " + std::to_string(i) + " has inclusive_min " +
                           std::to_string(new_domain[i].inclusive_min) + " > exclusive_max " +
                           std::to_string(new_domain[i].exclusive_max));
  change_domain([&](const ArrayMetadata&) { return new_domain; });
}

void Array::convert_to_regular_bounded() {
  st_->modify([](const Snapshot& cur) { return as_bounded(cur.meta); }, nullptr, nullptr);
}

void remove_node(const StorePtr& store, const std::string& path_in) {
  const std::string path = normalize_node_path(path_in);
  store->erase_prefix(node_prefix(path));
}

}  // namespace zarrpp
