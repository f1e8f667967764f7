// Grid defaults for "auto" (include/zarrpp/grid/defaults.hpp).
#include "zarrpp/grid/defaults.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "../core/dtype_table.hpp"
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

std::vector<std::int64_t> auto_shards(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks,
                                      std::size_t itemsize, std::optional<std::size_t> target_bytes) {
  if (shape.size() != chunks.size())
    throw ArgumentError("shards auto: chunks " + std::to_string(chunks.size()) + "-d for a " +
                        std::to_string(shape.size()) + "-d shape");
  long double chunk_bytes = static_cast<long double>(itemsize);
  for (const auto c : chunks) {
    if (c <= 0) throw ArgumentError("shards auto: chunk edges must be positive");
    chunk_bytes *= static_cast<long double>(c);
  }
  // With a target: the most chunks per dimension (the same count along each) whose shard stays
  // within the target and the array; without one, two along dimensions of more than 8 chunks.
  std::int64_t per_axis = 2;
  if (target_bytes) {
    per_axis = 1;
    const auto fits = [&](std::int64_t n) {
      if (chunk_bytes * std::pow(static_cast<long double>(n), static_cast<long double>(chunks.size())) >
          static_cast<long double>(*target_bytes))
        return false;
      for (std::size_t d = 0; d < shape.size(); ++d)
        if (chunks[d] * n > shape[d]) return false;
      return true;
    };
    if (chunk_bytes <= static_cast<long double>(*target_bytes))
      while (fits(per_axis + 1)) ++per_axis;
  }
  std::vector<std::int64_t> s;
  for (std::size_t d = 0; d < shape.size(); ++d)
    s.push_back(target_bytes || shape[d] / chunks[d] > 8 ? per_axis * chunks[d] : chunks[d]);
  return s;
}

std::size_t auto_item_size(const DataType& t) {
  const std::size_t stated = dtype_table::row(t.id()).auto_item_size;
  return stated > 0 ? stated : t.size();
}

std::vector<std::int64_t> auto_chunks(const std::vector<std::int64_t>& shape, const DataType& t, bool sharded) {
  return auto_chunks(shape, auto_item_size(t), sharded ? kShardedInnerChunkMaxBytes : kAutoChunkMaxBytes);
}

std::vector<std::int64_t> auto_shards(const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& chunks,
                                      const DataType& t, std::optional<std::size_t> target_bytes) {
  return auto_shards(shape, chunks, auto_item_size(t), target_bytes);
}

}  // namespace zarrpp
