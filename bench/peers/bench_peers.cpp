// zarrpp-bench-peers: zarrpp against the C++ Zarr libraries z5 and libzarr, in one process, on the
// same data (issue 22, docs/benchmarks.md). Built only when their sources are present in a scratch
// folder outside the repository (scripts/bench_peers.sh fetches nothing: clone them by hand).
//
//   zarrpp-bench-peers [--mib 512] [--rounds 5] [--runs 3] [--dir DIR] [--only LIB,...]
//                      [--codecs none,zstd-1] [--threads 1,2] [--verbose]
//
// Each library writes and reads its own Zarr v3 array: uint16 (MiB/2)x1024x1024, chunks
// 64x256x256, uncompressed and zstd level 1, on the local file store (page cache warm), with 1 and 2
// threads. Workloads: whole write from one buffer; whole read into a reused buffer (touched
// before); whole read into a fresh output the library allocates (zarrpp's Array::read(); z5 and
// libzarr have no such call, so theirs is the caller's `new uint16_t[n]`, as their users do); whole
// read into a fresh buffer the caller allocates with `new uint16_t[n]` (zarrpp's read_into). Fresh
// means memory no allocator or pool recycles: 512 MiB is above every cache (at --mib 256 or less
// zarrpp's outputs come from its block cache: a note says so). z5 runs its own thread
// pool (numberOfThreads); libzarr is single-threaded by design, so with 2 threads each thread reads
// or writes one half (whole chunk rows) through its own array handle. Every read is checked
// against the data. Rounds interleave the libraries (each round a new random order; the two fresh
// reads swap places every round, since the second finds the first one's freed pages); each run
// prints its table of medians over rounds, and the summary gives, per row, the median over runs
// with the minimum and maximum, zarrpp's slowest round over its median round, and flags rows whose
// spread is too wide to trust.
#include <fcntl.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <libzarr/adapters/filesystem_store.hpp>
#include <libzarr/libzarr.hpp>

#include "z5/factory.hxx"
#include "z5/filesystem/handle.hxx"
#include "z5/multiarray/array_access.hxx"

#include "../bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using u16 = std::uint16_t;

namespace {

double secs(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}
void check(const u16* got, const std::vector<u16>& want, const std::string& what) {
  if (std::memcmp(got, want.data(), want.size() * 2) != 0) throw std::runtime_error("VALIDATION FAILED: " + what);
}

struct Lib {
  std::string name;
  std::function<void(const std::vector<u16>&, int)> write;
  std::function<void(u16*, int)> read_into;
  std::function<void(const std::vector<u16>&, int)> read_fresh;  // allocates, reads, checks, frees
};

std::vector<std::string> split(const std::string& s, char sep = ',') {
  std::vector<std::string> out;
  std::size_t i = 0;
  for (std::size_t j; (j = s.find(sep, i)) != std::string::npos; i = j + 1) out.push_back(s.substr(i, j - i));
  out.push_back(s.substr(i));
  return out;
}
bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

constexpr const char* kColumns[] = {"zarrpp", "z5", "libzarr", "atomic floor", "in-place floor"};
constexpr const char* kSummaryColumns[] = {"zarrpp",         "z5",    "libzarr",       "atomic floor",
                                           "in-place floor", "ratio", "÷ atomic floor"};
constexpr const char* kWorkloads[] = {"write", "read, reused buffer", "read, fresh output of the library",
                                      "read_into, fresh caller buffer"};
// Per row (codec, threads, workload): per library, one median per run; zarrpp's slowest/median per run.
struct Row {
  std::map<std::string, std::vector<double>> gibs;
  std::vector<double> zarrpp_slowest;
};
double spread(const std::vector<double>& v) {  // max / min
  return *std::max_element(v.begin(), v.end()) / *std::min_element(v.begin(), v.end());
}

// Writes every chunk of the data as the floors do (see main): gathered (and for zstd compressed at
// level 1) into a buffer per thread, then a new file renamed over the old one (`atomic`) or the
// old file truncated and written in place. T threads share the chunks.
void floor_write(const std::vector<u16>& src, int threads, bool zstd, const fs::path& dir, bool atomic) {
  constexpr std::uint64_t Y = 1024, X = 1024, CZ = 64, CY = 256, CX = 256;
  const std::uint64_t Z = src.size() / (Y * X), nz = (Z + CZ - 1) / CZ, chunks = nz * (Y / CY) * (X / CX);
  fs::create_directories(dir);
  std::atomic<std::uint64_t> next{0};
  auto work = [&] {
    std::vector<u16> chunk(CZ * CY * CX);
    std::vector<char> packed(zstd ? ZSTD_compressBound(chunk.size() * 2) : 0);
    std::unique_ptr<ZSTD_CCtx, decltype(&ZSTD_freeCCtx)> cctx(zstd ? ZSTD_createCCtx() : nullptr, ZSTD_freeCCtx);
    for (std::uint64_t c; (c = next++) < chunks;) {
      const std::uint64_t cz = c / (Y / CY * (X / CX)), cy = c / (X / CX) % (Y / CY), cx = c % (X / CX);
      const std::uint64_t zn = std::min(CZ, Z - cz * CZ);
      if (zn < CZ) std::fill(chunk.begin(), chunk.end(), u16{0});  // an edge chunk: the rest is fill
      for (std::uint64_t z = 0; z < zn; ++z)
        for (std::uint64_t y = 0; y < CY; ++y)
          std::memcpy(&chunk[(z * CY + y) * CX], &src[((cz * CZ + z) * Y + cy * CY + y) * X + cx * CX], CX * 2);
      const char* bytes = reinterpret_cast<const char*>(chunk.data());
      std::size_t size = chunk.size() * 2;
      if (zstd) {
        size = ZSTD_compressCCtx(cctx.get(), packed.data(), packed.size(), chunk.data(), size, 1);
        if (ZSTD_isError(size)) throw std::runtime_error("zstd failed");
        bytes = packed.data();
      }
      const std::string name = (dir / ("c" + std::to_string(c))).string();
      const std::string tmp = (dir / (".tmp-" + std::to_string(c))).string();
      const int fd = atomic ? ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)
                            : ::open(name.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0 || ::write(fd, bytes, size) != static_cast<ssize_t>(size) || ::close(fd) != 0)
        throw std::runtime_error("floor: cannot write " + name);
      if (atomic && ::rename(tmp.c_str(), name.c_str()) != 0) throw std::runtime_error("floor: cannot rename " + tmp);
    }
  };
  std::exception_ptr failed;
  std::mutex mu;
  auto guarded = [&] {
    try {
      work();
    } catch (...) {
      const std::lock_guard lk(mu);
      failed = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded);
  guarded();
  for (auto& th : pool) th.join();
  if (failed) std::rethrow_exception(failed);
}

}  // namespace

int main(int argc, char** argv) {
  int mib = 512, rounds = 5, runs = 3;
  bool verbose = false;  // every round's seconds
  std::string dir = "/tmp";
  std::vector<std::string> only{"zarrpp", "z5", "libzarr"}, codecs{"none", "zstd-1"}, threads{"1", "2"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool val = i + 1 < argc;
    if (a == "--mib" && val)
      mib = std::stoi(argv[++i]);
    else if (a == "--rounds" && val)
      rounds = std::stoi(argv[++i]);
    else if (a == "--runs" && val)
      runs = std::stoi(argv[++i]);
    else if (a == "--dir" && val)
      dir = argv[++i];
    else if (a == "--verbose")
      verbose = true;
    else if (a == "--only" && val)
      only = split(argv[++i]);
    else if (a == "--codecs" && val)
      codecs = split(argv[++i]);
    else if (a == "--threads" && val)
      threads = split(argv[++i]);
    else {
      std::fprintf(
          stderr,
          "usage: zarrpp-bench-peers [--mib 512] [--rounds 5] [--runs 3] [--dir DIR] [--only zarrpp,z5,libzarr] "
          "[--codecs none,zstd-1] [--threads 1,2] [--verbose] (--only also takes floors)\n");
      return 2;
    }
  }
  if (mib <= 256)
    std::fprintf(stderr,
                 "zarrpp-bench-peers: note: at --mib 256 or less zarrpp's outputs come from its own block cache "
                 "(up to 256 MiB), so its fresh-read rows are not fresh\n");
  if (mib % 8 || mib <= 0 || rounds < 1 || runs < 1) {
    std::fprintf(stderr, "zarrpp-bench-peers: --mib must be a positive multiple of 8, --rounds and --runs positive\n");
    return 2;
  }
  try {
    const std::uint64_t Z = static_cast<std::uint64_t>(mib) / 2, Y = 1024, X = 1024;
    const std::uint64_t n = Z * Y * X;
    const fs::path work = fs::path(dir) / ("zarrpp-bench-peers-" + std::to_string(::getpid()));
    fs::remove_all(work);
    fs::create_directories(work);
    // Noisy data: a ramp plus 12 random low bits.
    std::vector<u16> src(n);
    std::mt19937_64 rng(1);
    for (std::uint64_t i = 0; i < n; ++i) src[i] = static_cast<u16>(((i % X) * 16 + (rng() & 0xfff)) & 0xffff);
    const std::uint64_t half_z = (Z / 2) / 64 * 64;  // two halves of whole chunk rows (when Z allows)

    bench::print_machine_facts(dir);
    std::printf(
        "data: uint16 %llux%llux%llu (%d MiB), chunks 64x256x256, Zarr v3 on the file store under %s; %d runs of %d "
        "rounds\n",
        static_cast<unsigned long long>(Z), static_cast<unsigned long long>(Y), static_cast<unsigned long long>(X), mib,
        work.c_str(), runs, rounds);
    std::printf("peers: z5 and libzarr built from their sources (commits recorded by scripts/bench_peers.sh)\n");
    std::map<std::string, Row> rows;  // "codec|threads|workload"
    std::vector<std::string> row_order;
    for (int run = 0; run < runs; ++run) {
      fs::remove_all(work);
      fs::create_directories(work);
      std::printf(
          "\nrun %d of %d: medians of %d rounds\n\n| codec | threads | workload | zarrpp GiB/s | z5 GiB/s | libzarr "
          "GiB/s | atomic floor GiB/s | in-place floor GiB/s | zarrpp ÷ best peer | zarrpp ÷ atomic floor | zarrpp "
          "slowest ÷ median round |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
          run + 1, runs, rounds);
      for (const std::string& codec : codecs) {
        const bool zstd = codec != "none";
        // ---- zarrpp
        zarrpp::ArraySpec spec{.shape = {static_cast<std::int64_t>(Z), 1024, 1024},
                               .chunks = {64, 256, 256},
                               .dtype = zarrpp::DataType::uint16};
        if (zstd) spec.compressor = zarrpp::codec::Zstd{.level = 1};
        auto zp = zarrpp::Array::create(zarrpp::FileStore::open(work / ("zarrpp-" + codec)), spec);
        const zarrpp::NDView src_view(const_cast<u16*>(src.data()), zarrpp::DataType::uint16, spec.shape,
                                      zarrpp::c_strides(spec.shape, 2));
        Lib zl{"zarrpp",
               [&](const std::vector<u16>&, int t) {
                 zp.set_concurrency(static_cast<std::size_t>(t));
                 zp.write({}, src_view);
               },
               [&](u16* out, int t) {
                 zp.set_concurrency(static_cast<std::size_t>(t));
                 zp.read_into(
                     {}, zarrpp::NDView(out, zarrpp::DataType::uint16, spec.shape, zarrpp::c_strides(spec.shape, 2)));
               },
               [&](const std::vector<u16>& want, int t) {
                 zp.set_concurrency(static_cast<std::size_t>(t));
                 const auto a = zp.read();
                 check(reinterpret_cast<const u16*>(a.raw_data()), want, "zarrpp fresh read");
               }};
        // ---- z5
        z5::filesystem::handle::File f5(work / ("z5-" + codec));
        z5::createFile(f5, true, 3);
        z5::types::CompressionOptions o5;
        if (zstd) o5["level"] = 1;
        auto ds = z5::createDataset(f5, "a", "uint16", {Z, Y, X}, {64, 256, 256}, zstd ? "zstd" : "raw", o5, 0, ".", 3);
        const z5::types::ShapeType shape5{Z, Y, X}, strides5{Y * X, X, 1}, origin5{0, 0, 0};
        Lib l5{"z5",
               [&](const std::vector<u16>& s, int t) {
                 z5::multiarray::writeSubarray<u16>(
                     *ds, z5::multiarray::ConstArrayView<u16>(s.data(), shape5, strides5), origin5.begin(), t);
               },
               [&](u16* out, int t) {
                 z5::multiarray::readSubarray<u16>(*ds, z5::multiarray::ArrayView<u16>(out, shape5, strides5),
                                                   origin5.begin(), t);
               },
               [&](const std::vector<u16>& want, int t) {
                 std::unique_ptr<u16[]> out(new u16[n]);
                 z5::multiarray::readSubarray<u16>(*ds, z5::multiarray::ArrayView<u16>(out.get(), shape5, strides5),
                                                   origin5.begin(), t);
                 check(out.get(), want, "z5 fresh read");
               }};
        // ---- libzarr (one handle per thread: its core is single-threaded)
        const fs::path lzdir = work / ("libzarr-" + codec);
        {
          auto store = std::make_shared<zarr::FilesystemStore>(lzdir);
          zarr::ArraySpec ls;
          ls.format = zarr::ZarrFormat::v3;
          ls.shape = {Z, Y, X};
          ls.chunks = {64, 256, 256};
          ls.dtype = zarr::DataType::of(zarr::DType::uint16);
          if (zstd) ls.codecs = {zarr::codec::zstd(1)};
          zarr::Group::create(store, "", zarr::ZarrFormat::v3).create_array("a", ls);
        }
        auto lz_open = [&] {
          return zarr::Group::open(std::make_shared<zarr::FilesystemStore>(lzdir, false)).open_array("a");
        };
        // Runs fn(z_begin, z_end, handle) on 1 thread or on 2 (halves of whole chunk rows).
        auto lz_split = [&](int t, const std::function<void(std::uint64_t, std::uint64_t, zarr::Array&)>& fn) {
          if (t <= 1 || half_z == 0) {
            auto a = lz_open();
            fn(0, Z, a);
            return;
          }
          auto a0 = lz_open(), a1 = lz_open();
          std::thread th([&] { fn(half_z, Z, a1); });
          fn(0, half_z, a0);
          th.join();
        };
        auto lz_read = [&](u16* out, int t) {
          lz_split(t, [&](std::uint64_t a, std::uint64_t b, zarr::Array& arr) {
            arr.read_region({a, 0, 0}, {b - a, Y, X}, out + a * Y * X, (b - a) * Y * X * 2);
          });
        };
        Lib ll{"libzarr",
               [&](const std::vector<u16>& s, int t) {
                 lz_split(t, [&](std::uint64_t a, std::uint64_t b, zarr::Array& arr) {
                   arr.write_region({a, 0, 0}, {b - a, Y, X}, s.data() + a * Y * X, (b - a) * Y * X * 2);
                 });
               },
               lz_read,
               [&](const std::vector<u16>& want, int t) {
                 std::unique_ptr<u16[]> out(new u16[n]);
                 lz_read(out.get(), t);
                 check(out.get(), want, "libzarr fresh read");
               }};
        // ---- the write floors: each chunk gathered from the data (and for zstd-1 compressed by
        // libzstd) into a per-thread buffer, then written as zarrpp replaces it (a new file renamed
        // over the old one: readers see the old chunk or the new, a crash leaves one of them) and
        // as libzarr and z5 write (the old file truncated and written in place: a reader or a crash
        // in between sees a short chunk).
        Lib fa{"atomic floor", [&](const std::vector<u16>& s, int t) { floor_write(s, t, zstd, work / "fa", true); },
               nullptr, nullptr};
        Lib fi{"in-place floor", [&](const std::vector<u16>& s, int t) { floor_write(s, t, zstd, work / "fi", false); },
               nullptr, nullptr};
        std::vector<Lib*> libs;
        for (Lib* l : {&zl, &l5, &ll, &fa, &fi})
          if (has(only, l->name) || (!l->read_into && has(only, "floors"))) libs.push_back(l);
        std::vector<u16> reused(n, 1);
        for (const std::string& ts : threads) {
          const int t = std::stoi(ts);
          std::map<std::string, std::map<std::string, std::vector<double>>> tm;  // workload -> lib -> seconds
          for (Lib* l : libs) {  // untimed: create every chunk and warm the page cache
            l->write(src, t);
            if (!l->read_into) continue;
            l->read_into(reused.data(), t);
            check(reused.data(), src, l->name + " read");
          }
          auto time_fresh = [&](const std::string& w, Lib& l, const std::function<void()>& fn) {
            auto t0 = Clock::now();
            fn();  // (includes the check: subtracted)
            const double fresh = secs(t0);
            t0 = Clock::now();
            check(reused.data(), src, "timing the check");
            tm[w][l.name].push_back(fresh - secs(t0));
          };
          std::mt19937 shuffle(41);
          for (int r = 0; r < rounds; ++r) {
            // A new order every round: a library always run after the same one would inherit the
            // memory that one left (docs/benchmarks.md, "Fresh memory on this VM").
            std::vector<Lib*> order = libs;
            std::shuffle(order.begin(), order.end(), shuffle);
            for (std::size_t k = 0; k < order.size(); ++k) {
              Lib& l = *order[k];
              auto t0 = Clock::now();
              l.write(src, t);
              tm[kWorkloads[0]][l.name].push_back(secs(t0));
              if (!l.read_into) continue;
              std::fill(reused.begin(), reused.end(), u16{1});
              t0 = Clock::now();
              l.read_into(reused.data(), t);
              tm[kWorkloads[1]][l.name].push_back(secs(t0));
              check(reused.data(), src, l.name + " read");
              auto own = [&] { time_fresh(kWorkloads[2], l, [&] { l.read_fresh(src, t); }); };
              auto caller = [&] {
                time_fresh(kWorkloads[3], l, [&] {
                  std::unique_ptr<u16[]> out(new u16[n]);
                  l.read_into(out.get(), t);
                  check(out.get(), src, l.name + " read into a fresh buffer");
                });
              };
              // The two fresh reads change places every round: the second finds the pages the
              // first just freed, which the VM's host has not taken back yet (docs/benchmarks.md).
              if (r % 2 == 0) {
                own();
                caller();
              } else {
                caller();
                own();
              }
            }
          }
          const double gib = static_cast<double>(n) * 2 / (1 << 30);
          for (const char* w : kWorkloads) {
            const std::string key = codec + "|" + ts + "|" + w;
            if (!rows.count(key)) row_order.push_back(key);
            Row& row = rows[key];
            std::printf("| %s | %d | %s |", codec.c_str(), t, w);
            for (const char* name : kColumns) {
              if (!tm[w].count(name)) {
                std::printf(" — |");
                continue;
              }
              row.gibs[name].push_back(gib / median(tm[w][name]));
              std::printf(" %.2f |", row.gibs[name].back());
            }
            if (row.gibs.count("zarrpp") && (row.gibs.count("z5") || row.gibs.count("libzarr"))) {
              double best = 0;
              for (const char* peer : {"z5", "libzarr"})
                if (row.gibs.count(peer)) best = std::max(best, row.gibs[peer].back());
              row.gibs["ratio"].push_back(row.gibs["zarrpp"].back() / best);
              std::printf(" %.2f |", row.gibs["ratio"].back());
            } else {
              std::printf(" — |");
            }
            if (tm[w].count("zarrpp") && tm[w].count("atomic floor")) {
              row.gibs["÷ atomic floor"].push_back(row.gibs["zarrpp"].back() / row.gibs["atomic floor"].back());
              std::printf(" %.2f |", row.gibs["÷ atomic floor"].back());
            } else {
              std::printf(" — |");
            }
            if (tm[w].count("zarrpp")) {
              const auto& v = tm[w]["zarrpp"];
              row.zarrpp_slowest.push_back(*std::max_element(v.begin(), v.end()) / median(v));
              std::printf(" %.2f |\n", row.zarrpp_slowest.back());
            } else {
              std::printf(" — |\n");
            }
            if (verbose)
              for (auto& [name, v] : tm[w]) {
                std::printf("|   | | %s: every round (s) |", name.c_str());
                for (double x : v) std::printf(" %.3f", x);
                std::printf(" |\n");
              }
            std::fflush(stdout);
          }
        }
      }
    }
    // ---- the summary over runs
    std::printf(
        "\nsummary over %d runs: median (min-max) of the per-run medians; WIDE marks a row whose ratio moved by more "
        "than 25%% between runs (not to be trusted: rerun)\n\n| codec | threads | workload | zarrpp GiB/s | z5 GiB/s | "
        "libzarr GiB/s | atomic floor GiB/s | in-place floor GiB/s | zarrpp ÷ best peer | zarrpp ÷ atomic floor | "
        "zarrpp slowest ÷ median round (worst run) | |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        runs);
    for (const auto& key : row_order) {
      Row& row = rows[key];
      const auto parts = split(key, '|');
      std::printf("| %s | %s | %s |", parts[0].c_str(), parts[1].c_str(), parts[2].c_str());
      for (const char* name : kSummaryColumns) {
        if (!row.gibs.count(name)) {
          std::printf(" — |");
          continue;
        }
        const auto& v = row.gibs[name];
        std::printf(" %.2f (%.2f-%.2f) |", median(v), *std::min_element(v.begin(), v.end()),
                    *std::max_element(v.begin(), v.end()));
      }
      const bool wide = row.gibs.count("ratio") && spread(row.gibs["ratio"]) > 1.25;
      if (row.zarrpp_slowest.empty())
        std::printf(" — |");
      else
        std::printf(" %.2f |", *std::max_element(row.zarrpp_slowest.begin(), row.zarrpp_slowest.end()));
      std::printf(" %s |\n", wide ? "WIDE" : "");
    }
    fs::remove_all(work);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrpp-bench-peers: %s\n", e.what());
    return 1;
  }
}
