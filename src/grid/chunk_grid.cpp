#include "zarrpp/grid/chunk_grid.hpp"

#include "zarrpp/core/checked.hpp"

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

std::int64_t ChunkGrid::first_chunk(std::size_t d) const { return floor_div(rel_lower_[d], chunk_[d]); }

std::int64_t ChunkGrid::end_chunk(std::size_t d) const {
  if (shape_[d] == 0) return first_chunk(d);
  return floor_div(rel_lower_[d] + shape_[d] - 1, chunk_[d]) + 1;
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
