// Zarr v2 metadata (.zarray, .zgroup, .zattrs) <-> the metadata structs, which hold a v2 array
// in the v3 form the rest of zarrpp works with plus what only .zarray states.
#include <cmath>
#include <cstring>

#include "../core/dtype_table.hpp"
#include "zarrpp/core/checked.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/metadata/metadata.hpp"

namespace zarrpp {
namespace {

[[noreturn]] void fail(const std::string& field, const Json& value, const std::string& why) {
  std::string v = json_text(value);
  if (v.size() > 200) v = v.substr(0, 200) + "...";
  throw MetadataError(".zarray: " + field + ": " + why + " (got " + v + ")");
}

struct V2Type {
  DataType dtype;
  bool big = false;
};

// A v2 dtype string: every core numeric type in either byte order, bool, complex, raw bytes
// (|V<n>), fixed-width strings (U<n>, S<n>), datetime64 and timedelta64. Objects are string or
// bytes as their codec says. A list is a structured type (parse_v2_descr).
constexpr const char* kTypeString =
    "expected a NumPy type string of kind b, i, u, f, c, V, S, U, M, m or O with its size, such as \"<f8\", "
    "\"|u1\", \"<U12\" or \"<M8[ns]\" (what dtype.str gives, not a name such as \"float64\")";

V2Type parse_v2_dtype(const Json& j);

// The table's type with a width or unit whose NumPy code `code` starts with ("U3", "M8[ns]").
const dtype_table::Row* numpy_family(std::string_view code) {
  for (const auto& r : dtype_table::rows)
    if (!r.numpy_name.empty() && code.starts_with(r.numpy_code)) return &r;
  return nullptr;
}

// The NumPy codes of one kind's fixed types zarrpp holds ("i1, i2, i4, i8").
std::string numpy_codes_of_kind(char kind) {
  std::string out;
  for (const auto& r : dtype_table::rows)
    if (r.config == dtype_table::Config::none && r.numpy_code.size() > 1 && r.numpy_code[0] == kind)
      out += (out.empty() ? "" : ", ") + std::string(r.numpy_code);
  return out;
}

// A subarray field's shape: an integer or a list of them (NumPy's tuple), each at least 1. The
// integer 1 is a scalar field, as NumPy 1.24 (and so zarr-python 2) reads ("a", "<i4", 1).
std::vector<std::size_t> v2_field_shape(const Json& s, const Json& j) {
  if (s == 1) return {};
  const Json dims = s.is_array() ? s : Json::array({s});
  std::vector<std::size_t> out;
  for (const auto& d : dims) {
    if (!d.is_number_integer() || d.get<std::int64_t>() < 1)
      fail("dtype", j, "a structured field's shape is a list of integers of at least 1");
    out.push_back(d.get<std::size_t>());
  }
  return out;
}

// A structured dtype: NumPy's descr, a list of [name, type] or [name, type, shape], each type a
// dtype string or a nested descr. An unnamed field (padding NumPy's align=True adds) is named
// f<index>, as NumPy names it. Every multi-byte field must have the same byte order: zarrpp keeps
// one byte order per array (the bytes codec's).
V2Type parse_v2_descr(const Json& j) {
  constexpr const char* kForm = "a structured dtype is a list of [name, type] or [name, type, shape]";
  if (j.empty()) fail("dtype", j, kForm);
  std::vector<StructField> fields;
  std::optional<bool> big;
  for (std::size_t i = 0; i < j.size(); ++i) {
    const Json& e = j[i];
    if (!e.is_array() || e.size() < 2 || e.size() > 3) fail("dtype", j, kForm);
    if (!e[0].is_string())
      throw UnsupportedError(".zarray: dtype: structured field " + json_text(e[0]) +
                             " has a title; zarrpp reads fields named by a string only");
    StructField f;
    f.name = e[0].get<std::string>();
    if (f.name.empty()) f.name = "f" + std::to_string(i);
    const V2Type ft = parse_v2_dtype(e[1]);
    if (ft.dtype.is_vlen())
      throw UnsupportedError(".zarray: dtype: structured field '" + f.name +
                             "' holds Python objects (|O), which zarrpp cannot read inside a structured type");
    if (ft.dtype.component_size() > 1) {
      if (big && *big != ft.big)
        throw UnsupportedError(".zarray: dtype " + json_text(j) +
                               ": fields of both byte orders; zarrpp reads structured types whose fields share "
                               "one byte order (rewrite it with NumPy's dtype.newbyteorder)");
      big = ft.big;
    }
    f.type = ft.dtype;
    if (e.size() == 3) f.shape = v2_field_shape(e[2], j);
    fields.push_back(std::move(f));
  }
  try {
    return {DataType::structured(std::move(fields)), big.value_or(false)};
  } catch (const MetadataError& err) {
    throw MetadataError(std::string(".zarray: dtype: ") + err.what());
  }
}

V2Type parse_v2_dtype(const Json& j) {
  if (j.is_array()) return parse_v2_descr(j);
  if (!j.is_string()) fail("dtype", j, "expected a NumPy dtype string such as \"<f8\"");
  const std::string s = j.get<std::string>();
  std::size_t i = 0;
  char bo = '|';
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) bo = s[i++];
  if (i >= s.size()) fail("dtype", j, kTypeString);
  const char kind = s[i];
  const std::string rest = s.substr(i + 1);
  auto size = [&]() -> std::size_t {
    if (rest.empty() || rest.size() > 7 || rest.find_first_not_of("0123456789") != std::string::npos || rest[0] == '0')
      fail("dtype", j, kTypeString);
    return std::stoul(rest);
  };
  V2Type t;
  if (const auto* row = dtype_table::by_numpy_code(s.substr(i))) {
    t.dtype = DataType(row->id);
  } else if (const auto* family = numpy_family(s.substr(i))) {  // U3, S5, V8, M8[ns]
    if (family->width_unit > 0) size();                         // a malformed width says what the form is
    try {
      t.dtype = DataType::parse(std::string(family->numpy_name) + rest.substr(family->numpy_code.size() - 1));
    } catch (const MetadataError& e) {
      throw UnsupportedError(".zarray: dtype " + s + ": " + e.what());
    }
  } else if (kind == 'O') {
    if (!rest.empty()) fail("dtype", j, kTypeString);
    t.dtype = DataType::string_t;  // or bytes: the object codec (the first filter) says which
  } else if (std::string_view("biufc").find(kind) != std::string_view::npos) {
    size();  // a malformed size says what the form is
    throw UnsupportedError(".zarray: dtype " + s + ": NumPy's " + std::string(1, kind) + rest +
                           " is not a type zarrpp holds (of kind " + std::string(1, kind) + " it holds " +
                           numpy_codes_of_kind(kind) + ")");
  } else {
    throw UnsupportedError(".zarray: dtype \"" + s + "\" is not supported by zarrpp: " + kTypeString);
  }
  t.big = bo == '>' && t.dtype.component_size() > 1;
  return t;
}

}  // namespace

NumpyType numpy_type_from_v2(const Json& dtype) {
  const V2Type t = parse_v2_dtype(dtype);
  return {t.dtype, t.big};
}

namespace {
// Whether a descr has an unnamed field at any depth: the padding NumPy states for align=True or
// explicit offsets.
bool has_padding(const Json& descr) {
  for (const auto& e : descr)
    if (e.is_array() && e.size() >= 2 &&
        ((e[0].is_string() && e[0].get<std::string>().empty()) || (e[1].is_array() && has_padding(e[1]))))
      return true;
  return false;
}
}  // namespace

NumpyType numpy_type_from_user(std::string_view text) {
  if (text.empty() || text.front() != '[') return parse_numpy_spelling(text);
  const std::string shown = std::string(text).substr(0, 200);
  try {
    const Json descr = parse_json_document(text, "data type");
    if (has_padding(descr))
      throw ArgumentError("structured data type " + shown +
                          " has padding between or after its fields (NumPy's align=True or explicit offsets); zarrpp "
                          "holds packed structured types: give the fields without the padding");
    const NumpyType t = numpy_type_from_v2(descr);
    if (t.type.kind() != DataKind::Struct) throw MetadataError("expected a structured type's descr");
    return t;
  } catch (const MetadataError& e) {
    std::string why = e.what();
    if (why.starts_with(".zarray: dtype: ")) why = why.substr(16);
    throw ArgumentError("data type " + shown + ": " + why);
  }
}

DataType data_type_from_user(std::string_view text) {
  const NumpyType t = numpy_type_from_user(text);
  if (t.big_endian)
    throw ArgumentError("data type " + std::string(text).substr(0, 200) +
                        " is big-endian: give it without the byte order; the byte order is the bytes codec's");
  return t.type;
}

std::string base64_encode(std::span<const std::uint8_t> b) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 2 < b.size(); i += 3) {
    const std::uint32_t v = (b[i] << 16) | (b[i + 1] << 8) | b[i + 2];
    for (int k = 3; k >= 0; --k) out += tbl[(v >> (6 * k)) & 63];
  }
  if (i + 1 == b.size()) {
    const std::uint32_t v = b[i] << 16;
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == b.size()) {
    const std::uint32_t v = (b[i] << 16) | (b[i + 1] << 8);
    out += tbl[(v >> 18) & 63];
    out += tbl[(v >> 12) & 63];
    out += tbl[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

std::optional<Bytes> base64_decode(std::string_view s) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (s.size() % 4 != 0) return std::nullopt;
  Bytes out;
  for (std::size_t i = 0; i < s.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s[i + static_cast<std::size_t>(k)];
      if (c == '=' && i + 4 == s.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad) {
        return std::nullopt;
      } else {
        v[k] = val(c);
        if (v[k] < 0) return std::nullopt;
      }
    }
    const std::uint32_t x = (static_cast<std::uint32_t>(v[0]) << 18) | (static_cast<std::uint32_t>(v[1]) << 12) |
                            (static_cast<std::uint32_t>(v[2]) << 6) | static_cast<std::uint32_t>(v[3]);
    out.push_back(static_cast<std::uint8_t>(x >> 16));
    if (pad < 2) out.push_back(static_cast<std::uint8_t>(x >> 8));
    if (pad < 1) out.push_back(static_cast<std::uint8_t>(x));
  }
  return out;
}

namespace {

// zarr-python 2 reads a complex fill value [re, im] as `re + 1j * im` in Python's arithmetic:
// 1j * im is (0 * im - 0) + (0 * 0 + im)j, so an infinite or NaN imaginary part makes the real
// part NaN, and the sums drop some signs of zero. Missing chunks read as that value there.
template <class F>
void as_zarr_python_2_reads(Bytes& b) {
  F re, im;
  std::memcpy(&re, b.data(), sizeof(F));
  std::memcpy(&im, b.data() + sizeof(F), sizeof(F));
  const F zero = 0, one = 1;
  const F prod_re = zero * im - one * zero, prod_im = zero * zero + one * im;
  re = re + prod_re;
  im = zero + prod_im;
  std::memcpy(b.data(), &re, sizeof(F));
  std::memcpy(b.data() + sizeof(F), &im, sizeof(F));
}

// Two complex values alike part by part: NaN as NaN (any payload: .zarray states "NaN"), other
// numbers with their sign (a zero's too).
bool same_complex(const Bytes& a, const Bytes& b, bool single) {
  const auto part = [&](const Bytes& v, int k) {
    if (single) {
      float f;
      std::memcpy(&f, v.data() + 4 * k, 4);
      return static_cast<double>(f);
    }
    double d;
    std::memcpy(&d, v.data() + 8 * k, 8);
    return d;
  };
  for (int k = 0; k < 2; ++k) {
    const double x = part(a, k), y = part(b, k);
    if (std::isnan(x) != std::isnan(y) || (!std::isnan(x) && (x != y || std::signbit(x) != std::signbit(y))))
      return false;
  }
  return true;
}

FillValue parse_v2_fill(const Json& j, const DataType& t, bool big = false) {
  if (j.is_null()) return {default_fill_value(t), Json(nullptr)};
  if (t.kind() == DataKind::Struct) {  // base64 of one element as stored, as zarr-python 2 writes it
    auto b = j.is_string() ? base64_decode(j.get<std::string>()) : std::nullopt;
    if (!b || b->size() != t.size())
      fail("fill_value", j, "a structured type takes base64 of one element (" + std::to_string(t.size()) + " bytes)");
    if (big) t.swap_byte_order(*b);
    return {*b, std::nullopt};
  }
  if (t.kind() == DataKind::Raw) {
    if (!j.is_string()) fail("fill_value", j, "raw (V) types take a base64 string");
    auto b = base64_decode(j.get<std::string>());
    if (!b || b->size() != t.size()) fail("fill_value", j, "expected base64 of " + std::to_string(t.size()) + " bytes");
    return {*b, std::nullopt};
  }
  if (t.kind() == DataKind::Text && j.is_number_integer()) {
    // Early zarr-python 2 wrote a string type's default as 0, which NumPy then fills as the text "0".
    const std::string text = j.dump();
    if (t.id() == DataType::Id::fixed_bytes)
      return {parse_fill_value(base64_encode({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()}), t),
              std::nullopt};
    return {parse_fill_value(text, t), std::nullopt};
  }
  if (t.kind() == DataKind::Complex && j.is_array() && j.size() == 2) {
    FillValue f = parse_v2_fill(j[0], t == DataType::complex64 ? DataType::float32 : DataType::float64);
    const FillValue im = parse_v2_fill(j[1], t == DataType::complex64 ? DataType::float32 : DataType::float64);
    f.bytes.insert(f.bytes.end(), im.bytes.begin(), im.bytes.end());
    if (t == DataType::complex64)
      as_zarr_python_2_reads<float>(f.bytes);
    else
      as_zarr_python_2_reads<double>(f.bytes);
    return f;
  }
  try {
    // zarr-python 2 states S<n> fill values in base64 as v3 does, U<n> as text, times as integers.
    return {parse_fill_value(j, t), std::nullopt};
  } catch (const MetadataError& e) {
    throw MetadataError(std::string(".zarray: ") + e.what());
  }
}

Json v2_fill_json(const ArrayMetadata& m) {
  if (m.fill_value.v2_stated) return *m.fill_value.v2_stated;
  const auto& t = m.data_type;
  const Bytes& fill = m.fill_value.bytes;
  if (t == DataType::string_t) return fill_value_to_json(fill, t);
  if (t.is_vlen()) return nullptr;
  if (t.kind() == DataKind::Raw) return base64_encode(fill);
  if (t.kind() == DataKind::Struct) {
    Bytes stored = fill;
    if (m.v2_big_endian()) t.swap_byte_order(stored);
    return base64_encode(stored);
  }
  if (t.kind() == DataKind::Text || t.kind() == DataKind::Time) return fill_value_to_json(fill, t);
  auto one = [](double v) -> Json {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
    return v;
  };
  if (t.kind() == DataKind::Float) {
    double v;
    if (t == DataType::float32) {
      float f;
      std::memcpy(&f, fill.data(), 4);
      v = f;
    } else if (t == DataType::float64) {
      std::memcpy(&v, fill.data(), 8);
    } else {
      std::uint16_t b;
      std::memcpy(&b, fill.data(), 2);
      v = static_cast<float>(float16::from_bits(b));
    }
    return one(v);
  }
  if (t.kind() == DataKind::Complex) {
    double re, im;
    if (t == DataType::complex64) {
      float f[2];
      std::memcpy(f, fill.data(), 8);
      re = f[0];
      im = f[1];
    } else {
      double d[2];
      std::memcpy(d, fill.data(), 16);
      re = d[0];
      im = d[1];
    }
    return Json::array({one(re), one(im)});
  }
  return fill_value_to_json(fill, t);
}

// .zarray's dtype: NumPy's dtype.str, or a structured type's descr (JSON) with its fields in the
// given byte order.
Json v2_dtype_of(const DataType& t, bool big) {
  if (t.kind() != DataKind::Struct) return t.numpy_str(big);
  Json descr = Json::array();
  for (const auto& f : t.fields()) {
    Json e = Json::array({f.name, v2_dtype_of(f.type, big)});
    if (!f.shape.empty()) e.push_back(f.shape);
    descr.push_back(e);
  }
  return descr;
}

}  // namespace

ArrayMetadata ArrayMetadata::from_v2_fields(const Json& j, const Json& zattrs,
                                            const std::function<DataType(const Json& filters)>& object_type) {
  if (!j.is_object()) throw MetadataError(".zarray: expected a JSON object");
  for (const char* req : {"zarr_format", "shape", "chunks", "dtype", "compressor", "fill_value", "order", "filters"})
    if (!j.contains(req)) fail(req, j, "missing required field");
  if (!j["zarr_format"].is_number_integer() || j["zarr_format"].get<std::int64_t>() != 2)
    fail("zarr_format", j["zarr_format"], "expected 2");
  ArrayMetadata m;
  m.zarr_format = 2;
  auto ints = [&](const char* key) {
    const auto& a = j[key];
    if (!a.is_array()) fail(key, a, "expected an array of integers");
    std::vector<std::int64_t> out;
    for (const auto& e : a) {
      if (!e.is_number_integer() ||
          (e.is_number_unsigned() && e.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)))
        fail(key, a, "expected an array of integers");
      out.push_back(e.get<std::int64_t>());
    }
    return out;
  };
  m.shape = ints("shape");
  const auto chunks = ints("chunks");
  if (chunks.size() != m.shape.size())
    fail("chunks", j["chunks"],
         "has " + std::to_string(chunks.size()) + " entries, shape has " + std::to_string(m.shape.size()));
  for (std::size_t d = 0; d < m.shape.size(); ++d) {
    if (m.shape[d] < 0) fail("shape", j["shape"], "entries must be >= 0");
    if (chunks[d] < 1) fail("chunks", j["chunks"], "entries must be >= 1");
  }
  try {
    checked::product(m.shape, "shape");
  } catch (const Error&) {
    fail("shape", j["shape"], "the number of elements overflows int64");
  }
  m.chunk_grid = ChunkGridMetadata::regular(chunks);
  auto t = parse_v2_dtype(j["dtype"]);
  // An object array: its object codec (the first filter) says what the objects are, which the
  // codec layer knows.
  if (t.dtype.is_vlen()) t.dtype = object_type(j["filters"]);
  m.data_type = t.dtype;
  m.v2.dtype = j["dtype"];
  const auto& order = j["order"];
  if (order != "C" && order != "F") fail("order", order, "expected \"C\" or \"F\"");
  m.v2.order = order.get<std::string>()[0];
  m.chunk_key_encoding = ChunkKeyEncoding::from_v2_json(j);
  m.v2.separator_stated = j.contains("dimension_separator") && !j["dimension_separator"].is_null();
  if (m.data_type.is_vlen()) {
    // zarr-python 2 keeps an object array's fill value as it is (by default the number 0, which
    // it returns for missing elements); zarrpp reads missing elements as a string fill value, or
    // as "" / b"" for anything else.
    const auto& f = j["fill_value"];
    if (f.is_string() && m.data_type == DataType::string_t)
      m.fill_value.bytes = parse_fill_value(f, m.data_type);
    else
      m.fill_value = {default_fill_value(m.data_type), f};
  } else {
    m.fill_value = parse_v2_fill(j["fill_value"], m.data_type, t.big);
  }
  m.v2.compressor = j["compressor"];
  m.v2.filters = j["filters"];
  if (m.v2.filters.is_array() && m.v2.filters.empty()) m.v2.filters = nullptr;
  if (!zattrs.is_null()) {
    if (!zattrs.is_object())
      throw MetadataError(".zattrs: expected a JSON object (got " + json_text(zattrs).substr(0, 200) + ")");
    m.attributes = zattrs;
  }
  return m;
}

ChunkKeyEncoding ChunkKeyEncoding::from_v2_json(const Json& zarray) {
  if (!zarray.is_object() || !zarray.contains("dimension_separator") || zarray["dimension_separator"].is_null())
    return v2('.');
  const auto& s = zarray["dimension_separator"];
  if (s != "." && s != "/") fail("dimension_separator", s, "expected \".\" or \"/\"");
  return v2(s.get<std::string>()[0]);
}

bool ArrayMetadata::v2_big_endian() const {
  if (v2.dtype.is_array()) return parse_v2_dtype(v2.dtype).big;
  return v2.dtype.is_string() && v2.dtype.get_ref<const std::string&>().starts_with('>') &&
         data_type.component_size() > 1;
}

ArrayMetadata ArrayMetadata::with_v2_form(const V2Form& form) const {
  ArrayMetadata m = *this;
  if (zarr_format == 2) {
    // Already v2: its compressor, filters, order and byte order are brought in line with its
    // codecs (a copy may have been given other codecs than the source's .zarray states).
    if (m.v2.dtype.is_array()) {
      m.v2.dtype = v2_dtype_of(data_type, form.big_endian);
    } else if (m.v2.dtype.is_string()) {
      std::string d = m.v2.dtype.get<std::string>();
      if (!d.empty() && (d[0] == '<' || d[0] == '>')) d[0] = form.big_endian ? '>' : '<';
      m.v2.dtype = d;
    }
    m.v2.order = form.order;
    m.v2.compressor = form.compressor;
    m.v2.filters = form.filters;
    return m;
  }
  if (chunk_grid.rectilinear())
    throw UnsupportedError("Zarr format 2 does not support rectilinear chunk grids (chunks of different sizes)");
  if (chunk_grid.kind != ChunkGridMetadata::Kind::Regular)
    throw UnsupportedError("a Zarr v2 array has no lower bound or origin (regular_bounded grid); create it as Zarr v3");
  if (!extra_fields.empty())
    throw UnsupportedError("Zarr v2 cannot store the extra zarr.json fields " + extra_fields.dump());
  m.zarr_format = 2;
  m.v2.dtype = v2_dtype_of(data_type, form.big_endian);
  m.v2.order = form.order;
  m.v2.compressor = form.compressor;
  m.v2.filters = form.filters;
  if (!(fill_value.v2_stated && fill_value.v2_stated->is_null()))  // a stated "no fill value" stays
    m.fill_value.v2_stated.reset();
  if (data_type == DataType::bytes_t) {
    if (!fill_value.bytes.empty())
      throw UnsupportedError("fill_value: Zarr v2 cannot state a bytes fill value (zarr-python 2 writes none)");
    m.fill_value.v2_stated = Json(nullptr);
  }
  // A complex fill value must read back as itself (zarr-python 2 reads some as others: see
  // as_zarr_python_2_reads), else the array would read differently once reopened, and there.
  if (const Json stated = v2_fill_json(m); !stated.is_null() && data_type.kind() == DataKind::Complex) {
    const FillValue back = parse_v2_fill(stated, data_type);
    if (!same_complex(back.bytes, fill_value.bytes, data_type == DataType::complex64))
      throw UnsupportedError("fill_value " + fill_value_to_json(fill_value.bytes, data_type).dump() +
                             ": Zarr v2 states it as " + stated.dump() + ", which zarr-python 2 reads as " +
                             fill_value_to_json(back.bytes, data_type).dump() +
                             "; give that value, or create the array as Zarr v3");
  }
  m.chunk_key_encoding =
      ChunkKeyEncoding::v2(chunk_key_encoding.kind == ChunkKeyEncoding::Kind::V2 ? chunk_key_encoding.separator : '.');
  if (dimension_names) {
    Json names = Json::array();
    for (const auto& n : *dimension_names) {
      if (!n)
        throw UnsupportedError("dimension_names: Zarr v2 (\"_ARRAY_DIMENSIONS\") needs a name for every dimension");
      names.push_back(*n);
    }
    m.attributes["_ARRAY_DIMENSIONS"] = names;
    m.dimension_names.reset();
  }
  return m;
}

Json ArrayMetadata::to_v2_json() const {
  nlohmann::json j = nlohmann::json::object();  // sorted keys, as zarr-python 2 writes them
  j["zarr_format"] = 2;
  j["shape"] = shape;
  j["chunks"] = chunk_grid.chunk_shape;
  j["dtype"] = v2.dtype;
  j["compressor"] = v2.compressor;
  j["fill_value"] = v2_fill_json(*this);
  j["order"] = std::string(1, v2.order);
  j["filters"] = v2.filters;
  if (v2.separator_stated) j["dimension_separator"] = std::string(1, chunk_key_encoding.separator);
  return Json(j);  // keys sorted at every level (nlohmann::json's objects are sorted maps)
}

}  // namespace zarrpp
