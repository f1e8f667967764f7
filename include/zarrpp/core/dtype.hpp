#pragma once
// Zarr v3 core data types.
#include <complex>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace zarrpp {

// IEEE 754 binary16, stored as its bits; converts to and from float.
struct float16 {
  std::uint16_t bits = 0;
  float16() = default;
  explicit float16(float f);
  explicit operator float() const;
  static float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  friend bool operator==(float16 a, float16 b) { return a.bits == b.bits; }
};

// Vlen: variable-length elements (the data types "string" and "bytes"); read and written as VlenValues (Array::read /
// write).
enum class DataKind : std::uint8_t { Bool, Int, UInt, Float, Complex, Raw, Vlen };

class DataType {
 public:
  enum class Id : std::uint8_t {
    bool_,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
    raw,
    string,  // UTF-8 text of any length (zarr-python 3's "string"), codec vlen-utf8
    bytes    // bytes of any length ("variable_length_bytes", also read as "bytes"), codec vlen-bytes
  };

  constexpr DataType() : id_(Id::uint8), size_(1) {}
  constexpr DataType(Id id) : id_(id), size_(size_of(id)) {}  // NOLINT: implicit by design
  // r<bits>, bits a positive multiple of 8.
  static DataType raw(std::size_t bits);
  // Parses a data type name ("int32", "r16", ...); throws MetadataError for unknown names.
  static DataType parse(std::string_view name);
  // A data type as a person types it (CLI --dtype): a Zarr name, or NumPy's spelling of one
  // ("i4", "<i4", "|b1", "?", "f8", "c16", "V2", and int, float, complex, bool, str, bytes as NumPy
  // reads them). Throws ArgumentError listing the names it takes; a big-endian spelling (">i4")
  // is refused (the byte order is the bytes codec's, not the data type's).
  static DataType from_user(std::string_view text);

  Id id() const { return id_; }
  // Bytes per element. A variable-length element is held in memory as an 8-byte index into the
  // strings of one read or write (see Array::read); its stored size varies.
  std::size_t size() const { return size_; }
  bool is_vlen() const { return id_ == Id::string || id_ == Id::bytes; }
  DataKind kind() const;
  // Size of one scalar component for byte swapping (complex64 -> 4, r<N> -> 1).
  std::size_t component_size() const;
  std::string name() const;

  friend bool operator==(const DataType& a, const DataType& b) { return a.id_ == b.id_ && a.size_ == b.size_; }

  // Shorthand constants: zarrpp::DataType::int32 etc.
  static const DataType bool_t, int8, int16, int32, int64, uint8, uint16, uint32, uint64;
  static const DataType float16_t, float32, float64, complex64, complex128;
  static const DataType string_t, bytes_t;

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
        return 8;
    }
    return 1;
  }
  Id id_;
  std::size_t size_;
};

// The DataType of a C++ element type.
template <class T>
struct dtype_of;
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

template <class T>
DataType dtype_v() {
  return dtype_of<T>::get();
}

}  // namespace zarrpp
