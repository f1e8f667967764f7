#pragma once
// A plain reference model for property tests: an in-memory C-order array with selection
// semantics written independently of zarrpp's planner (CPython's slice rules).
#include <rapidcheck.h>

#include <sys/wait.h>
#include <unistd.h>
#include <algorithm>
#include <filesystem>

#include <functional>

#include "common.hpp"
#include "zarrpp/zarrpp.hpp"

namespace ref {
using namespace zarrpp;
using zarrpp::test::TempDir;

// Runs body(i) in n forked processes and returns how many of them failed (threw or crashed).
inline int run_in_processes(int n, const std::function<void(int)>& body) {
  std::vector<pid_t> pids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      int rc = 0;
      try {
        body(i);
      } catch (...) {
        rc = 1;
      }
      ::_exit(rc);
    }
    pids.push_back(pid);
  }
  int failed = 0;
  for (auto pid : pids) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) ++failed;
  }
  return failed;
}

// CPython's PySlice_AdjustIndices, then enumerated.
inline std::vector<std::int64_t> slice_indices(const Slice& s, std::int64_t n) {
  const std::int64_t step = s.step;
  std::int64_t start, stop;
  if (s.start) {
    start = *s.start;
    if (start < 0) {
      start += n;
      if (start < 0) start = step < 0 ? -1 : 0;
    } else if (start >= n) {
      start = step < 0 ? n - 1 : n;
    }
  } else {
    start = step < 0 ? n - 1 : 0;
  }
  if (s.stop) {
    stop = *s.stop;
    if (stop < 0) {
      stop += n;
      if (stop < 0) stop = step < 0 ? -1 : 0;
    } else if (stop >= n) {
      stop = step < 0 ? n - 1 : n;
    }
  } else {
    stop = step < 0 ? -1 : n;
  }
  std::vector<std::int64_t> out;
  for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.push_back(i);
  return out;
}

struct DimRef {
  std::vector<std::int64_t> idx;
  bool dropped = false;
};

inline std::vector<DimRef> resolve(const Selection& sel, const Shape& shape) {
  std::vector<DimRef> out;
  std::size_t explicit_dims = 0;
  for (const auto& s : sel) explicit_dims += std::holds_alternative<Ellipsis>(s) ? 0 : 1;
  auto add = [&](const DimSelector& s) {
    const std::int64_t n = shape[out.size()];
    DimRef r;
    if (auto* i = std::get_if<std::int64_t>(&s)) {
      r.idx = {*i < 0 ? *i + n : *i};
      r.dropped = true;
    } else if (auto* sl = std::get_if<Slice>(&s)) {
      r.idx = slice_indices(*sl, n);
    } else if (auto* ia = std::get_if<IndexArray>(&s)) {
      for (auto v : *ia) r.idx.push_back(v < 0 ? v + n : v);
    } else if (auto* ba = std::get_if<BoolArray>(&s)) {
      for (std::int64_t k = 0; k < n; ++k)
        if ((*ba)[static_cast<std::size_t>(k)]) r.idx.push_back(k);
    }
    out.push_back(r);
  };
  for (const auto& s : sel) {
    if (std::holds_alternative<Ellipsis>(s)) {
      for (std::size_t k = 0; k < shape.size() - explicit_dims; ++k) add(Slice{});
    } else {
      add(s);
    }
  }
  while (out.size() < shape.size()) add(Slice{});
  return out;
}

// Whether a resolved selection names an element twice (a write through it depends on the order,
// as in NumPy, so write properties use selections without repeats).
inline bool has_repeats(const std::vector<DimRef>& dims) {
  for (const auto& d : dims) {
    auto v = d.idx;
    std::sort(v.begin(), v.end());
    if (std::adjacent_find(v.begin(), v.end()) != v.end()) return true;
  }
  return false;
}

// Calls f(flat index into the array, flat index into the selection) over the selection, C order.
template <class F>
void for_each_selected(const std::vector<DimRef>& dims, const Shape& shape, F&& f) {
  const std::size_t r = shape.size();
  std::int64_t total = 1;
  for (const auto& d : dims) total *= static_cast<std::int64_t>(d.idx.size());
  std::vector<std::size_t> it(r, 0);
  for (std::int64_t k = 0; k < total; ++k) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < r; ++d) flat = flat * shape[d] + dims[d].idx[it[d]];
    f(flat, k);
    for (std::size_t d = r; d-- > 0;) {
      if (++it[d] < dims[d].idx.size()) break;
      it[d] = 0;
    }
  }
}

inline Shape selection_shape(const std::vector<DimRef>& dims) {
  Shape s;
  for (const auto& d : dims)
    if (!d.dropped) s.push_back(static_cast<std::int64_t>(d.idx.size()));
  return s;
}

// A reference array of int32 (any layout-free model works; int32 keeps it simple).
struct Model {
  Shape shape;
  std::vector<std::int32_t> data;
  std::int32_t fill = 0;
  Model(Shape s, std::int32_t f) : shape(std::move(s)), fill(f) {
    data.assign(static_cast<std::size_t>(shape_size(shape)), f);
  }
  NDArray select(const Selection& sel) const {
    const auto dims = resolve(sel, shape);
    NDArray out(DataType::int32, selection_shape(dims));
    auto* o = out.data<std::int32_t>();
    for_each_selected(dims, shape,
                      [&](std::int64_t flat, std::int64_t k) { o[k] = data[static_cast<std::size_t>(flat)]; });
    return out;
  }
  void assign(const Selection& sel, const NDArray& values) {
    const auto dims = resolve(sel, shape);
    const auto* v = values.data<std::int32_t>();
    const bool scalar = values.ndim() == 0;
    for_each_selected(dims, shape, [&](std::int64_t flat, std::int64_t k) {
      data[static_cast<std::size_t>(flat)] = v[scalar ? 0 : k];
    });
  }
  NDArray all() const { return NDArray::from_vector(shape, data); }
};

// A random valid selector for a dimension of size n (call inside a property).
inline DimSelector pick_selector(std::int64_t n, bool allow_lists) {
  const int kind = n > 0 ? *rc::gen::inRange(0, allow_lists ? 6 : 4) : *rc::gen::inRange(0, 2);
  switch (kind) {
    case 0:
    case 1: {
      auto bound = [&] { return *rc::gen::maybe(rc::gen::inRange<std::int64_t>(-n - 3, n + 3)); };
      const auto start = bound();
      const auto stop = bound();
      const auto step = *rc::gen::element<std::int64_t>(1, 1, 2, 3, -1, -2, 7);
      return Slice{start ? std::optional(*start) : std::nullopt, stop ? std::optional(*stop) : std::nullopt, step};
    }
    case 2:
      return Slice{};
    case 3:
      return *rc::gen::inRange<std::int64_t>(-n, n);
    case 4:
      return IndexArray(*rc::gen::container<std::vector<std::int64_t>>(rc::gen::inRange<std::int64_t>(-n, n)));
    default:
      return BoolArray(*rc::gen::container<std::vector<bool>>(static_cast<std::size_t>(n), rc::gen::arbitrary<bool>()));
  }
}

inline Selection gen_selection(const Shape& shape, bool allow_lists) {
  Selection sel;
  const std::size_t ndims = *rc::gen::inRange<std::size_t>(0, shape.size() + 1);
  for (std::size_t d = 0; d < ndims; ++d) sel.push_back(pick_selector(shape[d], allow_lists));
  if (ndims < shape.size() && *rc::gen::arbitrary<bool>()) {
    // put an ellipsis in front instead of trailing dims: shift the explicit ones to the end
    Selection s2;
    s2.push_back(ellipsis);
    for (std::size_t d = 0; d < ndims; ++d) s2.push_back(pick_selector(shape[shape.size() - ndims + d], allow_lists));
    return s2;
  }
  return sel;
}

inline NDArray random_values(const Shape& shape) {
  NDArray a(DataType::int32, shape);
  auto* p = a.data<std::int32_t>();
  for (std::int64_t i = 0; i < a.size(); ++i) p[i] = *rc::gen::inRange<std::int32_t>(-5, 100);
  return a;
}

// A random layout: chunk shape, optional sharding, a codec, and optionally a domain.
struct Layout {
  Shape shape, chunks;
  std::optional<Shape> shards, lower, origin;
  int codec = 0;  // 0 bytes, 1 zstd+crc32c, 2 gzip, 3 blosc, 4 transpose, 5 bytes+crc32c
  std::int32_t fill = 0;
  // A rectilinear grid: each dimension's chunk (or, with shards, shard) sizes.
  std::vector<std::vector<std::int64_t>> sizes;
};

// Random sizes from `unit` * [1, 3] adding up to n (n a multiple of unit), or empty for n == 0.
inline std::vector<std::int64_t> gen_sizes(std::int64_t n, std::int64_t unit) {
  std::vector<std::int64_t> out;
  for (std::int64_t left = n; left > 0;) {
    const auto k = std::min(left, unit * *rc::gen::inRange<std::int64_t>(1, 4));
    out.push_back(k);
    left -= k;
  }
  return out;
}

inline Layout gen_layout(std::size_t max_rank = 3, std::int64_t max_dim = 10) {
  Layout l;
  const auto rank = *rc::gen::inRange<std::size_t>(1, max_rank + 1);
  for (std::size_t d = 0; d < rank; ++d) {
    l.shape.push_back(*rc::gen::inRange<std::int64_t>(0, max_dim + 1));
    l.chunks.push_back(*rc::gen::inRange<std::int64_t>(1, 5));
  }
  if (*rc::gen::inRange(0, 3) == 0) {
    Shape s;
    for (auto c : l.chunks) s.push_back(c * *rc::gen::inRange<std::int64_t>(1, 3));
    l.shards = s;
  }
  if (*rc::gen::arbitrary<bool>()) {
    Shape lo, o;
    for (std::size_t d = 0; d < rank; ++d) {
      lo.push_back(*rc::gen::inRange<std::int64_t>(-20, 20));
      o.push_back(*rc::gen::inRange<std::int64_t>(-20, 20));
    }
    l.lower = lo;
    if (*rc::gen::arbitrary<bool>()) l.origin = o;
  }
  l.codec = *rc::gen::inRange(0, 6);
  l.fill = *rc::gen::element<std::int32_t>(0, 0, -1, 42);
  return l;
}

// gen_layout, and one time in three a rectilinear grid (chunks, or shards of whole inner chunks,
// of sizes that differ; the shape rounded to whole inner chunks when sharded).
inline Layout gen_layout_any_grid(std::size_t max_rank = 3, std::int64_t max_dim = 10) {
  Layout l = gen_layout(max_rank, max_dim);
  if (*rc::gen::inRange(0, 3) != 0) return l;
  l.lower.reset();
  l.origin.reset();
  for (std::size_t d = 0; d < l.shape.size(); ++d) {
    const std::int64_t unit = l.shards ? l.chunks[d] : 1;
    l.shape[d] = std::max<std::int64_t>(1, l.shape[d] / unit) * unit;
    l.sizes.push_back(gen_sizes(l.shape[d], unit));
  }
  return l;
}

inline ArraySpec spec_of(const Layout& l) {
  ArraySpec s{.shape = l.shape, .chunks = l.chunks, .dtype = DataType::int32};
  s.fill_value = Json(l.fill);
  s.shards = l.shards;
  if (!l.sizes.empty() && l.shards) {
    s.shards.reset();
    s.shard_sizes = l.sizes;
  } else if (!l.sizes.empty()) {
    s.chunks.clear();
    s.chunk_sizes = l.sizes;
  }
  s.lower_bound = l.lower;
  s.origin = l.origin;
  switch (l.codec) {
    case 1:
      s.compressor = codec::Zstd{.level = 1};
      s.crc32c = true;
      break;
    case 2:
      s.compressor = codec::Gzip{.level = 1};
      break;
    case 3:
      s.compressor = codec::Blosc{};
      break;
    case 5:
      s.crc32c = true;
      break;
    case 4: {
      if (!l.shards) {
        codec::Transpose t;
        for (std::size_t d = l.shape.size(); d-- > 0;) t.order.push_back(static_cast<std::int64_t>(d));
        s.codecs = std::vector<codec::Any>{t, codec::BytesCodec{codec::Endian::big}};
      }
      break;
    }
    default:
      break;
  }
  return s;
}

// A model of an array over coordinates: its domain and the values written (missing = fill).
struct DomainModel {
  Domain dom;
  std::map<std::vector<std::int64_t>, std::int32_t> values;
  std::int32_t fill = 0;

  Shape shape() const {
    Shape s;
    for (const auto& d : dom) s.push_back(d.exclusive_max - d.inclusive_min);
    return s;
  }
  bool inside(const std::vector<std::int64_t>& x) const {
    for (std::size_t d = 0; d < dom.size(); ++d)
      if (x[d] < dom[d].inclusive_min || x[d] >= dom[d].exclusive_max) return false;
    return true;
  }
  void restrict_to_domain() {
    for (auto it = values.begin(); it != values.end();) it = inside(it->first) ? std::next(it) : values.erase(it);
  }
  // Expected contents in C order over the domain.
  std::vector<std::int32_t> expected() const {
    std::vector<std::int32_t> out;
    const auto s = shape();
    if (shape_size(s) == 0) return out;
    std::vector<std::int64_t> x(dom.size());
    for (std::size_t d = 0; d < dom.size(); ++d) x[d] = dom[d].inclusive_min;
    for (;;) {
      auto it = values.find(x);
      out.push_back(it == values.end() ? fill : it->second);
      std::size_t d = dom.size();
      while (d > 0) {
        --d;
        if (++x[d] < dom[d].exclusive_max) break;
        x[d] = dom[d].inclusive_min;
        if (d == 0) return out;
      }
    }
  }
  // Stores `block` (C order) with its first element at coordinate `at`.
  void put(const std::vector<std::int64_t>& at, const NDArray& block) {
    const auto& s = block.shape();
    if (block.size() == 0) return;
    std::vector<std::int64_t> i(s.size(), 0);
    const auto* v = block.data<std::int32_t>();
    for (std::int64_t k = 0; k < block.size(); ++k) {
      std::vector<std::int64_t> x(s.size());
      for (std::size_t d = 0; d < s.size(); ++d) x[d] = at[d] + i[d];
      values[x] = v[k];
      for (std::size_t d = s.size(); d-- > 0;) {
        if (++i[d] < s[d]) break;
        i[d] = 0;
      }
    }
  }
};

}  // namespace ref
