// The numcodecs codecs that Zarr v2 arrays use as filters and compressors, under the names
// zarr-python 3 gives them in zarr.json ("numcodecs.<id>", configuration = the numcodecs
// configuration without "id"). Each one reproduces numcodecs' bytes and arithmetic:
//   array -> array: delta, fixedscaleoffset, quantize, astype, bitround (on the elements,
//                   flattened), packbits (bools to bits), categorize (text to label numbers)
//   bytes -> bytes: zlib, lz4, bz2, lzma, shuffle, and gzip/zstd/blosc under their numcodecs names
#include <bzlib.h>
#include <libdeflate.h>
#include <lz4.h>
#include <lzma.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "roles.hpp"

namespace zarrpp {
namespace {

// ---- numcodecs dtype strings ("<f8", "|u1", "int16") ----------------------------------------

DataType numcodecs_dtype(const std::string& codec, const Json& cfg, const char* key,
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

std::string dtype_str(const DataType& t) {
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

void check_input(const std::string& codec, const DataType& filter, const ChunkSpec& in, const Json& cfg) {
  // NumPy filters view datetime64/timedelta64 data as the int64 counts they are (numcodecs' .view).
  const bool counts = in.dtype.kind() == DataKind::Time && filter == DataType::int64;
  if (!(filter == in.dtype) && !counts)
    config_fail(codec,
                "its \"dtype\" " + filter.name() + " differs from the data type " + in.dtype.name() + " it receives",
                cfg);
}

// ---- delta -------------------------------------------------------------------------------------

class Delta final : public ElementFilter {
 public:
  Delta(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.delta", numcodecs_dtype("numcodecs.delta", cfg, "dtype", in.dtype),
                      numcodecs_dtype("numcodecs.delta", cfg, "astype",
                                      numcodecs_dtype("numcodecs.delta", cfg, "dtype", in.dtype))) {
    allowed_keys(name_, cfg, {"dtype", "astype"});
    check_input(name_, dec_, in, cfg);
    if (dec_ == DataType::bool_t) config_fail(name_, "delta is not defined for bool", cfg);
  }
  CodecMetadata to_metadata() const override {
    return {name_, Json::object({{"dtype", dtype_str(dec_)}, {"astype", dtype_str(enc_)}})};
  }

 private:
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const T* x = as<T>(in);
      A* y = as<A>(out);
      y[0] = cast<A>(x[0]);
      for (std::size_t i = 1; i < n; ++i) y[i] = cast<A>(sub<T>(x[i], x[i - 1]));
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const A* y = as<A>(in);
      T* x = as<T>(out);
      if (n == 0) return;
      T acc = x[0] = cast<T>(y[0]);  // as NumPy's cumsum: the first as it is (-0.0 stays -0.0)
      for (std::size_t i = 1; i < n; ++i) x[i] = acc = add<T>(acc, cast<T>(y[i]));
    });
  }
};

// ---- fixedscaleoffset: round((x - offset) * scale) ------------------------------------------------

double config_number(const std::string& codec, const Json& cfg, const char* key) {
  if (!cfg.contains(key) || !cfg[key].is_number())
    config_fail(codec, std::string("\"") + key + "\" must be a number", cfg);
  const double v = cfg[key].get<double>();
  if (!std::isfinite(v)) config_fail(codec, std::string("\"") + key + "\" must be finite", cfg);
  return v;
}

class FixedScaleOffset final : public ElementFilter {
 public:
  FixedScaleOffset(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.fixedscaleoffset",
                      numcodecs_dtype("numcodecs.fixedscaleoffset", cfg, "dtype", in.dtype),
                      numcodecs_dtype("numcodecs.fixedscaleoffset", cfg, "astype",
                                      numcodecs_dtype("numcodecs.fixedscaleoffset", cfg, "dtype", in.dtype))) {
    allowed_keys(name_, cfg, {"dtype", "astype", "offset", "scale"});
    check_input(name_, dec_, in, cfg);
    offset_ = config_number(name_, cfg, "offset");
    scale_ = config_number(name_, cfg, "scale");
    if (scale_ == 0) config_fail(name_, "\"scale\" must not be 0", cfg);
    cfg_offset_ = cfg["offset"];
    cfg_scale_ = cfg["scale"];
  }
  CodecMetadata to_metadata() const override {
    return {
        name_,
        Json::object(
            {{"offset", cfg_offset_}, {"scale", cfg_scale_}, {"dtype", dtype_str(dec_)}, {"astype", dtype_str(enc_)}})};
  }

 private:
  // NumPy computes (x - offset) * scale in float32 for float32 arrays and in float64 otherwise.
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      using C = std::conditional_t<std::is_same_v<T, float>, float, double>;
      const T* x = as<T>(in);
      A* y = as<A>(out);
      for (std::size_t i = 0; i < n; ++i)
        y[i] = cast<A>(std::nearbyint((static_cast<C>(x[i]) - static_cast<C>(offset_)) * static_cast<C>(scale_)));
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      using C = std::conditional_t<std::is_same_v<A, float>, float, double>;
      const A* y = as<A>(in);
      T* x = as<T>(out);
      for (std::size_t i = 0; i < n; ++i)
        x[i] = cast<T>(static_cast<C>(y[i]) / static_cast<C>(scale_) + static_cast<C>(offset_));
    });
  }
  double offset_ = 0, scale_ = 1;
  Json cfg_offset_, cfg_scale_;
};

// ---- quantize: keep `digits` decimal digits (lossy; decoding only casts) ---------------------------

class Quantize final : public ElementFilter {
 public:
  Quantize(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.quantize", numcodecs_dtype("numcodecs.quantize", cfg, "dtype", in.dtype),
                      numcodecs_dtype("numcodecs.quantize", cfg, "astype",
                                      numcodecs_dtype("numcodecs.quantize", cfg, "dtype", in.dtype))) {
    allowed_keys(name_, cfg, {"digits", "dtype", "astype"});
    check_input(name_, dec_, in, cfg);
    if (dec_.kind() != DataKind::Float || enc_.kind() != DataKind::Float)
      config_fail(name_, "quantize works on float32 and float64 only", cfg);
    digits_ = config_int(name_, cfg, "digits", -300, 300, std::nullopt);
    // numcodecs: precision 10^-digits, rounded to a power of two.
    const double precision = std::pow(10.0, static_cast<double>(-digits_));
    double e = std::log10(precision);
    const int exp = e < 0 ? static_cast<int>(std::floor(e)) : static_cast<int>(std::ceil(e));
    const double bits = std::ceil(std::log2(std::pow(10.0, -exp)));
    scale_ = std::pow(2.0, bits);
  }
  CodecMetadata to_metadata() const override {
    return {name_, Json::object({{"digits", digits_}, {"dtype", dtype_str(dec_)}, {"astype", dtype_str(enc_)}})};
  }

 private:
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const T* x = as<T>(in);
      A* y = as<A>(out);
      const T s = static_cast<T>(scale_);
      for (std::size_t i = 0; i < n; ++i) y[i] = cast<A>(static_cast<T>(std::nearbyint(s * x[i]) / s));
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      const A* y = as<A>(in);
      T* x = as<T>(out);
      for (std::size_t i = 0; i < n; ++i) x[i] = cast<T>(y[i]);
    });
  }
  std::int64_t digits_ = 0;
  double scale_ = 1;
};

// ---- astype: stores the elements as another type -------------------------------------------------

class AsType final : public ElementFilter {
 public:
  AsType(const Json& cfg, const ChunkSpec& in)
      : ElementFilter("numcodecs.astype", numcodecs_dtype("numcodecs.astype", cfg, "decode_dtype", in.dtype),
                      numcodecs_dtype("numcodecs.astype", cfg, "encode_dtype")) {
    allowed_keys(name_, cfg, {"encode_dtype", "decode_dtype"});
    check_input(name_, dec_, in, cfg);
  }
  CodecMetadata to_metadata() const override {
    return {name_, Json::object({{"encode_dtype", dtype_str(enc_)}, {"decode_dtype", dtype_str(dec_)}})};
  }

 private:
  void run_encode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      for (std::size_t i = 0; i < n; ++i) as<A>(out)[i] = cast<A>(as<T>(in)[i]);
    });
  }
  void run_decode(std::span<const std::uint8_t> in, std::span<std::uint8_t> out, std::size_t n) const override {
    visit_pair(dec_, enc_, [&](auto t, auto a) {
      using T = decltype(t);
      using A = decltype(a);
      for (std::size_t i = 0; i < n; ++i) as<T>(out)[i] = cast<T>(as<A>(in)[i]);
    });
  }
};

// ---- bitround: keep `keepbits` bits of a float's mantissa, rounding to nearest even ---------------

// Encoding rounds the bits of each float (as an integer of the same width); decoding is the
// identity. numcodecs 0.11 keeps 10, 23 and 52 mantissa bits at most for float16, 32 and 64.
class BitRound final : public ArrayToArrayCodec {
 public:
  BitRound(const Json& cfg, const ChunkSpec& in) : dtype_(in.dtype) {
    allowed_keys(kName, cfg, {"keepbits"});
    if (dtype_.kind() != DataKind::Float) config_fail(kName, "bitround works on float arrays only", cfg);
    // Too many bits is refused when encoding, as numcodecs does, so stored data still reads.
    keepbits_ = config_int(kName, cfg, "keepbits", 0, 64, std::nullopt);
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override { return in; }
  // The mantissa bits numcodecs 0.11 knows for a float type.
  static int mantissa_bits(const DataType& t) {
    return t == DataType::float16_t ? 10 : t == DataType::float32 ? 23 : 52;
  }
  Bytes encode(const ChunkSpec&, std::span<const std::uint8_t> data) const override {
    const int bits = mantissa_bits(dtype_);
    if (keepbits_ > bits)
      throw CodecError(std::string(kName) + ": keepbits " + std::to_string(keepbits_) + " is more than the " +
                       std::to_string(bits) + " mantissa bits of " + dtype_.name());
    Bytes out(data.begin(), data.end());
    if (keepbits_ == bits) return out;
    switch (dtype_.size()) {
      case 2:
        return round<std::uint16_t>(std::move(out), bits);
      case 4:
        return round<std::uint32_t>(std::move(out), bits);
      default:
        return round<std::uint64_t>(std::move(out), bits);
    }
  }
  void decode(const ChunkSpec&, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    if (data.size() != out.size()) decode_fail(kName, "expected " + std::to_string(out.size()) + " bytes");
    if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
  }
  CodecMetadata to_metadata() const override { return {kName, Json::object({{"keepbits", keepbits_}})}; }

 private:
  static constexpr const char* kName = "numcodecs.bitround";
  // numcodecs' integer arithmetic (wrapping), on the unsigned type of the same bits.
  template <class U>
  Bytes round(Bytes b, int bits) const {
    const int maskbits = bits - static_cast<int>(keepbits_);
    const U mask = static_cast<U>(~std::uint64_t{0} << maskbits);  // in 64 bits: no shift of a negative int
    const U half = static_cast<U>((U{1} << (maskbits - 1)) - 1);
    for (std::size_t i = 0; i + sizeof(U) <= b.size(); i += sizeof(U)) {
      U v;
      std::memcpy(&v, b.data() + i, sizeof v);
      v = static_cast<U>(v + ((v >> maskbits) & U{1}) + half);
      v = static_cast<U>(v & mask);
      std::memcpy(b.data() + i, &v, sizeof v);
    }
    return b;
  }
  DataType dtype_;
  std::int64_t keepbits_ = 0;
};

// ---- packbits: one bit per element, after a byte counting the padding bits ------------------------

// numcodecs packs the elements' truth values (nonzero: 1) most significant bit first, as
// np.packbits; decoding gives 0 or 1 per element. For one-byte types (bool, int8, uint8) only:
// numcodecs packs every byte of wider ones, which no data type of zarrpp's reads back.
class PackBits final : public ArrayToArrayCodec {
 public:
  PackBits(const Json& cfg, const ChunkSpec& in) {
    allowed_keys(kName, cfg, {});
    if (in.dtype.size() != 1 || in.dtype.kind() == DataKind::Raw)
      config_fail(kName, "packbits works on bool, int8 and uint8 arrays only, not " + in.dtype.name(), cfg);
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override {
    const auto n = static_cast<std::int64_t>(in.num_elements());
    return ChunkSpec{{1 + (n + 7) / 8}, DataType::uint8, Bytes{0}, in.heap};
  }
  Bytes encode(const ChunkSpec&, std::span<const std::uint8_t> data) const override {
    const std::size_t n = data.size();
    Bytes out(1 + (n + 7) / 8, 0);
    out[0] = static_cast<std::uint8_t>((8 - n % 8) % 8);
    for (std::size_t i = 0; i < n; ++i)
      if (data[i]) out[1 + i / 8] = static_cast<std::uint8_t>(out[1 + i / 8] | (0x80u >> (i % 8)));
    return out;
  }
  void decode(const ChunkSpec&, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    const std::size_t n = out.size();
    if (data.size() != 1 + (n + 7) / 8 || data[0] != (8 - n % 8) % 8)
      decode_fail(kName, "expected " + std::to_string(1 + (n + 7) / 8) + " bytes with " +
                             std::to_string((8 - n % 8) % 8) + " padding bits for " + std::to_string(n) +
                             " elements, got " + std::to_string(data.size()) + " bytes" +
                             (data.empty() ? std::string() : " with " + std::to_string(data[0])));
    for (std::size_t i = 0; i < n; ++i) out[i] = (data[1 + i / 8] >> (7 - i % 8)) & 1u;
  }
  CodecMetadata to_metadata() const override { return {kName, Json::object()}; }

 private:
  static constexpr const char* kName = "numcodecs.packbits";
};

// ---- categorize: text to the 1-based index of its label (0: the empty text) ---------------------------

// numcodecs' Categorize(labels, dtype, astype): an object array of str ("|O", zarrpp's string) or
// NumPy U<n> text becomes integers of `astype`, label k as k + 1 and anything else as 0, which
// decodes as "". Decoding reproduces numcodecs (0 and unknown numbers give "", a label longer
// than U<n> is cut to n characters, as NumPy assigns it); encoding refuses text that is neither
// a label nor "", which numcodecs would store as 0 and read back as "". The fill value is stored as
// numcodecs stores it (0 unless it is a label), so elements of a new chunk that were never
// written read "" once the chunk is stored, in zarr-python 2 as here.
class Categorize final : public ArrayToArrayCodec {
 public:
  Categorize(const Json& cfg, const ChunkSpec& in) : in_(in.dtype) {
    allowed_keys(kName, cfg, {"labels", "dtype", "astype"});
    if (!(in_ == DataType::string_t) && in_.id() != DataType::Id::fixed_utf32)
      config_fail(kName, "categorize works on str (object) and U<n> arrays only, not " + in_.name(), cfg);
    if (!cfg.contains("labels") || !cfg["labels"].is_array())
      config_fail(kName, "\"labels\" must be a list of strings", cfg);
    for (const auto& l : cfg["labels"]) {
      if (!l.is_string()) config_fail(kName, "\"labels\" must be a list of strings", cfg);
      labels_.push_back(l.get<std::string>());
    }
    dtype_ = cfg.value("dtype", Json(in_ == DataType::string_t ? "|O" : v2_text_dtype()));
    if (!dtype_.is_string() || !dtype_matches(dtype_.get<std::string>()))
      config_fail(
          kName,
          "\"dtype\" must be the array's own (" + std::string(in_ == DataType::string_t ? "|O" : v2_text_dtype()) + ")",
          cfg);
    out_ = numcodecs_dtype(kName, cfg, "astype", DataType::uint8);
    astype_ = cfg.value("astype", Json("|u1"));
    if (out_.kind() != DataKind::Int && out_.kind() != DataKind::UInt)
      config_fail(kName, "\"astype\" must be an integer type", cfg);
    const int bits = static_cast<int>(out_.size() * 8) - (out_.kind() == DataKind::Int ? 1 : 0);
    if (bits < 63 && labels_.size() >= (std::uint64_t{1} << bits))
      config_fail(kName, std::to_string(labels_.size()) + " labels do not fit " + out_.name(), cfg);
    if (in_.id() == DataType::Id::fixed_utf32)
      for (const auto& l : labels_) wide_.push_back(to_utf32(l));
  }
  std::string name() const override { return kName; }
  ChunkSpec encoded_spec(const ChunkSpec& in) const override {
    return ChunkSpec{in.shape, out_, Bytes(out_.size(), 0), in.heap};
  }
  Bytes encode(const ChunkSpec& in, std::span<const std::uint8_t> data) const override {
    const std::size_t n = data.size() / in_.size();
    Bytes out(n * out_.size(), 0);
    const auto put = [&](std::size_t i, std::uint64_t id) {
      for (std::size_t k = 0; k < out_.size(); ++k) out[i * out_.size() + k] = static_cast<std::uint8_t>(id >> (8 * k));
    };
    if (in_ == DataType::string_t) {
      std::vector<std::uint64_t> idx(n);
      if (n) std::memcpy(idx.data(), data.data(), n * 8);
      const auto items = heap_of(in).get(idx);
      for (std::size_t i = 0; i < n; ++i) put(i, idx[i] == 0 ? id_of_fill_text(*items[i]) : id_of(*items[i]));
    } else {
      for (std::size_t i = 0; i < n; ++i) {
        const auto elem = data.subspan(i * in_.size(), in_.size());
        const bool fill =
            in.fill_value.size() == elem.size() && std::equal(elem.begin(), elem.end(), in.fill_value.begin());
        put(i, fill ? id_of_fill(elem) : id_of_wide(elem));
      }
    }
    return out;
  }
  void decode(const ChunkSpec& in, std::span<const std::uint8_t> data, std::span<std::uint8_t> out) const override {
    const std::size_t n = out.size() / in_.size();
    if (data.size() != n * out_.size())
      decode_fail(kName, "expected " + std::to_string(n * out_.size()) + " bytes, got " + std::to_string(data.size()));
    std::vector<std::size_t> ids(n);
    for (std::size_t i = 0; i < n; ++i) {
      std::uint64_t v = 0;
      for (std::size_t k = 0; k < out_.size(); ++k) v |= std::uint64_t{data[i * out_.size() + k]} << (8 * k);
      ids[i] = v >= 1 && v <= labels_.size() ? static_cast<std::size_t>(v) : 0;  // numcodecs: "" otherwise
    }
    if (in_ == DataType::string_t) {
      std::vector<std::string> items;
      items.reserve(n);
      for (const auto id : ids) items.push_back(id ? labels_[id - 1] : std::string());
      const std::uint64_t first = heap_of(in).add(std::move(items));
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint64_t v = first + i;
        std::memcpy(out.data() + 8 * i, &v, 8);
      }
    } else {
      std::fill(out.begin(), out.end(), std::uint8_t{0});
      for (std::size_t i = 0; i < n; ++i)
        if (ids[i]) {
          const auto& w = wide_[ids[i] - 1];
          std::memcpy(out.data() + i * in_.size(), w.data(), std::min(w.size() * 4, in_.size()));
        }
    }
  }
  CodecMetadata to_metadata() const override {
    return {kName, Json::object({{"labels", labels_}, {"dtype", dtype_}, {"astype", astype_}})};
  }

 private:
  static constexpr const char* kName = "numcodecs.categorize";
  std::string v2_text_dtype() const { return "<U" + std::to_string(in_.size() / 4); }
  bool dtype_matches(const std::string& d) const {
    if (in_ == DataType::string_t) return d == "|O";
    return d.size() > 2 && (d[0] == '<' || d[0] == '>') && d.substr(1) == v2_text_dtype().substr(1);
  }
  static std::vector<std::uint32_t> to_utf32(const std::string& s) {
    std::vector<std::uint32_t> w;
    for (std::size_t i = 0; i < s.size();) {
      std::uint32_t cp = static_cast<unsigned char>(s[i]);
      const std::size_t len = cp < 0x80 ? 1 : decode_utf8(s, i, cp, true);
      if (len == 0) throw CodecError(std::string(kName) + ": a label is not valid UTF-8");
      i += len;
      w.push_back(cp);
    }
    return w;
  }
  VlenHeap& heap_of(const ChunkSpec& in) const {
    if (!in.heap) throw CodecError(std::string(kName) + ": str elements are read and written through a heap");
    return *in.heap;
  }
  // A label given twice: numcodecs' last assignment wins.
  std::uint64_t id_of(const std::string& text) const {
    for (std::size_t k = labels_.size(); k-- > 0;)
      if (labels_[k] == text) return k + 1;
    if (text.empty()) return 0;
    refuse(text);
  }
  std::uint64_t id_of_wide(std::span<const std::uint8_t> elem) const {
    std::size_t len = elem.size() / 4;
    const auto cp = [&](std::size_t j) {
      std::uint32_t c;
      std::memcpy(&c, elem.data() + 4 * j, 4);
      return c;
    };
    while (len > 0 && cp(len - 1) == 0) --len;
    for (std::size_t k = wide_.size(); k-- > 0;) {
      const auto& w = wide_[k];
      if (w.size() != len) continue;
      bool same = true;
      for (std::size_t j = 0; j < len && same; ++j) same = cp(j) == w[j];
      if (same) return k + 1;
    }
    if (len == 0) return 0;
    std::string text;
    for (std::size_t j = 0; j < len; ++j) append_utf8(text, cp(j));
    refuse(text);
  }
  // An element holding the fill value (zarr-python 2's default "0" for U<n>): its label's number,
  // else 0 as numcodecs stores it (elements of a chunk nobody wrote read "" once it is stored).
  std::uint64_t id_of_fill_text(const std::string& text) const {
    try {
      return id_of(text);
    } catch (const CodecError&) {
      return 0;
    }
  }
  std::uint64_t id_of_fill(std::span<const std::uint8_t> elem) const {
    try {
      return id_of_wide(elem);
    } catch (const CodecError&) {
      return 0;
    }
  }
  [[noreturn]] static void refuse(const std::string& text) {
    throw CodecError(std::string(kName) + ": \"" + text.substr(0, 80) +
                     "\" is not one of the filter's labels (numcodecs would store it as 0, which reads back as \"\")");
  }
  DataType in_;
  DataType out_ = DataType::uint8;
  std::vector<std::string> labels_;
  std::vector<std::vector<std::uint32_t>> wide_;
  Json dtype_, astype_;
};

// ---- bytes -> bytes ----------------------------------------------------------------------------------

// Decoding that may produce at most max_out bytes; decode_into checks the exact size.
class SimpleB2B : public BytesToBytesCodec {
 public:
  explicit SimpleB2B(std::string name) : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
    const Bytes b = decode(in, out.size());
    if (b.size() != out.size())
      decode_fail(name_, "decoded " + std::to_string(b.size()) + " bytes, expected " + std::to_string(out.size()));
    if (!b.empty()) std::memcpy(out.data(), b.data(), b.size());
  }
  std::optional<std::size_t> encoded_size(std::size_t) const override { return std::nullopt; }

 protected:
  std::string name_;
};

class Zlib final : public SimpleB2B {
 public:
  explicit Zlib(const Json& cfg) : SimpleB2B("numcodecs.zlib") {
    allowed_keys(name_, cfg, {"level"});
    level_ = static_cast<int>(config_int(name_, cfg, "level", -1, 9, 1));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    std::unique_ptr<libdeflate_compressor, void (*)(libdeflate_compressor*)> c{
        libdeflate_alloc_compressor(level_ < 0 ? 6 : level_), libdeflate_free_compressor};
    if (!c) throw CodecError(name_ + ": cannot allocate a compressor");
    Bytes out(libdeflate_zlib_compress_bound(c.get(), in.size()));
    const std::size_t n = libdeflate_zlib_compress(c.get(), in.data(), in.size(), out.data(), out.size());
    if (n == 0) throw CodecError(name_ + ": compression failed");
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    std::unique_ptr<libdeflate_decompressor, void (*)(libdeflate_decompressor*)> d{libdeflate_alloc_decompressor(),
                                                                                   libdeflate_free_decompressor};
    Bytes out(max_out);
    std::size_t actual = 0;
    const auto r = libdeflate_zlib_decompress(d.get(), in.data(), in.size(), out.data(), out.size(), &actual);
    if (r == LIBDEFLATE_INSUFFICIENT_SPACE)
      decode_fail(name_, "decoded data is larger than the expected " + std::to_string(max_out) + " bytes");
    if (r != LIBDEFLATE_SUCCESS) decode_fail(name_, "corrupt or truncated zlib stream");
    out.resize(actual);
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return in + in / 16 + 64 + 5 * (in / 65535 + 1) + 6; }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"level", level_}})}; }

 private:
  int level_;
};

// numcodecs' LZ4: the decoded size as 4 little-endian bytes, then one LZ4 block.
class Lz4 final : public SimpleB2B {
 public:
  explicit Lz4(const Json& cfg) : SimpleB2B("numcodecs.lz4") {
    allowed_keys(name_, cfg, {"acceleration"});
    accel_ = static_cast<int>(config_int(name_, cfg, "acceleration", std::numeric_limits<int>::min(), 65537, 1));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    if (in.size() > static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE))
      throw CodecError(name_ + ": a chunk of " + std::to_string(in.size()) + " bytes exceeds LZ4's limit");
    const int bound = LZ4_compressBound(static_cast<int>(in.size()));
    Bytes out(4 + static_cast<std::size_t>(bound));
    const auto sz = static_cast<std::uint32_t>(in.size());
    for (int i = 0; i < 4; ++i) out[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(sz >> (8 * i));
    const int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data() + 4),
                                    static_cast<int>(in.size()), bound, accel_);
    if (n <= 0 && !in.empty()) throw CodecError(name_ + ": compression failed");
    out.resize(4 + static_cast<std::size_t>(std::max(n, 0)));
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    if (in.size() < 4) decode_fail(name_, "truncated: no size header");
    std::uint32_t sz = 0;
    for (int i = 0; i < 4; ++i) sz |= static_cast<std::uint32_t>(in[static_cast<std::size_t>(i)]) << (8 * i);
    if (sz > max_out)
      decode_fail(
          name_, "header declares " + std::to_string(sz) + " bytes, more than the expected " + std::to_string(max_out));
    Bytes out(sz);
    if (sz == 0) return out;
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data() + 4), reinterpret_cast<char*>(out.data()),
                                      static_cast<int>(in.size() - 4), static_cast<int>(sz));
    if (n < 0 || static_cast<std::uint32_t>(n) != sz) decode_fail(name_, "corrupt or truncated LZ4 block");
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return 4 + in + in / 255 + 16; }
  std::optional<std::size_t> max_input() const override { return static_cast<std::size_t>(LZ4_MAX_INPUT_SIZE); }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"acceleration", accel_}})}; }

 private:
  int accel_;
};

class Bz2 final : public SimpleB2B {
 public:
  explicit Bz2(const Json& cfg) : SimpleB2B("numcodecs.bz2") {
    allowed_keys(name_, cfg, {"level"});
    level_ = static_cast<int>(config_int(name_, cfg, "level", 1, 9, 1));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    if (in.size() > 0x7fffffffu) throw CodecError(name_ + ": a chunk over 2 GB cannot be compressed");
    unsigned int n = static_cast<unsigned int>(in.size() + in.size() / 100 + 600);
    Bytes out(n);
    const int r = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out.data()), &n,
                                           const_cast<char*>(reinterpret_cast<const char*>(in.data())),
                                           static_cast<unsigned int>(in.size()), level_, 0, 0);
    if (r != BZ_OK) throw CodecError(name_ + ": compression failed (" + std::to_string(r) + ")");
    out.resize(n);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    Bytes out(max_out);
    std::size_t in_off = 0, out_off = 0;
    // Python's bz2.decompress accepts several streams back to back.
    while (in_off < in.size()) {
      bz_stream s{};
      if (BZ2_bzDecompressInit(&s, 0, 0) != BZ_OK) throw CodecError(name_ + ": cannot start decompression");
      s.next_in = const_cast<char*>(reinterpret_cast<const char*>(in.data() + in_off));
      s.avail_in = static_cast<unsigned int>(std::min<std::size_t>(in.size() - in_off, 0x7fffffffu));
      int r = BZ_OK;
      for (;;) {
        s.next_out = reinterpret_cast<char*>(out.data() + out_off);
        const std::size_t room = std::min<std::size_t>(max_out - out_off, 0x7fffffffu);
        s.avail_out = static_cast<unsigned int>(room);
        r = BZ2_bzDecompress(&s);
        out_off += room - s.avail_out;
        if (r != BZ_OK) break;
        if (s.avail_out != 0 && s.avail_in == 0) break;  // truncated
        if (out_off == max_out) {
          // Room is used up: anything more is too much.
          char probe;
          s.next_out = &probe;
          s.avail_out = 1;
          r = BZ2_bzDecompress(&s);
          if (s.avail_out == 0) {
            BZ2_bzDecompressEnd(&s);
            decode_fail(name_, "decoded data is larger than the expected " + std::to_string(max_out) + " bytes");
          }
          break;
        }
      }
      const std::size_t used =
          static_cast<std::size_t>(reinterpret_cast<const std::uint8_t*>(s.next_in) - (in.data() + in_off));
      BZ2_bzDecompressEnd(&s);
      if (r != BZ_STREAM_END) decode_fail(name_, "corrupt or truncated bzip2 stream");
      in_off += used;
    }
    out.resize(out_off);
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return in + in / 100 + 600; }
  std::optional<std::size_t> max_input() const override { return 0x7fffffffu; }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"level", level_}})}; }

 private:
  int level_;
};

// numcodecs' LZMA with its defaults: the .xz container (format 1), CRC64 check, preset 6.
class Lzma final : public SimpleB2B {
 public:
  explicit Lzma(const Json& cfg) : SimpleB2B("numcodecs.lzma") {
    allowed_keys(name_, cfg, {"format", "check", "preset", "filters"});
    const auto format = config_int(name_, cfg, "format", 0, 3, 1);
    if (format != 1)
      throw UnsupportedError(name_ + ": only the .xz format (\"format\": 1, numcodecs' default) is supported, got " +
                             cfg.dump());
    if (cfg.contains("filters") && !cfg["filters"].is_null())
      throw UnsupportedError(name_ + ": custom LZMA filter chains are not supported (\"filters\" must be null), got " +
                             cfg.dump());
    check_ = static_cast<int>(config_int(name_, cfg, "check", -1, 10, -1));
    if (check_ != -1 && check_ != 0 && check_ != 1 && check_ != 4 && check_ != 10)
      config_fail(name_, "\"check\" must be -1, 0 (none), 1 (CRC32), 4 (CRC64) or 10 (SHA-256)", cfg);
    if (cfg.contains("preset") && !cfg["preset"].is_null()) {
      if (!cfg["preset"].is_number_integer()) config_fail(name_, "\"preset\" must be an integer or null", cfg);
      const auto p = cfg["preset"].get<std::int64_t>();
      if ((p & ~static_cast<std::int64_t>(LZMA_PRESET_EXTREME)) < 0 ||
          (p & ~static_cast<std::int64_t>(LZMA_PRESET_EXTREME)) > 9)
        config_fail(name_, "\"preset\" must be 0..9 (optionally | the extreme flag)", cfg);
      preset_ = static_cast<std::uint32_t>(p);
      has_preset_ = true;
    }
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    Bytes out(lzma_stream_buffer_bound(in.size()));
    std::size_t pos = 0;
    const lzma_check check = check_ == -1 ? LZMA_CHECK_CRC64 : static_cast<lzma_check>(check_);
    const auto r = lzma_easy_buffer_encode(has_preset_ ? preset_ : 6, check, nullptr, in.data(), in.size(), out.data(),
                                           &pos, out.size());
    if (r != LZMA_OK) throw CodecError(name_ + ": compression failed (" + std::to_string(static_cast<int>(r)) + ")");
    out.resize(pos);
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_stream_decoder(&s, std::uint64_t{256} << 20,
                            LZMA_CONCATENATED) /* preset 9e needs ~65 MiB; a hostile header cannot claim more */
        != LZMA_OK)
      throw CodecError(name_ + ": cannot start decompression");
    Bytes out(max_out + 1);  // one byte more than allowed, to notice too much output
    s.next_in = in.data();
    s.avail_in = in.size();
    s.next_out = out.data();
    s.avail_out = out.size();
    lzma_ret r = lzma_code(&s, LZMA_FINISH);
    const std::size_t produced = out.size() - s.avail_out;
    lzma_end(&s);
    if (produced > max_out)
      decode_fail(name_, "decoded data is larger than the expected " + std::to_string(max_out) + " bytes");
    if (r != LZMA_STREAM_END) decode_fail(name_, "corrupt or truncated .xz stream");
    out.resize(produced);
    return out;
  }
  std::size_t max_encoded_size(std::size_t in) const override { return lzma_stream_buffer_bound(in); }
  CodecMetadata to_metadata() const override {
    Json j = Json::object({{"format", 1},
                           {"check", check_},
                           {"preset", has_preset_ ? Json(preset_) : Json(nullptr)},
                           {"filters", nullptr}});
    return {name_, j};
  }

 private:
  int check_ = -1;
  std::uint32_t preset_ = 6;
  bool has_preset_ = false;
};

// numcodecs' Shuffle: byte j of element i goes to j * count + i; a trailing partial element is
// refused as numcodecs does.
class Shuffle final : public SimpleB2B {
 public:
  explicit Shuffle(const Json& cfg) : SimpleB2B("numcodecs.shuffle") {
    allowed_keys(name_, cfg, {"elementsize"});
    size_ = static_cast<std::size_t>(config_int(name_, cfg, "elementsize", 0, 1 << 20, 4));
  }
  Bytes encode(std::span<const std::uint8_t> in) const override {
    Bytes out(in.begin(), in.end());
    if (size_ <= 1) return out;
    if (in.size() % size_ != 0)
      throw CodecError(name_ + ": a buffer of " + std::to_string(in.size()) +
                       " bytes is not a multiple of the element size " + std::to_string(size_));
    const std::size_t count = in.size() / size_;
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t j = 0; j < size_; ++j) out[j * count + i] = in[i * size_ + j];
    return out;
  }
  Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
    if (in.size() > max_out)
      decode_fail(name_,
                  "holds " + std::to_string(in.size()) + " bytes, more than the expected " + std::to_string(max_out));
    Bytes out(in.begin(), in.end());
    if (size_ <= 1) return out;
    if (in.size() % size_ != 0)
      decode_fail(name_, "a buffer of " + std::to_string(in.size()) + " bytes is not a multiple of the element size");
    const std::size_t count = in.size() / size_;
    for (std::size_t i = 0; i < count; ++i)
      for (std::size_t j = 0; j < size_; ++j) out[i * size_ + j] = in[j * count + i];
    return out;
  }
  std::optional<std::size_t> encoded_size(std::size_t in) const override { return in; }
  std::size_t max_encoded_size(std::size_t in) const override { return in; }
  CodecMetadata to_metadata() const override { return {name_, Json::object({{"elementsize", size_}})}; }

 private:
  std::size_t size_ = 4;
};

// numcodecs' GZip and Zstd default to level 1 (zarr-python 3's gzip and zstd do not).
constexpr int kNumcodecsLevel = 1;

// A codec zarrpp has natively, under its numcodecs name: the configuration is translated and the
// native codec does the work (the bytes are the same).

CodecEntry alias(const std::string& name, const CodecEntry& native,
                 const std::function<Json(const Json&, const ChunkSpec&)>& translate) {
  CodecEntry e{name, native.role};
  // The same v2 compressor, its configuration already numcodecs' own.
  if (native.v2_compressor)
    e.v2_compressor = {native.v2_compressor->id, [](const Json& cfg, std::size_t) { return cfg; },
                       native.v2_compressor->to_v2};
  auto make = native.make_b2b;
  e.make_b2b = [name, make, translate](const Json& cfg, const ChunkSpec& in) {
    struct Named final : BytesToBytesCodec {
      std::shared_ptr<const BytesToBytesCodec> inner;
      std::string nm;
      Json cfg;
      std::string name() const override { return nm; }
      Bytes encode(std::span<const std::uint8_t> in) const override { return inner->encode(in); }
      Bytes decode(std::span<const std::uint8_t> in, std::size_t max_out) const override {
        return inner->decode(in, max_out);
      }
      void decode_into(std::span<const std::uint8_t> in, std::span<std::uint8_t> out) const override {
        inner->decode_into(in, out);
      }
      std::optional<std::size_t> encoded_size(std::size_t in) const override { return inner->encoded_size(in); }
      std::size_t max_encoded_size(std::size_t in) const override { return inner->max_encoded_size(in); }
      std::optional<std::size_t> max_input() const override { return inner->max_input(); }
      CodecMetadata to_metadata() const override { return {nm, cfg}; }
    };
    auto n = std::make_shared<Named>();
    n->inner = make(translate(cfg, in), in);
    n->nm = name;
    n->cfg = cfg;
    return std::shared_ptr<const BytesToBytesCodec>(n);
  };
  return e;
}

}  // namespace

// numcodecs' Blosc configuration ({cname, clevel, shuffle: -1|0|1|2, blocksize}) as the blosc
// codec's, for data of `in`'s element size (numcodecs uses the buffer's item size).
Json blosc_from_numcodecs(const Json& cfg, std::size_t itemsize) {
  allowed_keys("numcodecs.blosc", cfg, {"cname", "clevel", "shuffle", "blocksize", "typesize"});
  Json c = Json::object();
  c["cname"] = cfg.value("cname", Json("lz4"));
  c["clevel"] = cfg.value("clevel", Json(5));
  const Json s = cfg.value("shuffle", Json(1));
  if (!s.is_number_integer()) config_fail("numcodecs.blosc", "\"shuffle\" must be -1, 0, 1 or 2", cfg);
  const auto sv = s.get<std::int64_t>();
  const std::size_t ts =
      cfg.contains("typesize") && cfg["typesize"].is_number_integer() && cfg["typesize"].get<std::int64_t>() > 0
          ? cfg["typesize"].get<std::size_t>()
          : itemsize;
  if (sv == -1)
    c["shuffle"] = ts == 1 ? "bitshuffle" : "shuffle";
  else if (sv == 0)
    c["shuffle"] = "noshuffle";
  else if (sv == 1)
    c["shuffle"] = "shuffle";
  else if (sv == 2)
    c["shuffle"] = "bitshuffle";
  else
    config_fail("numcodecs.blosc", "\"shuffle\" must be -1, 0, 1 or 2", cfg);
  c["typesize"] = ts >= 1 && ts <= 255 ? ts : 1;
  c["blocksize"] = cfg.value("blocksize", Json(0));
  return c;
}

std::vector<CodecEntry> numcodecs_entries() {
  std::vector<CodecEntry> out;
  auto a2a = [&](const char* name, auto make) {
    CodecEntry e{name, codec::Role::array_to_array};
    e.make_a2a = make;
    out.push_back(std::move(e));
  };
  a2a("numcodecs.delta", [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<Delta>(cfg, in); });
  a2a("numcodecs.fixedscaleoffset",
      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<FixedScaleOffset>(cfg, in); });
  a2a("numcodecs.quantize", [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<Quantize>(cfg, in); });
  a2a("numcodecs.astype", [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<AsType>(cfg, in); });
  a2a("numcodecs.bitround", [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<BitRound>(cfg, in); });
  // A new array's keepbits must fit its type (stored ones are read whatever they say).
  out.back().complete = [](const Json& cfg, const ChunkSpec& in) {
    const BitRound check(cfg, in);
    if (cfg.value("keepbits", 0) > BitRound::mantissa_bits(in.dtype))
      config_fail("numcodecs.bitround",
                  "keepbits is more than the " + std::to_string(BitRound::mantissa_bits(in.dtype)) +
                      " mantissa bits of " + in.dtype.name(),
                  cfg);
    return cfg;
  };
  a2a("numcodecs.packbits", [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<PackBits>(cfg, in); });
  a2a("numcodecs.categorize",
      [](const Json& cfg, const ChunkSpec& in) { return std::make_shared<Categorize>(cfg, in); });
  // A compressor in Zarr v2 under the same id and keys (shuffle is a v2 filter instead).
  const auto same_keys = [](const std::string& id) {
    return CodecEntry::V2Compressor{id, [](const Json& cfg, std::size_t) { return cfg; },
                                    [](const Json& cfg) { return cfg; }};
  };
  auto b2b = [&](const char* name, auto make, std::vector<std::pair<std::string, Json>> shorthand) {
    CodecEntry e{name, codec::Role::bytes_to_bytes};
    e.make_b2b = make;
    e.shorthand = std::move(shorthand);
    if (std::string_view(name) != "numcodecs.shuffle") e.v2_compressor = same_keys(std::string(name).substr(10));
    out.push_back(std::move(e));
  };
  b2b("numcodecs.zlib", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Zlib>(cfg); }, {{"level", 1}});
  b2b("numcodecs.lz4", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Lz4>(cfg); },
      {{"acceleration", 1}});
  b2b("numcodecs.bz2", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Bz2>(cfg); }, {{"level", 1}});
  b2b("numcodecs.lzma", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Lzma>(cfg); },
      {{"preset", nullptr}});
  b2b("numcodecs.shuffle", [](const Json& cfg, const ChunkSpec&) { return std::make_shared<Shuffle>(cfg); },
      {{"elementsize", 4}});
  out.push_back(alias("numcodecs.gzip", gzip_codec_entry(), [](const Json& cfg, const ChunkSpec&) {
    allowed_keys("numcodecs.gzip", cfg, {"level"});
    return Json::object({{"level", cfg.value("level", Json(kNumcodecsLevel))}});
  }));
  out.back().shorthand = {{"level", kNumcodecsLevel}};
  out.push_back(alias("numcodecs.zstd", zstd_codec_entry(), [](const Json& cfg, const ChunkSpec&) {
    allowed_keys("numcodecs.zstd", cfg, {"level", "checksum"});
    Json c = Json::object({{"level", cfg.value("level", Json(kNumcodecsLevel))}});
    if (cfg.contains("checksum")) c["checksum"] = cfg["checksum"];
    return c;
  }));
  out.back().shorthand = {{"level", kNumcodecsLevel}, {"checksum", nullptr}};
  auto blosc = alias("numcodecs.blosc", blosc_codec_entry(),
                     [](const Json& cfg, const ChunkSpec& in) { return blosc_from_numcodecs(cfg, in.dtype.size()); });
  blosc.v2_compressor->to_v2 = [](const Json& cfg) {  // already numcodecs' keys (shuffle 0, 1 or 2)
    return Json::object({{"cname", cfg.value("cname", Json("lz4"))},
                         {"clevel", cfg.value("clevel", Json(5))},
                         {"shuffle", cfg.value("shuffle", Json(1))},
                         {"blocksize", cfg.value("blocksize", Json(0))}});
  };
  out.push_back(std::move(blosc));
  return out;
}

}  // namespace zarrpp
