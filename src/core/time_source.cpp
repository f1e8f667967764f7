#include "time_source.hpp"

#include <atomic>
#include <random>
#include <thread>

namespace zarrpp::detail {

namespace {
std::atomic<TimeSource*> g_source{nullptr};
}

SteadyTime steady_now() {
  if (auto* s = g_source.load(std::memory_order_acquire)) return s->now();
  return std::chrono::steady_clock::now();
}

void sleep_for(std::chrono::nanoseconds d) {
  if (auto* s = g_source.load(std::memory_order_acquire)) return s->sleep_for(d);
  std::this_thread::sleep_for(d);
}

std::uint64_t random_seed() {
  if (auto* s = g_source.load(std::memory_order_acquire)) return s->seed();
  std::random_device rd;
  return (std::uint64_t{rd()} << 32) ^ rd();
}

bool simulated_time() { return g_source.load(std::memory_order_acquire) != nullptr; }

void set_time_source(TimeSource* source) { g_source.store(source, std::memory_order_release); }

}  // namespace zarrpp::detail
