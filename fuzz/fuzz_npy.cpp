// .npy parsing: any bytes give an array whose size matches its header, or an ArgumentError; a
// header's claimed shape is checked against the data before anything is allocated (RSS stays
// bounded by -rss_limit_mb however large the claim).
#include <cstdint>
#include <span>

#include "zarrpp/zarrpp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto a = zarrpp::npy::parse(std::span<const std::uint8_t>(data, size));
    if (a.nbytes() > size) __builtin_trap();  // more data than the file held
    // What parses serializes and parses back to the same bytes of data.
    const auto again = zarrpp::npy::parse(zarrpp::npy::serialize(a.view()));
    if (again.nbytes() != a.nbytes() || !(again.dtype() == a.dtype())) __builtin_trap();
  } catch (const zarrpp::Error&) {
  }
  return 0;
}
