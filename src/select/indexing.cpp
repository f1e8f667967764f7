// Index expressions planned once for every front end (include/zarrpp/array/indexing.hpp).
#include "zarrpp/select/indexing.hpp"

#include <algorithm>
#include <cstring>

#include "broadcast.hpp"
#include "ellipsis.hpp"
#include "plan.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {
namespace {

[[noreturn]] void refuse(const std::string& why) { throw SelectionError(ErrorCode::invalid_index, why); }

std::string ndim_str(std::size_t n) { return std::to_string(n) + "-d"; }

bool is_ellipsis(const IndexItem& x) { return std::holds_alternative<Ellipsis>(x); }

// 0-d index arrays are integers (NumPy gives the same elements); z[:] on a 0-d array is z[...].
IndexExpr simplified(const IndexExpr& expr, const Shape& shape) {
  if (shape.empty() && expr.size() == 1) {
    const auto* s = std::get_if<Slice>(&expr[0]);
    if (s && !s->start && !s->stop && s->step == 1) return {ellipsis};
  }
  IndexExpr out;
  out.reserve(expr.size());
  for (const auto& x : expr) {
    const auto* t = std::get_if<IndexTensor>(&x);
    if (t && t->shape.empty())
      out.emplace_back(t->values.at(0));
    else
      out.push_back(x);
  }
  return out;
}

bool all_integers(const IndexExpr& expr, std::size_t ndim) {
  return expr.size() == ndim && std::all_of(expr.begin(), expr.end(),
                                            [](const IndexItem& x) { return std::holds_alternative<std::int64_t>(x); });
}

std::int64_t count_true(const MaskTensor& m) {
  return std::count_if(m.values.begin(), m.values.end(), [](auto v) { return v != 0; });
}

IndexPlan mask_plan(const MaskTensor& m, const Shape& shape) {
  if (m.shape != shape)
    throw SelectionError(ErrorCode::index_out_of_bounds, "boolean index of shape " + shape_str(m.shape) +
                                                             " does not match the array's shape " + shape_str(shape));
  IndexPlan p;
  p.kind = IndexPlan::Kind::mask;
  p.mask = m;
  p.shape = {count_true(m)};
  return p;
}

// The expression as a Selection (1-d arrays only): what the Array's orthogonal reads take.
Selection orthogonal_selection(const IndexExpr& expr, const char* mode) {
  Selection sel;
  sel.reserve(expr.size());
  for (const auto& x : expr) {
    if (const auto* t = std::get_if<IndexTensor>(&x)) {
      if (t->shape.size() != 1)
        refuse(std::string(mode) + " selection takes 1-d index arrays, got a " + ndim_str(t->shape.size()) + " array");
      sel.emplace_back(t->values);
    } else if (const auto* m = std::get_if<MaskTensor>(&x)) {
      if (m->shape.size() != 1)
        refuse(std::string(mode) + " selection takes 1-d boolean arrays, got a " + ndim_str(m->shape.size()) +
               " array");
      sel.emplace_back(BoolArray(m->values.begin(), m->values.end()));
    } else if (const auto* i = std::get_if<std::int64_t>(&x)) {
      sel.emplace_back(*i);
    } else if (const auto* s = std::get_if<Slice>(&x)) {
      sel.emplace_back(*s);
    } else {
      sel.emplace_back(ellipsis);
    }
  }
  return sel;
}

IndexPlan orthogonal_plan(const IndexExpr& expr, const Shape& shape, const char* mode) {
  IndexPlan p;
  p.selection = orthogonal_selection(expr, mode);
  p.scalar = all_integers(expr, shape.size());
  return p;
}

// NumPy's broadcasting of index array shapes (right-aligned; length 1 repeats).
Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  std::size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes)
    for (std::size_t k = 0; k < s.size(); ++k) {
      auto& o = out[rank - s.size() + k];
      if (s[k] == o || s[k] == 1) continue;
      if (o != 1) {
        std::string all_shapes;
        for (const auto& t : shapes) all_shapes += " " + shape_str(t);
        refuse("shape mismatch: indexing arrays could not be broadcast together with shapes" + all_shapes);
      }
      o = s[k];
    }
  return out;
}

// Per element of `to` (C order), the flat position of the element of an array of shape `from`
// that NumPy's broadcasting puts there (the engine's rule, broadcast_to).
std::vector<std::int64_t> broadcast_positions(const Shape& from, const Shape& to) {
  NDArray idx(DataType::int64, from);
  auto* p = idx.data<std::int64_t>();
  for (std::int64_t k = 0; k < idx.size(); ++k) p[k] = k;
  return NDArray::copy_of(broadcast_to(idx.view(), to, DataType::int64)).to_vector<std::int64_t>();
}

// ---- NumPy advanced indexing ----------------------------------------------------------------------

// One array dimension of an advanced selection: a slice, or the advanced index `adv`.
struct AdvDim {
  DimSel slice;
  std::size_t adv = SIZE_MAX;
};

struct Advanced {
  std::vector<AdvDim> dims;          // one per array dimension
  std::vector<IndexTensor> indices;  // normalised (non-negative, in bounds)
  std::vector<std::size_t> slots;    // where each index stood (an Ellipsis takes >= 1)
  bool adjacent() const {
    for (std::size_t k = 1; k < slots.size(); ++k)
      if (slots[k] != slots[k - 1] + 1) return false;
    return true;
  }
};

std::size_t dims_of(const IndexItem& x) {
  if (is_ellipsis(x)) return 0;
  if (const auto* m = std::get_if<MaskTensor>(&x)) return m->shape.size();
  return 1;
}

void add_index(Advanced& a, IndexTensor t, std::int64_t n, std::size_t& slot) {
  const std::size_t d = a.dims.size();
  for (auto& v : t.values) v = normalize_int(v, n, d);
  a.dims.push_back(AdvDim{{}, a.indices.size()});
  a.indices.push_back(std::move(t));
  a.slots.push_back(slot++);
}

// A k-d mask stands for its k nonzero() index arrays (NumPy's rule).
void add_mask(Advanced& a, const MaskTensor& m, const Shape& shape, std::size_t& slot) {
  const std::size_t d = a.dims.size();
  const Shape want(shape.begin() + static_cast<std::ptrdiff_t>(d),
                   shape.begin() + static_cast<std::ptrdiff_t>(d + m.shape.size()));
  if (m.shape.empty() || m.shape != want)
    throw SelectionError(ErrorCode::index_out_of_bounds,
                         "boolean index of shape " + shape_str(m.shape) + " does not match the indexed dimensions " +
                             shape_str(want) + " (from dimension " + std::to_string(d) + ")");
  const auto nz = mask_to_coordinates(NDView::c_order(m.values.data(), DataType::bool_t, m.shape), m.shape);
  for (const auto& c : nz)
    add_index(a, IndexTensor{{static_cast<std::int64_t>(c.size())}, c}, shape[a.dims.size()], slot);
}

Advanced expand_advanced(const IndexExpr& expr, const Shape& shape) {
  std::size_t consumed = 0;
  for (const auto& x : expr) consumed += dims_of(x);
  ellipses_in(expr);
  if (consumed > shape.size())
    throw SelectionError(ErrorCode::index_out_of_bounds, "too many indices for the array: array is " +
                                                             std::to_string(shape.size()) + "-dimensional, but " +
                                                             std::to_string(consumed) + " were indexed");
  Advanced a;
  std::size_t slot = 0;
  auto add_slice = [&](const Slice& s) {
    const std::size_t d = a.dims.size();
    a.dims.push_back(AdvDim{normalize_slice(s, shape[d], d)});
    ++slot;
  };
  for (const auto& x : expr) {
    if (is_ellipsis(x)) {
      const std::size_t fill = shape.size() - consumed;
      for (std::size_t k = 0; k < fill; ++k) add_slice(all);
      slot += fill == 0 ? 1 : 0;  // NumPy: an Ellipsis separates the indices around it
    } else if (const auto* s = std::get_if<Slice>(&x)) {
      add_slice(*s);
    } else if (const auto* i = std::get_if<std::int64_t>(&x)) {
      add_index(a, IndexTensor{{}, {*i}}, shape[a.dims.size()], slot);
    } else if (const auto* t = std::get_if<IndexTensor>(&x)) {
      add_index(a, *t, shape[a.dims.size()], slot);
    } else {
      add_mask(a, std::get<MaskTensor>(x), shape, slot);
    }
  }
  while (a.dims.size() < shape.size()) add_slice(all);
  return a;
}

// Walks the result of an advanced selection in C order, calling f(dim, index) for every array
// dimension of each element, then done() once per element.
struct AdvancedWalk {
  const Advanced& a;
  Shape result;                                  // the result's shape
  std::vector<std::size_t> result_dim;           // slice dims: their result dimension
  std::size_t first_adv = 0, adv_rank = 0;       // the broadcast indices' result dimensions
  std::vector<std::vector<std::int64_t>> where;  // per index: broadcast position -> its element

  explicit AdvancedWalk(const Advanced& adv) : a(adv), result_dim(adv.dims.size(), SIZE_MAX) {
    std::vector<Shape> shapes;
    for (const auto& t : a.indices) shapes.push_back(t.shape);
    const Shape b = broadcast_shapes(shapes);
    adv_rank = b.size();
    const bool adjacent = a.adjacent();
    bool placed = false;
    for (std::size_t d = 0; d < a.dims.size(); ++d) {
      if (a.dims[d].adv != SIZE_MAX) {
        if (!placed && adjacent) {
          first_adv = result.size();
          result.insert(result.end(), b.begin(), b.end());
        }
        placed = true;
        continue;
      }
      result_dim[d] = result.size();
      result.push_back(a.dims[d].slice.count);
    }
    if (!adjacent) {
      first_adv = 0;
      result.insert(result.begin(), b.begin(), b.end());
      for (auto& r : result_dim)
        if (r != SIZE_MAX) r += b.size();
    }
    for (const auto& t : a.indices) where.push_back(broadcast_positions(t.shape, b));
  }

  template <class F>
  void run(F&& per_element) const {
    if (shape_size(result) == 0) return;
    std::vector<std::int64_t> r(result.size(), 0);
    Shape bshape(result.begin() + static_cast<std::ptrdiff_t>(first_adv),
                 result.begin() + static_cast<std::ptrdiff_t>(first_adv + adv_rank));
    for (;;) {
      std::int64_t bpos = 0;  // position in the broadcast indices
      for (std::size_t k = 0; k < adv_rank; ++k) bpos = bpos * bshape[k] + r[first_adv + k];
      per_element(r, bpos);
      std::size_t d = r.size();
      while (d > 0 && ++r[d - 1] == result[d - 1]) r[--d] = 0;
      if (d == 0) return;
    }
  }

  std::int64_t index(std::size_t d, const std::vector<std::int64_t>& r, std::int64_t bpos) const {
    const auto& dim = a.dims[d];
    if (dim.adv == SIZE_MAX) return dim.slice.at(r[result_dim[d]]);
    return a.indices[dim.adv].values[static_cast<std::size_t>(where[dim.adv][static_cast<std::size_t>(bpos)])];
  }

  // A slice dimension's position in the box, which holds its indices in increasing order.
  std::int64_t slice_position(std::size_t d, const std::vector<std::int64_t>& r) const {
    const auto& s = a.dims[d].slice;
    const auto k = r[result_dim[d]];
    return s.step > 0 ? k : s.count - 1 - k;
  }
};

// Per advanced index, its distinct values in increasing order (the box's index dimensions).
std::vector<std::vector<std::int64_t>> distinct_indices(const Advanced& a) {
  std::vector<std::vector<std::int64_t>> out;
  for (const auto& t : a.indices) {
    auto v = t.values;
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    out.push_back(std::move(v));
  }
  return out;
}

// The box an advanced selection spans: per dimension the distinct indices in increasing order
// (a slice stays a slice).
IndexPlan gather_plan(const Advanced& a, const AdvancedWalk& w,
                      const std::vector<std::vector<std::int64_t>>& distinct) {
  IndexPlan p;
  p.kind = IndexPlan::Kind::gather;
  p.advanced = true;
  p.shape = w.result;
  std::vector<std::vector<std::int64_t>> box(a.dims.size());  // index dimensions
  std::vector<std::int64_t> extent(a.dims.size());
  for (std::size_t d = 0; d < a.dims.size(); ++d) {
    const auto& dim = a.dims[d];
    if (dim.adv == SIZE_MAX) {
      const auto& s = dim.slice;
      const std::int64_t lo = s.count == 0 ? 0 : std::min(s.at(0), s.at(s.count - 1));
      const std::int64_t step = s.step > 0 ? s.step : -s.step;
      p.selection.emplace_back(Slice{lo, lo + (s.count == 0 ? 0 : (s.count - 1) * step + 1), step});
      extent[d] = s.count;
      continue;
    }
    auto& b = box[d];
    b = distinct[dim.adv];
    extent[d] = static_cast<std::int64_t>(b.size());
    p.selection.emplace_back(b);
  }
  std::vector<std::int64_t> stride(a.dims.size(), 1);
  for (std::size_t d = a.dims.size(); d-- > 1;) stride[d - 1] = stride[d] * extent[d];
  p.gather.reserve(static_cast<std::size_t>(shape_size(p.shape)));
  w.run([&](const std::vector<std::int64_t>& r, std::int64_t bpos) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < a.dims.size(); ++d) {
      const auto& b = box[d];
      const auto pos = a.dims[d].adv == SIZE_MAX
                           ? w.slice_position(d, r)
                           : std::lower_bound(b.begin(), b.end(), w.index(d, r, bpos)) - b.begin();
      flat += stride[d] * pos;
    }
    p.gather.push_back(flat);
  });
  return p;
}

std::int64_t box_volume(const Advanced& a, const std::vector<std::vector<std::int64_t>>& distinct) {
  std::int64_t v = 1;
  for (const auto& d : a.dims) {
    const std::int64_t n = d.adv == SIZE_MAX ? d.slice.count : static_cast<std::int64_t>(distinct[d.adv].size());
    if (n != 0 && v > INT64_MAX / n) return INT64_MAX;
    v *= n;
  }
  return v;
}

// NumPy advanced indexing: reads the box the indices span and picks from it, or, when the box
// would be much larger than the result (indices spread far apart), reads every element as a point.
IndexPlan advanced_plan(const IndexExpr& expr, const Shape& shape) {
  const Advanced a = expand_advanced(expr, shape);
  const AdvancedWalk w(a);
  const std::int64_t n = shape_size(w.result);
  const auto distinct = distinct_indices(a);
  const std::int64_t limit = n > INT64_MAX / 4 ? INT64_MAX : std::max<std::int64_t>(4 * n, 1 << 16);
  if (box_volume(a, distinct) <= limit) return gather_plan(a, w, distinct);
  IndexPlan p;
  p.kind = IndexPlan::Kind::points;
  p.advanced = true;
  p.shape = w.result;
  p.points.assign(a.dims.size(), {});
  for (auto& c : p.points) c.reserve(static_cast<std::size_t>(n));
  w.run([&](const std::vector<std::int64_t>& r, std::int64_t bpos) {
    for (std::size_t d = 0; d < a.dims.size(); ++d) p.points[d].push_back(w.index(d, r, bpos));
  });
  return p;
}

// ---- the modes -------------------------------------------------------------------------------------

// Integers and integer arrays (any dimensions) broadcast into points; integers checked against
// `shape` when zero-based even where no point is selected (`z.vindex[[], 99]` is out of bounds).
IndexPlan points_plan(const IndexExpr& expr, const Shape& shape, bool coords) {
  if (expr.size() != shape.size())
    refuse("coordinate selection needs one index (array) per dimension: the array is " + std::to_string(shape.size()) +
           "-dimensional, got " + std::to_string(expr.size()));
  std::vector<IndexTensor> ts;
  for (std::size_t d = 0; d < expr.size(); ++d) {
    if (const auto* i = std::get_if<std::int64_t>(&expr[d])) {
      if (!coords) normalize_int(*i, shape[d], d);
      ts.push_back(IndexTensor{{}, {*i}});
    } else if (const auto* t = std::get_if<IndexTensor>(&expr[d])) {
      ts.push_back(*t);
    } else {
      refuse(
          "vindex takes integers and integer arrays (coordinate selection) or one boolean array of the "
          "array's shape (mask selection)");
    }
  }
  std::vector<Shape> shapes;
  for (const auto& t : ts) shapes.push_back(t.shape);
  IndexPlan p;
  p.kind = IndexPlan::Kind::points;
  p.shape = broadcast_shapes(shapes);
  for (const auto& t : ts) {
    std::vector<std::int64_t> c;
    for (const auto k : broadcast_positions(t.shape, p.shape)) c.push_back(t.values[static_cast<std::size_t>(k)]);
    p.points.push_back(std::move(c));
  }
  return p;
}

SelectionKind numpy_kind(const IndexExpr& expr, std::size_t ndim) {
  Selection kinds;  // the items' kinds suffice
  bool multi = false;
  for (const auto& x : expr) {
    if (const auto* t = std::get_if<IndexTensor>(&x)) {
      multi = multi || t->shape.size() != 1;
      kinds.emplace_back(IndexArray{});
    } else if (const auto* m = std::get_if<MaskTensor>(&x)) {
      multi = multi || m->shape.size() != 1;
      kinds.emplace_back(BoolArray{});
    } else if (is_ellipsis(x)) {
      kinds.emplace_back(ellipsis);
    } else if (std::holds_alternative<Slice>(x)) {
      kinds.emplace_back(all);
    } else {
      kinds.emplace_back(std::int64_t{0});
    }
  }
  return selection_kind(kinds, ndim, multi);
}

IndexPlan numpy_plan(const IndexExpr& expr, const Shape& shape, bool coords) {
  if (expr.size() == 1)
    if (const auto* m = std::get_if<MaskTensor>(&expr[0]);
        m && m->shape.size() != 1 && m->shape.size() == shape.size()) {
      if (coords) refuse("a mask selects by position, not by coordinates");
      return mask_plan(*m, shape);
    }
  for (const auto& x : expr)
    if (const auto* m = std::get_if<MaskTensor>(&x); m && m->shape.empty())
      refuse(
          "a 0-d boolean index adds a dimension in NumPy, which zarrpp does not support (except alone on a 0-d "
          "array)");
  switch (numpy_kind(expr, shape.size())) {
    case SelectionKind::coordinates:
      return points_plan(expr, shape, coords);
    case SelectionKind::numpy_advanced:
      if (coords)
        refuse(
            "NumPy advanced indexing (index arrays that are not one per dimension, or an index array with "
            "integers not next to it) does not take coordinates; index each dimension on its own (oindex)");
      return advanced_plan(expr, shape);
    case SelectionKind::orthogonal:
      break;
  }
  return orthogonal_plan(expr, shape, "an orthogonal");
}

IndexPlan plan_for_mode(const IndexExpr& expr, const Shape& shape, IndexMode mode, bool coords) {
  switch (mode) {
    case IndexMode::numpy:
      return numpy_plan(expr, shape, coords);
    case IndexMode::basic:
      for (const auto& x : expr)
        if (std::holds_alternative<IndexTensor>(x) || std::holds_alternative<MaskTensor>(x))
          refuse("basic selection takes integers, slices and Ellipsis only");
      return orthogonal_plan(expr, shape, "a basic");
    case IndexMode::orthogonal:
      return orthogonal_plan(expr, shape, "an orthogonal");
    case IndexMode::vindex:
      if (expr.size() == 1 && std::holds_alternative<MaskTensor>(expr[0]) && !shape.empty())
        return mask_plan(std::get<MaskTensor>(expr[0]), shape);
      return points_plan(expr, shape, coords);
    case IndexMode::blocks: {
      for (const auto& x : expr)
        if (std::holds_alternative<IndexTensor>(x) || std::holds_alternative<MaskTensor>(x))
          refuse("block selection takes integers, slices and Ellipsis only");
      if (coords) refuse("block selections count blocks, not coordinates");
      IndexPlan p = orthogonal_plan(expr, shape, "a block");
      p.kind = IndexPlan::Kind::blocks;
      p.scalar = false;  // a block keeps its dimensions
      return p;
    }
    case IndexMode::mask:
      if (expr.size() != 1 || !std::holds_alternative<MaskTensor>(expr[0]))
        refuse("mask selection needs one boolean array of the array's shape");
      return mask_plan(std::get<MaskTensor>(expr[0]), shape);
  }
  refuse("unknown index mode");
}

}  // namespace

IndexPlan plan_index(const IndexExpr& expr, const Shape& shape, IndexMode mode, bool coords) {
  IndexPlan p = plan_for_mode(simplified(expr, shape), shape, mode, coords);
  p.coords = coords;
  if (!coords) p.planned_shape = shape;
  return p;
}

IndexExpr index_expr(const Selection& sel) {
  IndexExpr out;
  out.reserve(sel.size());
  for (const auto& x : sel) {
    if (const auto* i = std::get_if<std::int64_t>(&x))
      out.emplace_back(*i);
    else if (const auto* s = std::get_if<Slice>(&x))
      out.emplace_back(*s);
    else if (const auto* a = std::get_if<IndexArray>(&x))
      out.emplace_back(IndexTensor{{static_cast<std::int64_t>(a->size())}, *a});
    else if (const auto* b = std::get_if<BoolArray>(&x))
      out.emplace_back(
          MaskTensor{{static_cast<std::int64_t>(b->size())}, std::vector<std::uint8_t>(b->begin(), b->end())});
    else
      out.emplace_back(ellipsis);
  }
  return out;
}

}  // namespace zarrpp
