#include "temp_names.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace zarrpp::detail {

const std::string& host_tag() {
  static const std::string tag = [] {
    char h[256] = {};
    ::gethostname(h, sizeof h - 1);
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
