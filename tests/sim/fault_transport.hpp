#pragma once
// The transport of a simulated run: every attempt an S3Store's HttpClient makes goes to the
// simulated object server in this process, and the run's seed decides for each attempt whether a
// fault hits it and which. The client's own retry, timeout, condition and lost-reply code is what
// meets the faults. Attempts are answered on the transport's own thread in the order of the times
// they may start, the simulated clock moving on to that time (a backoff costs no real time).
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <random>
#include <string>
#include <thread>

#include "object_server.hpp"
#include "sim_time.hpp"

namespace zarrpp::sim {

enum class Fault {
  lost_after,      // the server carried the request out; its reply was lost (connection reset)
  lost_before,     // the request went out and never arrived (reset before the server saw it)
  server_error,    // 503 SlowDown (not carried out) or 500 (carried out or not)
  reset_mid_body,  // the connection broke after part of the response body came
  cut_body,        // the response ended before the body its headers announced
  over_long,       // more than asked: a ranged GET answered whole (Range ignored), or a body too large
  etag_changed,    // the object was rewritten (same bytes, new ETag) just before the request
  stall,           // no byte moved until the client's stall timeout (carried out or not)
  conflict,        // 409 ConditionalRequestConflict to a conditional PUT (not carried out)
  refused,         // no connection: the request never went out
  count
};
const char* fault_name(Fault f);

struct FaultCounts {
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(Fault::count)> by_kind{};
  std::atomic<std::uint64_t> requests{0}, lost_conditional_put_replies{0}, list_lags{0};
  std::uint64_t total() const {
    std::uint64_t n = 0;
    for (const auto& k : by_kind) n += k.load();
    return n;
  }
};

struct FaultPlan {
  double rate = 0.2;  // chance that an attempt meets a fault
  int max_list_lag = 3;
  // Whether the server may answer a conditional PUT with 409 ConditionalRequestConflict (only a
  // server that honours conditions does).
  bool conflicts = true;
};

// The operation the calling thread is carrying out (0: none): the server attributes its changes.
std::uint64_t& current_op();

class FaultTransport final : public detail::Transport {
 public:
  FaultTransport(ObjectServer& server, SimTime& time, FaultCounts& counts, FaultPlan plan, std::uint64_t seed);
  ~FaultTransport() override;
  void start(std::shared_ptr<const detail::HttpRequest> req, detail::AttemptLimits limits, Clock::time_point not_before,
             Done done) override;
  void hold_until(Clock::time_point t) override;
  std::size_t in_flight() const override { return 0; }
  std::size_t most_in_flight() const override { return 0; }

 private:
  struct Job {
    std::shared_ptr<const detail::HttpRequest> req;
    detail::AttemptLimits limits;
    Clock::time_point when;
    Done done;
    std::uint64_t op;
  };
  void run();
  detail::Exchange attempt(const Job& j);
  detail::Exchange faulty(const Job& j, Fault f);
  Fault pick(const detail::HttpRequest& req);

  ObjectServer& server_;
  SimTime& time_;
  FaultCounts& counts_;
  FaultPlan plan_;
  std::mt19937_64 rng_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  Clock::time_point hold_{};
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace zarrpp::sim
