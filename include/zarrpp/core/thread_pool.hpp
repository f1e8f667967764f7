#pragma once
/// @file
/// A small fixed pool that runs per-chunk work. parallel_for lets the calling thread take part, so
/// nested use (a shard decoding its inner chunks inside a chunk task) never deadlocks.
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
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

  std::size_t size() const { return workers_.size(); }  ///< the number of workers

  /// Runs fn(0..n-1) using at most `concurrency` threads (the caller included). Rethrows the first
  /// exception after every started task has finished.
  void parallel_for(std::size_t n, std::size_t concurrency, const std::function<void(std::size_t)>& fn);

  /// The process-wide pool, sized to the machine's cores.
  static ThreadPool& global();

 private:
  void submit(std::function<void()> job);
  void worker_loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stop_ = false;
  std::vector<std::thread> workers_;
};

/// Default concurrency: the number of hardware threads (at least 1).
std::size_t default_concurrency();

}  // namespace zarrpp
