#include "zarrpp/core/thread_pool.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>

namespace zarrpp {

std::size_t default_concurrency() {
  // Read once: glibc reads /sys/devices/system/cpu/online on every call, and every array opened
  // asks (an open of a small local array is tens of microseconds).
  static const std::size_t n = std::max(1U, std::thread::hardware_concurrency());
  return n;
}

ThreadPool::ThreadPool(std::size_t threads) : threads_(threads) { shared(); }

ThreadPool::~ThreadPool() {
  if (pid_.load() != ::getpid()) return;  // a forked child's inherited pool: its threads are not here
  {
    std::lock_guard lk(sh_->mu);
    sh_->stop = true;
  }
  sh_->cv.notify_all();
  for (auto& t : workers_) t.join();
}

ThreadPool::Shared& ThreadPool::shared() {
  const int pid = ::getpid();
  if (pid_.load(std::memory_order_acquire) == pid) return *sh_;
  std::lock_guard lk(start_mu_);
  if (pid_.load() != pid) {
    if (pid_.load() != 0) {
      // A forked child: the parent's workers are not in this process. Their std::thread objects
      // and shared state are left as they are (never joined, never destroyed).
      // Kept reachable from a static, so a leak checker in the child does not report them.
      static auto* const left = new std::vector<std::pair<std::vector<std::thread>, std::shared_ptr<Shared>>>;
      left->emplace_back(std::move(workers_), std::move(sh_));
      workers_.clear();
    }
    sh_ = std::make_shared<Shared>();
    for (std::size_t i = 0; i < threads_; ++i) workers_.emplace_back([sh = sh_] { worker_loop(sh); });
    pid_.store(pid, std::memory_order_release);
  }
  return *sh_;
}

void ThreadPool::submit(std::function<void()> job) {
  Shared& sh = shared();
  {
    std::lock_guard lk(sh.mu);
    sh.jobs.push_back(std::move(job));
  }
  sh.cv.notify_one();
}

void ThreadPool::worker_loop(const std::shared_ptr<Shared>& sh) {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lk(sh->mu);
      sh->cv.wait(lk, [&] { return sh->stop || !sh->jobs.empty(); });
      if (sh->jobs.empty()) return;
      job = std::move(sh->jobs.front());
      sh->jobs.pop_front();
    }
    job();
  }
}

void ThreadPool::parallel_for(std::size_t n, std::size_t concurrency, const std::function<void(std::size_t)>& fn) {
  if (n == 0) return;
  if (concurrency <= 1 || n == 1 || threads_ == 0) {
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
  const std::size_t helpers = std::min({concurrency - 1, n - 1, threads_});
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
