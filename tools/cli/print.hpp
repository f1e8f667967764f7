#pragma once
// Printing values, NumPy style: `get` without --out, and the demo.
#include <ostream>

#include <zarrpp/zarrpp.hpp>

namespace zarrpp::cli {

// A fixed-size array as NumPy prints it (summarized beyond 1000 elements).
void print_array(std::ostream& os, const NDArray& a);

// Variable-length elements (string, bytes) as nested JSON lists; missing elements (VlenValues::missing)
// as `missing`, the JSON value they read as (ArrayMetadata::missing_element).
void print_vlen(std::ostream& os, const VlenValues& v, bool bytes, const Json* missing = nullptr);

}  // namespace zarrpp::cli
