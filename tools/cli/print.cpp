// ---- printing values, NumPy style --------------------------------------------------------------
#include "print.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace zarrpp::cli {

namespace {

std::string fmt_float(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, p);
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

// float32 with its own shortest digits (not those of the double it widens to).
std::string fmt_float32(float f) {
  if (std::isnan(f) || std::isinf(f)) return fmt_float(f);
  char buf[64];
  auto [e, ec] = std::to_chars(buf, buf + sizeof buf, f);
  std::string s(buf, e);
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

template <class T>
std::string fmt_complex(const std::complex<T>& c) {
  return fmt_float(c.real()) + (c.imag() < 0 || std::signbit(c.imag()) ? "" : "+") + fmt_float(c.imag()) + "j";
}

// A raw (r<N>) element as 0x and its bytes in hex.
std::string fmt_raw(const std::byte* p, std::size_t n) {
  static const char* hex = "0123456789abcdef";
  std::string s = "0x";
  for (std::size_t i = 0; i < n; ++i) {
    const auto b = static_cast<std::uint8_t>(p[i]);
    s += hex[b >> 4];
    s += hex[b & 15];
  }
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
    case Id::float32:
      return fmt_float32(get(float{}));
    case Id::float64:
      return fmt_float(get(double{}));
    case Id::complex64:
      return fmt_complex(get(std::complex<float>{}));
    case Id::complex128:
      return fmt_complex(get(std::complex<double>{}));
    case Id::raw:
      return fmt_raw(p, t.size());
    case Id::string:
    case Id::bytes:
      return "?";  // printed by print_vlen
  }
  return "?";
}

}  // namespace

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

}  // namespace zarrpp::cli
