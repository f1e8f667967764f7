// ---- printing values, NumPy style --------------------------------------------------------------
#include "print.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
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

// Python's repr of text: 'x' with backslash escapes for quotes and control characters.
std::string quoted(const std::vector<std::uint32_t>& cps, bool bytes) {
  static const char* hex = "0123456789abcdef";
  const bool has_single = std::find(cps.begin(), cps.end(), '\'') != cps.end();
  const bool has_double = std::find(cps.begin(), cps.end(), '"') != cps.end();
  const char q = has_single && !has_double ? '"' : '\'';
  std::string r = bytes ? std::string("b") + q : std::string(1, q);
  for (const std::uint32_t c : cps) {
    if (c == '\\' || c == static_cast<std::uint32_t>(q)) {
      r += '\\';
      r += static_cast<char>(c);
    } else if (c == '\t' || c == '\n' || c == '\r') {
      r += c == '\t' ? "\\t" : c == '\n' ? "\\n" : "\\r";
    } else if (c < 0x20 || c == 0x7f || (bytes ? c >= 0x80 : (c >= 0x80 && c <= 0xa0) || c == 0xad)) {
      r += std::string("\\x") + hex[c >> 4] + hex[c & 15];
    } else if ((c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF) {
      std::string h;
      for (int k = c > 0xFFFF ? 7 : 3; k >= 0; --k) h += hex[(c >> (4 * k)) & 15];
      r += (c > 0xFFFF ? "\\U" : "\\u") + h;
    } else if (c == 0x2028 || c == 0x2029) {
      r += std::string("\\u") + hex[(c >> 12) & 15] + hex[(c >> 8) & 15] + hex[(c >> 4) & 15] + hex[c & 15];
    } else {
      append_utf8(r, c);
    }
  }
  return r + q;
}

// Python's repr of text or bytes (NumPy prints U and S elements so).
std::string quoted(const std::string& raw, bool bytes) {
  std::vector<std::uint32_t> cps;
  for (std::size_t i = 0; i < raw.size();) {
    std::uint32_t cp = static_cast<unsigned char>(raw[i]);
    const std::size_t len = bytes || cp < 0x80 ? 1 : decode_utf8(raw, i, cp, true);
    if (len == 0) cp = static_cast<unsigned char>(raw[i]);  // not UTF-8: shown byte by byte
    cps.push_back(cp);
    i += len == 0 ? 1 : len;
  }
  return quoted(cps, bytes);
}

// A U<n> element as NumPy prints it: its text without the trailing NULs.
std::string fmt_utf32(const std::byte* p, std::size_t n) {
  std::vector<std::uint32_t> cps(n / 4);
  std::memcpy(cps.data(), p, n);
  while (!cps.empty() && cps.back() == 0) cps.pop_back();
  return quoted(cps, false);
}

std::string fmt_fixed_bytes(const std::byte* p, std::size_t n) {
  std::string s(reinterpret_cast<const char*>(p), n);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return quoted(s, true);
}

std::string pad2(std::int64_t v) { return (v < 10 ? "0" : "") + std::to_string(v); }
std::string year_str(std::int64_t y) {
  std::string s = std::to_string(y < 0 ? -y : y);
  if (s.size() < 4) s.insert(0, 4 - s.size(), '0');
  return (y < 0 ? "-" : "") + s;
}

// 1970-01-01 + days as YYYY-MM-DD (H. Hinnant's civil_from_days).
std::string civil_date(std::int64_t days) {
  days += 719468;
  const std::int64_t era = (days >= 0 ? days : days - 146096) / 146097;
  const std::int64_t doe = days - era * 146097;
  const std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const std::int64_t mp = (5 * doy + 2) / 153;
  const std::int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  const std::int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return year_str(y) + "-" + pad2(m) + "-" + pad2(d);
}

// A datetime64 element as NumPy prints it ('2020-01-02T03:04:05.000'), NaT as NaT.
std::string fmt_datetime(std::int64_t v, const DataType& t) {
  if (v == INT64_MIN) return "'NaT'";
  __extension__ typedef __int128 wide;
  const wide n = static_cast<wide>(v) * t.time_scale();
  const std::string_view u = t.time_unit();
  auto floor_div = [](wide a, wide b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0); };
  if (u == "Y") return "'" + year_str(static_cast<std::int64_t>(1970 + n)) + "'";
  if (u == "M") {
    const wide y = floor_div(n, 12);
    return "'" + year_str(static_cast<std::int64_t>(1970 + y)) + "-" + pad2(static_cast<std::int64_t>(n - y * 12 + 1)) +
           "'";
  }
  if (u == "W" || u == "D") return "'" + civil_date(static_cast<std::int64_t>(u == "W" ? n * 7 : n)) + "'";
  // Sub-day units: count per day, digits of the fraction of a second.
  static const struct {
    std::string_view unit;
    wide per_second;
    int digits;
  } sub[] = {{"s", 1, 0},
             {"ms", 1000, 3},
             {"us", 1000000, 6},
             {"ns", 1000000000, 9},
             {"ps", 1000000000000, 12},
             {"fs", 1000000000000000, 15},
             {"as", 1000000000000000000, 18}};
  wide per_second = 1, seconds;
  int digits = 0;
  if (u == "h" || u == "m") {
    seconds = n * (u == "h" ? 3600 : 60);
  } else {
    for (const auto& e : sub)
      if (e.unit == u) {
        per_second = e.per_second;
        digits = e.digits;
      }
    seconds = floor_div(n, per_second);
  }
  const wide frac = n - seconds * per_second;
  const wide day = floor_div(seconds, 86400), sod = seconds - day * 86400;
  std::string s = "'" + civil_date(static_cast<std::int64_t>(day));
  s += "T" + pad2(static_cast<std::int64_t>(sod / 3600));
  if (u != "h") s += ":" + pad2(static_cast<std::int64_t>(sod / 60 % 60));
  if (u != "h" && u != "m") s += ":" + pad2(static_cast<std::int64_t>(sod % 60));
  if (digits > 0) {
    std::string f(static_cast<std::size_t>(digits), '0');
    wide x = frac;
    for (int i = digits - 1; i >= 0; --i, x /= 10) f[static_cast<std::size_t>(i)] = static_cast<char>('0' + x % 10);
    s += "." + f;
  }
  return s + "'";
}

// Characters, not bytes: UTF-8 text lines up as NumPy lines it up.
std::size_t shown_width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string element_str(const std::byte* p, const DataType& t);

// A structured element as NumPy prints one: (1, [2.0, 3.0], 'x'), a subarray field as nested lists.
std::string fmt_struct(const std::byte* p, const DataType& t) {
  std::string s = "(";
  for (const auto& f : t.fields()) {
    if (s.size() > 1) s += ", ";
    const std::byte* at = p + f.offset;
    std::function<std::string(std::size_t)> rec = [&](std::size_t d) -> std::string {
      if (d == f.shape.size()) {
        std::string e = element_str(at, f.type);
        at += f.type.size();
        return e;
      }
      std::string a = "[";
      for (std::size_t i = 0; i < f.shape[d]; ++i) a += (i ? ", " : "") + rec(d + 1);
      return a + "]";
    };
    s += rec(0);
  }
  return s + (t.fields().size() == 1 ? ",)" : ")");
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
    case Id::raw_bytes:
      return fmt_raw(p, t.size());
    case Id::fixed_utf32:
      return fmt_utf32(p, t.size());
    case Id::fixed_bytes:
      return fmt_fixed_bytes(p, t.size());
    case Id::datetime64:
      return fmt_datetime(get(std::int64_t{}), t);
    case Id::timedelta64: {
      const auto v = get(std::int64_t{});
      return v == INT64_MIN ? "'NaT'" : std::to_string(v);
    }
    case Id::structured:
      return fmt_struct(p, t);
    case Id::string:
    case Id::bytes:
      return "?";  // printed by print_vlen
  }
  return "?";
}

}  // namespace

// Variable-length elements: nested JSON lists of strings (bytes as Python's b'...' repr).
void print_vlen(std::ostream& os, const VlenValues& v, bool bytes, const Json* missing) {
  auto cell = [&](std::size_t i) -> Json {
    if (!v.missing.empty() && v.missing[i] && missing) return *missing;
    return bytes ? Json(quoted(v.values[i], true)) : Json(v.values[i]);
  };
  std::size_t at = 0;
  std::function<Json(std::size_t)> rec = [&](std::size_t d) -> Json {
    if (d == v.shape.size()) return cell(at++);
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
    if (a.dtype().kind() != DataKind::Text)  // NumPy lines up numbers and dates, not text
      width = std::max(width, shown_width(cells[static_cast<std::size_t>(i)]));
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
        os << std::string(width - std::min(width, shown_width(c)), ' ') << c;
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
