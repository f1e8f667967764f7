// Selection parsing and planning against a small regular_bounded array: a SelectionError or a
// correct read, never a crash.
#include <cstdint>
#include <string>

#include "zarrpp/zarrpp.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static zarrpp::Array z = [] {
    auto a = zarrpp::Array::create(zarrpp::MemoryStore::create(), {.shape = {7, 5, 3},
                                                                   .chunks = {3, 2, 2},
                                                                   .dtype = zarrpp::DataType::int16,
                                                                   .lower_bound = zarrpp::Shape{-4, 0, 2},
                                                                   .origin = zarrpp::Shape{0, 1, 0}});
    a.fill<std::int16_t>(3);
    a.set_concurrency(1);
    return a;
  }();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto sel = zarrpp::parse_selection(text);
    const auto shape = z.selection_shape(sel);
    std::int64_t n = 1;
    for (auto s : shape) n *= s;
    const auto a = z.read(sel);
    if (a.size() != n) __builtin_trap();
    for (std::int64_t i = 0; i < a.size(); ++i)
      if (a.data<std::int16_t>()[i] != 3) __builtin_trap();
  } catch (const zarrpp::SelectionError&) {
  }
  return 0;
}
