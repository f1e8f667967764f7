// xarray's _FillValue attribute of a Zarr v3 array. xarray (from its Zarr v3 support on) reads a
// v3 array's missing value from this attribute, not from fill_value, and stores it in its own
// encoding (xarray.backends.zarr.FillValueCoder): integers and bools as JSON, floats as base64 of
// the little-endian float64, complex numbers as two of those, bytes (S<n>, variable-length bytes)
// as base64 of the bytes. Text (U<n>, string) gets no attribute (xarray's zarr engine masks a v2
// text array's fill value: nothing to keep). It
// shows a v2 time array's fill value as _FillValue: on v3 the attribute states it as zarr.json
// does (the count of units, NaT as the int64 minimum), so what the v2 array showed is kept.
// Raw and structured types get no attribute.
#include <bit>
#include <cstring>

#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace {

double element_double(const std::uint8_t* p, std::size_t size) {
  if (size == 8) {
    double d;
    std::memcpy(&d, p, 8);
    return d;
  }
  if (size == 4) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  return static_cast<float>(float16::from_bits(h));
}

void put_double(std::uint8_t* p, double d, std::size_t size) {
  if (size == 8) {
    std::memcpy(p, &d, 8);
  } else if (size == 4) {
    const auto f = static_cast<float>(d);
    std::memcpy(p, &f, 4);
  } else {
    const float16 h(static_cast<float>(d));
    std::memcpy(p, &h.bits, 2);
  }
}

Json double_b64(double d) {
  std::uint8_t b[8];
  std::memcpy(b, &d, 8);  // little-endian hosts only (as the rest of zarrpp)
  return base64_encode(b);
}

std::optional<double> b64_double(const Json& j) {
  if (!j.is_string()) return std::nullopt;
  const auto b = base64_decode(j.get<std::string>());
  if (!b || b->size() != 8) return std::nullopt;
  double d;
  std::memcpy(&d, b->data(), 8);
  return d;
}

// A bytes fill value (S<n>, variable-length bytes) as xarray encodes it (kind "S": base64 of the
// bytes, S<n>'s NUL padding left off); text (U<n>, string) has no encoding: nullopt.
std::optional<Json> bytes_b64(std::span<const std::uint8_t> value, const DataType& t) {
  if (t.id() != DataType::Id::fixed_bytes && t.id() != DataType::Id::bytes) return std::nullopt;
  std::size_t n = value.size();
  if (t.id() == DataType::Id::fixed_bytes)
    while (n > 0 && value[n - 1] == 0) --n;
  return base64_encode(value.first(n));
}

}  // namespace

std::optional<Json> xarray_fill_attribute(std::span<const std::uint8_t> value, const DataType& t) {
  switch (t.kind()) {
    case DataKind::Bool:
    case DataKind::Int:
    case DataKind::UInt:
      return fill_value_to_json(value, t);
    case DataKind::Float:
      return double_b64(element_double(value.data(), t.size()));
    case DataKind::Complex: {
      const std::size_t c = t.size() / 2;
      return Json::array(
          {double_b64(element_double(value.data(), c)), double_b64(element_double(value.data() + c, c))});
    }
    case DataKind::Time:  // as zarr.json states it: xarray's encoding has no form for these
      return fill_value_to_json(value, t);
    case DataKind::Text:
    case DataKind::Vlen:
      return bytes_b64(value, t);
    case DataKind::Raw:
    case DataKind::Struct:
      break;
  }
  return std::nullopt;
}

std::optional<Bytes> xarray_fill_from_attribute(const Json& attr, const DataType& t) {
  switch (t.kind()) {
    case DataKind::Float: {
      const auto d = b64_double(attr);
      if (!d) return std::nullopt;
      Bytes b(t.size());
      put_double(b.data(), *d, t.size());
      return b;
    }
    case DataKind::Complex: {
      if (!attr.is_array() || attr.size() != 2) return std::nullopt;
      const auto re = b64_double(attr[0]), im = b64_double(attr[1]);
      if (!re || !im) return std::nullopt;
      const std::size_t c = t.size() / 2;
      Bytes b(t.size());
      put_double(b.data(), *re, c);
      put_double(b.data() + c, *im, c);
      return b;
    }
    case DataKind::Text:
    case DataKind::Vlen:
    case DataKind::Time:
      try {
        return parse_fill_value(attr, t);
      } catch (const MetadataError&) {
        return std::nullopt;
      }
    default:
      return std::nullopt;  // JSON values as they are
  }
}

}  // namespace zarrpp
