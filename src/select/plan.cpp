// Plans: selections resolved against the shape or domain (normalize_*), then compiled into the
// units each touches and where their elements go (plan_orthogonal, plan_points).
#include <algorithm>
#include <map>

#include "ellipsis.hpp"
#include "plan.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {
namespace {

std::string dim_str(std::size_t d) { return "dimension " + std::to_string(d); }

}  // namespace

std::int64_t normalize_int(std::int64_t i, std::int64_t n, std::size_t d) {
  const std::int64_t j = i < 0 ? i + n : i;
  if (j < 0 || j >= n)
    throw SelectionError(ErrorCode::index_out_of_bounds, "index " + std::to_string(i) + " is out of bounds for " +
                                                             dim_str(d) + " with size " + std::to_string(n));
  return j;
}

DimSel normalize_slice(const Slice& s, std::int64_t n, std::size_t d) {
  if (s.step == 0) throw SelectionError("slice step cannot be zero (" + dim_str(d) + ")");
  if (s.step == INT64_MIN) throw SelectionError("slice step out of range (" + dim_str(d) + ")");
  DimSel r;
  r.kind = DimSel::Kind::Range;
  r.step = s.step;
  auto adj = [&](std::int64_t v) { return v < 0 ? (v < -n ? -n - 1 : v + n) : v; };  // no overflow
  if (s.step > 0) {
    std::int64_t start = s.start ? adj(*s.start) : 0;
    std::int64_t stop = s.stop ? adj(*s.stop) : n;
    start = std::clamp<std::int64_t>(start, 0, n);
    stop = std::clamp<std::int64_t>(stop, 0, n);
    r.start = start;
    r.count = stop > start ? (stop - start - 1) / s.step + 1 : 0;
  } else {
    std::int64_t start = s.start ? adj(*s.start) : n - 1;
    std::int64_t stop = s.stop ? adj(*s.stop) : -1;
    start = std::clamp<std::int64_t>(start, -1, n - 1);
    stop = std::clamp<std::int64_t>(stop, -1, n - 1);
    r.start = start;
    const std::int64_t st = -s.step;
    r.count = start > stop ? (start - stop - 1) / st + 1 : 0;
  }
  if (r.count == 0) r.start = 0;
  return r;
}

namespace {

// Coordinate space (`lower` = the domain's lower bound): no counting from the end, and an index or
// slice bound outside the domain [lo, lo + n) is refused rather than clamped.
std::string domain_str(std::int64_t lo, std::int64_t n) {
  return "[" + std::to_string(lo) + ", " + std::to_string(checked::add(lo, n, "the domain's upper bound")) + ")";
}

std::int64_t coordinate_to_index(std::int64_t c, std::int64_t lo, std::int64_t n, std::size_t d) {
  std::int64_t j = 0;
  if (__builtin_sub_overflow(c, lo, &j) || j < 0 || j >= n)
    throw SelectionError(ErrorCode::index_out_of_bounds, "coordinate " + std::to_string(c) + " is outside the domain " +
                                                             domain_str(lo, n) + " of " + dim_str(d));
  return j;
}

DimSel coordinate_slice(const Slice& s, std::int64_t lo, std::int64_t n, std::size_t d) {
  if (s.step == 0) throw SelectionError("slice step cannot be zero (" + dim_str(d) + ")");
  if (s.step == INT64_MIN) throw SelectionError("slice step out of range (" + dim_str(d) + ")");
  // A bound as an index, allowed one past either end of the domain (as slice bounds are).
  auto bound = [&](std::int64_t c, std::int64_t min_index, std::int64_t max_index) {
    std::int64_t j = 0;
    if (__builtin_sub_overflow(c, lo, &j) || j < min_index || j > max_index)
      throw SelectionError(
          ErrorCode::index_out_of_bounds,
          "slice bound " + std::to_string(c) + " is outside the domain " + domain_str(lo, n) + " of " + dim_str(d));
    return j;
  };
  DimSel r;
  r.kind = DimSel::Kind::Range;
  r.step = s.step;
  if (s.step > 0) {
    const std::int64_t start = s.start ? bound(*s.start, 0, n) : 0;
    const std::int64_t stop = s.stop ? bound(*s.stop, 0, n) : n;
    r.start = start;
    r.count = stop > start ? (stop - start - 1) / s.step + 1 : 0;
  } else {
    const std::int64_t start = s.start ? bound(*s.start, -1, n - 1) : n - 1;
    const std::int64_t stop = s.stop ? bound(*s.stop, -1, n - 1) : -1;
    r.start = start;
    r.count = start > stop ? (start - stop - 1) / (-s.step) + 1 : 0;
  }
  if (r.count == 0) r.start = 0;
  return r;
}

}  // namespace

std::vector<DimSel> normalize_selection(const Selection& sel, const Shape& shape) {
  return normalize_selection(sel, shape, nullptr);
}

std::vector<DimSel> normalize_selection(const Selection& sel, const Shape& shape, const Shape* lower) {
  const std::size_t rank = shape.size();
  const std::size_t explicit_dims = sel.size() - ellipses_in(sel);
  if (explicit_dims > rank)
    throw SelectionError(ErrorCode::index_out_of_bounds, "too many indices for the array: array is " +
                                                             std::to_string(rank) + "-dimensional, but " +
                                                             std::to_string(explicit_dims) + " were indexed");
  std::vector<DimSel> out;
  auto add = [&](const DimSelector& s) {
    const std::size_t d = out.size();
    const std::int64_t n = shape[d];
    if (auto* i = std::get_if<std::int64_t>(&s)) {
      DimSel r;
      r.kind = DimSel::Kind::Int;
      r.start = lower ? coordinate_to_index(*i, (*lower)[d], n, d) : normalize_int(*i, n, d);
      r.count = 1;
      out.push_back(r);
    } else if (auto* sl = std::get_if<Slice>(&s)) {
      out.push_back(lower ? coordinate_slice(*sl, (*lower)[d], n, d) : normalize_slice(*sl, n, d));
    } else if (auto* ia = std::get_if<IndexArray>(&s)) {
      DimSel r;
      r.kind = DimSel::Kind::List;
      r.list.reserve(ia->size());
      for (auto v : *ia) r.list.push_back(lower ? coordinate_to_index(v, (*lower)[d], n, d) : normalize_int(v, n, d));
      out.push_back(std::move(r));
    } else if (auto* ba = std::get_if<BoolArray>(&s)) {
      if (static_cast<std::int64_t>(ba->size()) != n)
        throw SelectionError(ErrorCode::index_out_of_bounds, "boolean index of length " + std::to_string(ba->size()) +
                                                                 " does not match " + dim_str(d) + " with size " +
                                                                 std::to_string(n));
      DimSel r;
      r.kind = DimSel::Kind::List;
      for (std::int64_t k = 0; k < n; ++k)
        if ((*ba)[static_cast<std::size_t>(k)]) r.list.push_back(k);
      out.push_back(std::move(r));
    }
  };
  for (const auto& s : sel) {
    if (std::holds_alternative<Ellipsis>(s)) {
      const std::size_t fill = rank - explicit_dims;
      for (std::size_t k = 0; k < fill; ++k) add(all);
    } else {
      add(s);
    }
  }
  while (out.size() < rank) add(all);
  return out;
}

std::vector<DimSel> normalize_block_selection(const Selection& given, const ChunkGrid& grid) {
  const std::size_t rank = grid.rank();
  Selection sel;  // an Ellipsis stands for as many ":" as needed
  ellipses_in(given);
  for (const auto& x : given) {
    if (!std::holds_alternative<Ellipsis>(x)) {
      sel.push_back(x);
      continue;
    }
    for (std::size_t k = given.size() - 1; k < rank; ++k) sel.emplace_back(all);
  }
  if (sel.size() > rank)
    throw SelectionError(ErrorCode::index_out_of_bounds,
                         "too many block indices: array is " + std::to_string(rank) + "-dimensional");
  std::vector<DimSel> out;
  for (std::size_t d = 0; d < rank; ++d) {
    const std::int64_t nb = grid.num_chunks(d);
    std::int64_t b0 = 0, b1 = nb;
    if (d < sel.size()) {
      const auto& s = sel[d];
      if (auto* i = std::get_if<std::int64_t>(&s)) {
        const std::int64_t b = *i < 0 ? *i + nb : *i;
        if (b < 0 || b >= nb)
          throw SelectionError(ErrorCode::index_out_of_bounds, "block index " + std::to_string(*i) +
                                                                   " is out of bounds for " + dim_str(d) + " with " +
                                                                   std::to_string(nb) + " blocks");
        b0 = b;
        b1 = b + 1;
      } else if (auto* sl = std::get_if<Slice>(&s)) {
        if (sl->step != 1)
          throw SelectionError(ErrorCode::invalid_index, "block selections only support step 1 (" + dim_str(d) + ")");
        // A start given outside the grid (at or past the end, or before the first block counting
        // from the end) is out of bounds, as in zarr-python: NumPy's clamping would make the
        // selection empty, and a write to it would write nothing without a word. The stop is clamped.
        const std::int64_t start = sl->start.value_or(0) < 0 ? *sl->start + nb : sl->start.value_or(0);
        if (sl->start && (start < 0 || start >= nb))
          throw SelectionError(ErrorCode::index_out_of_bounds, "block slice start " + std::to_string(*sl->start) +
                                                                   " is out of bounds for " + dim_str(d) + " with " +
                                                                   std::to_string(nb) + " blocks");
        const auto r = normalize_slice(*sl, nb, d);
        b0 = r.start;
        b1 = r.start + r.count;
      } else {
        throw SelectionError("block selections take integers and slices only (" + dim_str(d) + ")");
      }
    }
    DimSel r;
    r.kind = DimSel::Kind::Range;
    r.step = 1;
    if (b1 > b0) {
      const auto first = grid.first_chunk(d);
      const auto lo = grid.index_range(d, first + b0).first;
      const auto hi = grid.index_range(d, first + b1 - 1).second;
      r.start = lo;
      r.count = hi - lo;
    }
    out.push_back(r);
  }
  return out;
}

Plan plan_orthogonal(const std::vector<DimSel>& sel, const ChunkGrid& grid) {
  const std::size_t rank = grid.rank();
  Plan plan;
  plan.dim_maps.resize(rank);
  plan.out_dim_of.assign(rank, SIZE_MAX);
  for (std::size_t d = 0; d < rank; ++d) {
    const auto& s = sel[d];
    if (!s.dropped()) {
      plan.out_dim_of[d] = plan.out_shape.size();
      plan.out_shape.push_back(s.size());
    }
    auto& maps = plan.dim_maps[d];
    const std::int64_t n = s.size();
    if (s.kind == DimSel::Kind::List) {
      std::map<std::int64_t, DimChunkMap> by_chunk;
      for (std::int64_t k = 0; k < n; ++k) {
        const auto loc = grid.locate(d, s.at(k));
        auto& m = by_chunk[loc.chunk];
        m.chunk = loc.chunk;
        m.is_list = true;
        m.chunk_list.push_back(loc.position);
        m.out_list.push_back(k);
        ++m.count;
      }
      for (auto& [c, m] : by_chunk) {
        auto p = m.chunk_list;
        std::sort(p.begin(), p.end());
        const std::int64_t distinct = std::unique(p.begin(), p.end()) - p.begin();
        const auto [lo, hi] = grid.index_range(d, c);
        m.covers_domain = distinct == hi - lo;
        maps.push_back(std::move(m));
      }
      continue;
    }
    // Ranges (and single integers): walk chunk by chunk.
    std::int64_t k = 0;
    while (k < n) {
      const std::int64_t idx = s.at(k);
      const auto loc = grid.locate(d, idx);
      const std::int64_t cs = grid.chunk_extent(d, loc.chunk);
      const std::int64_t chunk_lo = grid.chunk_start_index(d, loc.chunk);  // array index of position 0
      std::int64_t in_chunk;
      if (s.step > 0)
        in_chunk = (chunk_lo + cs - 1 - idx) / s.step + 1;
      else
        in_chunk = (idx - chunk_lo) / (-s.step) + 1;
      in_chunk = std::min(in_chunk, n - k);
      DimChunkMap m;
      m.chunk = loc.chunk;
      m.count = in_chunk;
      m.chunk_start = loc.position;
      // With one element in the chunk the step means nothing, and the copy loops multiply it by
      // byte strides: a step near INT64_MAX / 2 would overflow there (found by fuzz_selection).
      m.chunk_step = s.kind == DimSel::Kind::Int || in_chunk == 1 ? 1 : s.step;
      m.out_start = s.dropped() ? 0 : k;
      m.out_step = s.dropped() ? 0 : 1;
      const auto [lo, hi] = grid.index_range(d, loc.chunk);
      m.covers_domain = in_chunk == hi - lo;  // arithmetic sequences never repeat
      maps.push_back(std::move(m));
      k += in_chunk;
    }
  }
  // The tasks, the product of the per-dimension maps, are made batch by batch as they run
  // (TaskBatches): a plan costs per chunk along each dimension, not per chunk touched.
  return plan;
}

Coordinates normalize_coordinates(const Coordinates& coords, const Shape& shape) {
  return normalize_coordinates(coords, shape, nullptr);
}

Coordinates normalize_coordinates(const Coordinates& coords, const Shape& shape, const Shape* lower) {
  if (coords.size() != shape.size())
    throw SelectionError("coordinate selection needs one index array per dimension (" + std::to_string(shape.size()) +
                         "), got " + std::to_string(coords.size()));
  Coordinates out = coords;
  for (std::size_t d = 0; d < coords.size(); ++d) {
    if (coords[d].size() != coords[0].size())
      throw SelectionError("coordinate arrays differ in length: dimension 0 has " + std::to_string(coords[0].size()) +
                           " points, " + dim_str(d) + " has " + std::to_string(coords[d].size()));
    for (auto& v : out[d]) v = lower ? coordinate_to_index(v, (*lower)[d], shape[d], d) : normalize_int(v, shape[d], d);
  }
  return out;
}

Plan plan_points(const Coordinates& coords, const ChunkGrid& grid) {
  const std::size_t rank = grid.rank();
  Plan plan;
  plan.points = true;
  const std::size_t n = rank == 0 ? 1 : coords[0].size();
  plan.out_shape = {static_cast<std::int64_t>(n)};
  if (rank == 0) {
    ChunkTask t;
    t.points.emplace_back(0, 0);
    t.covers_domain = true;
    plan.tasks.push_back(std::move(t));
    return plan;
  }
  std::map<std::vector<std::int64_t>, std::size_t> index;
  std::vector<std::int64_t> key(rank);
  for (std::size_t k = 0; k < n; ++k) {
    std::int64_t off = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      const auto loc = grid.locate(d, coords[d][k]);
      key[d] = loc.chunk;
      off = off * grid.chunk_extent(d, loc.chunk) + loc.position;
    }
    auto [pos, inserted] = index.try_emplace(key, plan.tasks.size());
    if (inserted) {
      plan.tasks.emplace_back();
      plan.tasks.back().chunk = key;
    }
    plan.tasks[pos->second].points.emplace_back(off, static_cast<std::int64_t>(k));
  }
  // A point plan covers a chunk when its distinct points are every in-domain element.
  for (auto& t : plan.tasks) {
    std::int64_t in_domain = 1;
    for (std::size_t d = 0; d < rank; ++d) {
      const auto [lo, hi] = grid.index_range(d, t.chunk[d]);
      in_domain *= hi - lo;
    }
    std::vector<std::int64_t> offs;
    for (const auto& p : t.points) offs.push_back(p.first);
    std::sort(offs.begin(), offs.end());
    t.covers_domain = (std::unique(offs.begin(), offs.end()) - offs.begin()) == in_domain;
  }
  return plan;
}

Coordinates mask_to_coordinates(const NDView& mask, const Shape& shape) {
  if (!(mask.dtype() == DataType::bool_t))
    throw SelectionError(ErrorCode::dtype_mismatch, "mask selection needs a bool array, got " + mask.dtype().name());
  if (mask.shape() != shape)
    throw SelectionError(ErrorCode::index_out_of_bounds, "mask of shape " + shape_str(mask.shape()) +
                                                             " does not match the array's shape " + shape_str(shape));
  const std::size_t rank = shape.size();
  Coordinates coords(rank);
  if (shape_size(shape) == 0) return coords;
  std::vector<std::int64_t> idx(rank, 0);
  for (;;) {
    if (*reinterpret_cast<const std::uint8_t*>(mask.ptr(idx)) != 0)
      for (std::size_t d = 0; d < rank; ++d) coords[d].push_back(idx[d]);
    std::size_t d = rank;
    bool done = true;
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) {
        done = false;
        break;
      }
      idx[d] = 0;
    }
    if (done) break;
  }
  return coords;
}

}  // namespace zarrpp
