#pragma once
// The one table of zarrpp's data types: for each DataType::Id its family, its names in Zarr v3
// metadata, in NumPy (dtype.str, the display name, the words people type) and its "auto" item
// size. DataType's names, the metadata's data_type and dtype fields (both formats), the CLI's
// --dtype and Python's dtype= all read them here. A new data type is a new Id and a row here;
// the elements' own conversions (fill values, codecs that convert) follow its DataKind.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "zarrpp/core/dtype.hpp"

namespace zarrpp::dtype_table {

// How Zarr v3 metadata states a type's size or unit beside its name.
enum class Config : std::uint8_t {
  none,          // the name says everything ("int32")
  bits_in_name,  // "r<bits>"
  length_bytes,  // {"length_bytes": n}
  time_unit,     // {"unit": "ns", "scale_factor": 1}
  fields         // {"fields": [...]}
};

struct Row {
  DataType::Id id;
  DataKind kind;
  std::string_view zarr_name;     // Zarr v3's name (a configured type's extension name; "r" for r<bits>)
  std::string_view zarr_aliases;  // other names zarr.json may use, space-separated
  Config config;
  // NumPy's dtype.str without its byte order: the whole code of a fixed type ("i4", "O"), the
  // letters a width or unit follows for the others ("U", "M8"); "" for structured types.
  std::string_view numpy_code;
  // zarrpp's (and NumPy's) display name of a type with a width or unit, before it ("U",
  // "datetime64"); the display name of the others is zarr_name.
  std::string_view numpy_name;
  std::string_view user_words;  // more spellings a user types, space-separated (NumPy's "int", "double")
  std::size_t width_unit;       // bytes per unit of a width ("U12": 4 per character); 0 for fixed sizes
  std::size_t auto_item_size;   // bytes per element for chunks="auto"; 0: the element's size
};

using Id = DataType::Id;
using K = DataKind;
using C = Config;

// In Id order (checked below).
inline constexpr Row rows[] = {
    {Id::bool_, K::Bool, "bool", "", C::none, "b1", "", "?", 0, 0},
    {Id::int8, K::Int, "int8", "", C::none, "i1", "", "", 0, 0},
    {Id::int16, K::Int, "int16", "", C::none, "i2", "", "", 0, 0},
    {Id::int32, K::Int, "int32", "", C::none, "i4", "", "", 0, 0},
    {Id::int64, K::Int, "int64", "", C::none, "i8", "", "int", 0, 0},
    {Id::uint8, K::UInt, "uint8", "", C::none, "u1", "", "", 0, 0},
    {Id::uint16, K::UInt, "uint16", "", C::none, "u2", "", "", 0, 0},
    {Id::uint32, K::UInt, "uint32", "", C::none, "u4", "", "", 0, 0},
    {Id::uint64, K::UInt, "uint64", "", C::none, "u8", "", "uint", 0, 0},
    {Id::float16, K::Float, "float16", "", C::none, "f2", "", "half", 0, 0},
    {Id::float32, K::Float, "float32", "", C::none, "f4", "", "single", 0, 0},
    {Id::float64, K::Float, "float64", "", C::none, "f8", "", "float double", 0, 0},
    {Id::complex64, K::Complex, "complex64", "", C::none, "c8", "", "", 0, 0},
    {Id::complex128, K::Complex, "complex128", "", C::none, "c16", "", "complex", 0, 0},
    {Id::raw, K::Raw, "r", "", C::bits_in_name, "V", "", "", 1, 0},
    {Id::string, K::Vlen, "string", "", C::none, "O", "", "str U T variable_length_utf8", 0, 1},
    {Id::bytes, K::Vlen, "variable_length_bytes", "bytes", C::none, "O", "", "bytes S", 0, 1},
    {Id::fixed_utf32, K::Text, "fixed_length_utf32", "", C::length_bytes, "U", "U", "", 4, 0},
    {Id::fixed_bytes, K::Text, "null_terminated_bytes", "", C::length_bytes, "S", "S", "", 1, 0},
    {Id::datetime64, K::Time, "numpy.datetime64", "", C::time_unit, "M8", "datetime64", "", 0, 0},
    {Id::timedelta64, K::Time, "numpy.timedelta64", "", C::time_unit, "m8", "timedelta64", "", 0, 0},
    {Id::structured, K::Struct, "struct", "structured", C::fields, "", "", "", 0, 0},
    {Id::raw_bytes, K::Raw, "raw_bytes", "", C::length_bytes, "V", "V", "", 1, 0},
};

consteval bool rows_in_id_order() {
  for (std::size_t i = 0; i < std::size(rows); ++i)
    if (static_cast<std::size_t>(rows[i].id) != i) return false;
  return std::size(rows) == static_cast<std::size_t>(Id::raw_bytes) + 1;
}
static_assert(rows_in_id_order(), "one row per DataType::Id, in Id order");

// A fixed type's memory size is what its NumPy code says ("i4": 4 bytes).
consteval bool sizes_match_numpy_codes() {
  for (const auto& r : rows) {
    if (r.config != C::none || r.kind == K::Vlen) continue;
    std::size_t n = 0;
    for (char c : r.numpy_code.substr(1)) n = n * 10 + static_cast<std::size_t>(c - '0');
    if (n != DataType(r.id).size()) return false;
  }
  return true;
}
static_assert(sizes_match_numpy_codes());

inline constexpr const Row& row(Id id) { return rows[static_cast<std::size_t>(id)]; }

// Whether `word` is one of the space-separated `words`.
constexpr bool among(std::string_view words, std::string_view word) {
  while (!words.empty()) {
    const auto end = words.find(' ');
    if (words.substr(0, end) == word) return true;
    if (end == std::string_view::npos) break;
    words.remove_prefix(end + 1);
  }
  return false;
}

// The row a zarr.json data_type name (or an alias) names; nullptr for none ("r<bits>" included:
// its name has its size).
inline const Row* by_zarr_name(std::string_view name) {
  for (const auto& r : rows)
    if (r.config != C::bits_in_name && (r.zarr_name == name || among(r.zarr_aliases, name))) return &r;
  return nullptr;
}

// The fixed-size type whose NumPy code (dtype.str without byte order) is `code`: "i4", "b1".
inline const Row* by_numpy_code(std::string_view code) {
  for (const auto& r : rows)
    if (r.config == C::none && r.kind != K::Vlen && r.numpy_code == code) return &r;
  return nullptr;
}

// The type a user's word names ("int", "str"); nullptr for none.
inline const Row* by_user_word(std::string_view word) {
  for (const auto& r : rows)
    if (among(r.user_words, word)) return &r;
  return nullptr;
}

}  // namespace zarrpp::dtype_table
