#pragma once
// Work that waits on the network rather than the CPU (a write's requests to a remote store): run
// on short-lived threads of its own, so that more requests are on the wire than the pool has
// workers. The requests themselves go through the store's transport and its in-flight limit.
#include <cstddef>
#include <functional>

namespace zarrpp::detail {

// Runs fn(0..n-1) on up to `threads` threads (the caller included). After a task throws, no new
// task starts; the first exception is rethrown once the started ones have finished.
void run_waiting(std::size_t n, std::size_t threads, const std::function<void(std::size_t)>& fn);

}  // namespace zarrpp::detail
