#pragma once
/// @file
/// The one place that maps array indices to chunks. A `regular` grid is the bounded grid with
/// origin = lower_bound = 0, so every selection and the write path share this arithmetic; a
/// `rectilinear` grid's dimensions are either regular (a bare integer) or runs of chunk sizes.
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "zarrpp/core/checked.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {

/// Where each chunk of an array lies: maps coordinates to chunk indices and back for the regular,
/// regular_bounded, rectilinear and rectilinear_bounded grids.
class ChunkGrid {
 public:
  ChunkGrid() = default;  ///< an empty grid (no dimensions)
  /// A regular(_bounded) grid: chunks of `chunk_shape` from `origin`, array index 0 at `lower_bound`.
  ChunkGrid(std::vector<std::int64_t> shape, std::vector<std::int64_t> chunk_shape, std::vector<std::int64_t> origin,
            std::vector<std::int64_t> lower_bound);
  /// A rectilinear grid: each dimension `runs[d]` (its chunk sizes) or, when empty, regular
  /// chunks of chunk_shape[d]. Chunk first[d] starts at coordinate origin[d], array index 0 at
  /// lower[d] (all three zeros when empty: `rectilinear`). The runs must cover the domain.
  ChunkGrid(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunk_shape,
            const std::vector<ChunkRuns>& runs, const std::vector<std::int64_t>& origin,
            const std::vector<std::int64_t>& lower, const std::vector<std::int64_t>& first);
  /// A `rectilinear` grid (no chunks before index 0).
  ChunkGrid(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunk_shape,
            const std::vector<ChunkRuns>& runs)
      : ChunkGrid(shape, chunk_shape, runs, {}, {}, {}) {}
  static ChunkGrid from_metadata(const ArrayMetadata& m);  ///< the grid an array's metadata states

  std::size_t rank() const { return shape_.size(); }                 ///< number of dimensions
  const std::vector<std::int64_t>& shape() const { return shape_; }  ///< the array's shape
  /// Whether every chunk has the same shape (regular and regular_bounded grids, rectilinear ones
  /// of bare integers only).
  bool is_regular() const { return runs_.empty(); }
  /// Every chunk's shape; throws UnsupportedError on a grid whose chunks differ in size.
  const std::vector<std::int64_t>& chunk_shape() const;
  /// The size of chunk k's buffer along d (its full size, also where it passes the array's end).
  std::int64_t chunk_extent(std::size_t d, std::int64_t k) const {
    return runs_.empty() || runs_[d].size.empty() ? chunk_[d] : run_of_chunk(d, k).size;
  }
  /// Chunk k's buffer shape.
  std::vector<std::int64_t> chunk_shape_at(std::span<const std::int64_t> k) const;
  /// Per dimension, a coordinate where a chunk starts (chunk 0 of an equal-sized dimension, the
  /// first listed chunk of a listed one): every chunk boundary lies on a regular grid of any size
  /// that divides every chunk size, counted from here (shards' inner chunks).
  const std::vector<std::int64_t>& origin() const { return origin_; }
  const std::vector<std::int64_t>& lower_bound() const { return lower_; }  ///< the coordinate of array index 0

  /// One coordinate's place in the grid: its chunk's index and its offset inside that chunk.
  struct Location {
    std::int64_t chunk;     ///< chunk (key) index, may be negative
    std::int64_t position;  ///< position inside the chunk buffer, in [0, chunk_shape)
  };
  /// Array index i (0-based, 0 <= i < shape) of dimension d -> chunk and buffer position.
  Location locate(std::size_t d, std::int64_t i) const {
    if (!runs_.empty() && !runs_[d].size.empty()) return locate_in_runs(d, i);
    const std::int64_t x = i + rel_lower_[d];  // coordinate relative to the origin
    return {checked::floor_div(x, chunk_[d]), checked::floor_mod(x, chunk_[d])};
  }
  /// First and one-past-last chunk index along d ([first, first) when the extent is 0).
  std::int64_t first_chunk(std::size_t d) const;
  std::int64_t end_chunk(std::size_t d) const;  ///< one past the last chunk index along d
  std::int64_t num_chunks(std::size_t d) const { return end_chunk(d) - first_chunk(d); }  ///< chunks along d
  std::int64_t total_chunks() const;                                                      ///< checked product

  /// Array index that chunk k's buffer position 0 corresponds to (may lie outside [0, shape)).
  std::int64_t chunk_start_index(std::size_t d, std::int64_t k) const {
    if (!runs_.empty() && !runs_[d].size.empty()) {
      const auto r = run_of_chunk(d, k);
      return r.first_index + (k - r.first_chunk) * r.size;
    }
    return k * chunk_[d] - rel_lower_[d];
  }
  /// Array indices held by chunk k along d: [lo, hi) clamped to [0, shape).
  std::pair<std::int64_t, std::int64_t> index_range(std::size_t d, std::int64_t k) const;
  /// Whether a chunk index lies in the grid's chunk range (a key outside it is not a chunk of the array).
  bool contains_chunk(std::span<const std::int64_t> k) const;
  /// How many of the array indices [lo, hi) along d each chunk holds, in order (the first and last
  /// cut), `per` consecutive chunks counted as one: chunks k with the same floor(k / per), so the
  /// groups stay where they are when the array grows at either end. Empty for an
  /// empty range. With the defaults, the whole extent: Dask's `chunks`, zarr-python's chunk sizes.
  std::vector<std::int64_t> chunk_sizes(std::size_t d, std::int64_t per = 1, std::int64_t lo = 0,
                                        std::int64_t hi = -1) const;
  /// Whether every buffer position of chunk k is inside the array's domain.
  bool chunk_is_full(std::span<const std::int64_t> k) const;
  /// Each dimension's chunk sizes as a grid from index 0 states them: every chunk's whole
  /// extent (the last not cut at the array's end), a first chunk that starts before index 0 cut
  /// there, to whole inner chunks of `inner` (the shards' inner chunk shape; empty when the grid's
  /// chunks are not shards). What creates the same grid again.
  std::vector<std::vector<std::int64_t>> sizes_from_zero(const std::vector<std::int64_t>& inner = {}) const;

 private:
  /// A rectilinear dimension: run r holds chunks [first_chunk[r], first_chunk[r + 1]) of size[r],
  /// starting at array index first_index[r].
  struct Runs {
    std::vector<std::int64_t> size, first_chunk, first_index;
  };
  struct Run {
    std::int64_t size, first_chunk, first_index;
  };
  Run run_of_chunk(std::size_t d, std::int64_t k) const;
  Location locate_in_runs(std::size_t d, std::int64_t i) const;
  std::vector<std::int64_t> shape_, chunk_, origin_, lower_, rel_lower_;
  std::vector<Runs> runs_;  ///< empty unless some dimension is given by runs
};

/// The chunk shape of a regular grid with these per-dimension sizes (all equal but a smaller
/// last, as zarr-python decides a created grid is regular), or nullopt when they are not.
std::optional<std::vector<std::int64_t>> regular_chunk_shape(const std::vector<std::vector<std::int64_t>>& sizes);

}  // namespace zarrpp
