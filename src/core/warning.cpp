#include "zarrpp/core/warning.hpp"

#include <cstdio>
#include <memory>
#include <mutex>

namespace zarrpp {

namespace {

void print_to_stderr(const std::string& message) {
  // One line, written at once so warnings of threads do not interleave.
  std::string line = "zarrpp: warning: ";
  for (char c : message) line += (c == '\n' || c == '\r') ? ' ' : c;
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

std::mutex& handler_mu() {
  static std::mutex mu;
  return mu;
}

// Shared so a handler being called stays alive while another thread replaces it.
std::shared_ptr<const WarningHandler>& current() {
  static std::shared_ptr<const WarningHandler> h;
  return h;
}

}  // namespace

WarningHandler set_warning_handler(WarningHandler handler) {
  std::lock_guard lk(handler_mu());
  auto prev = current();
  current() = handler ? std::make_shared<const WarningHandler>(std::move(handler)) : nullptr;
  return prev ? *prev : WarningHandler{};
}

void warn(const std::string& message) {
  std::shared_ptr<const WarningHandler> h;
  {
    std::lock_guard lk(handler_mu());
    h = current();
  }
  if (h)
    (*h)(message);
  else
    print_to_stderr(message);
}

}  // namespace zarrpp
