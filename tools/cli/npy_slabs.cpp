// ---- .npy output in slabs ----
// `get --out` writes the selection as it is read: in slabs along its first dimension, each a whole
// number of chunk rows (so every chunk is decoded once), read into one reused buffer and appended to
// the file. Memory holds one slab, not the selection. Selections with index arrays or masks (and
// reversed slices) are read whole first.
#include "npy_slabs.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

namespace zarrpp::cli {

namespace {

struct SlabDim {
  Selection full;                    // the selection with one item per dimension (no ellipsis)
  std::size_t dim = 0;               // the array dimension of the output's first dimension
  std::int64_t start = 0, step = 1;  // zero-based element of output row 0, and the stride
};

std::optional<SlabDim> slab_dimension(const Array& z, const Selection& sel, bool coords, const Shape& out_shape) {
  const std::size_t nd = z.ndim();
  if (nd == 0 || out_shape.empty()) return std::nullopt;
  std::size_t given = 0;
  bool ell = false;
  for (const auto& it : sel) {
    if (std::holds_alternative<Ellipsis>(it))
      ell = true;
    else
      ++given;
  }
  if (given > nd) return std::nullopt;
  SlabDim r;
  for (const auto& it : sel) {
    if (std::holds_alternative<Ellipsis>(it))
      r.full.insert(r.full.end(), nd - given, all);
    else
      r.full.push_back(it);
  }
  if (!ell) r.full.resize(nd, all);
  if (r.full.size() != nd) return std::nullopt;
  const Shape shape = z.shape(), lower = z.lower_bound();
  for (std::size_t d = 0; d < nd; ++d) {
    const auto& it = r.full[d];
    if (std::holds_alternative<std::int64_t>(it)) continue;
    const auto* sl = std::get_if<Slice>(&it);
    if (!sl || sl->step <= 0) return std::nullopt;
    const std::int64_t n = shape[d];
    auto zero_based = [&](std::optional<std::int64_t> v, std::int64_t dflt) {
      if (!v) return dflt;
      const std::int64_t x = coords ? *v - lower[d] : (*v < 0 ? *v + n : *v);
      return std::clamp<std::int64_t>(x, 0, n);
    };
    const std::int64_t a = zero_based(sl->start, 0), b = zero_based(sl->stop, n);
    const std::int64_t count = b > a ? (b - a + sl->step - 1) / sl->step : 0;
    if (count != out_shape[0]) return std::nullopt;  // not what the library computed: read whole
    r.dim = d;
    r.start = a;
    r.step = sl->step;
    return r;
  }
  return std::nullopt;
}

// Slabs of about 32 MiB along the output's first dimension, each extended to the next chunk
// boundary of the array dimension it runs along, as [first row, end row) pairs.
std::vector<std::pair<std::int64_t, std::int64_t>> slab_rows(const Array& z, const SlabDim& sd,
                                                             const Shape& out_shape) {
  std::uint64_t row_bytes = z.dtype().size();
  for (std::size_t d = 1; d < out_shape.size(); ++d) row_bytes *= static_cast<std::uint64_t>(out_shape[d]);
  const std::int64_t rows = out_shape[0];
  // ZARRPP_CLI_SLAB_BYTES sets another size (the tests use tiny slabs to cross many boundaries).
  std::uint64_t kSlab = std::uint64_t{32} << 20;
  if (const char* env = std::getenv("ZARRPP_CLI_SLAB_BYTES"); env && std::strtoull(env, nullptr, 10) > 0)
    kSlab = std::strtoull(env, nullptr, 10);
  const std::int64_t want =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(kSlab / std::max<std::uint64_t>(row_bytes, 1)));
  // Where the chunks (read/write units) the rows run through start, as zero-based elements of
  // sd.dim: the grid's answer over the rows' range only (other dimensions: one element).
  if (rows == 0) return {};
  Domain region = z.domain();
  for (auto& r : region) r.exclusive_max = std::min(r.exclusive_max, r.inclusive_min + 1);
  const std::int64_t lower = z.domain()[sd.dim].inclusive_min;
  region[sd.dim] = {lower + sd.start, lower + sd.start + (rows - 1) * sd.step + 1};
  std::vector<std::int64_t> starts;  // after the first chunk's
  std::int64_t pos = sd.start;
  const auto sizes = z.read_chunk_sizes(region);
  for (const std::int64_t n : sizes[sd.dim]) starts.push_back(pos += n);
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  for (std::int64_t a = 0; a < rows;) {
    std::int64_t b = std::min(rows, a + want);
    if (b < rows) {
      // The first row at or after b whose element starts a chunk.
      const std::int64_t e = sd.start + b * sd.step;  // zero-based element
      const auto next = std::lower_bound(starts.begin(), starts.end(), e);
      const std::int64_t boundary = next == starts.end() ? sd.start + rows * sd.step : *next;
      b = std::clamp<std::int64_t>((boundary - sd.start + sd.step - 1) / sd.step, b, rows);
    }
    out.emplace_back(a, b);
    a = b;
  }
  return out;
}

// The selection of output rows [a, b) of `sd`.
Selection slab_selection(const Array& z, const SlabDim& sd, bool coords, std::int64_t a, std::int64_t b) {
  Selection s = sd.full;
  const std::int64_t shift = coords ? z.lower_bound()[sd.dim] : 0;
  s[sd.dim] = slice(shift + sd.start + a * sd.step, shift + sd.start + (b - 1) * sd.step + 1, sd.step);
  return s;
}

std::uint64_t row_bytes_of(const Shape& shape, const DataType& t) {
  std::uint64_t n = t.size();
  for (std::size_t d = 1; d < shape.size(); ++d) n *= static_cast<std::uint64_t>(shape[d]);
  return n;
}

// One reused buffer as large as the largest slab, mapped in by the threads before its first use.
struct SlabBuffer {
  Shape out_shape;
  DataType dtype;
  std::uint64_t row_bytes;
  Bytes buf;
  SlabBuffer(const Array& z, const std::vector<std::pair<std::int64_t, std::int64_t>>& slabs, const Shape& shape)
      : out_shape(shape), dtype(z.dtype()), row_bytes(row_bytes_of(shape, z.dtype())) {
    std::int64_t max_rows = 0;
    for (const auto& [a, b] : slabs) max_rows = std::max(max_rows, b - a);
    buf.resize(bytes(0, max_rows));
    detail::prefault(buf.data(), buf.size(), z.concurrency());
  }
  std::size_t bytes(std::int64_t a, std::int64_t b) const {
    return static_cast<std::size_t>(static_cast<std::uint64_t>(b - a) * row_bytes);
  }
  // Output rows [a, b) in the buffer's first bytes.
  NDView view(std::int64_t a, std::int64_t b) {
    Shape vs = out_shape;
    vs[0] = b - a;
    return NDView::c_order(buf.data(), dtype, vs);
  }
};

}  // namespace

void save_selection(const Array& z, const Selection& sel, bool coords, const std::string& path) {
  const Shape out_shape = coords ? z.coords().selection_shape(sel) : z.selection_shape(sel);
  npy::Writer w(path, z.dtype(), out_shape);
  const auto sd = slab_dimension(z, sel, coords, out_shape);
  if (!sd) {
    const NDArray a = coords ? z.coords().read(sel) : z.read(sel);
    w.write({reinterpret_cast<const std::uint8_t*>(a.raw_data()), a.nbytes()});
    w.commit();
    return;
  }
  const auto slabs = slab_rows(z, *sd, out_shape);
  SlabBuffer buf(z, slabs, out_shape);
  for (const auto& [a, b] : slabs) {
    const Selection s = slab_selection(z, *sd, coords, a, b);
    if (coords)
      z.coords().read_into(s, buf.view(a, b));
    else
      z.read_into(s, buf.view(a, b));
    w.write({buf.buf.data(), buf.bytes(a, b)});
  }
  w.commit();
}

// `set --from`: a .npy file of the selection's shape (C order) is streamed in the same slabs as
// `get --out`, through one reused buffer; anything else (broadcasting, Fortran order, index
// arrays) is read whole first. Everything the file can be wrong about (header, size, data type,
// shape, bool values) is checked before the first slab is written; if the file changes while it
// is read, the error says how far the write got.
void set_from_npy(Array& z, const Selection& sel, bool coords, const std::string& path) {
  npy::Reader in(path);
  const Shape out_shape = coords ? z.coords().selection_shape(sel) : z.selection_shape(sel);
  const auto sd = in.dtype().holds_same_elements(z.dtype()) && in.shape() == out_shape && !in.fortran_order()
                      ? slab_dimension(z, sel, coords, out_shape)
                      : std::nullopt;
  const auto slabs = sd ? slab_rows(z, *sd, out_shape) : std::vector<std::pair<std::int64_t, std::int64_t>>{};
  if (!sd || slabs.size() < 2) {
    const npy::Loaded data = npy::load_view(path, z.concurrency());
    if (coords)
      z.coords().write(sel, data.view);
    else
      z.write(sel, data.view);
    return;
  }
  SlabBuffer buf(z, slabs, out_shape);
  auto read_slab = [&](std::int64_t a, std::int64_t b) {
    in.read(buf.bytes(0, a), buf.bytes(a, b), buf.buf.data(), z.concurrency());
  };
  // Bool values are the only thing in the data that can be wrong: checked all through first.
  if (z.dtype() == DataType::bool_t)
    for (const auto& [a, b] : slabs) read_slab(a, b);
  std::int64_t done = 0;
  try {
    for (const auto& [a, b] : slabs) {
      read_slab(a, b);
      const Selection s = slab_selection(z, *sd, coords, a, b);
      if (coords)
        z.coords().write(s, buf.view(a, b));
      else
        z.write(s, buf.view(a, b));
      done = b;
    }
  } catch (const Error& e) {
    if (done == 0) throw;
    throw_like(e, std::string(e.what()) + " (set stopped after " + std::to_string(done) + " of the selection's " +
                      std::to_string(out_shape[0]) +
                      " rows along its first dimension were written; the rest is unchanged)");
  }
}

}  // namespace zarrpp::cli
