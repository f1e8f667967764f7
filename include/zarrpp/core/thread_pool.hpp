#pragma once
/// @file
/// A small fixed pool that runs per-chunk work. parallel_for lets the calling thread take part, so
/// nested use (a shard decoding its inner chunks inside a chunk task) never deadlocks.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace zarrpp {

/// A fixed set of worker threads that run parallel_for (zarrpp reads and writes chunks with one).
class ThreadPool {
 public:
  explicit ThreadPool(std::size_t threads);  ///< starts `threads` workers
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  std::size_t size() const { return threads_; }  ///< the number of workers

  /// Runs fn(0..n-1) using at most `concurrency` threads (the caller included). Rethrows the first
  /// exception after every started task has finished.
  void parallel_for(std::size_t n, std::size_t concurrency, const std::function<void(std::size_t)>& fn);

  /// The process-wide pool, sized to the machine's cores.
  static ThreadPool& global();

 private:
  /// What the workers share. A forked child (Python's multiprocessing, a DataLoader's workers)
  /// inherits none of the threads, and the copy of this state may describe waiters that do not
  /// exist in it: the child leaves it behind and starts workers of its own at its first use.
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    bool stop = false;
  };
  void submit(std::function<void()> job);
  static void worker_loop(const std::shared_ptr<Shared>& sh);
  Shared& shared();  // this process's (started again after a fork)

  std::size_t threads_;
  std::mutex start_mu_;
  std::atomic<int> pid_{0};
  std::shared_ptr<Shared> sh_;
  std::vector<std::thread> workers_;
};

/// Default concurrency: the number of hardware threads (at least 1).
std::size_t default_concurrency();

}  // namespace zarrpp
