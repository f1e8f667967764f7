#pragma once
// Simulated time: a clock that runs `scale` times faster than the real one, for every thread at
// once (so deadlines, backoffs, stalls and leases keep their proportions while a 30-second retry
// window passes in milliseconds). Installed for the whole process as zarrpp's time source
// (src/core/time_source.hpp); random seeds follow the run's seed.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>

#include "core/time_source.hpp"

namespace zarrpp::sim {

inline std::uint64_t mix(std::uint64_t x) {  // splitmix64
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class SimTime final : public detail::TimeSource {
 public:
  // `scale`: simulated seconds per real second (2000: a 30 s retry window passes in 15 ms, a
  // 100 ms backoff in 50 us).
  SimTime(std::uint64_t seed, double scale)
      : seed_(seed), scale_(scale), real_start_(std::chrono::steady_clock::now()) {}
  detail::SteadyTime now() override {
    const auto real = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - real_start_);
    return start() + std::chrono::nanoseconds(static_cast<std::int64_t>(real.count() * scale_));
  }
  void sleep_for(std::chrono::nanoseconds d) override { std::this_thread::sleep_for(real(d)); }
  std::uint64_t seed() override { return mix(seed_ ^ mix(seeds_given_.fetch_add(1))); }
  // The real time `d` of simulated time takes.
  std::chrono::nanoseconds real(std::chrono::nanoseconds d) const {
    return std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(d.count()) / scale_));
  }
  std::chrono::nanoseconds elapsed() { return now() - start(); }

 private:
  // An hour after the clock's epoch, so no time the library computes is the zero "unset" value.
  static detail::SteadyTime start() { return detail::SteadyTime{} + std::chrono::hours(1); }
  std::uint64_t seed_;
  double scale_;
  std::chrono::steady_clock::time_point real_start_;
  std::atomic<std::uint64_t> seeds_given_{0};
};

// Installs a SimTime for its lifetime.
class SimTimeScope {
 public:
  explicit SimTimeScope(SimTime& t) { detail::set_time_source(&t); }
  ~SimTimeScope() { detail::set_time_source(nullptr); }
  SimTimeScope(const SimTimeScope&) = delete;
  SimTimeScope& operator=(const SimTimeScope&) = delete;
};

}  // namespace zarrpp::sim
