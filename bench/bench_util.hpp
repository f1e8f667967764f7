#pragma once
// Small helpers for benchmark programs: timing with repeats, and test data with a stated
// compression ratio.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace bench {

// Median seconds of `reps` runs of f (after one warm-up run).
inline double median_seconds(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Smooth synthetic uint16 data (compresses well).
inline std::vector<std::uint16_t> smooth_u16(std::size_t n) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] =
        static_cast<std::uint16_t>(1000 + 500 * std::sin(static_cast<double>(i) * 0.001) + static_cast<double>(i % 64));
  return v;
}

// Microscope-like uint16 data: a smooth signal plus random low bits.
inline std::vector<std::uint16_t> noisy_u16(std::size_t n, unsigned seed = 42) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::uint16_t>(1000 + 500 * std::sin(static_cast<double>(i) * 0.001) + (rng() & 0x3f));
  return v;
}

}  // namespace bench
