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

namespace {

// Process `pid` as /proc/<pid>/stat shows it: its state (field 3: 'Z' for a zombie, a process
// that has ended but is not yet reaped) and when it started (field 22, clock ticks since boot).
// start 0: it cannot be read (no such process, or no /proc).
struct ProcStat {
  char state = '?';
  unsigned long long start = 0;
};
ProcStat proc_stat(long pid) {
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  std::FILE* f = std::fopen(path, "re");
  if (!f) return {};
  char buf[1024];
  const std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* p = std::strrchr(buf, ')');  // the command name may hold spaces and parentheses
  if (!p || p[1] != ' ' || !p[2]) return {};
  ProcStat st;
  st.state = p[2];
  for (int field = 2; p && field < 22; ++field) {
    p = std::strchr(p + 1, ' ');
  }
  st.start = p ? std::strtoull(p + 1, nullptr, 10) : 0;
  return st;
}

unsigned long long start_time(long pid) { return proc_stat(pid).start; }

}  // namespace

std::string writer_tag() {
  thread_local pid_t pid = 0;
  thread_local std::string tag;
  if (pid != ::getpid()) {  // first use, or a forked child
    pid = ::getpid();
    tag = std::to_string(pid) + "." + std::to_string(start_time(pid));
  }
  return tag;
}

bool made_by_dead_writer(std::string_view tail) {
  const std::string& host = host_tag();
  if (tail.size() <= host.size() + 1 || tail.substr(0, host.size()) != host || tail[host.size()] != '-') return false;
  const std::string rest(tail.substr(host.size() + 1));
  char* end = nullptr;
  const long pid = std::strtol(rest.c_str(), &end, 10);
  if (pid <= 0 || end == rest.c_str()) return false;
  unsigned long long started = 0;
  if (*end == '.') {
    const char* at = end + 1;
    started = std::strtoull(at, &end, 10);
    if (end == at) return false;
  }
  if (*end != '-') return false;
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) return true;
  // there: the writer, unless it has ended (a zombie, whose parent has not reaped it yet: one
  // killed with its parent waits for init, which under load can take a while) or the id now names
  // a process that started at another time
  const ProcStat now = proc_stat(pid);
  if (now.state == 'Z' || now.state == 'X') return true;
  return started != 0 && now.start != 0 && now.start != started;
}

}  // namespace zarrpp::detail
