#include "retry.hpp"

#include <algorithm>
#include <random>

namespace zarrpp::detail {

Retry::Retry(const RetryPolicy& policy) : policy_(policy), delay_(policy.initial_delay), window_start_(steady_now()) {}

bool Retry::deadline_passed() const {
  return policy_.deadline.count() > 0 && steady_now() - window_start_ >= policy_.deadline;
}

bool Retry::exhausted() const {
  return (policy_.max_attempts > 0 && attempts_ >= policy_.max_attempts) || deadline_passed();
}

void Retry::cap_delay(std::chrono::microseconds cap) {
  policy_.max_delay = std::max(std::chrono::microseconds{1}, std::min(policy_.max_delay, cap));
  delay_ = std::min(delay_, policy_.max_delay);
}

bool Retry::next(std::chrono::microseconds at_least) {
  if (exhausted()) return false;
  wait(at_least);
  return true;
}

std::chrono::microseconds Retry::advance(std::chrono::microseconds at_least) {
  thread_local std::minstd_rand rng{static_cast<std::minstd_rand::result_type>(random_seed())};
  const auto wait = std::min(std::max(delay_, at_least), policy_.max_delay);
  const auto half = wait.count() / 2;
  const auto jitter = half > 0 ? std::uniform_int_distribution<long long>(0, half)(rng) : 0;
  delay_ = std::min(delay_ * 2, policy_.max_delay);
  ++attempts_;
  return std::chrono::microseconds(wait.count() - half + jitter);
}

void Retry::wait(std::chrono::microseconds at_least) { sleep_for(advance(at_least)); }

}  // namespace zarrpp::detail
