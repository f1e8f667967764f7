#pragma once
/// @file
/// Zarr v3 core data types.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace zarrpp {

/// IEEE 754 binary16, stored as its bits; converts to and from float.
struct float16 {
  std::uint16_t bits = 0;           ///< the IEEE 754 binary16 bits
  float16() = default;              ///< zero
  explicit float16(float f);        ///< rounds `f` to the nearest half (ties to even)
  explicit operator float() const;  ///< the value as a float (exact)
  /// The half whose bits are `b`.
  static float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  friend bool operator==(float16 a, float16 b) { return a.bits == b.bits; }
};

/// Vlen: variable-length elements (the data types "string" and "bytes"); read and written as VlenValues (Array::read /
/// write). Text: NumPy's fixed-width strings (U<n>, S<n>). Time: NumPy's datetime64 and timedelta64,
/// an int64 count of a unit (INT64_MIN is NaT). Struct: NumPy's structured types, named fields laid
/// out one after another.
enum class DataKind : std::uint8_t {
  Bool,     ///< bool
  Int,      ///< signed integers
  UInt,     ///< unsigned integers
  Float,    ///< float16, float32, float64
  Complex,  ///< complex64, complex128
  Raw,      ///< raw bytes (r<bits>, V<n>)
  Vlen,     ///< "string" and "bytes" of any length
  Text,     ///< NumPy U<n> and S<n>
  Time,     ///< datetime64 and timedelta64
  Struct    ///< structured types
};

struct StructField;

/// The type of an array's elements: a Zarr v3 core type, variable-length string / bytes, or one of
/// NumPy's configured types (fixed-width text, datetime64 / timedelta64, raw bytes, structured),
/// with its size in memory and its names in Zarr v3 and v2.
class DataType {
 public:
  /// Which type: the Zarr v3 core types by their names, then the others.
  enum class Id : std::uint8_t {
    bool_,        ///< "bool" (one byte, 0 or 1)
    int8,         ///< "int8"
    int16,        ///< "int16"
    int32,        ///< "int32"
    int64,        ///< "int64"
    uint8,        ///< "uint8"
    uint16,       ///< "uint16"
    uint32,       ///< "uint32"
    uint64,       ///< "uint64"
    float16,      ///< "float16" (IEEE half precision)
    float32,      ///< "float32"
    float64,      ///< "float64"
    complex64,    ///< "complex64" (two float32)
    complex128,   ///< "complex128" (two float64)
    raw,          ///< "r<bits>": opaque bytes of a fixed size
    string,       ///< UTF-8 text of any length (zarr-python 3's "string"), codec vlen-utf8
    bytes,        ///< bytes of any length ("variable_length_bytes", also read as "bytes"), codec vlen-bytes
    fixed_utf32,  ///< NumPy U<n>: n UTF-32 code points, NUL-padded ("fixed_length_utf32")
    fixed_bytes,  ///< NumPy S<n>: n bytes, NUL-padded ("null_terminated_bytes")
    datetime64,   ///< NumPy `datetime64[<scale><unit>]` ("numpy.datetime64")
    timedelta64,  ///< NumPy `timedelta64[<scale><unit>]` ("numpy.timedelta64")
    structured,   ///< NumPy structured type: named fields, each a fixed-size type of some shape
    raw_bytes     ///< NumPy `V<n>`: n opaque bytes ("raw_bytes"; the core type `r<8n>` holds the same)
  };
  /// NumPy's time units, in its order; "generic" (no unit) is not taken.
  static constexpr std::string_view time_units[] = {"Y",  "M",  "W",  "D",  "h",  "m", "s",
                                                    "ms", "us", "ns", "ps", "fs", "as"};

  constexpr DataType() : id_(Id::uint8), size_(1) {}  ///< uint8

  /// The type `id` (of the types that need no size or unit).
  constexpr DataType(Id id) : id_(id), size_(size_of(id)) {}  // NOLINT: implicit by design
  /// r<bits>, bits a positive multiple of 8.
  static DataType raw(std::size_t bits);
  /// @{
  /// NumPy U<chars> and S<bytes>: a positive width.
  static DataType fixed_utf32(std::size_t chars);
  static DataType fixed_bytes(std::size_t bytes);
  /// @}
  /// NumPy V<bytes> as zarr-python 3 names it ("raw_bytes"); r<8 * bytes> holds the same elements.
  static DataType raw_bytes(std::size_t bytes);
  /// @{
  /// datetime64 / timedelta64 in `<scale>` of `<unit>` (one of time_units; "μs" is read as "us"), scale
  /// 1 to 2^31 - 1. Throws MetadataError naming what is wrong.
  static DataType datetime64(std::string_view unit, std::uint32_t scale = 1);
  static DataType timedelta64(std::string_view unit, std::uint32_t scale = 1);
  /// @}
  /// A structured type of `fields` (their offsets are ignored and set here): packed one after
  /// another in the order given, as NumPy lays out a list of (name, type[, shape]). Names must be
  /// distinct and non-empty; a field's type is any fixed-size type, a structured one included.
  /// Throws MetadataError naming what is wrong.
  static DataType structured(std::vector<StructField> fields);
  /// Parses a data type name ("int32", "r16", ...) or a display name of a configured type
  /// ("U12", "S5", "datetime64[ns]"); throws MetadataError for unknown names.
  static DataType parse(std::string_view name);
  /// A data type as a person types it (CLI --dtype): a Zarr name, or NumPy's spelling of one
  /// ("i4", "<i4", "|b1", "?", "f8", "c16", "V2", "U12", "S5", "M8[ns]", "m8[s]", and int, float,
  /// complex, bool, str, bytes as NumPy reads them). Throws ArgumentError listing the names it takes; a big-endian
  /// spelling (">i4") is refused (the byte order is the bytes codec's, not the data type's).
  static DataType from_user(std::string_view text);

  Id id() const { return id_; }  ///< which type

  /// Bytes per element. A variable-length element is held in memory as an 8-byte index into the
  /// strings of one read or write (see Array::read); its stored size varies.
  constexpr std::size_t size() const { return size_; }
  bool is_vlen() const { return id_ == Id::string || id_ == Id::bytes; }  ///< "string" or "bytes"
  DataKind kind() const;                                                  ///< the family of the type

  /// Size of one scalar component for byte swapping (complex64 -> 4, r<N> -> 1, U<n> -> 4).
  /// A structured type: its largest field component (1 when every field is a byte wide).
  std::size_t component_size() const;
  /// Reverses the byte order of every multi-byte component of the elements in `b` (a whole number
  /// of elements): what the bytes codec does for big-endian data. A structured type swaps each field.
  void swap_byte_order(std::span<std::uint8_t> b) const;
  /// A structured type's fields, in order; empty for other types.
  const std::vector<StructField>& fields() const;
  /// NumPy's dtype.str of a non-structured type in the given byte order ("<i4", "|b1", ">U3",
  /// "<M8[ns]", "|V8", "|S5"; "|O" for variable-length types).
  std::string numpy_str(bool big_endian = false) const;
  /// The Zarr name of a core type ("int32", "r16"); a configured type by its NumPy name ("U12",
  /// "S5", "datetime64[10s]"), which parse() and NumPy both read; a structured type as NumPy's
  /// descr in JSON, as Zarr v2 states it (`[["a", "<i4"], ["b", "<f8", [2]]]`).
  std::string name() const;
  /// @{
  /// Time types: the unit ("ns") and scale factor; "" and 1 for other types.
  std::string_view time_unit() const { return is_time() ? time_units[unit_] : std::string_view(); }
  std::uint32_t time_scale() const { return scale_; }
  /// @}
  bool is_time() const { return id_ == Id::datetime64 || id_ == Id::timedelta64; }  ///< datetime64 or timedelta64

  /// Whether elements of the two types are the same bytes meaning the same thing: equal types, or
  /// raw bytes of one size under either name (r<8n>, V<n>), also as fields of structured types
  /// alike otherwise. What a write's data must match.
  bool holds_same_elements(const DataType& other) const;

  friend bool operator==(const DataType& a, const DataType& b) {
    return a.id_ == b.id_ && a.size_ == b.size_ && a.unit_ == b.unit_ && a.scale_ == b.scale_ &&
           a.fields_ == b.fields_;  // interned: the same fields are the same list
  }

  /// @name Shorthand constants: DataType::int32 etc., one per core type (Zarr v3's names; bool_t,
  /// float16_t, string_t and bytes_t where the name is a C++ keyword or type).
  /// @{
  static const DataType bool_t;      ///< "bool"
  static const DataType int8;        ///< "int8"
  static const DataType int16;       ///< "int16"
  static const DataType int32;       ///< "int32"
  static const DataType int64;       ///< "int64"
  static const DataType uint8;       ///< "uint8"
  static const DataType uint16;      ///< "uint16"
  static const DataType uint32;      ///< "uint32"
  static const DataType uint64;      ///< "uint64"
  static const DataType float16_t;   ///< "float16"
  static const DataType float32;     ///< "float32"
  static const DataType float64;     ///< "float64"
  static const DataType complex64;   ///< "complex64"
  static const DataType complex128;  ///< "complex128"
  static const DataType string_t;    ///< "string": UTF-8 text of any length
  static const DataType bytes_t;     ///< "bytes": bytes of any length

  /// @}

 private:
  constexpr DataType(Id id, std::size_t size) : id_(id), size_(size) {}
  static constexpr std::size_t size_of(Id id) {
    switch (id) {
      case Id::bool_:
      case Id::int8:
      case Id::uint8:
        return 1;
      case Id::int16:
      case Id::uint16:
      case Id::float16:
        return 2;
      case Id::int32:
      case Id::uint32:
      case Id::float32:
        return 4;
      case Id::int64:
      case Id::uint64:
      case Id::float64:
      case Id::complex64:
        return 8;
      case Id::complex128:
        return 16;
      case Id::raw:
        return 1;
      case Id::string:
      case Id::bytes:
      case Id::datetime64:
      case Id::timedelta64:
        return 8;
      case Id::fixed_utf32:
        return 4;
      case Id::fixed_bytes:
      case Id::structured:
      case Id::raw_bytes:
        return 1;
    }
    return 1;
  }
  static DataType time(Id id, std::string_view unit, std::uint32_t scale);
  Id id_;
  std::size_t size_;
  std::uint8_t unit_ = 0;
  std::uint32_t scale_ = 1;
  /// Structured types only: the fields, interned (one list per distinct set of fields, kept for
  /// the life of the process), so a DataType stays a small value that copies as cheaply as an int.
  const std::vector<StructField>* fields_ = nullptr;
};

/// One field of a structured type: `shape` is empty for a scalar field, else the field holds an
/// array of that shape (C order) of `type`.
struct StructField {
  std::string name;                ///< the field's name
  DataType type;                   ///< its elements' type
  std::vector<std::size_t> shape;  ///< empty for a scalar field
  std::size_t offset = 0;          ///< bytes from the start of the element
  /// Elements the field holds (1 for a scalar field).
  std::size_t count() const {
    std::size_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }
  friend bool operator==(const StructField&, const StructField&) = default;
};

/// A data type with the byte order its elements are stored in.
struct NumpyType {
  DataType type;            ///< the data type
  bool big_endian = false;  ///< stored big-endian
};

/// DataType::from_user's spellings with the byte order they state, as NumPy reads them: ">i4" is
/// int32 stored big-endian, "<i4", "|i4" and "i4" little-endian, "=i4" the machine's order; one-byte
/// types have none. Throws ArgumentError naming the text ("O" is refused: string or bytes?).
NumpyType parse_numpy_spelling(std::string_view text);

/// The DataType of a C++ element type: `dtype_of<T>::get()`, for bool, the fixed-width integers,
/// float16, float, double and std::complex<float / double>.
template <class T>
struct dtype_of;
/// @cond SPECIALIZATIONS
template <>
struct dtype_of<bool> {
  static DataType get() { return DataType::Id::bool_; }
};
template <>
struct dtype_of<std::int8_t> {
  static DataType get() { return DataType::Id::int8; }
};
template <>
struct dtype_of<std::int16_t> {
  static DataType get() { return DataType::Id::int16; }
};
template <>
struct dtype_of<std::int32_t> {
  static DataType get() { return DataType::Id::int32; }
};
template <>
struct dtype_of<std::int64_t> {
  static DataType get() { return DataType::Id::int64; }
};
template <>
struct dtype_of<std::uint8_t> {
  static DataType get() { return DataType::Id::uint8; }
};
template <>
struct dtype_of<std::uint16_t> {
  static DataType get() { return DataType::Id::uint16; }
};
template <>
struct dtype_of<std::uint32_t> {
  static DataType get() { return DataType::Id::uint32; }
};
template <>
struct dtype_of<std::uint64_t> {
  static DataType get() { return DataType::Id::uint64; }
};
template <>
struct dtype_of<float16> {
  static DataType get() { return DataType::Id::float16; }
};
template <>
struct dtype_of<float> {
  static DataType get() { return DataType::Id::float32; }
};
template <>
struct dtype_of<double> {
  static DataType get() { return DataType::Id::float64; }
};
template <>
struct dtype_of<std::complex<float>> {
  static DataType get() { return DataType::Id::complex64; }
};
template <>
struct dtype_of<std::complex<double>> {
  static DataType get() { return DataType::Id::complex128; }
};
/// @endcond

/// The DataType of a C++ element type T (dtype_of<T>::get()).
template <class T>
DataType dtype_v() {
  return dtype_of<T>::get();
}

}  // namespace zarrpp
