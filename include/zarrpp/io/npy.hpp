#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0): every core data type, both byte orders,
// C and Fortran order.
#include <filesystem>
#include <span>
#include <string>

#include "zarrpp/core/ndarray.hpp"

namespace zarrpp::npy {

// Parses .npy bytes into a C-order, native-endian array. Throws Error naming what is wrong.
NDArray parse(std::span<const std::uint8_t> bytes);
NDArray load(const std::filesystem::path& path);
// Serialises a view (any strides) as a version 1.0 .npy (2.0 if the header needs it),
// little-endian, C order.
Bytes serialize(const NDView& view);
void save(const std::filesystem::path& path, const NDView& view);

// The NumPy dtype string for a data type ("<i4", "|b1", "<c16", "|V3" for r24, "<f2").
std::string descr_of(const DataType& t);

}  // namespace zarrpp::npy
