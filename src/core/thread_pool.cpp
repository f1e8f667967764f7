#include "zarrpp/core/thread_pool.hpp"

#include <atomic>
#include <exception>
#include <memory>

namespace zarrpp {

std::size_t default_concurrency() {
  const unsigned n = std::thread::hardware_concurrency();
  return n == 0 ? 1 : n;
}

ThreadPool::ThreadPool(std::size_t threads) {
  for (std::size_t i = 0; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard lk(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::submit(std::function<void()> job) {
  {
    std::lock_guard lk(mu_);
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
}

void ThreadPool::worker_loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

void ThreadPool::parallel_for(std::size_t n, std::size_t concurrency, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  if (concurrency <= 1 || n == 1 || workers_.empty()) {
    for (std::size_t i = 0; i < n; ++i) fn(i);
    return;
  }
  struct State {
    std::atomic<std::size_t> next{0};
    std::atomic<bool> failed{false};
    std::mutex mu;
    std::condition_variable cv;
    std::size_t running = 0;
    std::exception_ptr error;
  };
  auto st = std::make_shared<State>();
  auto run = [st, n, &fn] {
    for (;;) {
      if (st->failed.load(std::memory_order_relaxed)) break;
      const std::size_t i = st->next.fetch_add(1);
      if (i >= n) break;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lk(st->mu);
        if (!st->error) st->error = std::current_exception();
        st->failed = true;
      }
    }
  };
  const std::size_t helpers = std::min({concurrency - 1, n - 1, workers_.size()});
  for (std::size_t h = 0; h < helpers; ++h) {
    // A helper only counts as running once it has found work, so the caller never waits for a
    // helper still queued behind busy workers (which would deadlock nested use). A helper that
    // starts after all work is claimed returns without touching `fn`.
    submit([st, run, n] {
      {
        std::lock_guard lk(st->mu);
        if (st->next.load() >= n || st->failed.load()) return;
        ++st->running;
      }
      run();
      std::lock_guard lk(st->mu);
      if (--st->running == 0) st->cv.notify_all();
    });
  }
  run();
  std::unique_lock lk(st->mu);
  st->cv.wait(lk, [&] { return st->running == 0; });
  if (st->error) std::rethrow_exception(st->error);
}

ThreadPool& ThreadPool::global() {
  static ThreadPool pool(default_concurrency());
  return pool;
}

}  // namespace zarrpp
