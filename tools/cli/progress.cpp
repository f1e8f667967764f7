// The progress line (progress.hpp).
#include "progress.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <utility>

namespace zarrpp::cli {

namespace {

enum class Mode { automatic, on, off };
Mode g_mode = Mode::automatic;

using Clock = std::chrono::steady_clock;
constexpr auto kRedraw = std::chrono::milliseconds(100);  // at most ten lines a second

// 1536 -> "1.5 KiB".
std::string size_text(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  while (b >= 1024 && u < 5) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, units[u]);
  return buf;
}

// 75 -> "1:15", 3725 -> "1:02:05".
std::string time_text(double secs) {
  const long long s = std::llround(std::clamp(secs, 0.0, 1e9));  // about 30 years at most
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", s / 60, s % 60);
  return buf;
}

double delay_seconds(bool forced) {
  if (const char* env = std::getenv("ZARRPP_PROGRESS_DELAY")) {
    char* end = nullptr;
    const double v = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(v >= 0 && v <= 1e7))
      throw ArgumentError("ZARRPP_PROGRESS_DELAY='" + std::string(env) +
                          "': expected the seconds before the progress line shows (0 or more, at most 1e7)");
    return v;
  }
  return forced ? 0.0 : 0.5;
}

}  // namespace

void add_progress_options(CLI::App& app) {
  auto* on = app.add_flag_callback(
      "--progress", [] { g_mode = Mode::on; },
      "Show the progress line of long work even when stderr is not a terminal");
  auto* off = app.add_flag_callback(
      "--quiet", [] { g_mode = Mode::off; }, "Show no progress line (by default it shows on a terminal)");
  on->excludes(off);
}

ProgressLine::ProgressLine(std::string verb, std::uint64_t total_bytes, std::int64_t total_items, std::string items)
    : verb_(std::move(verb)),
      items_name_(std::move(items)),
      total_bytes_(total_bytes),
      total_items_(total_items),
      start_(Clock::now()),
      enabled_(g_mode == Mode::on || (g_mode == Mode::automatic && ::isatty(2) == 1)),
      tty_(::isatty(2) == 1),
      delay_(delay_seconds(g_mode == Mode::on)) {}

ProgressLine::~ProgressLine() {
  std::lock_guard lk(mu_);
  if (!drawn_) return;
  if (std::uncaught_exceptions() > 0) {
    std::fputs("\n", stderr);  // the error goes on a line of its own; the line shows how far it got
    return;
  }
  draw(true);
}

void ProgressLine::add(std::int64_t items, std::uint64_t bytes) {
  items_ += items;
  bytes_ += bytes;
  maybe_draw();
}

void ProgressLine::set_items(std::int64_t items, std::int64_t total) {
  // Counts from several threads may arrive out of order: the line only moves forward.
  std::int64_t cur = items_.load();
  while (cur < items && !items_.compare_exchange_weak(cur, items)) {
  }
  total_items_ = total;
  maybe_draw();
}

ProgressCallback ProgressLine::callback() {
  return [this](const ProgressStep& s) { add(s.objects, s.bytes); };
}

void ProgressLine::maybe_draw() {
  if (!enabled_) return;
  const auto now = Clock::now();
  std::unique_lock lk(mu_, std::try_to_lock);  // a thread drawing already: skip, not wait
  if (!lk.owns_lock()) return;
  if (now - start_ < std::chrono::duration<double>(delay_) || (drawn_ && now - last_draw_ < kRedraw)) return;
  last_draw_ = now;
  draw(false);
}

// One line: "get  45%  230.0 MiB of 512.0 MiB  96/213 chunks  410.3 MiB/s  0:01 left".
void ProgressLine::draw(bool final) {
  const double secs = std::chrono::duration<double>(Clock::now() - start_).count();
  const auto items = items_.load();
  const auto bytes = bytes_.load();
  std::string line = verb_;
  // The share done: by bytes when their total is known, else by items.
  const std::int64_t total_items = total_items_.load();
  double share = -1;
  if (total_bytes_ > 0)
    share = static_cast<double>(bytes) / static_cast<double>(total_bytes_);
  else if (total_items > 0)
    share = static_cast<double>(items) / static_cast<double>(total_items);
  if (final && share >= 0) share = 1;  // finished: whatever the counts say
  char buf[64];
  if (share >= 0) {
    std::snprintf(buf, sizeof buf, "  %3.0f%%", 100 * std::min(share, 1.0));
    line += buf;
  }
  if (total_bytes_ > 0 || bytes > 0) {
    line += "  " + size_text(static_cast<double>(bytes));
    if (total_bytes_ > 0) line += " of " + size_text(static_cast<double>(total_bytes_));
  }
  line += "  " + std::to_string(items);
  if (total_items > 0) line += "/" + std::to_string(total_items);
  line += " " + items_name_;
  if (secs > 0) {
    if (bytes > 0)
      line += "  " + size_text(static_cast<double>(bytes) / secs) + "/s";
    else
      line +=
          "  " + std::to_string(static_cast<long long>(static_cast<double>(items) / secs)) + " " + items_name_ + "/s";
  }
  if (final)
    line += "  done in " + time_text(secs);
  else if (share > 0 && share < 1)
    line += "  " + time_text(secs * (1 - share) / share) + " left";
  // A line wider than the terminal would wrap, and each redraw would leave a line behind.
  if (winsize ws{}; tty_ && ::ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && line.size() >= ws.ws_col)
    line.resize(ws.ws_col - 1U);
  // \r returns to the line's start; on a terminal \x1b[K clears what a longer line left.
  std::fprintf(stderr, "\r%s%s%s", line.c_str(), tty_ ? "\x1b[K" : "", final ? "\n" : "");
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace zarrpp::cli
