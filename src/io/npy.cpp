#include "zarrpp/io/npy.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp::npy {
namespace {

[[noreturn]] void fail(const std::string& why) { throw ArgumentError(".npy: " + why); }

// A tiny parser for the header's Python dict literal: {'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }
struct Header {
  std::string descr;
  bool fortran = false;
  Shape shape;
};

void skip_ws(std::string_view s, std::size_t& i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
}

std::string parse_str(std::string_view s, std::size_t& i) {
  skip_ws(s, i);
  if (i >= s.size() || (s[i] != '\'' && s[i] != '"')) fail("malformed header: expected a string");
  const char q = s[i++];
  const std::size_t j = s.find(q, i);
  if (j == std::string_view::npos) fail("malformed header: unterminated string");
  std::string out(s.substr(i, j - i));
  i = j + 1;
  return out;
}

Header parse_header(std::string_view s) {
  Header h;
  bool has_descr = false, has_order = false, has_shape = false;
  std::size_t i = 0;
  skip_ws(s, i);
  if (i >= s.size() || s[i] != '{') fail("malformed header: expected '{'");
  ++i;
  for (;;) {
    skip_ws(s, i);
    if (i < s.size() && s[i] == '}') break;
    const std::string key = parse_str(s, i);
    skip_ws(s, i);
    if (i >= s.size() || s[i] != ':') fail("malformed header: expected ':'");
    ++i;
    skip_ws(s, i);
    if (key == "descr") {
      h.descr = parse_str(s, i);
      has_descr = true;
    } else if (key == "fortran_order") {
      if (s.substr(i, 4) == "True") {
        h.fortran = true;
        i += 4;
      } else if (s.substr(i, 5) == "False") {
        i += 5;
      } else {
        fail("malformed header: fortran_order must be True or False");
      }
      has_order = true;
    } else if (key == "shape") {
      if (i >= s.size() || s[i] != '(') fail("malformed header: shape must be a tuple");
      ++i;
      for (;;) {
        skip_ws(s, i);
        if (i < s.size() && s[i] == ')') {
          ++i;
          break;
        }
        std::int64_t v = 0;
        const std::size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
          if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s[i] - '0', &v)) fail("shape overflows");
          ++i;
        }
        if (i == start) fail("malformed header: bad shape entry");
        while (i < s.size() && s[i] == 'L') ++i;  // Python 2 longs
        h.shape.push_back(v);
        skip_ws(s, i);
        if (i < s.size() && s[i] == ',') ++i;
      }
      has_shape = true;
    } else {
      fail("unexpected header key '" + key + "'");
    }
    skip_ws(s, i);
    if (i < s.size() && s[i] == ',') ++i;
  }
  if (!has_descr || !has_order || !has_shape) fail("header lacks descr, fortran_order or shape");
  return h;
}

struct Descr {
  DataType dtype;
  bool big = false;
};

Descr parse_descr(const std::string& d) {
  if (d.size() < 3) fail("unsupported dtype '" + d + "'");
  const char order = d[0];
  if (order != '<' && order != '>' && order != '|' && order != '=') fail("unsupported dtype '" + d + "'");
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
    case 'b': r.dtype = pick({{1, Id::bool_}}); break;
    case 'i': r.dtype = pick({{1, Id::int8}, {2, Id::int16}, {4, Id::int32}, {8, Id::int64}}); break;
    case 'u': r.dtype = pick({{1, Id::uint8}, {2, Id::uint16}, {4, Id::uint32}, {8, Id::uint64}}); break;
    case 'f': r.dtype = pick({{2, Id::float16}, {4, Id::float32}, {8, Id::float64}}); break;
    case 'c': r.dtype = pick({{8, Id::complex64}, {16, Id::complex128}}); break;
    case 'V':
      if (n == 0) fail("unsupported dtype '" + d + "'");
      r.dtype = DataType::raw(n * 8);
      break;
    default: fail("unsupported dtype '" + d + "'");
  }
  return r;
}

}  // namespace

std::string descr_of(const DataType& t) {
  using Id = DataType::Id;
  switch (t.id()) {
    case Id::bool_: return "|b1";
    case Id::int8: return "|i1";
    case Id::uint8: return "|u1";
    case Id::raw: return "|V" + std::to_string(t.size());
    default: break;
  }
  const char kind = t.kind() == DataKind::Int ? 'i' : t.kind() == DataKind::UInt ? 'u' : t.kind() == DataKind::Float ? 'f' : 'c';
  return std::string("<") + kind + std::to_string(t.size());
}

NDArray parse(std::span<const std::uint8_t> b) {
  static const std::uint8_t magic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  if (b.size() < 10 || !std::equal(std::begin(magic), std::end(magic), b.begin())) fail("not a .npy file (bad magic)");
  const int major = b[6];
  std::size_t hlen, off;
  if (major == 1) {
    hlen = static_cast<std::size_t>(b[8]) | (static_cast<std::size_t>(b[9]) << 8);
    off = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) fail("truncated header");
    hlen = static_cast<std::size_t>(b[8]) | (static_cast<std::size_t>(b[9]) << 8) |
           (static_cast<std::size_t>(b[10]) << 16) | (static_cast<std::size_t>(b[11]) << 24);
    off = 12;
  } else {
    fail("unsupported format version " + std::to_string(major));
  }
  if (b.size() < off + hlen) fail("truncated header");
  const std::string header(reinterpret_cast<const char*>(b.data() + off), hlen);
  const Header h = parse_header(header);
  const Descr d = parse_descr(h.descr);
  // What the header claims is checked against what the file holds before anything is allocated.
  std::uint64_t need = d.dtype.size();
  for (const auto n : h.shape)
    if (n < 0 || __builtin_mul_overflow(need, static_cast<std::uint64_t>(n), &need))
      fail("header claims shape " + shape_str(h.shape) + ", which overflows");
  const std::size_t data_off = off + hlen;
  const std::uint64_t have = b.size() - data_off;
  if (have != need)
    fail("the file holds " + std::to_string(have) + " bytes of data, but its header claims shape " + shape_str(h.shape) + " of " +
         h.descr + " (" + std::to_string(need) + " bytes)");
  const auto data = b.subspan(data_off);
  if (d.dtype == DataType::bool_t)
    for (auto x : data)
      if (x > 1) fail("bool data holds a byte other than 0 or 1");
  NDArray a = NDArray::uninitialized(d.dtype, h.shape);
  if (h.fortran && h.shape.size() > 1) copy_view(NDView::f_order(static_cast<const void*>(data.data()), d.dtype, h.shape), a.view());
  else if (!data.empty()) std::memcpy(a.raw_data(), data.data(), data.size());
  if (d.big) {  // byte order, in place
    const std::size_t c = d.dtype.component_size();
    auto* p = reinterpret_cast<std::uint8_t*>(a.raw_data());
    if (c > 1)
      for (std::size_t i = 0; i + c <= a.nbytes(); i += c) std::reverse(p + i, p + i + c);
  }
  return a;
}

NDArray load(const std::filesystem::path& path) {
  // Read whole, by its size (O_NONBLOCK: a FIFO must not hang the open; it is refused below).
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int e = errno;
    if (e == ENOENT) throw NotFoundError(".npy: no such file '" + path.string() + "'");
    throw StoreError(".npy: cannot open '" + path.string() + "': " + std::strerror(e));
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw StoreError(".npy: cannot stat '" + path.string() + "': " + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) throw ArgumentError(".npy: '" + path.string() + "' is not a regular file");
  Bytes b(static_cast<std::size_t>(st.st_size));
  std::size_t got = 0;
  while (got < b.size()) {
    const ssize_t n = ::pread(fd, b.data() + got, b.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw StoreError(".npy: cannot read '" + path.string() + "': " + std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  b.resize(got);
  try {
    return parse(b);
  } catch (const ArgumentError& e) {
    throw ArgumentError(std::string(e.what()) + " ('" + path.string() + "')");
  }
}

Bytes serialize(const NDView& v) {
  std::string shape = "(";
  for (std::size_t i = 0; i < v.ndim(); ++i) shape += std::to_string(v.shape()[i]) + (v.ndim() == 1 ? "," : i + 1 < v.ndim() ? ", " : "");
  shape += ")";
  std::string header = "{'descr': '" + descr_of(v.dtype()) + "', 'fortran_order': False, 'shape': " + shape + ", }";
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
  NDArray c = NDArray::copy_of(v);
  Bytes out;
  out.reserve(padded + c.nbytes());
  out.insert(out.end(), {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<std::uint8_t>(version), 0});
  const std::size_t hl = header.size();
  out.push_back(static_cast<std::uint8_t>(hl & 0xff));
  out.push_back(static_cast<std::uint8_t>((hl >> 8) & 0xff));
  if (version == 2) {
    out.push_back(static_cast<std::uint8_t>((hl >> 16) & 0xff));
    out.push_back(static_cast<std::uint8_t>((hl >> 24) & 0xff));
  }
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), c.bytes().begin(), c.bytes().end());
  return out;
}

void save(const std::filesystem::path& path, const NDView& view) {
  const Bytes b = serialize(view);
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) throw StoreError(".npy: cannot create '" + path.string() + "'");
  f.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!f) throw StoreError(".npy: cannot write '" + path.string() + "'");
}

}  // namespace zarrpp::npy
