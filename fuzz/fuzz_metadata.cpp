// zarr.json parsing, validation and opening an array from it: never a crash, only zarrpp errors.
#include <cstdint>
#include <string>

#include "zarrpp/zarrpp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto m = zarrpp::ArrayMetadata::parse(text);
    // Round trip: what we write parses back to the same bytes.
    const auto again = zarrpp::ArrayMetadata::parse(m.dump());
    if (again.dump() != m.dump()) __builtin_trap();
    // Opening builds the grid and codec pipeline; a small read exercises them (missing chunks).
    auto store = zarrpp::MemoryStore::create();
    store->set("zarr.json", zarrpp::Bytes(data, data + size));
    auto z = zarrpp::Array::open(store);
    zarrpp::Selection sel;
    for (std::size_t d = 0; d < z.ndim(); ++d) sel.push_back(zarrpp::slice(0, 2));
    std::int64_t n = 1;
    for (auto s : z.chunks()) n *= std::max<std::int64_t>(s, 1);
    if (n <= (1 << 16) && z.dtype().size() <= 64) (void)z.read(sel);
  } catch (const zarrpp::Error&) {
  }
  try {
    (void)zarrpp::GroupMetadata::parse(text);
  } catch (const zarrpp::Error&) {
  }
  return 0;
}
