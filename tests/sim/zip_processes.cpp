#include "zip_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "sim_time.hpp"
#include "zarrpp/zarrpp.hpp"

namespace zarrpp::sim {

namespace fs = std::filesystem;

namespace {

constexpr std::int64_t kWidth = 4;
constexpr std::int64_t kInitialRows = 4;  // fill-valued rows the array starts with

// A growth's id says who made it and how many rows: process * 10^6 + n * 10 + rows.
std::int32_t growth_id(int process, int n, int rows) { return process * 1'000'000 + n * 10 + rows; }
int rows_of(std::int32_t id) { return id % 10; }

void log_line(int fd, const std::string& line) {
  const std::string l = line + "\n";
  if (::write(fd, l.data(), l.size()) < 0) std::_Exit(3);
}

std::string one_line(std::string s) {
  for (auto& c : s)
    if (c == '\n') c = ' ';
  return s;
}

// What the data shows: per id, its rows (in order), and the fill-valued rows.
struct Seen {
  std::map<std::int32_t, std::vector<std::int64_t>> rows;
  std::int64_t zeros = 0;
  std::vector<std::string> problems;
};

Seen look(const NDArray& a) {
  Seen s;
  const auto* p = a.data<std::int32_t>();
  const std::int64_t n = a.shape()[0];
  for (std::int64_t r = 0; r < n; ++r) {
    const std::int32_t v = p[r * kWidth];
    for (std::int64_t c = 1; c < kWidth; ++c)
      if (p[r * kWidth + c] != v) s.problems.push_back("row " + std::to_string(r) + " is torn");
    if (v == 0)
      ++s.zeros;
    else
      s.rows[v].push_back(r);
  }
  for (const auto& [id, rows] : s.rows)
    if (static_cast<int>(rows.size()) != rows_of(id) || rows.back() - rows.front() + 1 != rows_of(id))
      s.problems.push_back("growth " + std::to_string(id) + " shows " + std::to_string(rows.size()) + " of its " +
                           std::to_string(rows_of(id)) + " rows");
  if (s.zeros != kInitialRows)
    s.problems.push_back(std::to_string(s.zeros) + " fill-valued rows, not " + std::to_string(kInitialRows));
  return s;
}

NDArray read_all(const fs::path& zip) {
  auto store = ZipStore::open(zip, {.mode = ZipStore::Mode::read});
  return Array::open(store).read({});
}

int writer(const fs::path& zip, int fd, int process, std::uint64_t seed, double seconds) {
  std::mt19937_64 rng(seed);
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (int n = 0; std::chrono::steady_clock::now() < end; ++n) {
    const int rows = 1 + static_cast<int>(rng() % 5);
    const bool front = rng() % 2 == 0;
    const std::int32_t id = growth_id(process, n, rows);
    log_line(fd, "B " + std::to_string(id));
    try {
      auto store = ZipStore::open(zip, {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::seconds(20)});
      auto a = Array::open(store);
      const auto data = NDArray::full<std::int32_t>({rows, kWidth}, id);
      front ? a.prepend(data) : a.append(data);
      store->close();
      log_line(fd, "OK " + std::to_string(id));
    } catch (const std::exception& e) {
      log_line(fd, "ERR " + std::to_string(id) + " " + one_line(e.what()));
    }
  }
  return 0;
}

int reader(const fs::path& zip, int fd, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    try {
      const Seen s = look(read_all(zip));
      log_line(fd, "R");
      for (const auto& p : s.problems) log_line(fd, "V a reader saw: " + p);
    } catch (const std::exception& e) {
      log_line(fd, "V a read failed: " + one_line(e.what()));
    }
  }
  return 0;
}

pid_t spawn(const std::string& exe, const std::vector<std::string>& args) {
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  std::vector<char*> argv{const_cast<char*>(exe.c_str()), const_cast<char*>("--zip-child")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(exe.c_str(), argv.data());
  std::_Exit(127);
}

}  // namespace

int zip_child(const std::vector<std::string>& args) {
  // role zip log process seed seconds
  if (args.size() != 6) return 2;
  const int fd = ::open(args[2].c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return 3;
  const double seconds = std::stod(args[5]);
  if (args[0] == "reader") return reader(args[1], fd, seconds);
  return writer(args[1], fd, std::stoi(args[3]), std::stoull(args[4]), seconds);
}

ZipRunResult run_zip(std::uint64_t seed, double seconds, int writers, const std::string& self_exe) {
  ZipRunResult r;
  const fs::path dir =
      fs::temp_directory_path() / ("zarrpp-sim-zip-" + std::to_string(::getpid()) + "-" + std::to_string(seed));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path zip = dir / "grow.zip";
  {
    auto store = ZipStore::open(zip, {.mode = ZipStore::Mode::write});
    Array::create(store, ArraySpec{.shape = {kInitialRows, kWidth},
                                   .chunks = {3, kWidth},
                                   .dtype = DataType::int32,
                                   .lower_bound = Shape{0, 0}});
    store->close();
  }
  std::mt19937_64 rng(mix(seed));
  std::map<pid_t, int> running;  // pid -> process number
  int next = 1;
  const auto t0 = std::chrono::steady_clock::now();
  auto left = [&] { return seconds - std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  auto start_writer = [&] {
    const int p = next++;
    const auto pid = spawn(
        self_exe, {"writer", zip.string(), (dir / ("log." + std::to_string(p))).string(), std::to_string(p),
                   std::to_string(mix(seed ^ static_cast<std::uint64_t>(p))), std::to_string(std::max(0.1, left()))});
    running[pid] = p;
    ++r.processes;
  };
  for (int i = 0; i < writers; ++i) start_writer();
  const pid_t reader_pid =
      spawn(self_exe, {"reader", zip.string(), (dir / "log.reader").string(), "0", "0", std::to_string(seconds)});
  ++r.processes;
  // Kill a writer now and then, at a seeded moment of whatever it is doing, and start another.
  while (left() > 0.5) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50 + static_cast<int>(rng() % 400)));
    if (running.empty() || left() <= 0.5) break;
    auto it = running.begin();
    std::advance(it, static_cast<long>(rng() % running.size()));
    ::kill(it->first, SIGKILL);
    ::waitpid(it->first, nullptr, 0);
    running.erase(it);
    ++r.kills;
    start_writer();
  }
  for (const auto& [pid, p] : running) ::waitpid(pid, nullptr, 0);
  ::waitpid(reader_pid, nullptr, 0);

  auto violate = [&](const std::string& v) {
    ++r.violation_count;
    if (r.violations.size() < 30) r.violations.push_back(v);
  };
  // What each growth reported, from the logs.
  std::map<std::int32_t, std::string> outcome;  // "B" (killed mid-way), "OK", "ERR ..."
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("log.", 0) != 0) continue;
    std::ifstream in(e.path());
    for (std::string line; std::getline(in, line);) {
      if (line == "R") {
        ++r.reads;
      } else if (line.rfind("V ", 0) == 0) {
        violate(line.substr(2));
      } else if (line.rfind("B ", 0) == 0) {
        outcome[std::stoi(line.substr(2))] = "B";
      } else if (line.rfind("OK ", 0) == 0) {
        outcome[std::stoi(line.substr(3))] = "OK";
      } else if (line.rfind("ERR ", 0) == 0) {
        const auto sp = line.find(' ', 4);
        outcome[std::stoi(line.substr(4, sp - 4))] = line.substr(sp + 1);
      }
    }
  }
  Seen s;
  try {
    s = look(read_all(zip));
  } catch (const std::exception& e) {
    violate(std::string("the archive cannot be read at the end: ") + e.what());
  }
  for (const auto& p : s.problems) violate("at the end: " + p);
  for (const auto& [id, what] : outcome) {
    const bool there = s.rows.count(id) > 0;
    if (what == "OK") {
      ++r.growths_ok;
      if (!there) violate("growth " + std::to_string(id) + " succeeded but is not in the archive");
    } else if (what == "B") {
      ++r.growths_killed;
    } else {
      ++r.growths_failed;
      if (there) violate("growth " + std::to_string(id) + " failed (" + what + ") but is in the archive");
    }
  }
  for (const auto& [id, rows] : s.rows)
    if (!outcome.count(id)) violate("the archive holds rows of growth " + std::to_string(id) + ", which nobody made");
  if (r.violation_count == 0) fs::remove_all(dir);
  return r;
}

}  // namespace zarrpp::sim
