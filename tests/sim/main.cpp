// zarrpp-sim: the simulated object store run against seeded actors and checked by the model.
//   zarrpp-sim [--seed S] [--seeds N] [--seconds T] [--minutes M] [--actors A] [--rate R]
//              [--variant full|no-conditional-delete|no-conditional] [--service s3|azure|both] [--quiet]
//   zarrpp-sim --zip [--seed S] [--seeds N] [--seconds T] [--minutes M] [--actors A]
// Runs seeds S, S+1, ... (N of them, or until M minutes have passed), each for T seconds; prints
// each run, then operations, actors and injected faults by kind, and as its last line
// "N faults injected, M violations". Exit status 1 when a violation was found. --zip runs writer
// processes (A of them) and a reader on a real zip archive instead, killing writers at seeded
// moments (zip_processes.hpp).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "simulation.hpp"
#include "zip_processes.hpp"

using namespace zarrpp::sim;

namespace {

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "zarrpp-sim: %s\nusage: zarrpp-sim [--seed S] [--seeds N] [--seconds T] [--minutes M] [--actors A] "
               "[--rate R] [--time-scale K] [--variant full|no-conditional-delete|no-conditional] [--service "
               "s3|azure|both] [--quiet]\n",
               why);
  std::exit(2);
}

struct Totals {
  RunResult sum;
  int runs = 0;
  void add(const RunResult& r) {
    ++runs;
    sum.ops += r.ops, sum.ops_ok += r.ops_ok, sum.ops_failed += r.ops_failed, sum.ops_uncertain += r.ops_uncertain;
    for (std::size_t i = 0; i < r.ops_by_kind.size(); ++i) {
      sum.ops_by_kind[i] += r.ops_by_kind[i];
      sum.ok_by_kind[i] += r.ok_by_kind[i];
    }
    for (std::size_t i = 0; i < r.faults.size(); ++i) sum.faults[i] += r.faults[i];
    sum.requests += r.requests, sum.lost_conditional_put_replies += r.lost_conditional_put_replies;
    sum.list_lags += r.list_lags, sum.changes += r.changes, sum.unverifiable += r.unverifiable;
    sum.violation_count += r.violation_count;
    sum.simulated_seconds += r.simulated_seconds;
  }
};

void print_run(std::uint64_t seed, const RunConfig& c, const RunResult& r, double wall, bool quiet) {
  std::printf(
      "seed %llu (%s %s, %d actors): %llu operations (%llu failed, %llu uncertain), %llu requests, %llu faults, "
      "%llu changes, %.0f s simulated in %.1f s, %llu violations\n",
      static_cast<unsigned long long>(seed), c.service.c_str(), c.variant.c_str(), c.actors,
      static_cast<unsigned long long>(r.ops), static_cast<unsigned long long>(r.ops_failed),
      static_cast<unsigned long long>(r.ops_uncertain), static_cast<unsigned long long>(r.requests),
      static_cast<unsigned long long>(r.faults_total()), static_cast<unsigned long long>(r.changes),
      r.simulated_seconds, wall, static_cast<unsigned long long>(r.violation_count));
  for (const auto& v : r.violations) std::printf("  VIOLATION: %s\n", v.c_str());
  if (!quiet)
    for (const auto& e : r.sample_errors) std::printf("  an operation's error: %.300s\n", e.c_str());
  if (r.violation_count > 0)
    std::printf(
        "  again (same seed; threads make it a different interleaving): bash scripts/simulate.sh --seed %llu "
        "--seconds %g --actors %d --variant %s --service %s\n",
        static_cast<unsigned long long>(seed), c.seconds, c.actors, c.variant.c_str(), c.service.c_str());
  std::fflush(stdout);
}

}  // namespace

int run_zip_mode(std::uint64_t first, long seeds, double minutes, double seconds, int writers) {
  char exe[4096] = {};
  const auto n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
  if (n <= 0) usage("cannot find this program's path");
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  ZipRunResult sum;
  int runs = 0;
  for (std::uint64_t seed = first;; ++seed) {
    if (minutes > 0 ? elapsed() + seconds > minutes * 60 && runs > 0 : runs >= seeds) break;
    const ZipRunResult r = run_zip(seed, seconds, writers, exe);
    ++runs;
    std::printf(
        "zip seed %llu (%d writer processes, 1 reader): %llu growths (%llu failed, %llu killed mid-way), "
        "%llu reads, %llu processes killed, %llu violations\n",
        static_cast<unsigned long long>(seed), writers,
        static_cast<unsigned long long>(r.growths_ok) + r.growths_failed + r.growths_killed,
        static_cast<unsigned long long>(r.growths_failed), static_cast<unsigned long long>(r.growths_killed),
        static_cast<unsigned long long>(r.reads), static_cast<unsigned long long>(r.kills),
        static_cast<unsigned long long>(r.violation_count));
    for (const auto& v : r.violations) std::printf("  VIOLATION: %s\n", v.c_str());
    std::fflush(stdout);
    sum.kills += r.kills;
    sum.violation_count += r.violation_count;
  }
  std::printf("%llu faults injected, %llu violations\n", static_cast<unsigned long long>(sum.kills),
              static_cast<unsigned long long>(sum.violation_count));
  return sum.violation_count > 0 ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--zip-child") == 0)
    return zip_child(std::vector<std::string>(argv + 2, argv + argc));
  RunConfig c;
  bool zip = false;
  std::uint64_t first = 1;
  long seeds = 1;
  double minutes = 0;
  bool quiet = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage((a + " needs a value").c_str());
      return argv[++i];
    };
    try {
      if (a == "--seed")
        first = std::stoull(value());
      else if (a == "--seeds")
        seeds = std::stol(value());
      else if (a == "--seconds")
        c.seconds = std::stod(value());
      else if (a == "--minutes")
        minutes = std::stod(value());
      else if (a == "--actors")
        c.actors = std::stoi(value());
      else if (a == "--rate")
        c.faults.rate = std::stod(value());
      else if (a == "--time-scale")
        c.time_scale = std::stod(value());
      else if (a == "--variant")
        c.variant = value();
      else if (a == "--service")
        c.service = value();
      else if (a == "--quiet")
        quiet = true;
      else if (a == "--zip")
        zip = true;
      else
        usage(("unknown option " + a).c_str());
    } catch (const std::logic_error&) {
      usage(("bad value for " + a).c_str());
    }
  }
  if (c.variant != "full" && c.variant != "no-conditional-delete" && c.variant != "no-conditional")
    usage("--variant takes full, no-conditional-delete or no-conditional");
  if (c.service != "s3" && c.service != "azure" && c.service != "both") usage("--service takes s3, azure or both");
  const bool both = c.service == "both";
  if (c.actors < 1 || c.actors > 64 || c.seconds <= 0 || c.faults.rate < 0 || c.faults.rate > 1 || c.time_scale < 1)
    usage("--actors 1..64, --seconds > 0, --rate 0..1");
  if (zip) return run_zip_mode(first, seeds, minutes, c.seconds, c.actors == 6 ? 3 : c.actors);
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  Totals t;
  for (std::uint64_t seed = first;; ++seed) {
    if (minutes > 0 ? elapsed() + c.seconds > minutes * 60 && t.runs > 0 : t.runs >= seeds) break;
    c.seed = seed;
    if (both) c.service = seed % 2 ? "s3" : "azure";  // odd seeds S3, even ones Azure
    const double start = elapsed();
    const RunResult r = run(c);
    print_run(seed, c, r, elapsed() - start, quiet);
    t.add(r);
  }
  const RunResult& s = t.sum;
  std::printf(
      "\n%d runs, %.1f s: %llu operations (%llu failed, %llu uncertain), %llu requests, %llu changes, "
      "%.0f s simulated\n",
      t.runs, elapsed(), static_cast<unsigned long long>(s.ops), static_cast<unsigned long long>(s.ops_failed),
      static_cast<unsigned long long>(s.ops_uncertain), static_cast<unsigned long long>(s.requests),
      static_cast<unsigned long long>(s.changes), s.simulated_seconds);
  std::printf("operations by actor:");
  for (std::size_t i = 0; i < s.ops_by_kind.size(); ++i)
    std::printf(" %s %llu (%llu ok);", actor_name(static_cast<ActorKind>(i)),
                static_cast<unsigned long long>(s.ops_by_kind[i]), static_cast<unsigned long long>(s.ok_by_kind[i]));
  std::printf("\nfaults by kind:\n");
  const double total = static_cast<double>(std::max<std::uint64_t>(1, s.faults_total()));
  for (std::size_t i = 0; i < s.faults.size(); ++i)
    std::printf("  %-34s %10llu  %5.1f%%\n", fault_name(static_cast<Fault>(i)),
                static_cast<unsigned long long>(s.faults[i]), 100.0 * static_cast<double>(s.faults[i]) / total);
  std::printf("lost replies to conditional PUTs: %llu; lagging listings: %llu; reads not checkable: %llu\n",
              static_cast<unsigned long long>(s.lost_conditional_put_replies),
              static_cast<unsigned long long>(s.list_lags), static_cast<unsigned long long>(s.unverifiable));
  std::printf("%llu faults injected, %llu violations\n", static_cast<unsigned long long>(s.faults_total()),
              static_cast<unsigned long long>(s.violation_count));
  return s.violation_count > 0 ? 1 : 0;
}
