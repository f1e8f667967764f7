#pragma once
// The progress line of long CLI work (get --out, set, prepend/append, resize, copy, convert): one
// line on stderr, redrawn in place, with what is done (items and bytes), the rate and the time
// left. Drawn only on a terminal (or with --progress) and only once the work has run for
// ZARRPP_PROGRESS_DELAY seconds (default 0.5; 0 with --progress), so quick commands print nothing.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include <zarrpp/zarrpp.hpp>

namespace CLI {
class App;
}

namespace zarrpp::cli {

// --progress (draw it even when stderr is not a terminal) and --quiet (never draw it).
void add_progress_options(CLI::App& app);

class ProgressLine {
 public:
  // `verb` starts the line; `total_bytes` / `total_items` are what the work will do (0: unknown);
  // `items` names them ("chunks").
  ProgressLine(std::string verb, std::uint64_t total_bytes, std::int64_t total_items = 0, std::string items = "chunks");
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // Ends the line: its final state and a newline when it was drawn (else nothing).
  ~ProgressLine();

  // Adds what was done; from any thread.
  void add(std::int64_t items, std::uint64_t bytes);
  // Sets how many items are done of how many (a callback that counts them itself); any thread.
  void set_items(std::int64_t items, std::int64_t total);
  // A callback for Array::set_progress and the convert functions that adds each step.
  ProgressCallback callback();

 private:
  void maybe_draw();
  void draw(bool final);

  std::string verb_, items_name_;
  std::uint64_t total_bytes_;
  std::atomic<std::int64_t> total_items_;
  std::atomic<std::int64_t> items_{0};
  std::atomic<std::uint64_t> bytes_{0};
  std::chrono::steady_clock::time_point start_, last_draw_{};
  bool enabled_, tty_, drawn_ = false;
  double delay_;
  std::mutex mu_;
};

}  // namespace zarrpp::cli
