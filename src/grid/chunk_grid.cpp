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

ChunkGrid ChunkGrid::from_metadata(const ArrayMetadata& m) {
  return ChunkGrid(m.shape, m.chunk_grid.chunk_shape, m.chunk_grid.origin, m.chunk_grid.lower_bound);
}

std::int64_t ChunkGrid::first_chunk(std::size_t d) const { return checked::floor_div(rel_lower_[d], chunk_[d]); }

std::int64_t ChunkGrid::end_chunk(std::size_t d) const {
  if (shape_[d] == 0) return first_chunk(d);
  return checked::floor_div(rel_lower_[d] + shape_[d] - 1, chunk_[d]) + 1;
}

std::int64_t ChunkGrid::total_chunks() const {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < rank(); ++d) n = checked::mul(n, num_chunks(d), "number of chunks");
  return n;
}

std::pair<std::int64_t, std::int64_t> ChunkGrid::index_range(std::size_t d, std::int64_t k) const {
  const std::int64_t lo = chunk_start_index(d, k);
  const std::int64_t hi = lo + chunk_[d];
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
    const std::int64_t b = std::min(hi, chunk_start_index(d, k + n - 1) + chunk_[d]);
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
    if (lo < 0 || lo + chunk_[d] > shape_[d]) return false;
  }
  return true;
}

}  // namespace zarrpp
