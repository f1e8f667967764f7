// Growing and shrinking at both ends (the regular_bounded grid): prepend, append, resize,
// resize_domain. Every change keeps each existing element at its coordinate, so no chunk key or
// buffer position ever moves. Order of work: growth writes chunk data first (outside the old
// domain, so no reader sees it), then switches zarr.json; shrinking switches first, then deletes.
#include <algorithm>
#include <cstring>

#include "array_state.hpp"
#include "node.hpp"
#include "zarrpp/core/checked.hpp"

namespace zarrpp {

namespace {

void refuse_rectilinear(const ArrayMetadata& m, const std::string& what) {
  if (m.chunk_grid.rectilinear())
    throw UnsupportedError(what +
                           ": the array's chunk grid is rectilinear, whose domain starts at 0 with no place for "
                           "chunks before it; zarrpp changes rectilinear arrays at the end only (append, resize)");
}

ArrayMetadata as_bounded(const ArrayMetadata& in, const std::string& what = "moving the domain's start") {
  refuse_rectilinear(in, what);
  ArrayMetadata m = in;
  if (m.chunk_grid.kind == ChunkGridMetadata::Kind::Regular)
    m.chunk_grid = ChunkGridMetadata::regular_bounded(m.chunk_grid.chunk_shape, Shape(m.rank(), 0), Shape(m.rank(), 0));
  return m;
}

// A rectilinear dimension whose chunks end before the new shape gets one chunk for the rest (as
// zarr-python resizes); shrinking keeps every size, so chunks past the end become inactive. A
// new shard is rounded up to whole inner chunks (`cur`'s), so it may pass the end, as the grid
// allows; zarr-python refuses such growth instead.
void cover_shape(ArrayMetadata& m, const Snapshot& cur) {
  auto& g = m.chunk_grid;
  if (!g.rectilinear()) return;
  for (std::size_t d = 0; d < m.rank(); ++d) {
    if (g.chunk_runs[d].empty()) continue;
    const std::int64_t have = g.covered(d);
    if (have >= m.shape[d]) continue;
    std::int64_t size = m.shape[d] - have;
    if (cur.layout) {
      const std::int64_t inner = cur.layout->unit_shape[d];
      size = checked::mul(checked::floor_div(size + inner - 1, inner), inner, "the new shard's size");
    }
    auto runs = g.chunk_runs[d];
    runs.push_back({size, 1});
    g.chunk_runs[d] = merge_runs(runs);
  }
}

bool is_zero(const std::vector<std::int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](std::int64_t x) { return x == 0; });
}

void check_growth_data(const Snapshot& cur, const NDView& data, std::size_t axis, const char* op) {
  const auto& m = cur.meta;
  if (axis >= m.rank())
    throw SelectionError(ErrorCode::index_out_of_bounds, std::string(op) + ": axis " + std::to_string(axis) +
                                                             " is out of range for a " + std::to_string(m.rank()) +
                                                             "-d array");
  if (!(data.dtype().holds_same_elements(m.data_type)))
    throw SelectionError(ErrorCode::dtype_mismatch, std::string(op) + ": data type " + data.dtype().name() +
                                                        " does not match the array's " + m.data_type.name());
  if (data.ndim() != m.rank())
    throw SelectionError(ErrorCode::shape_mismatch, std::string(op) + ": data has " + std::to_string(data.ndim()) +
                                                        " dimensions, the array has " + std::to_string(m.rank()));
  for (std::size_t d = 0; d < m.rank(); ++d)
    if (d != axis && data.shape()[d] != m.shape[d])
      throw SelectionError(ErrorCode::shape_mismatch, std::string(op) + ": data of shape " + shape_str(data.shape()) +
                                                          " does not match the array's shape " + shape_str(m.shape) +
                                                          " in dimension " + std::to_string(d));
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

}  // namespace

// Growing by nothing changes nothing (the grid stays `regular`, which every reader knows); the
// data is still checked, so a wrong shape is an error either way.
static bool grows_by_nothing(const Snapshot& cur, const NDView& data, std::size_t axis, const char* what) {
  check_growth_data(cur, data, axis, what);
  return data.shape()[axis] == 0;
}

// Growth writes the new elements into chunks outside the old domain first (no reader sees them
// before the metadata names them), then switches the metadata. `heap`: the strings of a
// variable-length array's data (its elements are indices into it).
void Array::grow(const NDView& data, std::size_t axis, bool front, const std::shared_ptr<VlenHeap>& heap) {
  const char* what = front ? "prepend" : "append";
  if (st_->current()->meta.data_type.is_vlen() && !heap)
    throw SelectionError(ErrorCode::dtype_mismatch,
                         std::string(what) + ": the array holds variable-length elements; give them as VlenValues");
  if (grows_by_nothing(*st_->current(), data, axis, what)) return;
  std::int64_t old_n = 0;
  st_->modify(
      [&](const Snapshot& cur) {
        check_growth_data(cur, data, axis, what);
        ArrayMetadata m = front ? as_bounded(cur.meta, what) : cur.meta;
        const std::int64_t p = data.shape()[axis];
        old_n = m.shape[axis];
        if (front)
          m.chunk_grid.lower_bound[axis] = checked::sub(m.chunk_grid.lower_bound[axis], p, "the new lower bound");
        m.shape[axis] = checked::add(m.shape[axis], p, "the new shape");
        cover_shape(m, cur);
        return m;
      },
      [&](const Snapshot&, const Snapshot& next_in) {
        const auto bound = heap ? with_heap(next_in, heap) : nullptr;
        const Snapshot& next = bound ? *bound : next_in;
        Selection sel(next.meta.rank(), all);
        sel[axis] = front ? slice(0, data.shape()[axis]) : slice(old_n, next.meta.shape[axis]);
        const auto plan = plan_orthogonal(normalize_selection(sel, next.meta.shape), next.unit_grid);
        st_->growth_engine(next).write(plan, broadcast_to(data, plan.out_shape, next.meta.data_type));
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
void clear_box(Store& store, const std::string& path, const Engine& e, const Snapshot& next,
               const std::vector<DimSel>& box) {
  NDArray fill(next.meta.data_type, {});
  const Bytes element = next.meta.fill_element();
  std::memcpy(fill.raw_data(), element.data(), element.size());
  constexpr std::int64_t kEnumerateLimit = 1 << 16;
  if (units_touched(box, next.unit_grid) <= kEnumerateLimit) {
    const auto plan = plan_orthogonal(box, next.unit_grid);
    e.write(plan, broadcast_to(fill.view(), plan.out_shape, next.meta.data_type));
    return;
  }
  // Huge growth: only chunks that exist can hold stale data, so visit just those.
  for (const auto& [idx, key] : node::list_chunks(store, path, next.meta.chunk_key_encoding, next.meta.rank())) {
    std::vector<DimSel> part = box;
    bool hit = true;
    for (std::size_t d = 0; d < part.size() && hit; ++d) {
      const auto lo = next.grid.chunk_start_index(d, idx[d]);
      const auto hi = lo + next.grid.chunk_extent(d, idx[d]);
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
        for (std::size_t i = 0; i < m.rank(); ++i)
          moves_lower = moves_lower || nd[i].inclusive_min != m.chunk_grid.lower_bound[i];
        if (moves_lower) m = as_bounded(m);
        for (std::size_t i = 0; i < m.rank(); ++i) {
          m.chunk_grid.lower_bound[i] = nd[i].inclusive_min;
          m.shape[i] = checked::sub(nd[i].exclusive_max, nd[i].inclusive_min, "the new shape");
        }
        cover_shape(m, cur);
        // Growth in front rolled back (the domain starts at 0 again, chunk 0 too): every reader
        // reads `regular`, so the grid goes back to it.
        if (moves_lower && is_zero(m.chunk_grid.lower_bound) && is_zero(m.chunk_grid.origin))
          m.chunk_grid = ChunkGridMetadata::regular(m.chunk_grid.chunk_shape);
        return m;
      },
      [&](const Snapshot& cur, const Snapshot& next_in) {
        // Variable-length elements: the fill value written into entering elements is index 0.
        const auto bound = next_in.meta.data_type.is_vlen()
                               ? with_heap(next_in, std::make_shared<VlenHeap>(next_in.meta.fill_text()))
                               : nullptr;
        const Snapshot& next = bound ? *bound : next_in;
        Engine e = st_->growth_engine(next);
        e.keep = &cur.unit_grid;  // a failure before the switch must leave the old domain intact
        for (const auto& box : entering_boxes(cur.meta.domain(), next.meta.domain()))
          clear_box(*st_->store, st_->path, e, next, box);
      },
      [&](const Snapshot&, const Snapshot& next) {
        try {
          for (const auto& [idx, key] :
               node::list_chunks(*st_->store, st_->path, next.meta.chunk_key_encoding, next.meta.rank()))
            if (!next.grid.contains_chunk(idx)) st_->store->erase(key);
        } catch (const Error& e) {
          throw_like(e, "the new domain " + domain_str(next.meta.domain()) +
                            " is in effect, but removing the chunks now outside it failed (" + e.what() +
                            "); they are invisible, and the next resize removes them");
        }
      });
}

void Array::resize(const Shape& new_shape) {
  if (new_shape.size() != ndim())
    throw SelectionError("resize: new shape " + shape_str(new_shape) + " has " + std::to_string(new_shape.size()) +
                         " dimensions, the array has " + std::to_string(ndim()));
  for (std::size_t i = 0; i < new_shape.size(); ++i)
    if (new_shape[i] < 0)
      throw SelectionError("resize: shape[" + std::to_string(i) + "] must be >= 0, got " +
                           std::to_string(new_shape[i]));
  // The lower bound is taken under the lock, so a concurrent prepend keeps its elements.
  change_domain([&](const ArrayMetadata& m) {
    Domain d = m.domain();
    for (std::size_t i = 0; i < d.size(); ++i)
      d[i].exclusive_max = checked::add(d[i].inclusive_min, new_shape[i], "the new upper bound");
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

Domain Array::expand_domain(std::size_t axis, std::int64_t before, std::int64_t after) {
  if (axis >= ndim())
    throw SelectionError("expand_domain: axis " + std::to_string(axis) + " is out of range for a " +
                         std::to_string(ndim()) + "-d array");
  Domain result;
  // Relative to the domain as stored when the change is made (under the lock), so growth by others
  // in the meantime is kept.
  change_domain([&](const ArrayMetadata& m) {
    Domain d = m.domain();
    d[axis].inclusive_min = checked::sub(d[axis].inclusive_min, before, "the new lower bound");
    d[axis].exclusive_max = checked::add(d[axis].exclusive_max, after, "the new upper bound");
    if (d[axis].inclusive_min > d[axis].exclusive_max)
      throw SelectionError("expand_domain: removing " + std::to_string(-before) + " + " + std::to_string(-after) +
                           " elements from dimension " + std::to_string(axis) + " of size " +
                           std::to_string(m.shape[axis]) + ": that is more than it has");
    result = d;
    return d;
  });
  return result;
}

void Array::convert_to_regular_bounded() {
  st_->modify([](const Snapshot& cur) { return as_bounded(cur.meta, "convert to regular_bounded"); }, nullptr, nullptr);
}

void Array::convert_to_regular() {
  st_->modify(
      [&](const Snapshot& cur) {
        ArrayMetadata m = cur.meta;
        const auto& g = m.chunk_grid;
        if (g.kind == ChunkGridMetadata::Kind::Regular) return m;
        if (g.rectilinear())
          throw UnsupportedError(
              "cannot switch a rectilinear array to the regular grid in place (its chunks "
              "differ in size); copy it into a regular array instead");
        if (!is_zero(g.lower_bound) || !is_zero(g.origin))
          throw ArgumentError(
              "cannot switch the array to the regular grid in place: " +
              (is_zero(g.lower_bound) ? "" : "its domain starts at " + shape_str(g.lower_bound) + " (lower_bound)") +
              (is_zero(g.lower_bound) || is_zero(g.origin) ? "" : " and ") +
              (is_zero(g.origin) ? "" : "its chunk 0 starts at " + shape_str(g.origin) + " (origin)") +
              ", and a regular grid starts both at 0, so chunks would move; copy it into a regular array "
              "instead (copy_array with a regular grid; zarrpp copy --grid regular)");
        m.chunk_grid = ChunkGridMetadata::regular(g.chunk_shape);
        return m;
      },
      nullptr, nullptr);
}

}  // namespace zarrpp
