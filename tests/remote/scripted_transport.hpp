#pragma once
// A Transport for tests: each attempt's outcome comes from a script (a function of the request and
// how many attempts of that URL came before), answered on the double's own thread, as the libcurl
// transport answers on its. It records every attempt (when it was allowed to start) and every
// hold the client asked for.
#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "store/remote/transport.hpp"

namespace zarrpp::test {

class ScriptedTransport final : public detail::Transport {
 public:
  using Script = std::function<detail::Exchange(const detail::HttpRequest&, int attempt_of_url)>;
  struct Seen {
    std::string method, url;
    Clock::time_point not_before;
  };

  explicit ScriptedTransport(Script script) : script_(std::move(script)) {
    thread_ = std::thread([this] { run(); });
  }
  ~ScriptedTransport() override {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
    for (auto& j : queue_) {
      detail::Exchange e;
      e.error = detail::TransferError::closed;
      e.error_text = "closed";
      j.done(std::move(e));
    }
  }

  void start(std::shared_ptr<const detail::HttpRequest> req, detail::AttemptLimits, Clock::time_point not_before,
             Done done) override {
    {
      std::lock_guard lk(mu_);
      seen_.push_back({req->method, req->url, std::max(not_before, hold_)});
      queue_.push_back({std::move(req), std::max(not_before, hold_), std::move(done)});
    }
    cv_.notify_all();
  }
  void hold_until(Clock::time_point t) override {
    std::lock_guard lk(mu_);
    holds_.push_back(t);
    hold_ = std::max(hold_, t);
  }
  std::size_t in_flight() const override { return 0; }
  std::size_t most_in_flight() const override { return 0; }

  std::vector<Seen> seen() const {
    std::lock_guard lk(mu_);
    return seen_;
  }
  std::vector<Clock::time_point> holds() const {
    std::lock_guard lk(mu_);
    return holds_;
  }

 private:
  struct Job {
    std::shared_ptr<const detail::HttpRequest> req;
    Clock::time_point when;
    Done done;
  };

  void run() {
    std::unique_lock lk(mu_);
    for (;;) {
      if (stop_) return;
      if (queue_.empty()) {
        cv_.wait(lk);
        continue;
      }
      auto it =
          std::min_element(queue_.begin(), queue_.end(), [](const Job& a, const Job& b) { return a.when < b.when; });
      if (it->when > Clock::now()) {
        cv_.wait_until(lk, it->when);
        continue;
      }
      Job j = std::move(*it);
      queue_.erase(it);
      const int attempt = attempts_[j.req->method + " " + j.req->url]++;
      lk.unlock();
      j.done(script_(*j.req, attempt));
      lk.lock();
    }
  }

  Script script_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::deque<Job> queue_;
  std::map<std::string, int> attempts_;
  std::vector<Seen> seen_;
  std::vector<Clock::time_point> holds_;
  Clock::time_point hold_{};
  std::thread thread_;
};

// An answer with `status` and `body`.
inline detail::Exchange answer(long status, std::string body = "") {
  detail::Exchange e;
  e.sends = 1;
  e.response.status = status;
  e.response.body.assign(body.begin(), body.end());
  return e;
}

// An attempt that ended with `error` after the request went out `sends` times.
inline detail::Exchange broken(detail::TransferError error, int sends = 1) {
  detail::Exchange e;
  e.error = error;
  e.error_text = "scripted failure";
  e.sends = sends;
  return e;
}

}  // namespace zarrpp::test
