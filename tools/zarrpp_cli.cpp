// zarrpp: the command-line tool. Errors are one line on stderr ("zarrpp: error: ...") with a
// non-zero exit code; success is quiet unless output was asked for.
#include <unistd.h>

#include <csignal>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <mutex>
#include <sstream>

#include <zarrpp/zarrpp.hpp>

namespace fs = std::filesystem;
using namespace zarrpp;

namespace {

// ---- argument parsing helpers -------------------------------------------------------------------

Shape parse_shape(const std::string& s, const char* what) {
  Shape out;
  if (s.empty()) return out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    std::int64_t v = 0;
    auto [p, ec] = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || ec != std::errc() || p != part.data() + part.size())
      throw ArgumentError(std::string(what) + ": '" + s + "' is not a comma-separated list of integers");
    out.push_back(v);
    i = j + 1;
  }
  return out;
}

Domain parse_domain(const std::string& s) {
  Domain d;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    const auto colon = part.find(':', 1);
    if (colon == std::string::npos) throw ArgumentError("--domain: '" + part + "' is not LO:HI");
    const auto lo = parse_shape(part.substr(0, colon), "--domain");
    const auto hi = parse_shape(part.substr(colon + 1), "--domain");
    if (lo.size() != 1 || hi.size() != 1) throw ArgumentError("--domain: '" + part + "' is not LO:HI");
    d.push_back({lo[0], hi[0]});
    i = j + 1;
  }
  return d;
}

// The compressors the registry knows (bytes -> bytes codecs), with their shorthand:
// "zstd[:level[:checksum]]", ... for messages and --help.
std::string compressor_forms() {
  std::string out = "none | auto";
  for (const auto& c : codec::known()) {
    if (c.role != codec::Role::bytes_to_bytes) continue;
    std::string form = c.name;
    std::string tail;
    for (const auto& k : codec::shorthand_keys(c.name)) {
      form += "[:" + k;
      tail += "]";
    }
    out += " | " + form + tail;
  }
  return out;
}

// "none", "auto" or a compressor's shorthand ("zstd:3", "blosc:lz4:5:bitshuffle"), through the registry.
std::optional<codec::Any> parse_compressor(const std::string& s) {
  if (s.empty() || s == "none") return std::nullopt;
  CodecMetadata m;
  try {
    m = codec::from_shorthand(s);
  } catch (const ArgumentError& e) {
    throw ArgumentError(std::string("--compressor: ") + e.what());
  }
  if (codec::role_of(m.name) != codec::Role::bytes_to_bytes)
    throw ArgumentError("--compressor: '" + m.name + "' is not a compressor (bytes -> bytes codec); use " +
                        compressor_forms());
  return m;
}

// --compressor's value as the compressors of a chain: "auto" is the core's default.
std::vector<codec::Any> compressors_of(const std::string& s) {
  if (s == "auto") return codec::default_compressors();
  const auto c = parse_compressor(s);
  return c ? std::vector<codec::Any>{*c} : std::vector<codec::Any>{};
}

// A scalar given on the command line, in the data type's fill-value encoding: 5, -1.5, NaN, true, 0x7fc00000.
Json scalar_json(const std::string& v) {
  try {
    return Json::parse(v);
  } catch (const nlohmann::json::exception&) {
    if (v == "nan" || v == "NaN") return "NaN";
    if (v == "inf" || v == "Infinity") return "Infinity";
    if (v == "-inf" || v == "-Infinity") return "-Infinity";
    if (v == "True") return true;
    if (v == "False") return false;
    return v;
  }
}

// `what` names the option the value came from: the value is parsed as a fill value is, but a
// refusal must name the option given (not "fill_value", which the user never gave).
NDArray scalar_array(const std::string& v, const DataType& t, const std::string& what) {
  NDArray a(t, {});
  Bytes b;
  try {
    b = parse_fill_value(scalar_json(v), t);
  } catch (const MetadataError& e) {
    // parse_fill_value says "fill_value: X is not valid for data type T: why"; keep the why.
    const std::string m = e.what(), mark = "for data type " + t.name() + ": ";
    const auto at = m.find(mark);
    throw ArgumentError(what + ": " + v + " is not a valid " + t.name() + " value" +
                        (at == std::string::npos ? "" : " (" + m.substr(at + mark.size()) + ")"));
  }
  std::memcpy(a.raw_data(), b.data(), b.size());
  return a;
}

// A message on one line: control characters (from files, keys, arguments) escaped as \n, \t, \xNN.
std::string one_line(std::string_view m) {
  std::string out;
  for (const char ch : m) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      out += "\\n";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out;
}

// --axis: an integer; negative counts from the end, as in NumPy.
std::size_t parse_axis(const std::string& text, std::size_t ndim) {
  std::int64_t a = 0;
  const char* b = text.data();
  const char* e = b + text.size();
  const auto [p, ec] = std::from_chars(b, e, a);
  if (text.empty() || ec != std::errc() || p != e) throw ArgumentError("--axis: '" + text + "' is not an integer");
  const auto n = static_cast<std::int64_t>(ndim);
  if (a < -n || a >= n)
    throw ArgumentError("--axis " + text + " is out of range for a " + std::to_string(ndim) + "-d array (valid: " +
                        (n == 0 ? std::string("none") : std::to_string(-n) + " to " + std::to_string(n - 1)) + ")");
  return static_cast<std::size_t>(a < 0 ? a + n : a);
}

// The codec pipeline of an array.
CodecPipeline pipeline_of(const ArrayMetadata& m) {
  return CodecPipeline::from_metadata(m.codecs, ChunkSpec{m.chunk_grid.chunk_shape, m.data_type, m.fill_value});
}

// Network options for URLs (--timeout, --stall-timeout, ...), by RemoteOptions' names, as given.
std::vector<std::pair<std::string, double>> g_net;

// ARRAY / STORE arguments: a local directory, or a URL (s3://, http(s)://, file://).
StorePtr open_dir(const std::string& dir, bool create) {
  if (dir.find("://") != std::string::npos) {
    OpenStoreOptions o{.file = FileStore::Options{.create = create}};
    for (RemoteOptions* net : {&o.http.net, &o.s3.net}) {
      for (const auto& [name, value] : g_net) net->set(name, value);
    }
    return open_store(dir, o);
  }
  if (!create && !fs::is_directory(dir)) {
    std::error_code ec;
    const auto st = fs::status(dir, ec);
    if (fs::exists(st))  // a FIFO or a file: the file store says what it is
      (void)FileStore::open(dir, FileStore::Options{.create = false});
    throw NotFoundError("no such directory '" + dir + "'");
  }
  return FileStore::open(dir, FileStore::Options{.create = create});
}

// Directories a command creates for a local ARRAY: removed again (when still empty) if the command
// fails, so a failed create or copy leaves nothing behind.
class NewDirs {
 public:
  explicit NewDirs(const std::string& where) {
    if (where.find("://") != std::string::npos) return;
    std::error_code ec;
    fs::path p = fs::absolute(where, ec).lexically_normal();
    if (p.filename().empty()) p = p.parent_path();  // "a.zarr/"
    for (; !p.empty() && p != p.root_path(); p = p.parent_path()) {
      if (fs::exists(fs::symlink_status(p, ec))) break;
      missing_.push_back(p);
    }
  }
  ~NewDirs() {
    if (kept_) return;
    for (const auto& p : missing_) ::rmdir(p.c_str());  // deepest first; only if empty
  }
  void keep() { kept_ = true; }

 private:
  std::vector<fs::path> missing_;
  bool kept_ = false;
};

bool holds_node(const std::string& where) {
  if (where.find("://") != std::string::npos) {
    auto s = open_dir(where, false);
    return s->exists("zarr.json") || s->exists(".zarray") || s->exists(".zgroup");
  }
  for (const char* doc : {"zarr.json", ".zarray", ".zgroup"})
    if (fs::exists(fs::path(where) / doc)) return true;
  return false;
}

// ---- printing values, NumPy style --------------------------------------------------------------

std::string fmt_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, p);
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

std::string element_str(const std::byte* p, const DataType& t) {
  using Id = DataType::Id;
  auto get = [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, p, sizeof x);
    return x;
  };
  switch (t.id()) {
    case Id::bool_:
      return get(std::uint8_t{}) ? "True" : "False";
    case Id::int8:
      return std::to_string(get(std::int8_t{}));
    case Id::int16:
      return std::to_string(get(std::int16_t{}));
    case Id::int32:
      return std::to_string(get(std::int32_t{}));
    case Id::int64:
      return std::to_string(get(std::int64_t{}));
    case Id::uint8:
      return std::to_string(get(std::uint8_t{}));
    case Id::uint16:
      return std::to_string(get(std::uint16_t{}));
    case Id::uint32:
      return std::to_string(get(std::uint32_t{}));
    case Id::uint64:
      return std::to_string(get(std::uint64_t{}));
    case Id::float16:
      return fmt_float(static_cast<float>(get(float16{})));
    case Id::float32: {
      const float f = get(float{});
      if (std::isnan(f) || std::isinf(f)) return fmt_float(f);
      char buf[64];
      auto [e, ec] = std::to_chars(buf, buf + sizeof buf, f);
      std::string s(buf, e);
      if (s.find_first_of(".en") == std::string::npos) s += ".";
      return s;
    }
    case Id::float64:
      return fmt_float(get(double{}));
    case Id::complex64: {
      const auto c = get(std::complex<float>{});
      return fmt_float(c.real()) + (c.imag() < 0 || std::signbit(c.imag()) ? "" : "+") + fmt_float(c.imag()) + "j";
    }
    case Id::complex128: {
      const auto c = get(std::complex<double>{});
      return fmt_float(c.real()) + (c.imag() < 0 || std::signbit(c.imag()) ? "" : "+") + fmt_float(c.imag()) + "j";
    }
    case Id::raw: {
      static const char* hex = "0123456789abcdef";
      std::string s = "0x";
      for (std::size_t i = 0; i < t.size(); ++i) {
        const auto b = static_cast<std::uint8_t>(p[i]);
        s += hex[b >> 4];
        s += hex[b & 15];
      }
      return s;
    }
    case Id::string:
    case Id::bytes:
      return "?";  // printed by print_vlen
  }
  return "?";
}

// Variable-length elements: nested JSON lists of strings (bytes as Python's b'...' repr).
void print_vlen(std::ostream& os, const VlenValues& v, bool bytes) {
  auto cell = [&](const std::string& x) -> Json {
    if (!bytes) return x;
    static const char* hex = "0123456789abcdef";
    std::string r = "b'";
    for (const unsigned char c : x) {
      if (c == '\\' || c == '\'')
        r += std::string("\\") + static_cast<char>(c);
      else if (c >= 0x20 && c < 0x7f)
        r += static_cast<char>(c);
      else
        r += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    return r + "'";
  };
  std::size_t at = 0;
  std::function<Json(std::size_t)> rec = [&](std::size_t d) -> Json {
    if (d == v.shape.size()) return cell(v.values[at++]);
    Json a = Json::array();
    for (std::int64_t i = 0; i < v.shape[d]; ++i) a.push_back(rec(d + 1));
    return a;
  };
  os << rec(0).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

// ---- .npy output in slabs ----
// `get --out` writes the selection as it is read: in slabs along its first dimension, each a whole
// number of chunk rows (so every chunk is decoded once), read into one reused buffer and appended to
// the file. Memory holds one slab, not the selection. Selections with index arrays or masks (and
// reversed slices) are read whole first.
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
  const auto sd = in.dtype() == z.dtype() && in.shape() == out_shape && !in.fortran_order()
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

void print_array(std::ostream& os, const NDArray& a) {
  const auto& shape = a.shape();
  const bool summarize = a.size() > 1000;  // NumPy's default threshold
  const std::int64_t edge = 3;
  std::vector<std::string> cells(static_cast<std::size_t>(a.size()));
  std::size_t width = 0;
  for (std::int64_t i = 0; i < a.size(); ++i) {
    cells[static_cast<std::size_t>(i)] =
        element_str(a.raw_data() + i * static_cast<std::int64_t>(a.dtype().size()), a.dtype());
    width = std::max(width, cells[static_cast<std::size_t>(i)].size());
  }
  if (shape.empty()) {
    os << cells[0] << "\n";
    return;
  }
  const auto strides = c_strides(shape, 1);
  std::function<void(std::size_t, std::int64_t, std::size_t)> rec = [&](std::size_t d, std::int64_t off,
                                                                        std::size_t indent) {
    os << "[";
    const std::int64_t n = shape[d];
    bool first = true;
    for (std::int64_t i = 0; i < n; ++i) {
      if (summarize && n > 2 * edge && i == edge) {
        if (d + 1 == shape.size())
          os << " ...";
        else
          os << "\n" << std::string(indent + 1, ' ') << "...";
        i = n - edge - 1;
        continue;
      }
      if (d + 1 == shape.size()) {
        if (!first) os << " ";
        const auto& c = cells[static_cast<std::size_t>(off + i)];
        os << std::string(width - c.size(), ' ') << c;
      } else {
        if (!first) os << std::string(shape.size() - d - 1, '\n') << std::string(indent + 1, ' ');
        rec(d + 1, off + i * strides[d], indent + 1);
      }
      first = false;
    }
    os << "]";
  };
  rec(0, 0, 0);
  os << "\n";
}

// ---- info ---------------------------------------------------------------------------------------

Json info_json(const Array& z) {
  const auto& m = z.metadata();
  Json j = Json::object();
  j["zarr_format"] = m.zarr_format;
  if (m.zarr_format == 2) {
    j["v2_dtype"] = m.v2.dtype;
    j["order"] = std::string(1, m.v2.order);
    if (!m.v2_time_unit().empty()) j["time_unit"] = m.v2_time_unit();
    if (m.v2.fill_null) j["v2_fill_value_null"] = true;
  } else if (const std::string pre = z.path().empty() ? "" : z.path() + "/";
             z.store()->exists(pre + ".zarray") || z.store()->exists(pre + ".zgroup")) {
    j["unfinished_conversion"] = true;
  }
  j["shape"] = z.shape();
  Json dom = Json::array();
  for (const auto& d : z.domain()) dom.push_back({d.inclusive_min, d.exclusive_max});
  j["domain"] = dom;
  j["data_type"] = z.dtype().name();
  j["chunk_grid"] = m.chunk_grid.to_json();
  j["chunks"] = z.chunks();
  if (z.shards()) j["shards"] = *z.shards();
  j["chunks_total"] = z.nchunks();
  j["chunks_stored"] = z.nchunks_stored();
  j["bytes_stored"] = z.nbytes_stored();
  j["fill_value"] = z.fill_value_json();
  Json cs = Json::array();
  for (const auto& c : m.codecs) cs.push_back(c.to_json());
  j["codecs"] = cs;
  j["chunk_key_encoding"] = m.chunk_key_encoding.to_json();
  if (m.dimension_names) {
    Json dn = Json::array();
    for (const auto& n : *m.dimension_names) dn.push_back(n ? Json(*n) : Json(nullptr));
    j["dimension_names"] = dn;
  }
  j["attributes"] = z.attributes();
  return j;
}

std::string codecs_summary(const ArrayMetadata& m) {
  std::string s;
  const auto pipeline = pipeline_of(m);
  const auto inner = pipeline.inner_codecs();
  for (const auto& c : m.codecs) {
    if (!s.empty()) s += " -> ";
    s += c.name;
    if (inner) {
      std::string in;
      for (const auto& i : *inner) {
        in += (in.empty() ? "" : " -> ") + i.name;
        if (i.configuration && codec::role_of(i.name) != codec::Role::array_to_bytes) in += i.configuration->dump();
      }
      s += "(" + Json(*pipeline.inner_chunk_shape()).dump() + ": " + in + ")";
    } else if (c.configuration && codec::role_of(c.name) != codec::Role::array_to_bytes) {
      s += c.configuration->dump();
    }
  }
  return s;
}

void print_info(const Array& z) {
  const auto j = info_json(z);
  std::string dom;
  for (const auto& d : z.domain())
    dom += (dom.empty() ? "" : ", ") +
           ("[" + std::to_string(d.inclusive_min) + ", " + std::to_string(d.exclusive_max) + ")");
  const auto& m = z.metadata();
  std::cout
      << "Type          : Array\n"
      << "Zarr format   : " << m.zarr_format
      << (j.contains("unfinished_conversion")
              ? "  (v2 documents are still there: an interrupted conversion; run 'zarrpp convert' again to finish it)"
              : "")
      << "\n"
      << "Data type     : " << z.dtype().name()
      << (m.zarr_format == 2 ? "  (v2 dtype " + m.v2.dtype +
                                   (m.v2_time_unit().empty() ? "" : ", values in units of " + m.v2_time_unit()) + ")"
                             : "")
      << "\n"
      << "Shape         : " << shape_str(z.shape()) << "\n"
      << "Domain        : " << dom << "\n"
      << "Chunk grid    : " << z.metadata().chunk_grid.name() << " " << json_text(j["chunk_grid"]["configuration"])
      << "\n"
      << "Chunk shape   : " << shape_str(z.chunks()) << "\n";
  if (z.shards()) std::cout << "Shard shape   : " << shape_str(*z.shards()) << "\n";
  std::cout << "Fill value    : " << json_text(j["fill_value"]) << "\n"
            << "Codecs        : " << codecs_summary(z.metadata()) << "\n"
            << "Chunks stored : " << j["chunks_stored"] << " / " << j["chunks_total"] << "\n"
            << "Bytes stored  : " << j["bytes_stored"] << " (chunks and metadata, as zarr-python's nbytes_stored)\n";
  if (!z.attributes().empty()) std::cout << "Attributes    : " << json_text(z.attributes()) << "\n";
}

// The array at a directory or URL the user typed; errors about the node itself name what was
// typed ("'g' is a group, not an array"), not the store's root ("/").
Array open_array_at(const std::string& typed) {
  const auto store = open_dir(typed, false);  // "no such directory" and the like stand as they are
  try {
    return Array::open(store);
  } catch (const MetadataError& e) {
    if (e.code() != ErrorCode::wrong_node_type) throw;
    throw MetadataError(ErrorCode::wrong_node_type,
                        "'" + typed + "' is a group, not an array (zarrpp tree '" + typed + "' shows what it holds)");
  } catch (const NotFoundError&) {
    // Opening reads only the node's documents: not found means no node there.
    throw NotFoundError("no array at '" + typed + "' (no zarr.json or .zarray)");
  }
}

void print_tree(const StorePtr& store, const std::string& path, const std::string& name, const std::string& indent,
                bool last, bool root) {
  const auto t = node_type(store, path);
  const std::string branch = root ? "" : indent + (last ? "└── " : "├── ");
  // The root is named as the user typed it.
  if (!t) throw NotFoundError("no Zarr node at '" + (root ? name : path) + "' (no zarr.json, .zarray or .zgroup)");
  if (*t == NodeType::Array) {
    auto z = Array::open(store, path);
    std::cout << branch << name << " " << shape_str(z.shape()) << " " << z.dtype().name() << " "
              << codecs_summary(z.metadata()) << "\n";
    return;
  }
  std::cout << branch << name << "\n";
  const auto g = Group::open(store, path);
  const auto kids = g.children();
  const std::string next = root ? "" : indent + (last ? "    " : "│   ");
  for (std::size_t i = 0; i < kids.size(); ++i) {
    if (!kids[i].error.empty()) {
      std::cout << next << (i + 1 == kids.size() ? "└── " : "├── ") << kids[i].name << " (unreadable: " << kids[i].error
                << ")\n";
      continue;
    }
    try {
      print_tree(store, path.empty() ? kids[i].name : path + "/" + kids[i].name, kids[i].name, next,
                 i + 1 == kids.size(), false);
    } catch (const Error& e) {
      // One member zarrpp cannot open is shown as such; the rest of the tree still prints.
      std::cout << next << (i + 1 == kids.size() ? "└── " : "├── ") << kids[i].name << " (unreadable: " << e.what()
                << ")\n";
    }
  }
}

// SIGINT, SIGTERM, SIGHUP: an interrupted `get --out` leaves no partial file (chunk temporaries
// in a store are swept by the next writer there), then the signal ends the process as usual.
extern "C" void on_termination_signal(int sig) {
  zarrpp::npy::remove_unfinished_temporaries();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

// When no subcommand was recognised: "unknown subcommand 'foo'" for the first word that is not an
// option (nor an option's value), rather than CLI11's "A subcommand is required".
std::optional<std::string> unknown_subcommand(const CLI::App& app, int argc, char** argv) {
  if (!app.get_subcommands().empty()) return std::nullopt;  // one was recognised: its error stands
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.starts_with("-")) {
      const auto* opt = app.get_option_no_throw(a.substr(0, a.find('=')));
      if (opt && opt->get_type_size() != 0 && a.find('=') == std::string::npos) ++i;  // skip its value
      continue;
    }
    std::string names;
    for (const auto* s : app.get_subcommands([](const CLI::App*) { return true; }))
      names += (names.empty() ? "" : ", ") + s->get_name();
    return "unknown subcommand '" + a + "' (the subcommands are " + names + ")";
  }
  return std::nullopt;
}

int main(int argc, char** argv) {
  // Signals the caller ignores (nohup, background jobs) stay ignored.
  for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old{};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler != SIG_IGN) ::signal(sig, on_termination_signal);
  }
  CLI::App app{
      "zarrpp: Zarr arrays (v3, and v2) that grow at both ends.\nARRAY and STORE are a node's local directory (holding "
      "zarr.json, or .zarray/.zgroup) or a URL: s3://bucket/path, http(s)://host/path, file:///path."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("zarrpp ") + kVersion);
  // Network options: checked by RemoteOptions::set (the rules Python's storage_options follow too).
  auto net_option = [&](const char* flag, const char* name, const std::string& help) {
    app.add_option_function<std::string>(
           flag,
           [name](const std::string& v) {
             double x = 0;
             std::from_chars(v.data(), v.data() + v.size(), x);
             g_net.emplace_back(name, x);
           },
           help)
        ->check(CLI::Validator(
            [name](std::string& v) -> std::string {
              double x = 0;
              const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
              if (v.empty() || ec != std::errc() || p != v.data() + v.size()) return "'" + v + "' is not a number";
              try {
                RemoteOptions().set(name, x);
              } catch (const ArgumentError& e) {
                return e.what();
              }
              return "";
            },
            std::string(name) == "max_attempts" ? "N" : "SECONDS"));
  };
  net_option("--timeout", "timeout",
             "For URLs: seconds one request (one attempt) may take (0 = no limit; default 300)");
  net_option("--connect-timeout", "connect_timeout", "For URLs: seconds to connect (default 10)");
  net_option("--stall-timeout", "stall_timeout",
             "For URLs: give up an attempt when no byte moves for this long (0 = never; default 10)");
  net_option("--retry-window", "retry_window",
             "For URLs: start no new attempt this long after the first (or the last one that moved data) (0 = no "
             "limit; default 30)");
  net_option("--max-attempts", "max_attempts", "For URLs: attempts per request, 1 = no retries (default 4)");

  // create
  auto* create = app.add_subcommand("create", "Create an array");
  std::string c_array, c_shape, c_chunks, c_dtype, c_fill, c_comp = "none", c_shards, c_lower, c_dims, c_sep = "/",
                                                           c_attrs;
  bool c_crc = false, c_over = false;
  int c_format = 3;
  create->add_option("ARRAY", c_array, "Directory for the array")->required();
  create->add_option("--shape", c_shape, "Shape, e.g. 6,4")->required();
  create->add_option("--chunks", c_chunks, "Chunk shape, e.g. 4,4")->required();
  create
      ->add_option("--dtype", c_dtype,
                   "Data type: bool, int8..uint64, float16/32/64, complex64/128, r<N>, string, bytes, or NumPy's "
                   "spelling (i4, <f8, ...)")
      ->required();
  create->add_option("--fill-value", c_fill, "Fill value (default 0 / false)");
  create->add_option("--compressor", c_comp, compressor_forms());
  create->add_flag("--crc32c", c_crc, "Append a CRC32C checksum to every chunk");
  create->add_option("--shards", c_shards, "Shard shape (a multiple of the chunk shape)");
  create->add_option("--lower-bound", c_lower, "Lower bound per dimension (creates a regular_bounded array)");
  create->add_option("--dimension-names", c_dims, "Dimension names, e.g. t,x");
  auto* c_sep_opt = create->add_option("--separator", c_sep, "Chunk key separator: / or . (default / for v3, . for v2)")
                        ->check(CLI::IsMember({"/", "."}));
  create->add_option("--attrs", c_attrs, "Attributes as a JSON object");
  create->add_flag("--overwrite", c_over, "Replace an existing node");
  create
      ->add_option("--zarr-format", c_format,
                   "2 writes .zarray/.zattrs as zarr-python 2 does (no shards, crc32c or lower bound); default 3")
      ->check(CLI::IsMember({2, 3}));

  auto* info = app.add_subcommand("info", "Describe an array");
  std::string i_array;
  bool i_json = false;
  info->add_option("ARRAY", i_array, "The array: its directory or URL")->required();
  info->add_flag("--json", i_json, "Print one JSON object");

  auto* tree = app.add_subcommand("tree", "Show the hierarchy with each array's shape, dtype and codecs");
  std::string t_store;
  tree->add_option("STORE", t_store, "A group or array: its directory or URL")->required();

  auto* ls = app.add_subcommand("ls", "List stored chunk keys in grid order");
  std::string l_array;
  ls->add_option("ARRAY", l_array, "The array: its directory or URL")->required();

  auto* get = app.add_subcommand("get", "Read a selection (NumPy syntax) and print it or save it as .npy");
  std::string g_array, g_sel, g_out;
  get->add_option("ARRAY", g_array, "The array: its directory or URL")->required();
  get->add_option("SELECTION", g_sel, "e.g. \"0:3, ::2\", \"-1\", \"...\", \"[0,2,5], :\"");
  get->add_option("--out", g_out, "Write a .npy file instead of printing");
  bool g_coords = false;
  get->add_flag("--coords", g_coords,
                "SELECTION is in the domain's coordinates (e.g. \"-10:0\"), not zero-based from the lower bound");

  auto* set = app.add_subcommand("set", "Write a value or a .npy file into a selection");
  std::string s_array, s_sel, s_value, s_from;
  set->add_option("ARRAY", s_array, "The array: its directory or URL")->required();
  set->add_option("SELECTION", s_sel, "What to write, in NumPy syntax (\"0:3, ::2\"); default: everything");
  auto* s_v = set->add_option("--value", s_value, "A scalar, broadcast over the selection");
  auto* s_f = set->add_option("--from", s_from, "A .npy file of the selection's shape");
  bool s_coords = false;
  set->add_flag("--coords", s_coords,
                "SELECTION is in the domain's coordinates (e.g. \"-10:0\"), not zero-based from the lower bound");
  s_v->excludes(s_f);

  auto* prepend = app.add_subcommand("prepend", "Add data before index 0 along an axis");
  auto* append = app.add_subcommand("append", "Add data after the end along an axis");
  std::string p_array, p_from, p_axis;
  for (auto* sub : {prepend, append}) {
    sub->add_option("ARRAY", p_array, "The array: its directory or URL")->required();
    sub->add_option("--axis", p_axis, "Axis to grow (negative counts from the end)")
        ->required()
        ->allow_extra_args(false);
    sub->add_option("--from", p_from, "A .npy file")->required();
  }

  auto* resize = app.add_subcommand("resize", "Change the shape, or the domain at either end");
  std::string r_array, r_shape, r_domain;
  resize->add_option("ARRAY", r_array, "The array: its directory or URL")->required();
  auto* r_s = resize->add_option("--shape", r_shape, "New shape, keeping the lower bound");
  auto* r_d = resize->add_option("--domain", r_domain, "New domain LO:HI per dimension, e.g. -3:6,0:4");
  r_s->excludes(r_d);

  auto* copy = app.add_subcommand("copy", "Copy an array, re-chunking and re-encoding it");
  std::string y_src, y_dst, y_chunks, y_comp, y_shards;
  bool y_crc = false, y_over = false;
  copy->add_option("SRC", y_src, "The array to copy: its directory or URL")->required();
  copy->add_option("DST", y_dst, "Where the copy goes: a directory or URL")->required();
  copy->add_option("--chunks", y_chunks, "New chunk shape");
  copy->add_option("--compressor", y_comp, "New compressor (as for create)");
  copy->add_option("--shards", y_shards, "New shard shape");
  copy->add_flag("--crc32c", y_crc, "Add crc32c checksums");
  copy->add_flag("--overwrite", y_over, "Replace DST if it exists");
  std::string y_grid;
  copy->add_option("--grid", y_grid,
                   "The copy's chunk grid: regular (index 0 at SRC's first element, for readers that know only "
                   "regular) or regular_bounded; default: SRC's")
      ->check(CLI::IsMember({"regular", "regular_bounded"}));

  auto* convert = app.add_subcommand(
      "convert", "Convert a Zarr v2 array or group (with everything under it) to Zarr v3, rewriting no chunk");
  std::string v_src, v_dst;
  int v_format = 3;
  bool v_over = false;
  convert->add_option("SRC", v_src, "The v2 node (a local directory or URL)")->required();
  convert->add_option("DST", v_dst,
                      "Write the v3 node here (chunks copied byte for byte); default: convert SRC in place");
  convert->add_option("--zarr-format", v_format, "The format to convert to (3)")->check(CLI::IsMember({3}));
  convert->add_flag("--overwrite", v_over, "Replace an existing node at DST");
  std::string v_grid;
  convert
      ->add_option("--grid", v_grid,
                   "Instead: switch the array SRC to this chunk grid in place, moving no chunk (regular needs "
                   "lower bound and origin 0; otherwise use 'copy --grid regular')")
      ->check(CLI::IsMember({"regular", "regular_bounded"}));

  auto* demo = app.add_subcommand("demo", "The prepend walkthrough, step by step, in a local directory");
  std::string d_dir = "demo.zarr";
  demo->add_option("DIR", d_dir, "Directory to (re)create");

  // Warnings (e.g. consolidated metadata that could not be refreshed): one line each on stderr.
  set_warning_handler(
      [](const std::string& message) { std::cerr << "zarrpp: warning: " << one_line(message) << std::endl; });

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    // Only where CLI11 found no subcommand (its "A subcommand is required", or extra words) does
    // the first unknown word say more; other errors (a missing value, a bad number) stand.
    const bool no_subcommand = dynamic_cast<const CLI::RequiredError*>(&e) || dynamic_cast<const CLI::ExtrasError*>(&e);
    const auto unknown = no_subcommand ? unknown_subcommand(app, argc, argv) : std::nullopt;
    std::cerr << "zarrpp: error: " << one_line(unknown.value_or(e.what())) << " (see zarrpp --help)\n";
    return 2;
  }

  try {
    if (create->parsed()) {
      ArraySpec spec{.shape = parse_shape(c_shape, "--shape"),
                     .chunks = parse_shape(c_chunks, "--chunks"),
                     .dtype = DataType::from_user(c_dtype)};
      if (!c_fill.empty()) spec.fill_value = spec.dtype == DataType::string_t ? Json(c_fill) : scalar_json(c_fill);
      spec.compressors = compressors_of(c_comp);
      spec.crc32c = c_crc;
      if (!c_shards.empty()) spec.shards = parse_shape(c_shards, "--shards");
      if (!c_lower.empty()) spec.lower_bound = parse_shape(c_lower, "--lower-bound");
      if (!c_dims.empty()) {
        std::vector<std::optional<std::string>> names;
        std::stringstream ss(c_dims);
        for (std::string n; std::getline(ss, n, ',');) names.emplace_back(n);
        spec.dimension_names = names;
      }
      spec.chunk_key_encoding = ChunkKeyEncoding::default_(c_sep[0]);
      if (!c_attrs.empty()) spec.attributes = parse_json_document(c_attrs, "--attrs");
      spec.overwrite = c_over;
      spec.zarr_format = c_format;
      if (c_format == 2) spec.chunk_key_encoding = ChunkKeyEncoding::v2(c_sep_opt->count() ? c_sep[0] : '.');
      if (!c_over && holds_node(c_array))
        throw ConflictError(ErrorCode::already_exists, "'" + c_array + "' already holds a Zarr node (use --overwrite)");
      // Everything is validated before a directory is made; a failure after leaves none behind.
      {
        ArraySpec probe = spec;
        probe.overwrite = false;
        Array::create(MemoryStore::create(), probe);
      }
      NewDirs made(c_array);
      Array::create(open_dir(c_array, true), spec);
      made.keep();
    } else if (info->parsed()) {
      auto z = open_array_at(i_array);
      if (i_json)
        std::cout << json_text(info_json(z)) << "\n";
      else
        print_info(z);
    } else if (tree->parsed()) {
      print_tree(open_dir(t_store, false), "", t_store, "", true, true);
    } else if (ls->parsed()) {
      auto z = open_array_at(l_array);
      for (const auto& k : z.stored_chunk_keys()) std::cout << k << "\n";
    } else if (get->parsed()) {
      auto z = open_array_at(g_array);
      if (z.dtype().is_vlen()) {
        if (!g_out.empty())
          throw ArgumentError("get --out: a .npy file cannot hold the variable-length " + z.dtype().name() +
                              " elements of this array; print them instead (no --out)");
        const auto sel = parse_selection(g_sel);
        print_vlen(std::cout, g_coords ? z.coords().read_vlen(sel) : z.read_vlen(sel), z.dtype() == DataType::bytes_t);
      } else {
        const auto sel = parse_selection(g_sel);
        if (!g_out.empty()) {
          save_selection(z, sel, g_coords, g_out);
        } else {
          print_array(std::cout, g_coords ? z.coords().read(sel) : z.read(sel));
        }
      }
    } else if (set->parsed()) {
      auto z = open_array_at(s_array);
      const auto sel = parse_selection(s_sel);
      if (z.dtype().is_vlen()) {
        if (!s_from.empty())
          throw ArgumentError("set --from: a .npy file cannot hold variable-length " + z.dtype().name() +
                              " elements; use --value TEXT");
        if (s_coords)
          z.coords().write_vlen(sel, VlenValues{{}, {s_value}});
        else
          z.write_vlen(sel, VlenValues{{}, {s_value}});
      } else if (!s_value.empty() || !s_from.empty()) {
        if (!s_from.empty()) {
          set_from_npy(z, sel, s_coords, s_from);
        } else {
          const NDArray data = scalar_array(s_value, z.dtype(), "--value");
          if (s_coords)
            z.coords().write(sel, data);
          else
            z.write(sel, data);
        }
      } else
        throw ArgumentError("set: give --value V or --from FILE.npy");
    } else if (prepend->parsed() || append->parsed()) {
      auto z = open_array_at(p_array);
      const std::size_t axis = parse_axis(p_axis, z.ndim());
      if (z.dtype().is_vlen())
        throw ArgumentError(std::string(prepend->parsed() ? "prepend" : "append") +
                            ": a .npy file cannot hold the variable-length " + z.dtype().name() +
                            " elements of this array (grow it from C++ or Python)");
      const auto data = npy::load_view(p_from, z.concurrency());
      if (prepend->parsed())
        z.prepend(data.view, axis);
      else
        z.append(data.view, axis);
    } else if (resize->parsed()) {
      auto z = open_array_at(r_array);
      if (!r_shape.empty())
        z.resize(parse_shape(r_shape, "--shape"));
      else if (!r_domain.empty())
        z.resize_domain(parse_domain(r_domain));
      else
        throw ArgumentError("resize: give --shape or --domain");
    } else if (convert->parsed() && !v_grid.empty()) {
      if (convert->count("--overwrite") || convert->count("--zarr-format"))
        throw ArgumentError(
            "convert --grid changes only the grid of SRC, in place; it takes no --overwrite or --zarr-format");
      if (!v_dst.empty())
        throw ArgumentError("convert --grid changes SRC in place; to write a copy with another grid use 'zarrpp copy " +
                            v_src + " " + v_dst + " --grid " + v_grid + "'");
      auto z = open_array_at(v_src);
      const auto before = z.metadata().chunk_grid.kind;
      if (v_grid == "regular")
        z.convert_to_regular();
      else
        z.convert_to_regular_bounded();
      const bool same = z.metadata().chunk_grid.kind == before;
      std::cout << v_src << ": "
                << (same ? "already " + v_grid
                         : "chunk grid is now " + v_grid + " (zarr.json only; no chunk was moved)")
                << "\n";
    } else if (convert->parsed()) {
      ConvertReport rep;
      if (v_dst.empty()) {
        rep = convert_to_v3(open_dir(v_src, false), "");
      } else {
        if (!v_over && holds_node(v_dst))
          throw ConflictError(ErrorCode::already_exists, "'" + v_dst + "' already holds a Zarr node (use --overwrite)");
        auto src = open_dir(v_src, false);
        NewDirs made(v_dst);
        rep = convert_to_v3(src, "", open_dir(v_dst, true), "", v_over);
        made.keep();
      }
      for (const auto& n : rep.notes) std::cout << "note: " << n << "\n";
      std::cout << "converted " << rep.nodes << " node(s) to Zarr v3"
                << (v_dst.empty() ? " in place; no chunk was read or rewritten"
                                  : "; " + std::to_string(rep.chunks_copied) + " chunk(s) copied byte for byte")
                << "\n";
    } else if (copy->parsed()) {
      auto src = open_array_at(y_src);
      const auto& m = src.metadata();
      ArrayMetadata dm = m;
      if (!y_chunks.empty() || !y_comp.empty() || !y_shards.empty() || y_crc) {
        // Re-encode: what is not given is taken from the source (its codecs inside the shard
        // when sharded; the compressors replaced by --compressor, a checksum added by --crc32c).
        auto [parts, chunks] = codec::split_chain(m.codecs, m.chunk_grid.chunk_shape);
        if (!y_comp.empty()) parts.compressors = compressors_of(y_comp);
        parts.crc32c = parts.crc32c || y_crc;
        if (!y_shards.empty())
          parts.shards = parse_shape(y_shards, "--shards");
        else if (!y_chunks.empty())
          parts.shards = std::nullopt;
        if (!y_chunks.empty()) chunks = parse_shape(y_chunks, "--chunks");
        // Build the codecs and grid the parts describe, keeping everything else of the source.
        const auto chain = codec::build_chain(parts, m.data_type, chunks);
        ArraySpec spec{.shape = src.shape(), .chunks = chain.grid_chunks, .dtype = src.dtype(), .codecs = chain.codecs};
        auto probe = Array::create(MemoryStore::create(), spec);
        dm.codecs = probe.metadata().codecs;
        dm.chunk_grid.chunk_shape = probe.metadata().chunk_grid.chunk_shape;
      }
      if (!y_grid.empty()) dm = with_chunk_grid(dm, y_grid);
      {
        Array::create(MemoryStore::create(), "", dm, false);
      }  // validated before anything is made
      NewDirs made(y_dst);
      const bool tty = ::isatty(2);
      const auto t0 = std::chrono::steady_clock::now();
      std::mutex print_mu;
      CopyOptions co{.overwrite = y_over};
      co.progress = [&](std::int64_t d, std::int64_t total) {
        if (!tty || (d % 16 != 0 && d != total)) return;
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const double rate = secs > 0 ? static_cast<double>(d) / secs : 0.0;
        const double eta = rate > 0 ? static_cast<double>(total - d) / rate : 0.0;
        std::lock_guard lk(print_mu);
        std::fprintf(stderr, "\r  %lld/%lld chunks  %.1f chunks/s  ETA %.0fs   %s", static_cast<long long>(d),
                     static_cast<long long>(total), rate, eta, d == total ? "\n" : "");
      };
      // copy_array refuses a destination that is the source (or overlaps it) before it looks
      // whether one exists: --overwrite is only suggested where it would help.
      try {
        copy_array(src, open_dir(y_dst, true), "", dm, co);
      } catch (const ConflictError& e) {
        if (e.code() != ErrorCode::already_exists || !holds_node(y_dst)) throw;
        throw ConflictError(ErrorCode::already_exists, "'" + y_dst + "' already holds a Zarr node (use --overwrite)");
      }
      made.keep();
      const auto& lower = m.chunk_grid.lower_bound;
      if (y_grid == "regular" && std::any_of(lower.begin(), lower.end(), [](std::int64_t x) { return x != 0; }))
        std::cout << "note: index 0 of " << y_dst << " is coordinate " << shape_str(lower) << " of " << y_src
                  << " (its domain's start); every index moved by that much\n";
    } else if (demo->parsed()) {
      const fs::path dir = d_dir;
      // Only an empty folder or an earlier demo's output (which holds the marker) is used; the demo
      // replaces only its own array there.
      const fs::path marker = dir / ".zarrpp-demo";
      std::error_code ec;
      if (fs::exists(fs::symlink_status(dir, ec))) {
        if (!fs::is_directory(dir))
          throw ArgumentError("'" + d_dir + "' exists and is not a directory; choose another DIR");
        if (!fs::is_empty(dir, ec) && !fs::is_regular_file(fs::symlink_status(marker, ec)))
          throw ArgumentError("'" + d_dir + "' is not empty and not an earlier demo's output; choose another DIR");
      }
      NewDirs made(d_dir);
      fs::create_directories(dir);  // the marker goes in first (the store would make it only on its first write)
      auto store = FileStore::open(dir);
      {
        std::ofstream out(marker);
        out << "written by 'zarrpp demo': this folder may be replaced by the next demo run\n";
        if (!out.flush()) throw StoreError("cannot write '" + marker.string() + "'");
      }
      made.keep();
      auto checksums = [&](const Array& z) {
        std::map<std::string, std::uint32_t> out;
        for (const auto& k : z.stored_chunk_keys()) {
          const auto b = *store->get(k);
          out[k] = crc32c(b);
        }
        return out;
      };
      auto print_keys = [&](const Array& z) {
        for (const auto& k : z.stored_chunk_keys()) std::cout << "      " << k << "\n";
      };
      std::cout << "zarrpp demo: growing an array in front, in " << dir.string() << "\n\n";
      std::cout << "1. Create a 6x4 int32 array with 4x4 chunks and fill it with 1\n"
                << "   (as: zarrpp create " << d_dir << " --shape 6,4 --chunks 4,4 --dtype int32)\n"
                << "   (as: zarrpp set " << d_dir << " --value 1)\n";
      auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32, .overwrite = true});
      z.fill<std::int32_t>(1);
      std::cout << "   shape " << shape_str(z.shape()) << ", chunk grid '" << z.metadata().chunk_grid.name()
                << "', stored chunks:\n";
      print_keys(z);
      const auto before = checksums(z);
      std::cout << "\n2. Prepend a 3x4 block of 2 along axis 0\n"
                << "   (as: zarrpp prepend " << d_dir << " --axis 0 --from block.npy)\n";
      z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 0);
      const auto d = z.domain();
      std::cout << "   shape " << shape_str(z.shape()) << "\n   domain ((" << d[0].inclusive_min << ", "
                << d[0].exclusive_max << "), (" << d[1].inclusive_min << ", " << d[1].exclusive_max
                << "))\n   chunk grid '" << z.metadata().chunk_grid.name() << "' "
                << z.metadata().chunk_grid.to_json()["configuration"].dump() << "\n   stored chunks:\n";
      print_keys(z);
      std::cout << "\n3. The chunks that were there are unchanged, byte for byte (CRC32C of each file):\n";
      const auto after = checksums(z);
      bool same = true;
      for (const auto& [k, h] : before) {
        const bool ok = after.count(k) && after.at(k) == h;
        same = same && ok;
        char buf[160];
        std::snprintf(buf, sizeof buf, "      %-8s %08x -> %08x  %s\n", k.c_str(), h, after.count(k) ? after.at(k) : 0u,
                      ok ? "unchanged" : "CHANGED");
        std::cout << buf;
      }
      for (const auto& [k, h] : after)
        if (!before.count(k)) std::cout << "      " << k << " is new\n";
      std::cout << "\n4. Read it back from disk (index 0 is coordinate " << d[0].inclusive_min << ")\n"
                << "   (as: zarrpp get " << d_dir << ")\n";
      const auto a = Array::open(store).read();
      std::ostringstream os;
      print_array(os, a);
      std::istringstream is(os.str());
      for (std::string line; std::getline(is, line);) std::cout << "   " << line << "\n";
      if (!same) throw Error(ErrorCode::corrupt_data, "demo: an old chunk changed");
      std::cout << "\nDone: prepending wrote one new chunk and zarr.json; nothing else moved.\n";
    }
  } catch (const std::bad_alloc&) {
    std::cerr << "zarrpp: error: out of memory (the data asked for does not fit; select less, or use smaller chunks)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "zarrpp: error: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}
