// Grid defaults for "auto" (include/zarrpp/grid/defaults.hpp).
#include "zarrpp/grid/defaults.hpp"

#include <algorithm>
#include <string>

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::vector<std::int64_t> auto_chunks(const std::vector<std::int64_t>& shape, std::size_t itemsize,
                                      std::size_t target_bytes) {
  std::vector<std::int64_t> c;
  for (const auto n : shape) c.push_back(std::max<std::int64_t>(n, 1));
  auto bytes = [&] {
    long double b = static_cast<long double>(itemsize);
    for (const auto n : c) b *= static_cast<long double>(n);
    return b;
  };
  while (!c.empty() && bytes() > static_cast<long double>(target_bytes)) {
    const auto longest = std::max_element(c.begin(), c.end());  // the first of equals, as Python's index(max)
    if (*longest == 1) break;
    *longest = (*longest + 1) / 2;
  }
  return c;
}

std::vector<std::int64_t> auto_shards(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks) {
  if (shape.size() != chunks.size())
    throw ArgumentError("shards auto: chunks " + std::to_string(chunks.size()) + "-d for a " +
                        std::to_string(shape.size()) + "-d shape");
  std::vector<std::int64_t> s;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (chunks[d] <= 0) throw ArgumentError("shards auto: chunk edges must be positive");
    s.push_back(shape[d] / chunks[d] > 8 ? 2 * chunks[d] : chunks[d]);
  }
  return s;
}

}  // namespace zarrpp
