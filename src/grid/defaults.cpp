// Grid defaults for "auto" (include/zarrpp/grid/defaults.hpp).
#include "zarrpp/grid/defaults.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "zarrpp/core/error.hpp"

namespace zarrpp {

std::vector<std::int64_t> auto_chunks(const std::vector<std::int64_t>& shape, std::size_t itemsize,
                                      std::size_t max_bytes) {
  constexpr double increment = 256.0 * 1024, min_bytes = 128.0 * 1024;
  if (itemsize == 0 || shape.empty()) return shape;
  std::vector<double> c;
  for (const auto n : shape) c.push_back(static_cast<double>(std::max<std::int64_t>(n, 1)));
  auto product = [&] {
    double p = 1;
    for (const double n : c) p *= n;
    return p;
  };
  const double max = static_cast<double>(max_bytes);
  // The PyTables target: 256 KiB times 2^log10(array MiB), clamped to [128 KiB, max_bytes].
  const double target =
      std::clamp(increment * std::pow(2.0, std::log10(product() * static_cast<double>(itemsize) / (1024.0 * 1024))),
                 std::min(min_bytes, max), max);
  for (std::size_t i = 0;; ++i) {
    const double bytes = product() * static_cast<double>(itemsize);
    if ((bytes < target || std::abs(bytes - target) / target < 0.5) && bytes < max) break;
    if (product() == 1) break;
    double& edge = c[i % c.size()];
    edge = std::ceil(edge / 2.0);
  }
  return {c.begin(), c.end()};
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
