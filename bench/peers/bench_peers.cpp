// zarrpp-bench-peers: zarrpp against the C++ Zarr libraries z5 and libzarr, in one process, on the
// same data (issue 22, docs/benchmarks.md). Built only when their sources are present in a scratch
// folder outside the repository (scripts/bench_peers.sh fetches nothing: clone them by hand).
//
//   zarrpp-bench-peers [--mib 512] [--rounds 5] [--dir DIR]
//
// Each library writes and reads its own Zarr v3 array: uint16 (MiB/2)x1024x1024, chunks
// 64x256x256, uncompressed and zstd level 1, on the local file store (page cache warm), with 1 and 2
// threads. Workloads: whole write from one buffer; whole read into a reused buffer (touched
// before); whole read into a fresh buffer (allocated anew each time: zarrpp's Array::read()
// allocates its own output; for z5 and libzarr the caller allocates with `new uint16_t[n]`, as
// their users do). z5 runs its own thread pool (numberOfThreads); libzarr is single-threaded by
// design, so with 2 threads each thread reads or writes one half (whole chunk rows) through its own
// array handle. Every read is checked against the data. Rounds interleave the libraries; medians.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <libzarr/adapters/filesystem_store.hpp>
#include <libzarr/libzarr.hpp>

#include "z5/factory.hxx"
#include "z5/filesystem/handle.hxx"
#include "z5/multiarray/array_access.hxx"

#include "zarrpp/zarrpp.hpp"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using u16 = std::uint16_t;

namespace {

double secs(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
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

}  // namespace

int main(int argc, char** argv) {
  int mib = 512, rounds = 5;
  std::string dir = "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--mib" && i + 1 < argc)
      mib = std::stoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc)
      rounds = std::stoi(argv[++i]);
    else if (a == "--dir" && i + 1 < argc)
      dir = argv[++i];
    else {
      std::fprintf(stderr, "usage: zarrpp-bench-peers [--mib 512] [--rounds 5] [--dir DIR]\n");
      return 2;
    }
  }
  if (mib % 8 || mib <= 0) {
    std::fprintf(stderr, "zarrpp-bench-peers: --mib must be a positive multiple of 8\n");
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

    std::printf(
        "data: uint16 %llux%llux%llu (%d MiB), chunks 64x256x256, Zarr v3 on the file store under %s; %d rounds, "
        "medians\n",
        static_cast<unsigned long long>(Z), static_cast<unsigned long long>(Y), static_cast<unsigned long long>(X), mib,
        work.c_str(), rounds);
    std::printf("peers: z5 and libzarr built from their sources (commits recorded by scripts/bench_peers.sh)\n\n");
    std::printf(
        "| codec | threads | workload | zarrpp GiB/s | z5 GiB/s | libzarr GiB/s | zarrpp ÷ best peer "
        "|\n|---|---|---|---|---|---|---|\n");

    for (const std::string codec : {"none", "zstd-1"}) {
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
               z5::multiarray::writeSubarray<u16>(*ds, z5::multiarray::ConstArrayView<u16>(s.data(), shape5, strides5),
                                                  origin5.begin(), t);
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
      std::vector<Lib*> libs{&zl, &l5, &ll};
      std::vector<u16> reused(n, 1);
      for (int t : {1, 2}) {
        std::map<std::string, std::map<std::string, std::vector<double>>> tm;  // workload -> lib -> seconds
        for (Lib* l : libs) {  // untimed: create every chunk and warm the page cache
          l->write(src, t);
          l->read_into(reused.data(), t);
          check(reused.data(), src, l->name + " read");
        }
        for (int r = 0; r < rounds; ++r)
          for (std::size_t k = 0; k < libs.size(); ++k) {
            Lib& l = *libs[(k + static_cast<std::size_t>(r)) % libs.size()];
            auto t0 = Clock::now();
            l.write(src, t);
            tm["write"][l.name].push_back(secs(t0));
            std::fill(reused.begin(), reused.end(), u16{1});
            t0 = Clock::now();
            l.read_into(reused.data(), t);
            tm["read, reused buffer"][l.name].push_back(secs(t0));
            check(reused.data(), src, l.name + " read");
            t0 = Clock::now();
            l.read_fresh(src, t);  // (includes the check: subtracted below)
            const double fresh = secs(t0);
            t0 = Clock::now();
            check(reused.data(), src, "timing the check");
            tm["read, fresh buffer"][l.name].push_back(fresh - secs(t0));
          }
        for (const char* w : {"write", "read, reused buffer", "read, fresh buffer"}) {
          const double bytes = static_cast<double>(n) * 2 / (1 << 30);
          const double a = median(tm[w]["zarrpp"]), b = median(tm[w]["z5"]), c = median(tm[w]["libzarr"]);
          std::printf("| %s | %d | %s | %.2f | %.2f | %.2f | %.2f |\n", codec.c_str(), t, w, bytes / a, bytes / b,
                      bytes / c, std::min(b, c) / a);
          std::fflush(stdout);
        }
      }
    }
    fs::remove_all(work);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrpp-bench-peers: %s\n", e.what());
    return 1;
  }
}
