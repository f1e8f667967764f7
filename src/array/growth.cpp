// Growing and shrinking at both ends (the regular_bounded grid): prepend, append, resize,
// resize_domain. Every change keeps each existing element at its coordinate, so no chunk key or
// buffer position ever moves. Order of work: growth writes chunk data first (outside the old
// domain, so no reader sees it), then switches zarr.json; shrinking switches first, then deletes.
#include <algorithm>
#include <cstring>

#include "../core/waiting_threads.hpp"
#include "../grid/domain_change.hpp"
#include "../node/node.hpp"
#include "../select/broadcast.hpp"
#include "array_state.hpp"
#include "zarrpp/core/checked.hpp"

namespace zarrpp {

namespace {

// The shards' inner chunk shape (empty when not sharded), for the grid arithmetic.
Shape inner_chunks(const Snapshot& s) { return s.layout ? s.layout->unit_shape : Shape{}; }

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

// chunk_size (0: one chunk for the growth) applies to rectilinear grids, in whole inner chunks.
void check_chunk_size(const Snapshot& cur, std::size_t axis, std::int64_t chunk_size, const char* what) {
  if (chunk_size == 0) return;
  const std::string at = std::string(what) + ": chunk_size " + std::to_string(chunk_size);
  if (chunk_size < 0) throw ArgumentError(at + " must be >= 1 (or 0 for one chunk)");
  if (!cur.meta.chunk_grid.rectilinear())
    throw ArgumentError(at + ": the array's chunk grid is " + cur.meta.chunk_grid.name() +
                        ", whose chunks all have one size; chunk sizes of growth apply to rectilinear grids "
                        "(zarrpp convert ARRAY --grid rectilinear_bounded switches to one without moving a chunk)");
  if (cur.layout && chunk_size % cur.layout->unit_shape[axis] != 0)
    throw ArgumentError(at + " is not a whole number of the shards' inner chunks (" +
                        std::to_string(cur.layout->unit_shape[axis]) + ")");
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
void Array::grow(const NDView& data, std::size_t axis, bool front, const std::shared_ptr<VlenHeap>& heap,
                 std::int64_t chunk_size) {
  const char* what = front ? "prepend" : "append";
  if (st_->current()->meta.data_type.is_vlen() && !heap)
    throw SelectionError(ErrorCode::dtype_mismatch,
                         std::string(what) + ": the array holds variable-length elements; give them as VlenValues");
  if (grows_by_nothing(*st_->current(), data, axis, what)) return;
  std::int64_t old_n = 0;
  st_->modify(
      [&](const Snapshot& cur) {
        check_growth_data(cur, data, axis, what);
        check_chunk_size(cur, axis, chunk_size, what);
        ArrayMetadata m = front ? as_bounded(cur.meta) : cur.meta;
        // The axis lists its chunks (those of the domain before the growth), so the growth is
        // chunks of its own size: on rectilinear_bounded always, on rectilinear when asked.
        if (m.chunk_grid.rectilinear_bounded() || (m.chunk_grid.rectilinear() && chunk_size > 0))
          list_dimension(m.chunk_grid, m.shape, axis);
        const std::int64_t p = data.shape()[axis];
        old_n = m.shape[axis];
        if (front)
          m.chunk_grid.lower_bound[axis] = checked::sub(m.chunk_grid.lower_bound[axis], p, "the new lower bound");
        m.shape[axis] = checked::add(m.shape[axis], p, "the new shape");
        fit_runs(m, inner_chunks(cur), axis, chunk_size);
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
  // Many elements (a huge new chunk) are cleared through the listing too: building a chunk of
  // fill values only to find it empty would cost its whole size in memory.
  constexpr std::int64_t kClearElements = std::int64_t{1} << 26;
  std::int64_t elements = 1;
  for (const auto& s : box)
    if (__builtin_mul_overflow(elements, s.count, &elements)) elements = INT64_MAX;
  if (units_touched(box, next.unit_grid) <= kEnumerateLimit && elements <= kClearElements) {
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
        // On rectilinear_bounded a dimension that grows lists its chunks, so it grows by chunks
        // of exactly the growth (as prepend/append do).
        for (std::size_t i = 0; i < m.rank() && m.chunk_grid.rectilinear_bounded(); ++i)
          if (nd[i].inclusive_min < m.chunk_grid.lower_bound[i] ||
              nd[i].exclusive_max > m.chunk_grid.lower_bound[i] + m.shape[i])
            list_dimension(m.chunk_grid, m.shape, i);
        for (std::size_t i = 0; i < m.rank(); ++i) {
          m.chunk_grid.lower_bound[i] = nd[i].inclusive_min;
          m.shape[i] = checked::sub(nd[i].exclusive_max, nd[i].inclusive_min, "the new shape");
        }
        fit_runs(m, inner_chunks(cur));
        // Growth in front rolled back (the domain starts at 0 again, chunk 0 too): more readers
        // read `regular` (`rectilinear`), so the grid goes back to it.
        if (moves_lower) m.chunk_grid = unbounded_if_at_zero(m.chunk_grid);
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
          std::vector<std::string> outside;
          for (auto& [idx, key] :
               node::list_chunks(*st_->store, st_->path, next.meta.chunk_key_encoding, next.meta.rank()))
            if (!next.grid.contains_chunk(idx)) outside.push_back(std::move(key));
          // On a store with requests in flight (a remote one), many removals at once.
          const std::size_t in_flight = st_->store->capabilities().reads_in_flight;
          detail::run_waiting(outside.size(), in_flight > 1 ? std::min<std::size_t>(in_flight, 128) : 1,
                              [&](std::size_t i) {
                                st_->store->erase(outside[i]);
                                st_->index_cache->forget(outside[i]);
                                st_->report_removed(1);
                              });
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

namespace {

// The one size of the chunks that hold dimension d's domain (its listed chunks when the domain is
// empty) and the coordinate where chunk 0 of that size would start, or nullopt when they differ.
std::optional<std::pair<std::int64_t, std::int64_t>> equal_chunks(const ArrayMetadata& m, std::size_t d) {
  const auto& g = m.chunk_grid;
  if (!g.rectilinear() || g.chunk_runs[d].empty()) return std::pair{g.chunk_shape[d], g.regular_origin(d)};
  const std::int64_t lo = g.lower_bound[d], hi = lo + m.shape[d];
  std::optional<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t k = g.first(d), x = g.origin[d];
  for (const auto& r : g.chunk_runs[d]) {
    const std::int64_t end = checked::add(x, checked::mul(r.size, r.count, "extent"), "extent");
    if (lo == hi || (x < hi && end > lo)) {
      if (out && out->first != r.size) return std::nullopt;
      if (!out) out = std::pair{r.size, checked::sub(x, checked::mul(k, r.size, "chunk start"), "chunk start")};
    }
    k += r.count;
    x = end;
  }
  return out;
}

[[noreturn]] void refuse_grid(const ArrayMetadata& m, const std::string& to, const std::string& why) {
  throw ArgumentError("cannot switch the array from " + m.chunk_grid.name() + " to the " + to +
                      " grid in place: " + why + "; copy it instead (zarrpp copy --grid regular SRC DST; copy_array)");
}

// regular_bounded with the chunks where they are, when every dimension's chunks have one size.
ChunkGridMetadata as_regular_bounded(const ArrayMetadata& m, const std::string& to) {
  Shape shape, origin;
  for (std::size_t d = 0; d < m.rank(); ++d) {
    const auto e = equal_chunks(m, d);
    if (!e) refuse_grid(m, to, "the chunks of dimension " + std::to_string(d) + " differ in size");
    shape.push_back(e->first);
    origin.push_back(e->second);
  }
  return ChunkGridMetadata::regular_bounded(shape, origin, m.chunk_grid.lower_bound);
}

// rectilinear_bounded with the chunks where they are (a regular dimension stays a bare size).
ChunkGridMetadata as_rectilinear_bounded(const ArrayMetadata& m) {
  auto g = m.chunk_grid;
  if (g.rectilinear()) {
    g = as_bounded(m).chunk_grid;
    for (std::size_t d = 0; d < m.rank(); ++d)
      if (g.chunk_runs[d].empty()) {  // a bare size: stated from chunk 0, as regular_bounded's origin
        g.origin[d] = g.regular_origin(d);
        g.first_chunk[d] = 0;
      }
    return g;
  }
  g.kind = ChunkGridMetadata::Kind::RectilinearBounded;
  g.chunk_runs.assign(m.rank(), {});
  g.first_chunk.assign(m.rank(), 0);
  return g;  // origin: where chunk 0 starts, as regular_bounded's
}

ChunkGridMetadata grid_in_place(const ArrayMetadata& m, const std::string& to) {
  auto unbounded = [&](ChunkGridMetadata g) {
    g = unbounded_if_at_zero(std::move(g));
    if (g.kind == ChunkGridMetadata::Kind::RegularBounded || g.kind == ChunkGridMetadata::Kind::RectilinearBounded) {
      std::string why;
      if (!is_zero(g.lower_bound)) why = "its domain starts at " + shape_str(g.lower_bound) + " (lower_bound)";
      if (!is_zero(g.origin) || !is_zero(g.first_chunk))
        why += (why.empty() ? "" : " and ") + std::string("its chunks do not start at 0 (origin ") +
               shape_str(g.origin) + (g.first_chunk.empty() ? "" : ", first_chunk " + shape_str(g.first_chunk)) + ")";
      refuse_grid(m, to, why + ", and a " + to + " grid starts both at 0, so chunks would move");
    }
    return g;
  };
  if (to == "regular_bounded") return as_regular_bounded(m, to);
  if (to == "regular") return unbounded(as_regular_bounded(m, to));
  if (to == "rectilinear_bounded") return as_rectilinear_bounded(m);
  if (to == "rectilinear") return unbounded(as_rectilinear_bounded(m));
  throw ArgumentError("unknown chunk grid '" + to + "' (regular, regular_bounded, rectilinear, rectilinear_bounded)");
}

}  // namespace

void Array::convert_grid(const std::string& name) {
  st_->modify(
      [&](const Snapshot& cur) {
        ArrayMetadata m = cur.meta;
        m.chunk_grid = grid_in_place(cur.meta, name);
        return m;
      },
      nullptr, nullptr);
}

void Array::convert_to_regular_bounded() { convert_grid("regular_bounded"); }

void Array::convert_to_regular() { convert_grid("regular"); }

}  // namespace zarrpp
