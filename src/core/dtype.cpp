#include "zarrpp/core/dtype.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>

#include "dtype_table.hpp"
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

// A time type's unit and scale from the text after its name's "[": "10s]", "ns]".
std::optional<DataType> time_form(DataType::Id id, std::string_view rest) {
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
  return id == DataType::Id::datetime64 ? DataType::datetime64(unit, scale) : DataType::timedelta64(unit, scale);
}

// NumPy's display forms of the types with a width or unit (the table's numpy_name): U12, S5, V3,
// datetime64[10s], timedelta64[ns], and with NumPy's codes M8[ns], m8[ns] when `short_time` is set.
std::optional<DataType> parse_numpy_form(std::string_view n, bool short_time) {
  for (const auto& r : dtype_table::rows) {
    if (r.numpy_name.empty()) continue;
    if (r.width_unit > 0) {
      if (n.size() < 2 || !n.starts_with(r.numpy_name)) continue;
      const auto w = whole_number(n.substr(r.numpy_name.size()));
      if (!w) return std::nullopt;
      return r.id == DataType::Id::fixed_utf32   ? DataType::fixed_utf32(*w)
             : r.id == DataType::Id::fixed_bytes ? DataType::fixed_bytes(*w)
                                                 : DataType::raw_bytes(*w);
    }
    for (const auto name : {r.numpy_name, short_time ? r.numpy_code : std::string_view()}) {
      if (name.empty() || !n.starts_with(name)) continue;
      if (n == name)
        throw MetadataError("data_type: " + std::string(n) +
                            " without a unit (NumPy's generic one) holds no times: give a unit, such as " +
                            std::string(n) + "[ns]");
      if (n[name.size()] == '[') return time_form(r.id, n.substr(name.size() + 1));
    }
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
  if (const auto* r = dtype_table::by_zarr_name(n); r && r->config == dtype_table::Config::none) return DataType(r->id);
  if (n.size() >= 2 && n[0] == 'r' && ((n[1] >= '1' && n[1] <= '9') || n == "r0") &&
      n.find_first_not_of("0123456789", 1) == std::string_view::npos) {
    std::size_t bits = 0;
    auto [p, ec] = std::from_chars(n.data() + 1, n.data() + n.size(), bits);
    if (ec != std::errc() || bits > (1u << 20))
      throw MetadataError("data_type: raw bits type " + std::string(n) +
                          ": too many bits for one element (at most 1048576)");
    return raw(bits);
  }
  if (auto t = parse_numpy_form(n, false)) return *t;
  throw MetadataError("data_type: unknown or unsupported data type '" + std::string(n) + "'");
}

DataKind DataType::kind() const { return dtype_table::row(id_).kind; }

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
  const auto& r = dtype_table::row(id_);
  if (id_ == Id::structured) return "|V" + std::to_string(size_);
  if (r.width_unit > 0) return bo + std::string(r.numpy_code) + std::to_string(size_ / r.width_unit);
  if (is_time()) {
    const std::string n = name();  // datetime64[10s]
    return bo + std::string(r.numpy_code) + n.substr(n.find('['));
  }
  return bo + std::string(r.numpy_code);
}

std::string DataType::name() const {
  const auto& r = dtype_table::row(id_);
  if (r.config == dtype_table::Config::bits_in_name) return std::string(r.zarr_name) + std::to_string(size_ * 8);
  if (r.width_unit > 0) return std::string(r.numpy_name) + std::to_string(size_ / r.width_unit);
  if (is_time()) {
    std::string s = std::string(r.numpy_name) + "[";
    if (scale_ != 1) s += std::to_string(scale_);
    return s + std::string(time_units[unit_]) + "]";
  }
  if (id_ == Id::structured) return descr_text(*this);
  return std::string(r.zarr_name);
}

}  // namespace zarrpp

namespace zarrpp {

namespace {
// NumPy's and the people's names of a data type, without a byte order.
DataType unordered_spelling(std::string_view t, std::string_view text) {
  if (const auto* r = dtype_table::by_user_word(t)) return DataType(r->id);
  if (const auto* r = dtype_table::by_numpy_code(t)) return DataType(r->id);
  if (t == "O")
    throw ArgumentError("data type '" + std::string(text) +
                        "' (NumPy's object) is ambiguous: give string (variable-length text) or bytes");
  try {
    if (auto c = parse_numpy_form(t, true)) return *c;
    return DataType::parse(t);
  } catch (const MetadataError& e) {
    // A type of a known family keeps its reason; anything else lists what is taken.
    if (!std::string_view(e.what()).starts_with("data_type: unknown")) throw ArgumentError(e.what());
    throw ArgumentError(
        "unknown data type '" + std::string(text) +
        "' (zarrpp takes bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32, float64, "
        "complex64, complex128, r<bits>, string, bytes, or NumPy's spellings: i4, <i4, u1, f8, c16, ?, V2, U12, "
        "S5, M8[ns], m8[s], datetime64[ns], int, float, complex, str)");
  }
}
}  // namespace

NumpyType parse_numpy_spelling(std::string_view text) {
  std::string_view t = text;
  const char order = t.empty() ? '|' : t.front();
  if (order == '<' || order == '|' || order == '=' || order == '>') t.remove_prefix(1);
  NumpyType out{unordered_spelling(t, text), false};
  const bool big = order == '>' || (order == '=' && std::endian::native == std::endian::big);
  out.big_endian = big && out.type.component_size() > 1;  // one-byte types have no byte order, as in NumPy
  return out;
}

DataType DataType::from_user(std::string_view text) {
  const auto t = parse_numpy_spelling(text);
  if (t.big_endian)
    throw ArgumentError("data type '" + std::string(text) +
                        "' is big-endian: give the data type without the byte order ('" + std::string(text.substr(1)) +
                        "'); the byte order is the bytes codec's");
  return t.type;
}

}  // namespace zarrpp
