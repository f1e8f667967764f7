// Short-lived threads for work that waits (see waiting_threads.hpp).
#include "waiting_threads.hpp"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace zarrpp::detail {

void run_waiting(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn) {
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mu;
  std::exception_ptr error;
  auto run = [&] {
    while (!failed.load()) {
      const std::size_t i = next.fetch_add(1);
      if (i >= n) return;
      try {
        fn(i);
      } catch (...) {
        std::lock_guard lk(mu);
        if (!error) error = std::current_exception();
        failed = true;
      }
    }
  };
  std::vector<std::jthread> helpers;
  const std::size_t count = std::min(threads, n);
  for (std::size_t h = 1; h < count; ++h) {
    try {
      helpers.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones started do the work
    }
  }
  run();
  helpers.clear();  // joins
  if (error) std::rethrow_exception(error);
}

}  // namespace zarrpp::detail
