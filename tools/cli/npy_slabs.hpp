#pragma once
// .npy files in slabs: `get --out` and `set --from` stream a selection through one reused buffer
// (npy_slabs.cpp says how).
#include <string>

#include <zarrpp/zarrpp.hpp>

namespace zarrpp::cli {

// `get --out`: the selection (zero-based, or in the domain's coordinates) into a new .npy file.
void save_selection(const Array& z, const Selection& sel, bool coords, const std::string& path);

// `set --from`: a .npy file into the selection.
void set_from_npy(Array& z, const Selection& sel, bool coords, const std::string& path);

}  // namespace zarrpp::cli
