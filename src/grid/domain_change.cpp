// What a chunk grid becomes when its array's domain moves: bounded for growth in front, listed
// chunks fitted to the new domain (added where it passes them, dropped wholly outside), and
// unbounded again when everything is back at 0. Growth (src/array/growth.cpp) asks; nothing here
// touches a store.
#include "domain_change.hpp"

#include <algorithm>
#include <cstdint>

#include "zarrpp/core/checked.hpp"

namespace zarrpp {

namespace {

std::int64_t extent_of(const ChunkRuns& runs) {
  std::int64_t len = 0;
  for (const auto& r : runs) len = checked::add(len, checked::mul(r.size, r.count, "extent"), "extent");
  return len;
}

std::int64_t count_of(const ChunkRuns& runs) {
  std::int64_t n = 0;
  for (const auto& r : runs) n = checked::add(n, r.count, "chunk count");
  return n;
}

// Drops the chunks wholly outside [lo, hi) from both ends of `runs` (whose first chunk is chunk
// `first`, starting at `origin`), keeping at least one.
void drop_outside(ChunkRuns& runs, std::int64_t& first, std::int64_t& origin, std::int64_t lo, std::int64_t hi) {
  std::int64_t total = count_of(runs);
  while (total > 1) {  // chunks that end at or before lo
    ChunkRun& r = runs.front();
    const std::int64_t n = std::min({r.count, checked::sub(lo, origin, "lo - origin") / r.size, total - 1});
    if (n <= 0) break;
    first = checked::add(first, n, "the first chunk's index");
    origin = checked::add(origin, checked::mul(n, r.size, "extent"), "the first chunk's start");
    total -= n;
    r.count -= n;
    if (r.count > 0) break;
    runs.erase(runs.begin());
  }
  std::int64_t start = checked::add(origin, extent_of(runs), "the chunks' end");
  while (total > 1) {  // chunks that start at or after hi
    ChunkRun& r = runs.back();
    start -= r.size * r.count;
    const std::int64_t keep = hi <= start ? 0 : (checked::sub(hi, start, "hi - start") - 1) / r.size + 1;
    const std::int64_t n = std::min({r.count - std::min(keep, r.count), total - 1});
    if (n <= 0) break;
    total -= n;
    r.count -= n;
    if (r.count > 0) break;
    runs.pop_back();
  }
}

// Chunks for `rest` new elements at one end: one chunk, or chunks of `chunk_size` with only the
// one next to the old chunks smaller; in storage order. Sharded (`inner` > 1): sizes are whole
// inner chunks, so the outermost new shard may pass the domain's edge.
ChunkRuns new_chunks(std::int64_t rest, std::int64_t chunk_size, std::int64_t inner, bool front) {
  auto round_up = [&](std::int64_t n) {
    return checked::mul(checked::floor_div(checked::add(n, inner - 1, "chunk size"), inner), inner, "chunk size");
  };
  if (chunk_size <= 0) return {{round_up(rest), 1}};
  ChunkRuns out;
  const std::int64_t full = rest / chunk_size, part = rest % chunk_size;
  if (full > 0) out.push_back({chunk_size, full});
  if (part > 0) out.insert(front ? out.end() : out.begin(), ChunkRun{round_up(part), 1});
  return out;
}

// The most elements along d one new unsharded chunk may have: the codecs decode at most 4 GiB per
// chunk, and the other dimensions' largest chunks fix the rest of its shape. (Sharded: the inner
// chunks stay as they are, so shards have no such limit.)
std::int64_t max_new_chunk(const ArrayMetadata& m, const Shape& inner, std::size_t d) {
  if (!inner.empty()) return INT64_MAX;
  const auto& g = m.chunk_grid;
  std::int64_t row = std::max<std::int64_t>(1, static_cast<std::int64_t>(m.data_type.size()));
  for (std::size_t e = 0; e < m.rank(); ++e) {
    if (e == d) continue;
    std::int64_t biggest = g.chunk_shape[e];
    for (const auto& r : g.chunk_runs[e]) biggest = std::max(biggest, r.size);
    if (__builtin_mul_overflow(row, biggest, &row)) return 1;
  }
  return std::max<std::int64_t>(1, (std::int64_t{1} << 32) / row);
}

// Chunks for `rest` new elements, at most `most` per chunk (more are split as by chunk_size).
ChunkRuns new_chunks_within(std::int64_t rest, std::int64_t step, std::int64_t inner, bool front, std::int64_t most) {
  if (step <= 0 && rest > most) step = most;
  return new_chunks(rest, step, inner, front);
}

bool is_zero(const std::vector<std::int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x == 0; });
}

}  // namespace

ArrayMetadata as_bounded(const ArrayMetadata& in) {
  ArrayMetadata m = in;
  auto& g = m.chunk_grid;
  if (g.kind == ChunkGridMetadata::Kind::Regular)
    g = ChunkGridMetadata::regular_bounded(g.chunk_shape, Shape(m.rank(), 0), Shape(m.rank(), 0));
  if (g.kind == ChunkGridMetadata::Kind::Rectilinear) {
    g.kind = ChunkGridMetadata::Kind::RectilinearBounded;
    g.first_chunk.assign(m.rank(), 0);
  }
  return m;
}

void list_dimension(ChunkGridMetadata& g, const Shape& shape, std::size_t d) {
  if (!g.chunk_runs[d].empty()) return;
  const std::int64_t c = g.chunk_shape[d], o = g.regular_origin(d), lo = g.lower_bound[d];
  const std::int64_t k0 = checked::floor_div(checked::sub(lo, o, "lower_bound - origin"), c);
  const std::int64_t k1 =
      shape[d] == 0 ? k0 + 1 : checked::floor_div(checked::add(lo - o, shape[d] - 1, "the domain's end"), c) + 1;
  if (!g.first_chunk.empty()) g.first_chunk[d] = k0;  // `rectilinear`: k0 is 0, where its chunks start
  g.origin[d] = checked::add(o, checked::mul(k0, c, "chunk start"), "chunk start");
  g.chunk_runs[d] = {{c, k1 - k0}};
}

void fit_runs(ArrayMetadata& m, const Shape& inner_shape, std::size_t axis, std::int64_t chunk_size) {
  auto& g = m.chunk_grid;
  if (!g.rectilinear()) return;
  const bool bounded = g.rectilinear_bounded();
  for (std::size_t d = 0; d < m.rank(); ++d) {
    if (g.chunk_runs[d].empty()) continue;
    const std::int64_t inner = inner_shape.empty() ? 1 : inner_shape[d];
    const std::int64_t step = d == axis ? chunk_size : 0;
    const std::int64_t most = max_new_chunk(m, inner_shape, d);
    const std::int64_t lo = g.lower_bound[d], hi = checked::add(lo, m.shape[d], "the domain's end");
    auto runs = g.chunk_runs[d];
    const std::int64_t end = checked::add(g.origin[d], extent_of(runs), "the chunks' end");
    if (bounded && (lo > end || hi < g.origin[d])) {  // clear of every listed chunk: start afresh
      const bool after = lo > end;
      runs = new_chunks_within(std::max<std::int64_t>(hi - lo, 1), step, inner, !after, most);
      g.first_chunk[d] = after ? checked::add(g.first_chunk[d], count_of(g.chunk_runs[d]), "the first chunk's index")
                               : checked::sub(g.first_chunk[d], count_of(runs), "the first chunk's index");
      g.origin[d] = after ? lo : checked::sub(hi <= lo ? lo + 1 : hi, extent_of(runs), "the first chunk's start");
    }
    if (lo < g.origin[d]) {  // growth in front (bounded only: only it moves the lower bound)
      const auto add = new_chunks_within(checked::sub(g.origin[d], lo, "growth"), step, inner, true, most);
      g.first_chunk[d] = checked::sub(g.first_chunk[d], count_of(add), "the first chunk's index");
      g.origin[d] = checked::sub(g.origin[d], extent_of(add), "the first chunk's start");
      runs.insert(runs.begin(), add.begin(), add.end());
    }
    const std::int64_t now_end = checked::add(g.origin[d], extent_of(runs), "the chunks' end");
    if (hi > now_end) {
      const auto add = new_chunks_within(checked::sub(hi, now_end, "growth"), step, inner, false, most);
      runs.insert(runs.end(), add.begin(), add.end());
    }
    if (bounded) drop_outside(runs, g.first_chunk[d], g.origin[d], lo, hi);
    g.chunk_runs[d] = merge_runs(runs);
  }
}

ChunkGridMetadata unbounded_if_at_zero(ChunkGridMetadata g) {
  if (!is_zero(g.lower_bound) || !is_zero(g.origin) || !is_zero(g.first_chunk)) return g;
  if (g.kind == ChunkGridMetadata::Kind::RegularBounded) return ChunkGridMetadata::regular(g.chunk_shape);
  if (g.kind == ChunkGridMetadata::Kind::RectilinearBounded) {
    g.kind = ChunkGridMetadata::Kind::Rectilinear;
    g.first_chunk.clear();
  }
  return g;
}

}  // namespace zarrpp
