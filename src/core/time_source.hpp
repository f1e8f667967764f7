#pragma once
// The time, the sleeps and the random seeds behind every deadline, backoff, lease and lock wait
// (the retry policy, the HTTP client's schedule, the object stores' lease and probe, the zip
// archive's lock, temporary names' randomness). Production reads the steady clock, sleeps for
// real and seeds from std::random_device; a simulation (tests/sim) installs its own source, so a
// 30-second retry window passes in microseconds and jitter follows the simulation's seed.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace zarrpp::detail {

using SteadyTime = std::chrono::steady_clock::time_point;

// A clock, a way to pass time and a source of seeds; installed for the whole process.
class TimeSource {
 public:
  virtual ~TimeSource() = default;
  virtual SteadyTime now() = 0;
  virtual void sleep_for(std::chrono::nanoseconds d) = 0;
  virtual std::uint64_t seed() = 0;  // a seed for one thread's random generator
};

// The installed source's (else the steady clock's) time.
SteadyTime steady_now();
// Lets `d` pass on the installed source (else sleeps the thread).
void sleep_for(std::chrono::nanoseconds d);
// A seed for a random generator (std::random_device unless a source is installed).
std::uint64_t random_seed();
// Whether a simulation's source is installed.
bool simulated_time();

// Waits on `cv` (with `lk` held) until `done()` or until steady_now() reaches `deadline`; returns
// done(). Under a simulation's source the wait polls, since its time passes without notifying.
template <class Done>
bool wait_until(std::condition_variable& cv, std::unique_lock<std::mutex>& lk, SteadyTime deadline, Done done) {
  if (!simulated_time()) return cv.wait_until(lk, deadline, done);
  while (!done()) {
    if (steady_now() >= deadline) return false;
    cv.wait_for(lk, std::chrono::microseconds(200));
  }
  return true;
}

// Installs `source` for the whole process (nullptr: real time again). The caller keeps it alive
// while installed and installs it before the threads that should follow it start their waits.
void set_time_source(TimeSource* source);

}  // namespace zarrpp::detail
