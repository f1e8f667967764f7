#include "zarrpp/io/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <fstream>
#include <optional>

#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/core/thread_pool.hpp"
#include "zarrpp/io/file_replacement.hpp"

namespace zarrpp::npy {
namespace {

[[noreturn]] void fail(const std::string& why) { throw ArgumentError(".npy: " + why); }

// The header is a Python dict literal, e.g. {'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }.
// NumPy evaluates it with ast.literal_eval and then requires exactly the keys descr, fortran_order
// and shape, shape a tuple of ints, fortran_order a bool and descr a data type; it refuses headers
// longer than 10,000 characters. This parser accepts a subset of what NumPy accepts, never more:
// single- or double-quoted strings without escapes, True/False, tuples of decimal integers (with
// Python 2's "L" suffix in format versions 1 and 2, as NumPy filters it), commas where Python needs
// them (a one-element tuple needs its trailing comma: "(4)" is the int 4), and only whitespace after
// the closing brace. A repeated key is refused: literal_eval keeps the last, so a reader keeping the
// first would read another array than NumPy does.
// A structured descr: a list of (name, type[, shape]), a type a string or a nested list.
struct DescrField {
  std::string name, type;
  std::vector<DescrField> nested;
  Shape shape;
};

struct Header {
  std::string descr;               // a type string, or
  std::vector<DescrField> fields;  // a structured type's descr
  bool fortran = false;
  Shape shape;
};

constexpr std::size_t kMaxHeaderChars = 10000;  // NumPy's max_header_size

class HeaderParser {
 public:
  HeaderParser(std::string_view s, int major) : s_(s), longs_(major <= 2) {}

  Header parse() {
    if (s_.size() > kMaxHeaderChars)
      fail("header of " + std::to_string(s_.size()) + " characters (NumPy refuses more than " +
           std::to_string(kMaxHeaderChars) + ")");
    for (const char c : s_)
      if (static_cast<unsigned char>(c) >= 0x80 ||
          (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r'))
        fail("malformed header: unexpected byte " + std::to_string(static_cast<unsigned char>(c)));
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t')) ++i_;  // as literal_eval strips
    expect('{', "expected '{'");
    Header h;
    bool has_descr = false, has_order = false, has_shape = false;
    ws();
    while (peek() != '}') {
      const std::string key = str();
      ws();
      expect(':', "expected ':' after '" + key + "'");
      ws();
      bool* seen = key == "descr"           ? &has_descr
                   : key == "fortran_order" ? &has_order
                   : key == "shape"         ? &has_shape
                                            : nullptr;
      if (!seen) fail("unexpected header key '" + key + "'");
      if (*seen) fail("header key '" + key + "' given twice");
      *seen = true;
      if (key == "descr" && peek() == '[')
        h.fields = descr_list();
      else if (key == "descr")
        h.descr = str();
      else if (key == "fortran_order")
        h.fortran = boolean();
      else
        h.shape = shape();
      ws();
      if (peek() == ',') {
        ++i_;
        ws();
      } else if (peek() != '}') {
        fail("malformed header: expected ',' or '}'");
      }
    }
    ++i_;
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
    if (i_ != s_.size()) fail("malformed header: unexpected text after the dictionary");
    if (!has_descr || !has_order || !has_shape) fail("header lacks descr, fortran_order or shape");
    return h;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const { throw ArgumentError(".npy: " + why); }
  char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void ws() {  // inside brackets Python allows newlines
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c, const std::string& why) {
    if (peek() != c) fail("malformed header: " + why);
    ++i_;
  }
  static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  std::string str() {
    const char q = peek();
    if (q != '\'' && q != '"') fail("malformed header: expected a string");
    const std::size_t start = ++i_;
    while (i_ < s_.size() && s_[i_] != q) {
      if (s_[i_] == '\\' || s_[i_] == '\n' || s_[i_] == '\r')
        fail("malformed header: unsupported string (escape or line break)");
      ++i_;
    }
    if (i_ >= s_.size()) fail("malformed header: unterminated string");
    std::string out(s_.substr(start, i_ - start));
    ++i_;
    ws();
    if (peek() == '\'' || peek() == '"') fail("malformed header: adjacent strings");
    return out;
  }

  bool boolean() {
    bool v = false;
    if (s_.substr(i_, 4) == "True") {
      v = true;
      i_ += 4;
    } else if (s_.substr(i_, 5) == "False") {
      i_ += 5;
    } else {
      fail("fortran_order must be True or False");
    }
    if (name_char(peek())) fail("fortran_order must be True or False");
    return v;
  }

  std::int64_t integer() {
    const std::size_t start = i_;
    std::int64_t v = 0;
    while (i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9') {
      if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[i_] - '0', &v)) fail("shape overflows");
      ++i_;
    }
    if (i_ == start) fail("shape must be a tuple of non-negative integers");
    if (s_[start] == '0' && i_ - start > 1) fail("shape must be a tuple of non-negative integers (leading zero)");
    if (longs_ && peek() == 'L') ++i_;  // Python 2's longs, which NumPy filters out of versions 1 and 2
    if (name_char(peek()) || peek() == '.') fail("shape must be a tuple of non-negative integers");
    return v;
  }

  Shape shape() {
    expect('(', "shape must be a tuple");
    Shape out;
    ws();
    bool comma = false;  // a comma after the last element
    while (peek() != ')') {
      if (!out.empty() && !comma) fail("malformed header: expected ',' or ')' in shape");
      out.push_back(integer());
      ws();
      comma = peek() == ',';
      if (comma) {
        ++i_;
        ws();
      }
    }
    ++i_;
    if (out.size() == 1 && !comma) fail("shape must be a tuple (a one-element tuple needs its comma: (n,))");
    return out;
  }

  // [('a', '<i4'), ('b', '<f8', (2,)), ('c', [('x', '|u1')])], as NumPy writes dtype.descr.
  std::vector<DescrField> descr_list() {
    expect('[', "expected '['");
    ws();
    std::vector<DescrField> out;
    while (peek() != ']') {
      expect('(', "a structured descr is a list of (name, type) or (name, type, shape)");
      ws();
      DescrField f;
      f.name = str();
      expect(',', "expected ',' after a field name");
      ws();
      if (peek() == '[')
        f.nested = descr_list();
      else
        f.type = str();
      ws();
      if (peek() == ',') {
        ++i_;
        ws();
        if (peek() == '(') f.shape = shape();
        ws();
      }
      expect(')', "expected ')' after a field");
      ws();
      out.push_back(std::move(f));
      if (peek() == ',') {
        ++i_;
        ws();
      } else if (peek() != ']') {
        fail("malformed header: expected ',' or ']' in descr");
      }
    }
    ++i_;
    if (out.empty()) fail("a structured descr needs at least one field");
    return out;
  }

  std::string_view s_;
  std::size_t i_ = 0;
  bool longs_;
};

struct Descr {
  DataType dtype;
  bool big = false;
};

// NumPy's configured types: <U12, |S5, <M8[ns], <m8[10s].
std::optional<DataType> configured_descr(const std::string& d) {
  const char kind = d[1];
  std::string name;
  if (kind == 'U' || kind == 'S')
    name = d.substr(1);
  else if ((kind == 'M' || kind == 'm') && d.size() > 3 && d[2] == '8')
    name = std::string(kind == 'M' ? "datetime64" : "timedelta64") + d.substr(3);
  else
    return std::nullopt;
  try {
    return DataType::parse(name);
  } catch (const MetadataError& e) {
    fail("unsupported dtype '" + d + "': " + e.what());
  }
}

Descr parse_descr(const std::string& d) {
  if (d.size() < 3) fail("unsupported dtype '" + d + "'");
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') fail("unsupported dtype '" + d + "'");
  if (auto t = configured_descr(d)) return {*t, order == '>'};
  const char kind = d[1];
  std::size_t n = 0;
  for (std::size_t i = 2; i < d.size(); ++i) {
    if (d[i] < '0' || d[i] > '9') fail("unsupported dtype '" + d + "'");
    n = n * 10 + static_cast<std::size_t>(d[i] - '0');
    if (n > (1u << 20)) fail("unsupported dtype '" + d + "'");
  }
  Descr r;
  r.big = order == '>';
  using Id = DataType::Id;
  auto pick = [&](std::initializer_list<std::pair<std::size_t, Id>> opts) {
    for (auto [sz, id] : opts)
      if (sz == n) return DataType(id);
    fail("unsupported dtype '" + d + "'");
  };
  switch (kind) {
    case 'b':
      r.dtype = pick({{1, Id::bool_}});
      break;
    case 'i':
      r.dtype = pick({{1, Id::int8}, {2, Id::int16}, {4, Id::int32}, {8, Id::int64}});
      break;
    case 'u':
      r.dtype = pick({{1, Id::uint8}, {2, Id::uint16}, {4, Id::uint32}, {8, Id::uint64}});
      break;
    case 'f':
      r.dtype = pick({{2, Id::float16}, {4, Id::float32}, {8, Id::float64}});
      break;
    case 'c':
      r.dtype = pick({{8, Id::complex64}, {16, Id::complex128}});
      break;
    case 'V':
      if (n == 0) fail("unsupported dtype '" + d + "'");
      r.dtype = DataType::raw_bytes(n);
      break;
    default:
      fail("unsupported dtype '" + d + "'");
  }
  return r;
}

// A structured descr as a packed DataType; its multi-byte fields must share one byte order.
Descr struct_descr(const std::vector<DescrField>& list) {
  std::vector<StructField> fields;
  std::optional<bool> big;
  for (const auto& e : list) {
    if (e.name.empty())
      fail("structured dtype with padding (an unnamed field): zarrpp holds packed structured types only");
    const Descr d = e.nested.empty() ? parse_descr(e.type) : struct_descr(e.nested);
    if (d.dtype.component_size() > 1) {
      if (big && *big != d.big)
        fail("structured dtype with fields of both byte orders: zarrpp keeps one byte order per array");
      big = d.big;
    }
    StructField f{e.name, d.dtype, {}, 0};
    for (const auto n : e.shape) f.shape.push_back(static_cast<std::size_t>(n));
    fields.push_back(std::move(f));
  }
  try {
    return {DataType::structured(std::move(fields)), big.value_or(false)};
  } catch (const MetadataError& err) {
    fail(std::string("unsupported structured dtype: ") + err.what());
  }
}

}  // namespace

std::string descr_of(const DataType& t) {
  if (t.kind() == DataKind::Struct) {  // a Python list literal: [('a', '<i4'), ('b', '<f8', (2,))]
    std::string out = "[";
    for (const auto& f : t.fields()) {
      if (out.size() > 1) out += ", ";
      std::string name;
      for (const char c : f.name) {
        if (c == '\\' || c == '\'' || static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x80)
          throw ArgumentError(
              ".npy: structured field name '" + f.name +
              "' has a character this writer does not quote (a quote, backslash, control or non-ASCII character)");
        name += c;
      }
      out += "('" + name + "', " + descr_of(f.type);
      if (!f.shape.empty()) {
        out += ", (";
        for (const auto n : f.shape) out += std::to_string(n) + ",";
        out.back() = ')';
        if (f.shape.size() == 1) out.insert(out.size() - 1, ",");
      }
      out += ")";
    }
    return out + "]";
  }
  if (t.is_vlen()) throw ArgumentError(".npy: data type " + t.name() + " has no fixed size; .npy cannot hold it");
  return "'" + t.numpy_str() + "'";
}

namespace {

// What a header says, checked against the file's total size.
struct Layout {
  Header h;
  Descr d;
  std::size_t data_off = 0;
  std::uint64_t need = 0;
};

// The length of the prefix (magic, version, header length) and the header's length, from the
// first bytes of a file (at least 12 of them when the file has that many).
std::pair<std::size_t, std::size_t> header_extent(std::span<const std::uint8_t> b) {
  static const std::uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || !std::equal(std::begin(magic), std::end(magic), b.begin())) fail("not a .npy file (bad magic)");
  const int major = b[6];
  if (b[7] != 0) fail("unsupported format version " + std::to_string(major) + "." + std::to_string(b[7]));
  if (major == 1) return {10, static_cast<std::size_t>(b[8]) | (static_cast<std::size_t>(b[9]) << 8)};
  if (major == 2 || major == 3) {
    if (b.size() < 12) fail("truncated header");
    return {12, static_cast<std::size_t>(b[8]) | (static_cast<std::size_t>(b[9]) << 8) |
                    (static_cast<std::size_t>(b[10]) << 16) | (static_cast<std::size_t>(b[11]) << 24)};
  }
  fail("unsupported format version " + std::to_string(major));
}

// `b` holds at least the whole header; `total` is the file's size.
Layout layout_of(std::span<const std::uint8_t> b, std::uint64_t total) {
  const auto [off, hlen] = header_extent(b);
  if (b.size() < off + hlen || total < off + hlen) fail("truncated header");
  Layout l;
  l.h = HeaderParser(std::string_view(reinterpret_cast<const char*>(b.data() + off), hlen), b[6]).parse();
  l.d = l.h.fields.empty() ? parse_descr(l.h.descr) : struct_descr(l.h.fields);
  // What the header claims is checked against what the file holds before anything is allocated.
  l.need = l.d.dtype.size();
  for (const auto n : l.h.shape)
    if (n < 0 || __builtin_mul_overflow(l.need, static_cast<std::uint64_t>(n), &l.need))
      fail("header claims shape " + shape_str(l.h.shape) + ", which overflows");
  l.data_off = off + hlen;
  const std::uint64_t have = total - l.data_off;
  if (have != l.need)
    fail("the file holds " + std::to_string(have) + " bytes of data, but its header claims shape " +
         shape_str(l.h.shape) + " of " + l.h.descr + " (" + std::to_string(l.need) + " bytes)");
  return l;
}

// The checks and conversions done on data in its final place.
void finish_in_place(const Layout& l, std::uint8_t* p, std::size_t n) {
  if (l.d.dtype == DataType::bool_t)
    for (std::size_t i = 0; i < n; ++i)
      if (p[i] > 1) fail("bool data holds a byte other than 0 or 1");
  if (l.d.big) l.d.dtype.swap_byte_order({p, n});  // byte order, in place
}

}  // namespace

NDArray parse(std::span<const std::uint8_t> b) {
  const Layout l = layout_of(b, b.size());
  const auto data = b.subspan(l.data_off);
  NDArray a = NDArray::uninitialized(l.d.dtype, l.h.shape);
  if (l.h.fortran && l.h.shape.size() > 1)
    copy_view(NDView::f_order(static_cast<const void*>(data.data()), l.d.dtype, l.h.shape), a.view());
  else if (!data.empty())
    std::memcpy(a.raw_data(), data.data(), data.size());
  finish_in_place(l, reinterpret_cast<std::uint8_t*>(a.raw_data()), a.nbytes());
  return a;
}

struct Reader::Impl {
  std::filesystem::path path;
  int fd = -1;
  struct stat st{};
  Layout l;
  [[noreturn]] void changed() const {
    throw StoreError(".npy: '" + path.string() + "' changed while it was being read");
  }
  // Reads [at, at + n) of the file into p.
  void read_at(void* p, std::size_t n, std::uint64_t at) const {
    std::size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd, static_cast<char*>(p) + got, n - got, static_cast<off_t>(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw StoreError(".npy: cannot read '" + path.string() + "': " + std::strerror(errno));
      if (r == 0) changed();  // it shrank
      got += static_cast<std::size_t>(r);
    }
  }
};

Reader::Reader(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  m.path = path;
  // O_NONBLOCK: a FIFO must not hang the open; it is refused below.
  m.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (m.fd < 0) {
    const int e = errno;
    if (e == ENOENT) throw NotFoundError(".npy: no such file '" + path.string() + "'");
    throw StoreError(".npy: cannot open '" + path.string() + "': " + std::strerror(e));
  }
  if (::fstat(m.fd, &m.st) != 0) throw StoreError(".npy: cannot stat '" + path.string() + "': " + std::strerror(errno));
  if (!S_ISREG(m.st.st_mode)) throw ArgumentError(".npy: '" + path.string() + "' is not a regular file");
  const auto total = static_cast<std::uint64_t>(m.st.st_size);
  try {
    // The prefix, then the header (which NumPy keeps small; a hostile length is refused by the
    // file's size before anything that large is allocated).
    Bytes head(std::min<std::uint64_t>(total, 12));
    m.read_at(head.data(), head.size(), 0);
    const auto [off, hlen] = header_extent(head);
    if (total < off + hlen) fail("truncated header");
    const std::size_t have = head.size();
    head.resize(off + hlen);
    if (head.size() > have) m.read_at(head.data() + have, head.size() - have, have);
    m.l = layout_of(head, total);
  } catch (const ArgumentError& e) {
    throw ArgumentError(std::string(e.what()) + " ('" + path.string() + "')");
  }
}

Reader::~Reader() {
  if (impl_->fd >= 0) ::close(impl_->fd);
}

const DataType& Reader::dtype() const { return impl_->l.d.dtype; }
const Shape& Reader::shape() const { return impl_->l.h.shape; }
bool Reader::fortran_order() const { return impl_->l.h.fortran && impl_->l.h.shape.size() > 1; }
std::uint64_t Reader::data_bytes() const { return impl_->l.need; }

void Reader::check_unchanged() const {
  const auto& m = *impl_;
  struct stat now{};
  if (::fstat(m.fd, &now) != 0 || now.st_size != m.st.st_size || now.st_mtim.tv_sec != m.st.st_mtim.tv_sec ||
      now.st_mtim.tv_nsec != m.st.st_mtim.tv_nsec)
    m.changed();
}

void Reader::read(std::uint64_t at, std::size_t n, void* p, std::size_t concurrency) {
  const auto& m = *impl_;
  if (at > m.l.need || n > m.l.need - at) throw ArgumentError(".npy: read past the end of the data");
  auto* dst = static_cast<std::uint8_t*>(p);
  // Each thread reads one contiguous part into place (parts end on huge-page boundaries).
  constexpr std::size_t kGrain = std::size_t{2} << 20;
  const std::size_t parts = std::max<std::size_t>(1, std::min(concurrency, n / (4 * kGrain)));
  std::vector<std::size_t> cut(parts + 1, n);
  cut[0] = 0;
  for (std::size_t i = 1; i < parts; ++i) cut[i] = std::max(cut[i - 1], n / parts * i / kGrain * kGrain);
  ThreadPool::global().parallel_for(
      parts, parts, [&](std::size_t i) { m.read_at(dst + cut[i], cut[i + 1] - cut[i], m.l.data_off + at + cut[i]); });
  // A file that grew or was rewritten meanwhile may be half old, half new.
  check_unchanged();
  try {
    finish_in_place(m.l, dst, n);
  } catch (const ArgumentError& e) {
    throw ArgumentError(std::string(e.what()) + " ('" + m.path.string() + "')");
  }
}

Loaded load_view(const std::filesystem::path& path, std::size_t concurrency) {
  Reader r(path);
  Shape file_order = r.shape();
  if (r.fortran_order()) std::reverse(file_order.begin(), file_order.end());
  Loaded out;
  out.storage = NDArray::uninitialized(r.dtype(), file_order);
  r.read(0, out.storage.nbytes(), out.storage.raw_data(), concurrency);
  out.view = r.fortran_order() ? NDView::f_order(out.storage.raw_data(), r.dtype(), r.shape()) : out.storage.view();
  return out;
}

NDArray load(const std::filesystem::path& path) {
  Loaded l = load_view(path, default_concurrency());
  if (l.view.strides() == c_strides(l.view.shape(), l.view.dtype().size())) return std::move(l.storage);  // C order
  return NDArray::copy_of(l.view);
}

namespace {

// The bytes before the data: magic, version, header length and the padded header.
Bytes header_bytes(const DataType& dtype, const Shape& shape_) {
  std::string shape = "(";
  for (std::size_t i = 0; i < shape_.size(); ++i)
    shape += std::to_string(shape_[i]) + (shape_.size() == 1 ? "," : i + 1 < shape_.size() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': " + descr_of(dtype) + ", 'fortran_order': False, 'shape': " + shape + ", }";
  // Pad so the data starts on a 64-byte boundary; the header ends with '\n'.
  std::size_t pre = 10;
  std::size_t total = pre + header.size() + 1;
  int version = 1;
  if (((total + 63) / 64) * 64 - pre > 65535) {
    version = 2;
    pre = 12;
    total = pre + header.size() + 1;
  }
  const std::size_t padded = (total + 63) / 64 * 64;
  header.append(padded - total, ' ');
  header += '\n';
  Bytes out;
  out.insert(out.end(), {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(version), 0});
  const std::size_t hl = header.size();
  out.push_back(static_cast<std::uint8_t>(hl & 0xff));
  out.push_back(static_cast<std::uint8_t>((hl >> 8) & 0xff));
  if (version == 2) {
    out.push_back(static_cast<std::uint8_t>((hl >> 16) & 0xff));
    out.push_back(static_cast<std::uint8_t>((hl >> 24) & 0xff));
  }
  out.insert(out.end(), header.begin(), header.end());
  return out;
}

}  // namespace

Bytes serialize(const NDView& v) {
  Bytes out = header_bytes(v.dtype(), v.shape());
  const NDArray c = NDArray::copy_of(v);
  out.insert(out.end(), c.bytes().begin(), c.bytes().end());
  return out;
}

void remove_unfinished_temporaries() noexcept { remove_unfinished_file_temporaries(); }

struct Writer::Impl {
  std::optional<FileReplacement> file;
  std::uint64_t expected = 0, written = 0;
  bool done = false;
};

Writer::Writer(const std::filesystem::path& path, const DataType& dtype, const Shape& shape)
    : impl_(std::make_unique<Impl>()) {
  auto& m = *impl_;
  std::uint64_t n = dtype.size();
  for (const auto d : shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n))
      throw ArgumentError(".npy: shape " + shape_str(shape) + " overflows");
  m.expected = n;
  m.file.emplace(path, ".npy");
  const Bytes h = header_bytes(dtype, shape);
  m.file->write({h.data(), h.size()});
}

Writer::~Writer() = default;  // the FileReplacement removes an unfinished temporary

void Writer::write(std::span<const std::uint8_t> bytes) {
  auto& m = *impl_;
  if (m.done || m.written + bytes.size() > m.expected)
    throw ArgumentError(".npy: more data than the header's shape holds");
  m.file->write(bytes);
  m.written += bytes.size();
}

void Writer::commit() {
  auto& m = *impl_;
  if (m.written != m.expected)
    throw ArgumentError(".npy: " + std::to_string(m.written) + " of " + std::to_string(m.expected) +
                        " data bytes were written");
  m.file->commit();
  m.done = true;
}

void save(const std::filesystem::path& path, const NDView& view) {
  Writer w(path, view.dtype(), view.shape());
  if (view.strides() == c_strides(view.shape(), view.dtype().size())) {
    w.write({reinterpret_cast<const std::uint8_t*>(view.data()),
             static_cast<std::size_t>(view.size()) * view.dtype().size()});
  } else {
    const NDArray c = NDArray::copy_of(view);
    w.write({reinterpret_cast<const std::uint8_t*>(c.raw_data()), c.nbytes()});
  }
  w.commit();
}

}  // namespace zarrpp::npy
