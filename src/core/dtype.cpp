#include "zarrpp/core/dtype.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>

#include "zarrpp/core/error.hpp"

namespace zarrpp {

const DataType DataType::bool_t{Id::bool_}, DataType::int8{Id::int8}, DataType::int16{Id::int16},
    DataType::int32{Id::int32}, DataType::int64{Id::int64}, DataType::uint8{Id::uint8}, DataType::uint16{Id::uint16},
    DataType::uint32{Id::uint32}, DataType::uint64{Id::uint64};
const DataType DataType::float16_t{Id::float16}, DataType::float32{Id::float32}, DataType::float64{Id::float64},
    DataType::complex64{Id::complex64}, DataType::complex128{Id::complex128};
const DataType DataType::string_t{Id::string}, DataType::bytes_t{Id::bytes};

// binary16 <-> binary32, round to nearest even; NaN payloads keep their top bits.
float16::float16(float f) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t exp = (x >> 23) & 0xffu;
  std::uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) {  // inf or NaN
    bits = static_cast<std::uint16_t>(sign | 0x7c00u | (mant ? (0x200u | (mant >> 13)) : 0u));
    return;
  }
  const int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 0x1f) {  // overflow -> inf
    bits = static_cast<std::uint16_t>(sign | 0x7c00u);
    return;
  }
  if (e <= 0) {  // subnormal or zero
    if (e < -10) {
      bits = static_cast<std::uint16_t>(sign);
      return;
    }
    mant |= 0x800000u;
    const int shift = 14 - e;
    std::uint32_t half = mant >> shift;
    const std::uint32_t rem = mant & ((1u << shift) - 1u);
    const std::uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1u))) ++half;
    bits = static_cast<std::uint16_t>(sign | half);
    return;
  }
  std::uint32_t half = (static_cast<std::uint32_t>(e) << 10) | (mant >> 13);
  const std::uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into inf: correct
  bits = static_cast<std::uint16_t>(sign | half);
}

float16::operator float() const {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1fu;
  std::uint32_t mant = bits & 0x3ffu;
  std::uint32_t out;
  if (exp == 0x1f) {
    out = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      out = sign;
    } else {  // normalise the subnormal
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      out = sign | (static_cast<std::uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else {
    out = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return std::bit_cast<float>(out);
}

DataType DataType::raw(std::size_t bits) {
  if (bits == 0 || bits % 8 != 0)
    throw MetadataError("data_type: raw bits type r" + std::to_string(bits) +
                        " must have a positive multiple of 8 bits");
  return DataType(Id::raw, bits / 8);
}

namespace {
// A positive width of at most 2^31 bytes, else MetadataError.
std::size_t checked_width(std::size_t n, std::size_t unit, const char* what) {
  if (n == 0 || n > (std::size_t{1} << 31) / unit)
    throw MetadataError(std::string("data_type: ") + what + " must have a width of 1 to " +
                        std::to_string((std::size_t{1} << 31) / unit) + " (got " + std::to_string(n) + ")");
  return n * unit;
}

// "<digits>" of a whole text, or nullopt.
std::optional<std::size_t> whole_number(std::string_view t) {
  std::size_t v = 0;
  if (t.empty() || t[0] == '0') return std::nullopt;
  auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc() || p != t.data() + t.size()) return std::nullopt;
  return v;
}

// NumPy's display forms of the configured types: U12, S5, V3, datetime64[10s], timedelta64[ns], and
// with the short kind letters M8[ns], m8[ns] when `short_time` is set.
std::optional<DataType> parse_numpy_form(std::string_view n, bool short_time) {
  if (n.size() >= 2 && (n[0] == 'U' || n[0] == 'S' || n[0] == 'V')) {
    if (const auto w = whole_number(n.substr(1)))
      return n[0] == 'U'   ? DataType::fixed_utf32(*w)
             : n[0] == 'S' ? DataType::fixed_bytes(*w)
                           : DataType::raw_bytes(*w);
    return std::nullopt;
  }
  if (n == "datetime64" || n == "timedelta64" || (short_time && (n == "M8" || n == "m8")))
    throw MetadataError("data_type: " + std::string(n) +
                        " without a unit (NumPy's generic one) holds no times: give a unit, such as " + std::string(n) +
                        "[ns]");
  for (const bool delta : {false, true}) {
    const std::string_view longs = delta ? "timedelta64[" : "datetime64[", shorts = delta ? "m8[" : "M8[";
    std::string_view rest;
    if (n.starts_with(longs))
      rest = n.substr(longs.size());
    else if (short_time && n.starts_with(shorts))
      rest = n.substr(shorts.size());
    else
      continue;
    if (rest.empty() || rest.back() != ']') return std::nullopt;
    rest.remove_suffix(1);
    const auto digits = rest.find_first_not_of("0123456789");
    if (digits == std::string_view::npos) return std::nullopt;
    std::uint32_t scale = 1;
    if (digits > 0) {
      const auto sc = whole_number(rest.substr(0, digits));
      if (!sc || *sc > 2147483647u) return std::nullopt;
      scale = static_cast<std::uint32_t>(*sc);
    }
    const auto unit = rest.substr(digits);
    return delta ? DataType::timedelta64(unit, scale) : DataType::datetime64(unit, scale);
  }
  return std::nullopt;
}
}  // namespace

DataType DataType::fixed_utf32(std::size_t chars) {
  return DataType(Id::fixed_utf32, checked_width(chars, 4, "fixed-length unicode strings (U)"));
}

DataType DataType::raw_bytes(std::size_t bytes) {
  return DataType(Id::raw_bytes, checked_width(bytes, 1, "raw bytes (V)"));
}

DataType DataType::fixed_bytes(std::size_t bytes) {
  return DataType(Id::fixed_bytes, checked_width(bytes, 1, "fixed-length byte strings (S)"));
}

DataType DataType::time(Id id, std::string_view unit, std::uint32_t scale) {
  const char* what = id == Id::datetime64 ? "datetime64" : "timedelta64";
  if (unit == "\xce\xbcs") unit = "us";  // NumPy reads μs (UTF-8) as us
  DataType t(id, 8);
  std::size_t k = 0;
  while (k < std::size(time_units) && time_units[k] != unit) ++k;
  if (k == std::size(time_units))
    throw MetadataError(std::string("data_type: ") + what + " unit '" + std::string(unit) +
                        "' is not one of NumPy's (Y M W D h m s ms us ns ps fs as); a generic " + what +
                        " without a unit holds no times");
  if (scale == 0 || scale > 2147483647u)
    throw MetadataError(std::string("data_type: ") + what + " scale factor " + std::to_string(scale) +
                        " is outside 1 to 2147483647");
  t.unit_ = static_cast<std::uint8_t>(k);
  t.scale_ = scale;
  return t;
}

DataType DataType::datetime64(std::string_view unit, std::uint32_t scale) { return time(Id::datetime64, unit, scale); }
DataType DataType::timedelta64(std::string_view unit, std::uint32_t scale) {
  return time(Id::timedelta64, unit, scale);
}

DataType DataType::parse(std::string_view n) {
  static const struct {
    std::string_view name;
    Id id;
  } table[] = {{"bool", Id::bool_},          {"int8", Id::int8},
               {"int16", Id::int16},         {"int32", Id::int32},
               {"int64", Id::int64},         {"uint8", Id::uint8},
               {"uint16", Id::uint16},       {"uint32", Id::uint32},
               {"uint64", Id::uint64},       {"float16", Id::float16},
               {"float32", Id::float32},     {"float64", Id::float64},
               {"complex64", Id::complex64}, {"complex128", Id::complex128},
               {"string", Id::string},       {"variable_length_bytes", Id::bytes},
               {"bytes", Id::bytes}};
  for (const auto& e : table)
    if (e.name == n) return DataType(e.id);
  if (n.size() >= 2 && n[0] == 'r' && n[1] >= '1' && n[1] <= '9') {
    std::size_t bits = 0;
    auto [p, ec] = std::from_chars(n.data() + 1, n.data() + n.size(), bits);
    if (ec == std::errc() && p == n.data() + n.size() && bits <= (1u << 20)) return raw(bits);
  }
  if (auto t = parse_numpy_form(n, false)) return *t;
  throw MetadataError("data_type: unknown or unsupported data type '" + std::string(n) + "'");
}

DataKind DataType::kind() const {
  switch (id_) {
    case Id::bool_:
      return DataKind::Bool;
    case Id::int8:
    case Id::int16:
    case Id::int32:
    case Id::int64:
      return DataKind::Int;
    case Id::uint8:
    case Id::uint16:
    case Id::uint32:
    case Id::uint64:
      return DataKind::UInt;
    case Id::float16:
    case Id::float32:
    case Id::float64:
      return DataKind::Float;
    case Id::complex64:
    case Id::complex128:
      return DataKind::Complex;
    case Id::raw:
    case Id::raw_bytes:
      return DataKind::Raw;
    case Id::string:
    case Id::bytes:
      return DataKind::Vlen;
    case Id::fixed_utf32:
    case Id::fixed_bytes:
      return DataKind::Text;
    case Id::datetime64:
    case Id::timedelta64:
      return DataKind::Time;
    case Id::structured:
      return DataKind::Struct;
  }
  return DataKind::Raw;
}

std::size_t DataType::component_size() const {
  if (id_ == Id::structured) {
    std::size_t c = 1;
    for (const auto& f : *fields_) c = std::max(c, f.type.component_size());
    return c;
  }
  if (kind() == DataKind::Complex) return size_ / 2;
  if (id_ == Id::fixed_utf32) return 4;
  if (kind() == DataKind::Raw || kind() == DataKind::Vlen || id_ == Id::fixed_bytes) return 1;
  return size_;
}

namespace {
// A JSON string literal of `s` (UTF-8 passes through; quotes, backslashes and control characters
// escaped).
std::string json_quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      static const char* hex = "0123456789abcdef";
      out += "\\u00";
      out += hex[(c >> 4) & 0xf];
      out += hex[c & 0xf];
    } else {
      out += c;
    }
  }
  return out + '"';
}

// NumPy's descr of a structured type in JSON, native (little-endian) byte order.
std::string descr_text(const DataType& t) {
  std::string out = "[";
  for (const auto& f : t.fields()) {
    if (out.size() > 1) out += ", ";
    out += "[" + json_quoted(f.name) + ", ";
    out += f.type.kind() == DataKind::Struct ? descr_text(f.type) : json_quoted(f.type.numpy_str());
    if (!f.shape.empty()) {
      out += ", [";
      for (std::size_t k = 0; k < f.shape.size(); ++k) out += (k ? ", " : "") + std::to_string(f.shape[k]);
      out += "]";
    }
    out += "]";
  }
  return out + "]";
}
}  // namespace

namespace {
// One list per distinct set of fields, never freed (reachable from the pool: a few bytes per
// structured type a process meets). Nested types are interned first, so comparing fields
// compares their types by pointer.
const std::vector<StructField>* intern_fields(std::vector<StructField> fields) {
  static std::mutex m;
  static auto* pool = new std::vector<std::unique_ptr<const std::vector<StructField>>>();
  const std::lock_guard lock(m);
  for (const auto& p : *pool)
    if (*p == fields) return p.get();
  pool->push_back(std::make_unique<const std::vector<StructField>>(std::move(fields)));
  return pool->back().get();
}
}  // namespace

DataType DataType::structured(std::vector<StructField> fields) {
  if (fields.empty()) throw MetadataError("data_type: a structured type needs at least one field");
  std::size_t offset = 0;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    auto& f = fields[i];
    const std::string what = "data_type: structured field '" + f.name + "'";
    if (f.name.empty()) throw MetadataError("data_type: structured field " + std::to_string(i) + " has no name");
    for (std::size_t k = 0; k < i; ++k)
      if (fields[k].name == f.name) throw MetadataError(what + " appears twice");
    if (f.type.is_vlen())
      throw MetadataError(what + " is of variable-length type " + f.type.name() +
                          ", which a structured type cannot hold (give a fixed-width type such as U12)");
    std::size_t n = 1;
    for (const auto d : f.shape) {
      if (d == 0 || d > (std::size_t{1} << 31) / n)
        throw MetadataError(what + ": subarray dimensions must be 1 to 2^31 in all");
      n *= d;
    }
    f.offset = offset;
    if (n > ((std::size_t{1} << 31) - offset) / f.type.size())
      throw MetadataError("data_type: a structured type must be at most 2^31 bytes");
    offset += n * f.type.size();
  }
  DataType t(Id::structured, offset);
  t.fields_ = intern_fields(std::move(fields));
  return t;
}

bool DataType::holds_same_elements(const DataType& other) const {
  if (*this == other) return true;
  if (kind() == DataKind::Raw && other.kind() == DataKind::Raw) return size_ == other.size_;
  if (id_ != Id::structured || other.id_ != Id::structured || fields_->size() != other.fields_->size()) return false;
  for (std::size_t i = 0; i < fields_->size(); ++i) {
    const auto &a = (*fields_)[i], &b = (*other.fields_)[i];
    if (a.name != b.name || a.shape != b.shape || !a.type.holds_same_elements(b.type)) return false;
  }
  return true;
}

const std::vector<StructField>& DataType::fields() const {
  static const std::vector<StructField> none;
  return fields_ ? *fields_ : none;
}

void DataType::swap_byte_order(std::span<std::uint8_t> b) const {
  if (id_ != Id::structured) {
    const std::size_t c = component_size();
    if (c <= 1) return;
    for (std::size_t i = 0; i + c <= b.size(); i += c) std::reverse(b.begin() + i, b.begin() + i + c);
    return;
  }
  for (std::size_t e = 0; e + size_ <= b.size(); e += size_)
    for (const auto& f : *fields_) f.type.swap_byte_order(b.subspan(e + f.offset, f.count() * f.type.size()));
}

std::string DataType::numpy_str(bool big_endian) const {
  const std::string bo = component_size() > 1 ? (big_endian ? ">" : "<") : "|";
  switch (kind()) {
    case DataKind::Bool:
      return "|b1";
    case DataKind::Int:
      return bo + "i" + std::to_string(size_);
    case DataKind::UInt:
      return bo + "u" + std::to_string(size_);
    case DataKind::Float:
      return bo + "f" + std::to_string(size_);
    case DataKind::Complex:
      return bo + "c" + std::to_string(size_);
    case DataKind::Raw:
    case DataKind::Struct:
      return "|V" + std::to_string(size_);
    case DataKind::Vlen:
      return "|O";
    case DataKind::Text:
      return id_ == Id::fixed_bytes ? "|S" + std::to_string(size_) : bo + "U" + std::to_string(size_ / 4);
    case DataKind::Time: {
      const std::string n = name();  // datetime64[10s]
      return bo + (id_ == Id::datetime64 ? "M8" : "m8") + n.substr(n.find('['));
    }
  }
  return "?";
}

std::string DataType::name() const {
  switch (id_) {
    case Id::bool_:
      return "bool";
    case Id::int8:
      return "int8";
    case Id::int16:
      return "int16";
    case Id::int32:
      return "int32";
    case Id::int64:
      return "int64";
    case Id::uint8:
      return "uint8";
    case Id::uint16:
      return "uint16";
    case Id::uint32:
      return "uint32";
    case Id::uint64:
      return "uint64";
    case Id::float16:
      return "float16";
    case Id::float32:
      return "float32";
    case Id::float64:
      return "float64";
    case Id::complex64:
      return "complex64";
    case Id::complex128:
      return "complex128";
    case Id::raw:
      return "r" + std::to_string(size_ * 8);
    case Id::string:
      return "string";
    case Id::bytes:
      return "variable_length_bytes";  // zarr-python 3.1's name
    case Id::fixed_utf32:
      return "U" + std::to_string(size_ / 4);
    case Id::fixed_bytes:
      return "S" + std::to_string(size_);
    case Id::datetime64:
    case Id::timedelta64: {
      std::string s = id_ == Id::datetime64 ? "datetime64[" : "timedelta64[";
      if (scale_ != 1) s += std::to_string(scale_);
      return s + std::string(time_units[unit_]) + "]";
    }
    case Id::structured:
      return descr_text(*this);
    case Id::raw_bytes:
      return "V" + std::to_string(size_);
  }
  return "?";
}

}  // namespace zarrpp

namespace zarrpp {

DataType DataType::from_user(std::string_view text) {
  const std::string all =
      "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, complex64, "
      "complex128, r<bits>, string, bytes, or NumPy's spellings (i4, <i4, u1, f8, c16, ?, V2, U12, S5, M8[ns], "
      "m8[s], datetime64[ns], int, float, complex, str; not O: say string or bytes)";
  std::string_view t = text;
  // One-byte types, bool and raw bytes have no byte order: NumPy ignores it there, and so do we.
  const auto order_free = [](std::string_view x) {
    return x == "i1" || x == "u1" || x == "b1" || x == "?" || (x.size() >= 2 && (x[0] == 'V' || x[0] == 'S'));
  };
  if (!t.empty() && t.front() == '>' && !order_free(t.substr(1)))
    throw ArgumentError("data type '" + std::string(text) +
                        "' is big-endian: give the data type without the byte order ('" + std::string(t.substr(1)) +
                        "'); the byte order is the bytes codec's");
  if (!t.empty() && (t.front() == '<' || t.front() == '|' || t.front() == '=' || t.front() == '>')) t.remove_prefix(1);
  static const struct {
    std::string_view spelling;
    Id id;
  } numpy[] = {{"?", Id::bool_},       {"b1", Id::bool_},           {"i1", Id::int8},        {"i2", Id::int16},
               {"i4", Id::int32},      {"i8", Id::int64},           {"u1", Id::uint8},       {"u2", Id::uint16},
               {"u4", Id::uint32},     {"u8", Id::uint64},          {"f2", Id::float16},     {"f4", Id::float32},
               {"f8", Id::float64},    {"c8", Id::complex64},       {"c16", Id::complex128}, {"int", Id::int64},
               {"float", Id::float64}, {"complex", Id::complex128}, {"str", Id::string},     {"U", Id::string},
               {"uint", Id::uint64},   {"double", Id::float64},     {"single", Id::float32}, {"half", Id::float16}};
  for (const auto& e : numpy)
    if (e.spelling == t) return DataType(e.id);
  if (t.size() >= 2 && t[0] == 'V' && t[1] >= '1' && t[1] <= '9') {
    std::size_t bytes = 0;
    auto [p, ec] = std::from_chars(t.data() + 1, t.data() + t.size(), bytes);
    if (ec == std::errc() && p == t.data() + t.size() && bytes <= (1u << 17)) return raw_bytes(bytes);
  }
  try {
    if (auto c = parse_numpy_form(t, true)) return *c;
  } catch (const MetadataError& e) {
    throw ArgumentError(e.what());
  }
  try {
    return parse(t);
  } catch (const MetadataError& e) {
    // A raw type with a bad size keeps its reason; anything else lists what is taken.
    if (t.size() >= 2 && t[0] == 'r' && t[1] >= '1' && t[1] <= '9') throw ArgumentError(e.what());
    throw ArgumentError("unknown data type '" + std::string(text) + "' (zarrpp takes " + all + ")");
  }
}

}  // namespace zarrpp
