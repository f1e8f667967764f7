#pragma once
// The one retry policy: every loop that tries again (a lost compare-and-swap on metadata or a
// chunk, a transient HTTP failure, a held lock, a store probe) waits and gives up by these rules.
// What is worth another attempt is the caller's to say: it knows its errors.
#include <chrono>

#include "time_source.hpp"

namespace zarrpp::detail {

struct RetryPolicy {
  // The first wait; doubled after every attempt up to max_delay. Each wait is "equal jitter":
  // half of it fixed, half random, so contending writers spread out.
  std::chrono::microseconds initial_delay{200};
  std::chrono::microseconds max_delay{50'000};
  // No new attempt once this long has passed since the start (or the last progress); 0: no limit.
  std::chrono::milliseconds deadline{60'000};
  // No more than this many attempts in all; 0: no limit.
  int max_attempts = 0;
};

// Compare-and-swap lost to another writer (zarr.json, .zattrs, .zmetadata, a chunk's
// read-modify-write): short waits, and a minute before giving up.
inline constexpr RetryPolicy kSwapRetry{};

// One retry loop's state. Usage:
//   Retry retry(policy);
//   for (;;) { if (attempt()) return; if (!retry.next()) throw ...(retry.attempts()); }
class Retry {
 public:
  explicit Retry(const RetryPolicy& policy);
  // After a failed attempt: false when the policy allows no other (deadline or attempts used up);
  // otherwise waits the next delay (at least `at_least`, e.g. a server's Retry-After, but never
  // more than max_delay) and returns true.
  bool next(std::chrono::microseconds at_least = std::chrono::microseconds{0});
  // Waits the next delay and counts the next attempt, for a caller that decided on its own (from
  // exhausted()) that there is one.
  void wait(std::chrono::microseconds at_least = std::chrono::microseconds{0});
  // The same without sleeping: counts the next attempt and returns how long to wait before it
  // (for a caller that schedules the attempt instead of blocking a thread).
  std::chrono::microseconds advance(std::chrono::microseconds at_least = std::chrono::microseconds{0});
  // Whether next() would give up now.
  bool exhausted() const;
  bool deadline_passed() const;
  // Attempts made so far, counting the one running (1 before the first next()).
  int attempts() const { return attempts_; }
  // The last attempt made progress (moved data): the deadline counts from now.
  void progress() { window_start_ = steady_now(); }
  // Caps the delays from now on (a lock whose holder renews often is asked more often).
  void cap_delay(std::chrono::microseconds cap);
  const RetryPolicy& policy() const { return policy_; }

 private:
  RetryPolicy policy_;
  std::chrono::microseconds delay_;
  SteadyTime window_start_;
  int attempts_ = 1;
};

}  // namespace zarrpp::detail
