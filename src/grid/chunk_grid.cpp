#include "zarrpp/grid/chunk_grid.hpp"

#include <algorithm>
#include <string>

#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

ChunkGrid::ChunkGrid(std::vector<std::int64_t> shape, std::vector<std::int64_t> chunk_shape,
                     std::vector<std::int64_t> origin, std::vector<std::int64_t> lower_bound)
    : shape_(std::move(shape)),
      chunk_(std::move(chunk_shape)),
      origin_(std::move(origin)),
      lower_(std::move(lower_bound)) {
  const auto r = shape_.size();
  if (chunk_.size() != r || origin_.size() != r || lower_.size() != r)
    throw MetadataError("chunk grid: chunk_shape, origin and lower_bound need " + std::to_string(r) + " entries");
  rel_lower_.resize(r);
  for (std::size_t d = 0; d < r; ++d) {
    if (chunk_[d] < 1) throw MetadataError("chunk grid: chunk_shape[" + std::to_string(d) + "] must be >= 1");
    if (shape_[d] < 0) throw MetadataError("chunk grid: shape[" + std::to_string(d) + "] must be >= 0");
    rel_lower_[d] = checked::sub(lower_[d], origin_[d], "lower_bound - origin");
    checked::add(rel_lower_[d], shape_[d], "upper bound - origin");
  }
}

namespace {
// Where chunk 0 starts on each equal-sized dimension (origin - first * size), where the first
// listed chunk starts on a listed one.
std::vector<std::int64_t> grid_origins(const std::vector<std::int64_t>& chunk_shape, const std::vector<ChunkRuns>& runs,
                                       const std::vector<std::int64_t>& origin,
                                       const std::vector<std::int64_t>& first) {
  std::vector<std::int64_t> out(chunk_shape.size(), 0);
  for (std::size_t d = 0; d < out.size() && !origin.empty(); ++d) {
    const bool listed = d < runs.size() && !runs[d].empty();
    out[d] = listed ? origin[d]
                    : checked::sub(origin[d], checked::mul(first[d], chunk_shape[d], "first_chunk * chunk size"),
                                   "the coordinate of chunk 0");
  }
  return out;
}
}  // namespace

ChunkGrid::ChunkGrid(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunk_shape,
                     const std::vector<ChunkRuns>& runs, const std::vector<std::int64_t>& origin,
                     const std::vector<std::int64_t>& lower, const std::vector<std::int64_t>& first)
    : ChunkGrid(
          shape, chunk_shape,
          grid_origins(chunk_shape, runs, origin, first.empty() ? std::vector<std::int64_t>(shape.size(), 0) : first),
          lower.empty() ? std::vector<std::int64_t>(shape.size(), 0) : lower) {
  if (runs.size() != rank())
    throw MetadataError("chunk grid: rectilinear sizes need " + std::to_string(rank()) + " entries");
  bool any = false;
  for (const auto& r : runs) any = any || !r.empty();
  if (!any) return;
  runs_.resize(rank());
  for (std::size_t d = 0; d < rank(); ++d) {
    if (runs[d].empty()) continue;
    // The first listed chunk starts at array index origin - lower (<= 0).
    std::int64_t chunk = first.empty() ? 0 : first[d], index = -rel_lower_[d];
    for (const auto& run : runs[d]) {
      if (run.size < 1 || run.count < 1)
        throw MetadataError("chunk grid: rectilinear sizes and counts of dimension " + std::to_string(d) +
                            " must be >= 1");
      runs_[d].size.push_back(run.size);
      runs_[d].first_chunk.push_back(chunk);
      runs_[d].first_index.push_back(index);
      chunk = checked::add(chunk, run.count, "rectilinear chunk count");
      index = checked::add(index, checked::mul(run.size, run.count, "rectilinear extent"), "rectilinear extent");
    }
    if (rel_lower_[d] < 0 || index < shape_[d])
      throw MetadataError("chunk grid: the chunks of dimension " + std::to_string(d) + " cover array indices [" +
                          std::to_string(-rel_lower_[d]) + ", " + std::to_string(index) + "), not all of [0, " +
                          std::to_string(shape_[d]) + ")");
  }
}

ChunkGrid ChunkGrid::from_metadata(const ArrayMetadata& m) {
  const auto& g = m.chunk_grid;
  if (g.rectilinear()) return ChunkGrid(m.shape, g.chunk_shape, g.chunk_runs, g.origin, g.lower_bound, g.first_chunk);
  return ChunkGrid(m.shape, g.chunk_shape, g.origin, g.lower_bound);
}

const std::vector<std::int64_t>& ChunkGrid::chunk_shape() const {
  if (!is_regular())
    throw UnsupportedError(
        "the chunks of this rectilinear grid differ in size, so it has no one chunk shape; "
        "ask for each dimension's chunk sizes instead");
  return chunk_;
}

std::vector<std::int64_t> ChunkGrid::chunk_shape_at(std::span<const std::int64_t> k) const {
  std::vector<std::int64_t> out(rank());
  for (std::size_t d = 0; d < rank(); ++d) out[d] = chunk_extent(d, k[d]);
  return out;
}

ChunkGrid::Run ChunkGrid::run_of_chunk(std::size_t d, std::int64_t k) const {
  const auto& r = runs_[d];
  auto it = std::upper_bound(r.first_chunk.begin(), r.first_chunk.end(), k);
  const std::size_t i = it == r.first_chunk.begin() ? 0 : static_cast<std::size_t>(it - r.first_chunk.begin()) - 1;
  return {r.size[i], r.first_chunk[i], r.first_index[i]};
}

ChunkGrid::Location ChunkGrid::locate_in_runs(std::size_t d, std::int64_t i) const {
  const auto& r = runs_[d];
  auto it = std::upper_bound(r.first_index.begin(), r.first_index.end(), i);
  const std::size_t j = it == r.first_index.begin() ? 0 : static_cast<std::size_t>(it - r.first_index.begin()) - 1;
  const std::int64_t off = i - r.first_index[j];
  return {r.first_chunk[j] + checked::floor_div(off, r.size[j]), checked::floor_mod(off, r.size[j])};
}

std::int64_t ChunkGrid::first_chunk(std::size_t d) const {
  if (!runs_.empty() && !runs_[d].size.empty()) return locate_in_runs(d, 0).chunk;
  return checked::floor_div(rel_lower_[d], chunk_[d]);
}

std::int64_t ChunkGrid::end_chunk(std::size_t d) const {
  if (shape_[d] == 0) return first_chunk(d);
  return locate(d, shape_[d] - 1).chunk + 1;
}

std::int64_t ChunkGrid::total_chunks() const {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < rank(); ++d) n = checked::mul(n, num_chunks(d), "number of chunks");
  return n;
}

std::pair<std::int64_t, std::int64_t> ChunkGrid::index_range(std::size_t d, std::int64_t k) const {
  const std::int64_t lo = chunk_start_index(d, k);
  const std::int64_t hi = lo + chunk_extent(d, k);
  return {std::max<std::int64_t>(lo, 0), std::min(hi, shape_[d])};
}

std::vector<std::int64_t> ChunkGrid::chunk_sizes(std::size_t d, std::int64_t per, std::int64_t lo,
                                                 std::int64_t hi) const {
  if (hi < 0) hi = shape_[d];
  if (per < 1) throw ArgumentError("chunk_sizes: chunks per group must be >= 1, got " + std::to_string(per));
  if (lo < 0 || lo > hi || hi > shape_[d])
    throw ArgumentError("chunk_sizes: range [" + std::to_string(lo) + ", " + std::to_string(hi) + ") is outside [0, " +
                        std::to_string(shape_[d]) + ")");
  std::vector<std::int64_t> out;
  if (lo == hi) return out;
  // Groups of `per` count from chunk 0 (the origin), so growth at either end never moves them.
  const std::int64_t last = locate(d, hi - 1).chunk;
  for (std::int64_t k = checked::floor_div(locate(d, lo).chunk, per) * per; k <= last;) {
    const std::int64_t n = std::min(per, last - k + 1);
    const std::int64_t a = std::max(lo, chunk_start_index(d, k));
    const std::int64_t b = std::min(hi, chunk_start_index(d, k + n - 1) + chunk_extent(d, k + n - 1));
    out.push_back(b - a);
    k += n;
  }
  return out;
}

bool ChunkGrid::contains_chunk(std::span<const std::int64_t> k) const {
  if (k.size() != rank()) return false;
  for (std::size_t d = 0; d < rank(); ++d)
    if (k[d] < first_chunk(d) || k[d] >= end_chunk(d)) return false;
  return true;
}

bool ChunkGrid::chunk_is_full(std::span<const std::int64_t> k) const {
  for (std::size_t d = 0; d < rank(); ++d) {
    const auto lo = chunk_start_index(d, k[d]);
    if (lo < 0 || lo + chunk_extent(d, k[d]) > shape_[d]) return false;
  }
  return true;
}

std::optional<std::vector<std::int64_t>> regular_chunk_shape(const std::vector<std::vector<std::int64_t>>& sizes) {
  std::vector<std::int64_t> out;
  for (const auto& v : sizes) {
    if (v.empty()) return std::nullopt;
    for (std::size_t i = 1; i < v.size(); ++i)
      if (i + 1 < v.size() ? v[i] != v[0] : v[i] > v[0]) return std::nullopt;
    out.push_back(v[0]);
  }
  return out;
}

std::vector<std::vector<std::int64_t>> ChunkGrid::sizes_from_zero(const std::vector<std::int64_t>& inner) const {
  std::vector<std::vector<std::int64_t>> out(rank());
  for (std::size_t d = 0; d < rank(); ++d)
    for (auto k = first_chunk(d); k < end_chunk(d); ++k) {
      std::int64_t size = chunk_extent(d, k);
      if (const auto lo = chunk_start_index(d, k); lo < 0) {
        size += lo;
        if (!inner.empty()) size = checked::floor_div(size + inner[d] - 1, inner[d]) * inner[d];
      }
      out[d].push_back(size);
    }
  return out;
}

}  // namespace zarrpp
