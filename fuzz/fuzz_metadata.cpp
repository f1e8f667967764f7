// zarr.json parsing, validation and opening an array from it: never a crash, only zarrpp errors.
#include <cstdint>
#include <string>

#include "zarrpp/zarrpp.hpp"

namespace {
// Opening builds the grid and codec pipeline; a small read exercises them (missing chunks).
void open_and_read(const std::string& key, const std::uint8_t* data, std::size_t size) {
  auto store = zarrpp::MemoryStore::create();
  store->set(key, zarrpp::Bytes(data, data + size));
  auto z = zarrpp::Array::open(store);
  zarrpp::Selection sel;
  for (std::size_t d = 0; d < z.ndim(); ++d) sel.push_back(zarrpp::slice(0, 2));
  std::int64_t n = 1;
  // The largest stored object (a rectilinear grid's chunks differ in size).
  for (const auto& sizes : z.metadata().chunk_grid.distinct_sizes()) {
    if (sizes.back() > (1 << 16)) return;
    n *= std::max<std::int64_t>(sizes.back(), 1);
    if (n > (1 << 16)) return;
  }
  if (z.dtype().size() > 64) return;
  (void)z.read(z.plan(sel));  // fixed-size or variable-length elements
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto m = zarrpp::ArrayMetadata::parse(text);
    // Round trip: what we write parses back to the same bytes.
    const auto again = zarrpp::ArrayMetadata::parse(m.dump());
    if (again.dump() != m.dump()) __builtin_trap();
    open_and_read("zarr.json", data, size);
  } catch (const zarrpp::Error&) {
  }
  try {
    (void)zarrpp::GroupMetadata::parse(text);
  } catch (const zarrpp::Error&) {
  }
  // The same text as a Zarr v2 .zarray: parsing, round trip, opening and a small read.
  try {
    const auto j = zarrpp::parse_json_document(text, ".zarray");
    const auto m = zarrpp::codec::from_v2_document(j, nullptr);
    const auto again = zarrpp::codec::from_v2_document(zarrpp::parse_json_document(m.dump(), ".zarray"), nullptr);
    if (again.dump() != m.dump()) __builtin_trap();
    open_and_read(".zarray", data, size);
  } catch (const zarrpp::Error&) {
  }
  return 0;
}
