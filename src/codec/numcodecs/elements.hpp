#pragma once
// What the numcodecs filters that work on elements share: their dtype strings, the C++ type of a
// data type, NumPy's casts and wrapping arithmetic, and the element-wise filters' base.
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "../roles.hpp"

namespace zarrpp::numcodecs {

// ---- numcodecs dtype strings ("<f8", "|u1", "int16") ----------------------------------------

inline DataType numcodecs_dtype(const std::string& codec, const Json& cfg, const char* key,
                                std::optional<DataType> fallback = std::nullopt) {
  // zarr-python 3 leaves out a filter's "dtype" when it is the array's own.
  if (fallback && (!cfg.is_object() || !cfg.contains(key) || cfg[key].is_null())) return *fallback;
  if (!cfg.contains(key) || !cfg[key].is_string())
    config_fail(codec, std::string("\"") + key + "\" must be a dtype string such as \"<f8\"", cfg);
  std::string s = cfg[key].get<std::string>();
  // Filters compute on the elements' values; the byte order of the bytes is the bytes codec's
  // business (Zarr v2 chains state it there too), so it is not part of the type here.
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) s = s.substr(1);
  static const struct {
    const char* code;
    DataType::Id id;
  } table[] = {{"b1", DataType::Id::bool_},   {"i1", DataType::Id::int8},   {"i2", DataType::Id::int16},
               {"i4", DataType::Id::int32},   {"i8", DataType::Id::int64},  {"u1", DataType::Id::uint8},
               {"u2", DataType::Id::uint16},  {"u4", DataType::Id::uint32}, {"u8", DataType::Id::uint64},
               {"f4", DataType::Id::float32}, {"f8", DataType::Id::float64}};
  for (const auto& e : table)
    if (s == e.code) return DataType(e.id);
  try {
    const DataType t = DataType::parse(s);
    if (t.kind() != DataKind::Raw && t.kind() != DataKind::Complex && !(t == DataType::float16_t)) return t;
  } catch (const MetadataError&) {
  }
  config_fail(codec,
              std::string("\"") + key + "\": data type \"" + cfg[key].get<std::string>() +
                  "\" is not supported by this filter (integers, bool, float32, float64)",
              cfg);
}

inline std::string dtype_str(const DataType& t) {
  switch (t.id()) {
    case DataType::Id::bool_:
      return "|b1";
    case DataType::Id::int8:
      return "|i1";
    case DataType::Id::uint8:
      return "|u1";
    case DataType::Id::int16:
      return "<i2";
    case DataType::Id::int32:
      return "<i4";
    case DataType::Id::int64:
      return "<i8";
    case DataType::Id::uint16:
      return "<u2";
    case DataType::Id::uint32:
      return "<u4";
    case DataType::Id::uint64:
      return "<u8";
    case DataType::Id::float32:
      return "<f4";
    case DataType::Id::float64:
      return "<f8";
    default:
      return t.name();
  }
}

// Calls f(T{}) with the C++ type of a numeric data type.
template <class F>
void visit_numeric(const DataType& t, F&& f) {
  switch (t.id()) {
    case DataType::Id::bool_:
      return f(bool{});
    case DataType::Id::int8:
      return f(std::int8_t{});
    case DataType::Id::int16:
      return f(std::int16_t{});
    case DataType::Id::int32:
      return f(std::int32_t{});
    case DataType::Id::int64:
      return f(std::int64_t{});
    case DataType::Id::uint8:
      return f(std::uint8_t{});
    case DataType::Id::uint16:
      return f(std::uint16_t{});
    case DataType::Id::uint32:
      return f(std::uint32_t{});
    case DataType::Id::uint64:
      return f(std::uint64_t{});
    case DataType::Id::float32:
      return f(float{});
    case DataType::Id::float64:
      return f(double{});
    default:
      throw UnsupportedError("numcodecs filters: data type " + t.name() + " is not supported");
  }
}

// Calls f(T{}, A{}) with the C++ types of a filter's decoded and encoded data types.
template <class F>
void visit_pair(const DataType& dec, const DataType& enc, F&& f) {
  visit_numeric(dec, [&](auto t) { visit_numeric(enc, [&](auto a) { f(t, a); }); });
}

// NumPy's astype for one value, without C++'s undefined behaviour: a float out of an integer
// type's range (or NaN) gives the type's minimum for signed and 0 for unsigned targets (what
// NumPy gives on x86-64 for the common cases); integers wrap.
template <class To, class From>
To cast(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{};
  } else if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(v);
  } else if constexpr (std::is_floating_point_v<From>) {
    const double d = static_cast<double>(v);
    if (!(d >= -9.2233720368547758e18 && d < 9.2233720368547758e18))
      return std::is_signed_v<To> ? std::numeric_limits<To>::min() : To{0};
    return static_cast<To>(static_cast<std::int64_t>(d));
  } else {
    // Sign-extend to 64 bits first, then wrap to the target (NumPy's integer astype).
    return static_cast<To>(static_cast<std::make_unsigned_t<To>>(static_cast<std::int64_t>(v)));
  }
}

// Wrapping arithmetic for integers, plain for floats.
template <class T>
T sub(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a != b;
  } else {
    return a - b;
  }
}
template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else if constexpr (std::is_same_v<T, bool>) {
    return a || b;
  } else {
    return a + b;
  }
}

template <class T>
const T* as(std::span<const std::uint8_t> b) {
  return reinterpret_cast<const T*>(b.data());
}
template <class T>
T* as(std::span<std::uint8_t> b) {
  return reinterpret_cast<T*>(b.data());
}

// The base of the element-wise filters: `in` must have the filter's decoded type, the encoded
// chunk has `enc_` elements.
class ElementFilter : public ArrayToArrayCodec {
 public:
  ElementFilter(std::string name, DataType dec, DataType enc) : name_(std::move(name)), dec_(dec), enc_(enc) {}
  std::string name() const override { return name_; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override {
    ChunkSpec out = in;
    out.dtype = enc_;
    out.fill_value = encode(in, in.fill_value.size() == in.dtype.size() ? std::span<const std::uint8_t>(in.fill_value)
                                                                        : std::span<const std::uint8_t>());
    if (out.fill_value.size() != enc_.size()) out.fill_value.assign(enc_.size(), 0);
    return out;
  }
  Bytes encode(const ChunkSpec&, std::span<const std::uint8_t> data) const override {
    const std::size_t n = data.size() / dec_.size();
    Bytes out(n * enc_.size());
    if (n) run_encode(data, out, n);
    return out;
  }
  void decode(const ChunkSpec& in, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    const std::size_t n = static_cast<std::size_t>(in.num_elements());
    if (data.size() != n * enc_.size() || out.size() != n * dec_.size())
      decode_fail(name_, "expected " + std::to_string(n) + " elements of " + enc_.name());
    if (n) run_decode(data, out, n);
  }

 protected:
  virtual void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const = 0;
  virtual void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const = 0;
  std::string name_;
  DataType dec_, enc_;
};

inline void check_input(const std::string& codec, const DataType& filter, const ChunkSpec& in, const Json& cfg) {
  // NumPy filters view datetime64/timedelta64 data as the int64 counts they are (numcodecs' .view).
  const bool counts = in.dtype.kind() == DataKind::Time && filter == DataType::int64;
  if (!(filter == in.dtype) && !counts)
    config_fail(codec,
                "its \"dtype\" " + filter.name() + " differs from the data type " + in.dtype.name() + " it receives",
                cfg);
}

inline double config_number(const std::string& codec, const Json& cfg, const char* key) {
  if (!cfg.contains(key) || !cfg[key].is_number())
    config_fail(codec, std::string("\"") + key + "\" must be a number", cfg);
  const double v = cfg[key].get<double>();
  if (!std::isfinite(v)) config_fail(codec, std::string("\"") + key + "\" must be finite", cfg);
  return v;
}

}  // namespace zarrpp::numcodecs
