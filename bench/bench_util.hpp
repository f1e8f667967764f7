#pragma once
// Small helpers for benchmark programs: timing with repeats, test data with a stated compression
// ratio, and the machine facts every benchmark prints.
#include <sys/statfs.h>
#include <sys/utsname.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace bench {

// Median seconds of `reps` runs of f (after one warm-up run).
inline double median_seconds(int reps, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto a = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Smooth synthetic uint16 data (compresses well).
inline std::vector<std::uint16_t> smooth_u16(std::size_t n) {
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] =
        static_cast<std::uint16_t>(1000 + 500 * std::sin(static_cast<double>(i) * 0.001) + static_cast<double>(i % 64));
  return v;
}

// Microscope-like uint16 data: a smooth signal plus random low bits.
inline std::vector<std::uint16_t> noisy_u16(std::size_t n, unsigned seed = 42) {
  std::mt19937 rng(seed);
  std::vector<std::uint16_t> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = static_cast<std::uint16_t>(1000 + 500 * std::sin(static_cast<double>(i) * 0.001) + (rng() & 0x3f));
  return v;
}

}  // namespace bench

// ---- the machine facts that change results (printed by every benchmark) ----
namespace bench {

inline std::string first_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}

inline std::string meminfo_gib(const std::string& field) {
  std::ifstream f("/proc/meminfo");
  std::string k;
  long long kib = 0;
  std::string unit;
  while (f >> k >> kib >> unit)
    if (k == field + ":") {
      char b[32];
      std::snprintf(b, sizeof b, "%.1f GiB", static_cast<double>(kib) / (1 << 20));
      return b;
    }
  return "?";
}

inline std::string fs_type(const std::string& dir) {
  struct statfs s{};
  if (::statfs(dir.c_str(), &s) != 0) return "?";
  switch (static_cast<unsigned long>(s.f_type)) {
    case 0xEF53:
      return "ext4";
    case 0x58465342:
      return "xfs";
    case 0x01021994:
      return "tmpfs";
    case 0x9123683E:
      return "btrfs";
    case 0x794c7630:
      return "overlayfs";
    case 0x6969:
      return "nfs";
    case 0x2fc12fc1:
      return "zfs";
    default: {
      std::ostringstream o;
      o << "0x" << std::hex << static_cast<unsigned long>(s.f_type);
      return o.str();
    }
  }
}

// Free page reporting (virtio balloon feature bit 5): freed memory goes back to the host, so
// memory touched for the first time after a few seconds costs much more (docs/benchmarks.md).
inline bool free_page_reporting() {
  std::error_code ec;
  for (const auto& d : std::filesystem::directory_iterator("/sys/bus/virtio/drivers/virtio_balloon", ec)) {
    const std::string bits = first_line((d.path() / "features").string());
    if (bits.size() > 5 && bits[5] == '1') return true;
  }
  return false;
}

inline std::string load_average() {  // the 1, 5 and 15 minute figures
  std::istringstream in(first_line("/proc/loadavg"));
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

inline std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  for (std::string l; std::getline(f, l);)
    if (l.rfind("model name", 0) == 0) return l.substr(l.find(':') + 2);
  return "?";
}

// One block of "machine: ..." lines: cores, CPU, kernel, transparent huge pages, memory, the file
// system of `dir`, load, and whether freed memory is reported to a host.
inline void print_machine_facts(const std::string& dir, std::FILE* out = stdout) {
  struct utsname u{};
  ::uname(&u);
  std::fprintf(out, "machine: %u cores (%s), kernel %s, load %s\n", std::thread::hardware_concurrency(),
               cpu_model().c_str(), u.release, load_average().c_str());
  std::fprintf(out, "machine: transparent huge pages %s, defrag %s\n",
               first_line("/sys/kernel/mm/transparent_hugepage/enabled").c_str(),
               first_line("/sys/kernel/mm/transparent_hugepage/defrag").c_str());
  std::fprintf(out, "machine: memory %s total, %s available; free page reporting %s; %s is %s\n",
               meminfo_gib("MemTotal").c_str(), meminfo_gib("MemAvailable").c_str(),
               free_page_reporting() ? "on (virtio balloon)" : "off", dir.c_str(), fs_type(dir).c_str());
  std::fflush(out);
}

}  // namespace bench
