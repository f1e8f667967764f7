#include "temp_names.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace zarrpp::detail {

const std::string& host_tag() {
  static const std::string tag = [] {
    // The host name and the PID namespace: containers sharing a host name and a folder but not
    // their process ids must not take each other's live writers for dead.
    char h[512] = {};
    ::gethostname(h, 255);
    const std::size_t n = std::strlen(h);
    const ssize_t ns = ::readlink("/proc/self/ns/pid", h + n, sizeof h - n - 1);
    if (ns > 0) h[n + static_cast<std::size_t>(ns)] = '\0';
    std::uint32_t x = 2166136261u;
    for (const char* c = h; *c; ++c) x = (x ^ static_cast<unsigned char>(*c)) * 16777619u;
    char buf[16];
    std::snprintf(buf, sizeof buf, "%08x", x);
    return std::string(buf);
  }();
  return tag;
}

bool made_by_dead_writer(std::string_view tail) {
  const std::string& host = host_tag();
  if (tail.size() <= host.size() + 1 || tail.substr(0, host.size()) != host || tail[host.size()] != '-') return false;
  const std::string rest(tail.substr(host.size() + 1));
  char* end = nullptr;
  const long pid = std::strtol(rest.c_str(), &end, 10);
  if (pid <= 0 || end == rest.c_str() || *end != '-') return false;
  return ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace zarrpp::detail
