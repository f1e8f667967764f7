#pragma once
// The one planner: every selection type compiles to per-chunk copy plans that reads and writes
// both execute. Positions inside chunks come only from ChunkGrid::locate.
#include <cstdint>
#include <map>
#include <vector>

#include "zarrpp/core/ndarray.hpp"
#include "zarrpp/grid/chunk_grid.hpp"
#include "zarrpp/select/selection.hpp"

namespace zarrpp {

// One dimension of a normalised orthogonal selection.
struct DimSel {
  enum class Kind { Int, Range, List } kind = Kind::Range;
  std::int64_t start = 0, step = 1, count = 0;  // Int (count 1) and Range
  std::vector<std::int64_t> list;               // List: in-bounds indices
  bool dropped() const { return kind == Kind::Int; }
  std::int64_t size() const { return kind == Kind::List ? static_cast<std::int64_t>(list.size()) : count; }
  std::int64_t at(std::int64_t k) const {
    return kind == Kind::List ? list[static_cast<std::size_t>(k)] : start + k * step;
  }
};

// Which positions of one chunk a dimension's selection touches, and where they go in the output.
// Ranges are arithmetic (no per-element storage, so huge selections cost per chunk, not per
// element); index arrays are explicit lists.
struct DimChunkMap {
  std::int64_t chunk = 0;
  std::int64_t count = 0;
  std::int64_t chunk_start = 0, chunk_step = 1, out_start = 0, out_step = 1;  // arithmetic form
  std::vector<std::int64_t> chunk_list, out_list;                             // explicit form
  bool is_list = false;
  bool covers_domain = false;  // touches every in-domain position of the chunk

  std::int64_t cpos(std::int64_t i) const {
    return is_list ? chunk_list[static_cast<std::size_t>(i)] : chunk_start + i * chunk_step;
  }
  std::int64_t opos(std::int64_t i) const {
    return is_list ? out_list[static_cast<std::size_t>(i)] : out_start + i * out_step;
  }
  // Both sequences step by +1 (memcpy-able).
  bool unit() const { return !is_list && chunk_step == 1 && out_step == 1; }
};

struct ChunkTask {
  std::vector<std::int64_t> chunk;
  std::vector<const DimChunkMap*> dims;                       // orthogonal plans
  std::vector<std::pair<std::int64_t, std::int64_t>> points;  // point plans: (chunk element, output element)
  bool covers_domain = false;                                 // a write covers every in-domain element of the chunk
};

struct Plan {
  Shape out_shape;                      // shape of the selection's result
  std::vector<std::size_t> out_dim_of;  // orthogonal: array dim -> output dim (SIZE_MAX if dropped)
  bool points = false;
  std::vector<std::vector<DimChunkMap>> dim_maps;  // orthogonal: per array dim
  std::vector<ChunkTask> tasks;  // point plans only; an orthogonal plan's are made as it runs (TaskBatches)
};

// One index or slice of dimension `d` (of length `n`) normalised as NumPy does; an index out of
// bounds is a SelectionError naming it, the dimension and its length.
std::int64_t normalize_int(std::int64_t i, std::int64_t n, std::size_t d);
DimSel normalize_slice(const Slice& s, std::int64_t n, std::size_t d);

// Normalises a selection against `shape`; throws SelectionError naming dimension, index and bound.
std::vector<DimSel> normalize_selection(const Selection& sel, const Shape& shape);
// The same with every index a coordinate of the domain whose lower bound is `lower` (when not null):
// no counting from the end, and indices or slice bounds outside the domain are refused.
std::vector<DimSel> normalize_selection(const Selection& sel, const Shape& shape, const Shape* lower);
// Block selection (chunk units, grid order from the first chunk) -> orthogonal index selection.
std::vector<DimSel> normalize_block_selection(const Selection& sel, const ChunkGrid& grid);

Plan plan_orthogonal(const std::vector<DimSel>& sel, const ChunkGrid& grid);
// Points (already in bounds, non-negative), output shape {n}.
Plan plan_points(const Coordinates& coords, const ChunkGrid& grid);
Coordinates normalize_coordinates(const Coordinates& coords, const Shape& shape);
Coordinates normalize_coordinates(const Coordinates& coords, const Shape& shape, const Shape* lower);
Coordinates mask_to_coordinates(const NDView& mask, const Shape& shape);

}  // namespace zarrpp
