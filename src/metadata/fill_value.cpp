// Fill value encodings of the Zarr v3 core spec, bit-exact in both directions.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include "zarrpp/core/error.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace {

[[noreturn]] void bad(const Json& j, const DataType& t, const std::string& why) {
  throw MetadataError("fill_value: " + json_text(j) + " is not valid for data type " + t.name() + ": " + why);
}

template <class T>
void put(Bytes& b, T v) {
  b.resize(sizeof(T));
  std::memcpy(b.data(), &v, sizeof(T));
}

std::int64_t json_int(const Json& j, const DataType& t, std::int64_t lo, std::int64_t hi) {
  if (!j.is_number_integer()) bad(j, t, "expected a JSON integer");
  if (j.is_number_unsigned()) {
    const auto u = j.get<std::uint64_t>();
    if (u > static_cast<std::uint64_t>(hi)) bad(j, t, "out of range");
    return static_cast<std::int64_t>(u);
  }
  const auto v = j.get<std::int64_t>();
  if (v < lo || v > hi) bad(j, t, "out of range");
  return v;
}

std::uint64_t json_uint(const Json& j, const DataType& t, std::uint64_t hi) {
  if (!j.is_number_integer()) bad(j, t, "expected a JSON integer");
  if (!j.is_number_unsigned() && j.get<std::int64_t>() < 0) bad(j, t, "out of range (negative)");
  const auto u = j.is_number_unsigned() ? j.get<std::uint64_t>() : static_cast<std::uint64_t>(j.get<std::int64_t>());
  if (u > hi) bad(j, t, "out of range");
  return u;
}

// The bits of one float component (size 2, 4 or 8) from its JSON encoding.
std::uint64_t float_bits(const Json& j, const DataType& t, std::size_t size) {
  double v;
  if (j.is_string()) {
    const auto s = j.get<std::string>();
    if (s == "NaN") {
      return size == 2 ? 0x7e00u : size == 4 ? 0x7fc00000u : 0x7ff8000000000000ull;
    } else if (s == "Infinity") {
      v = std::numeric_limits<double>::infinity();
    } else if (s == "-Infinity") {
      v = -std::numeric_limits<double>::infinity();
    } else if (s.size() > 2 && s[0] == '0' && s[1] == 'x') {
      if (s.size() - 2 > size * 2) bad(j, t, "hex fill value has more digits than the type's bits");
      std::uint64_t bits = 0;
      for (std::size_t i = 2; i < s.size(); ++i) {
        const char c = s[i];
        int d;
        if (c >= '0' && c <= '9')
          d = c - '0';
        else if (c >= 'a' && c <= 'f')
          d = c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
          d = c - 'A' + 10;
        else
          bad(j, t, "hex fill value has a non-hex digit");
        bits = (bits << 4) | static_cast<std::uint64_t>(d);
      }
      return bits;
    } else {
      bad(j, t, "expected a number, \"NaN\", \"Infinity\", \"-Infinity\" or \"0x...\"");
    }
  } else if (j.is_number()) {
    v = j.get<double>();  // integers too (large ones rounded, as any float fill value would be)
  } else {
    bad(j, t, "expected a number or a string");
  }
  if (size == 8) return std::bit_cast<std::uint64_t>(v);
  if (size == 4) {
    const float f = static_cast<float>(v);
    if (std::isinf(f) && !std::isinf(v)) bad(j, t, "out of range for a 32-bit float");
    return std::bit_cast<std::uint32_t>(f);
  }
  const float16 h(static_cast<float>(v));
  if (std::isinf(static_cast<float>(h)) && !std::isinf(v)) bad(j, t, "out of range for a 16-bit float");
  return h.bits;
}

Json float_json(std::uint64_t bits, std::size_t size) {
  double v;
  std::uint64_t canonical_nan;
  if (size == 8) {
    v = std::bit_cast<double>(bits);
    canonical_nan = 0x7ff8000000000000ull;
  } else if (size == 4) {
    v = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    canonical_nan = 0x7fc00000u;
  } else {
    v = static_cast<float>(float16::from_bits(static_cast<std::uint16_t>(bits)));
    canonical_nan = 0x7e00u;
  }
  if (std::isnan(v)) {
    if (bits == canonical_nan) return "NaN";
    static const char* hex = "0123456789abcdef";
    std::string s = "0x";
    for (std::size_t i = size * 2; i-- > 0;) s += hex[(bits >> (i * 4)) & 0xf];
    return s;
  }
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

void put_float(std::uint8_t* out, std::uint64_t bits, std::size_t size) {
  if (size == 8)
    std::memcpy(out, &bits, 8);
  else if (size == 4) {
    auto b = static_cast<std::uint32_t>(bits);
    std::memcpy(out, &b, 4);
  } else {
    auto b = static_cast<std::uint16_t>(bits);
    std::memcpy(out, &b, 2);
  }
}

std::uint64_t get_float(const std::uint8_t* in, std::size_t size) {
  if (size == 8) {
    std::uint64_t b;
    std::memcpy(&b, in, 8);
    return b;
  }
  if (size == 4) {
    std::uint32_t b;
    std::memcpy(&b, in, 4);
    return b;
  }
  std::uint16_t b;
  std::memcpy(&b, in, 2);
  return b;
}

// U<n>: a JSON string of at most n code points -> NUL-padded UTF-32 (native order).
Bytes utf32_fill(const Json& j, const DataType& t) {
  if (!j.is_string()) bad(j, t, "expected a JSON string");
  const auto& s = j.get_ref<const std::string&>();
  Bytes b(t.size(), 0);
  std::size_t n = 0;
  for (std::size_t i = 0; i < s.size();) {
    std::uint32_t cp = static_cast<unsigned char>(s[i]);
    const std::size_t len = cp < 0x80 ? 1 : decode_utf8(s, i, cp, false);
    if (len == 0) bad(j, t, "not valid UTF-8");
    if ((n + 1) * 4 > t.size()) bad(j, t, "longer than " + std::to_string(t.size() / 4) + " characters");
    std::memcpy(b.data() + n * 4, &cp, 4);
    ++n;
    i += len;
  }
  return b;
}

Json utf32_json(std::span<const std::uint8_t> v, const DataType& t) {
  std::size_t end = v.size() / 4;
  const auto at = [&](std::size_t k) {
    std::uint32_t cp;
    std::memcpy(&cp, v.data() + k * 4, 4);
    return cp;
  };
  while (end > 0 && at(end - 1) == 0) --end;  // NumPy's trailing NULs are padding
  std::string s;
  for (std::size_t k = 0; k < end; ++k) {
    const std::uint32_t cp = at(k);
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
      throw MetadataError("fill_value: code point " + std::to_string(cp) + " of a " + t.name() +
                          " fill value is not a Unicode scalar value");
    append_utf8(s, cp);
  }
  return s;
}

// S<n>: base64 of at most n bytes -> NUL-padded bytes.
Bytes fixed_bytes_fill(const Json& j, const DataType& t) {
  const auto d = j.is_string() ? base64_decode(j.get<std::string>()) : std::nullopt;
  if (!d) bad(j, t, "expected a base64 string");
  if (d->size() > t.size()) bad(j, t, "longer than " + std::to_string(t.size()) + " bytes");
  Bytes b(t.size(), 0);
  std::copy(d->begin(), d->end(), b.begin());
  return b;
}

Json fixed_bytes_json(std::span<const std::uint8_t> v) {
  std::size_t end = v.size();
  while (end > 0 && v[end - 1] == 0) --end;  // as NumPy reads an S<n> element
  return base64_encode(v.first(end));
}

// datetime64/timedelta64: an integer count of the unit, or "NaT" (INT64_MIN).
Bytes time_fill(const Json& j, const DataType& t) {
  Bytes b;
  if (j.is_string() && j.get_ref<const std::string&>() == "NaT")
    put(b, std::numeric_limits<std::int64_t>::min());
  else if (j.is_number_integer())
    put(b, json_int(j, t, INT64_MIN, INT64_MAX));
  else
    bad(j, t, "expected an integer or \"NaT\"");
  return b;
}

// The values of a subarray field of `shape` (nested lists, C order) into `out`; one value for a
// scalar field.
void put_field_values(const Json& j, const StructField& f, std::size_t dim, std::uint8_t*& out) {
  if (dim == f.shape.size()) {
    Bytes v;
    try {
      v = parse_fill_value(j, f.type);
    } catch (const MetadataError& e) {
      throw MetadataError("field '" + f.name + "': " + e.what());
    }
    std::memcpy(out, v.data(), v.size());
    out += v.size();
    return;
  }
  if (!j.is_array() || j.size() != f.shape[dim])
    throw MetadataError("fill_value: field '" + f.name + "': expected a list of " + std::to_string(f.shape[dim]) +
                        " values (got " + json_text(j).substr(0, 200) + ")");
  for (const auto& e : j) put_field_values(e, f, dim + 1, out);
}

// A structured element: base64 of its bytes, or its fields' values by name (an object, as
// zarr-python 3 states a struct's fill value) or in order (a list, as NumPy writes a record).
Bytes struct_fill(const Json& j, const DataType& t) {
  if (j.is_string()) {
    auto d = base64_decode(j.get<std::string>());
    if (!d || d->size() != t.size())
      bad(j, t, "expected base64 of one element (" + std::to_string(t.size()) + " bytes)");
    return *d;
  }
  const auto& fields = t.fields();
  if (!j.is_object() && !j.is_array())
    bad(j, t, "expected the fields' values (an object by field name, or a list in order) or base64 of one element");
  if (j.is_array() && j.size() != fields.size())
    bad(j, t, "expected the values of its " + std::to_string(fields.size()) + " fields in order");
  if (j.is_object()) {
    for (const auto& f : fields)
      if (!j.contains(f.name)) bad(j, t, "no value for field '" + f.name + "'");
    if (j.size() != fields.size()) bad(j, t, "a value for a field it does not have");
  }
  Bytes b(t.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto& f = fields[i];
    std::uint8_t* at = b.data() + f.offset;
    put_field_values(j.is_object() ? j[f.name] : j[i], f, 0, at);
  }
  return b;
}

// A structured element's fields by name; a subarray field as nested lists.
Json struct_json(std::span<const std::uint8_t> v, const DataType& t) {
  Json out = Json::object();
  for (const auto& f : t.fields()) {
    const std::uint8_t* at = v.data() + f.offset;
    std::function<Json(std::size_t)> rec = [&](std::size_t dim) -> Json {
      if (dim == f.shape.size()) {
        const Json e = fill_value_to_json({at, f.type.size()}, f.type);
        at += f.type.size();
        return e;
      }
      Json a = Json::array();
      for (std::size_t k = 0; k < f.shape[dim]; ++k) a.push_back(rec(dim + 1));
      return a;
    };
    out[f.name] = rec(0);
  }
  return out;
}

}  // namespace

Bytes default_fill_value(const DataType& dtype) { return dtype.is_vlen() ? Bytes() : Bytes(dtype.size(), 0); }

namespace {
Json fill_value_from_bytes(const Json& j, const DataType& t) {
  const auto& bin = j.get_binary();
  if (t.id() == DataType::Id::raw) return Json(std::vector<std::uint8_t>(bin.begin(), bin.end()));
  if (t == DataType::bytes_t || t.id() == DataType::Id::fixed_bytes || t.kind() == DataKind::Struct ||
      t.id() == DataType::Id::raw_bytes)
    return base64_encode(std::span<const std::uint8_t>(bin.data(), bin.size()));
  bad(j, t, "bytes are the fill value of raw (r<bits>), bytes, S<n> and structured data types only");
}
}  // namespace

Json canonical_fill_value(const Json& j, const DataType& t) {
  if (j.is_binary()) return fill_value_from_bytes(j, t);
  const auto kind = t.kind();
  const bool numeric = kind == DataKind::Int || kind == DataKind::UInt || kind == DataKind::Float;
  if (j.is_boolean() && (numeric || kind == DataKind::Complex))  // as NumPy: True is 1
    return canonical_fill_value(Json(j.get<bool>() ? 1 : 0), t);
  if ((kind == DataKind::Int || kind == DataKind::UInt) && j.is_number_float()) {
    const double d = j.get<double>();
    if (std::trunc(d) != d) bad(j, t, "expected an integer");
    if (kind == DataKind::UInt && d >= 0 && d < 0x1p64) return Json(static_cast<std::uint64_t>(d));
    if (d >= -0x1p63 && d < 0x1p63) return Json(static_cast<std::int64_t>(d));
    bad(j, t, "out of range");
  }
  if (kind == DataKind::Bool && j.is_number_integer() && (j == 0 || j == 1)) return j == 1;
  if (kind == DataKind::Complex && (j.is_number() || j.is_string())) return Json::array({j, 0.0});
  return j;
}

Bytes parse_fill_value(const Json& j, const DataType& t) {
  using Id = DataType::Id;
  Bytes b;
  switch (t.id()) {
    case Id::bool_:
      if (!j.is_boolean()) bad(j, t, "expected true or false");
      b.assign(1, j.get<bool>() ? 1 : 0);
      return b;
    case Id::int8:
      put(b, static_cast<std::int8_t>(json_int(j, t, INT8_MIN, INT8_MAX)));
      return b;
    case Id::int16:
      put(b, static_cast<std::int16_t>(json_int(j, t, INT16_MIN, INT16_MAX)));
      return b;
    case Id::int32:
      put(b, static_cast<std::int32_t>(json_int(j, t, INT32_MIN, INT32_MAX)));
      return b;
    case Id::int64:
      put(b, json_int(j, t, INT64_MIN, INT64_MAX));
      return b;
    case Id::uint8:
      put(b, static_cast<std::uint8_t>(json_uint(j, t, UINT8_MAX)));
      return b;
    case Id::uint16:
      put(b, static_cast<std::uint16_t>(json_uint(j, t, UINT16_MAX)));
      return b;
    case Id::uint32:
      put(b, static_cast<std::uint32_t>(json_uint(j, t, UINT32_MAX)));
      return b;
    case Id::uint64:
      put(b, json_uint(j, t, UINT64_MAX));
      return b;
    case Id::float16:
    case Id::float32:
    case Id::float64:
      b.resize(t.size());
      put_float(b.data(), float_bits(j, t, t.size()), t.size());
      return b;
    case Id::complex64:
    case Id::complex128: {
      if (!j.is_array() || j.size() != 2) bad(j, t, "expected a [real, imaginary] pair");
      const std::size_t c = t.size() / 2;
      b.resize(t.size());
      put_float(b.data(), float_bits(j[0], t, c), c);
      put_float(b.data() + c, float_bits(j[1], t, c), c);
      return b;
    }
    case Id::raw: {
      if (!j.is_array() || j.size() != t.size())
        bad(j, t, "expected an array of " + std::to_string(t.size()) + " byte values");
      for (const auto& e : j) b.push_back(static_cast<std::uint8_t>(json_uint(e, t, 255)));
      return b;
    }
    case Id::string:
      if (!j.is_string()) bad(j, t, "expected a JSON string");
      b.assign(j.get_ref<const std::string&>().begin(), j.get_ref<const std::string&>().end());
      return b;
    case Id::bytes: {
      const auto d = j.is_string() ? base64_decode(j.get<std::string>()) : std::nullopt;
      if (!d) bad(j, t, "expected a base64 string");
      return *d;
    }
    case Id::fixed_utf32:
      return utf32_fill(j, t);
    case Id::fixed_bytes:
      return fixed_bytes_fill(j, t);
    case Id::datetime64:
    case Id::timedelta64:
      return time_fill(j, t);
    case Id::structured:
      return struct_fill(j, t);
    case Id::raw_bytes: {  // base64 of the n bytes, as zarr-python 3 states it
      auto d = j.is_string() ? base64_decode(j.get<std::string>()) : std::nullopt;
      if (!d || d->size() != t.size()) bad(j, t, "expected base64 of " + std::to_string(t.size()) + " bytes");
      return *d;
    }
  }
  bad(j, t, "unsupported data type");
}

Json fill_value_to_json(std::span<const std::uint8_t> v, const DataType& t) {
  using Id = DataType::Id;
  if (t == DataType::string_t) return std::string(v.begin(), v.end());
  if (t == DataType::bytes_t) return base64_encode(v);
  if (v.size() != t.size())
    throw MetadataError("fill_value: " + std::to_string(v.size()) + " bytes given for data type " + t.name());
  auto get = [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, v.data(), sizeof x);
    return x;
  };
  switch (t.id()) {
    case Id::bool_:
      return v[0] != 0;
    case Id::int8:
      return get(std::int8_t{});
    case Id::int16:
      return get(std::int16_t{});
    case Id::int32:
      return get(std::int32_t{});
    case Id::int64:
      return get(std::int64_t{});
    case Id::uint8:
      return get(std::uint8_t{});
    case Id::uint16:
      return get(std::uint16_t{});
    case Id::uint32:
      return get(std::uint32_t{});
    case Id::uint64:
      return get(std::uint64_t{});
    case Id::float16:
    case Id::float32:
    case Id::float64:
      return float_json(get_float(v.data(), t.size()), t.size());
    case Id::complex64:
    case Id::complex128: {
      const std::size_t c = t.size() / 2;
      return Json::array({float_json(get_float(v.data(), c), c), float_json(get_float(v.data() + c, c), c)});
    }
    case Id::raw: {
      Json a = Json::array();
      for (auto x : v) a.push_back(x);
      return a;
    }
    case Id::fixed_utf32:
      return utf32_json(v, t);
    case Id::fixed_bytes:
      return fixed_bytes_json(v);
    case Id::datetime64:
    case Id::timedelta64:
      return get(std::int64_t{});  // NaT as -2^63, as zarr-python 3 writes it
    case Id::structured:
      return struct_json(v, t);
    case Id::raw_bytes:
      return base64_encode(v);
    case Id::string:
    case Id::bytes:
      break;  // above
  }
  return nullptr;
}

}  // namespace zarrpp
