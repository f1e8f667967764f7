// Reading a sharded array from an S3-compatible server, with 1..N requests in flight, against the
// same read from the file store. Usage (scripts/bench_remote.sh starts a local moto server):
//   zarrpp-bench-remote ENDPOINT BUCKET [--shape R,C] [DIR]
// --shape: the array's shape (default 4096,4096 = 32 MiB); R a multiple of 256 and C of 128, so
// the 8 shards (R/4 x C/2) hold whole 64x64 chunks. The test suite runs --shape 256,128.
#include <cstdio>
#include <filesystem>
#include <string>

#include "bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

namespace fs = std::filesystem;
using namespace zarrpp;

int main(int argc, char** argv) {
  auto usage = [] {
    std::fprintf(stderr, "usage: zarrpp-bench-remote ENDPOINT BUCKET [--shape R,C] [DIR]\n");
    return 2;
  };
  if (argc < 3) return usage();
  const std::string endpoint = argv[1], bucket = argv[2];
  fs::path dir = fs::temp_directory_path() / "zarrpp-bench-remote";
  long rows = 4096, cols = 4096;
  for (int i = 3; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--shape" && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%ld,%ld", &rows, &cols) != 2 || rows < 256 || cols < 128 || rows % 256 ||
          cols % 128) {
        std::fprintf(stderr, "zarrpp-bench-remote: --shape R,C needs R a multiple of 256 and C of 128\n");
        return 2;
      }
    } else if (a.rfind("--", 0) == 0) {
      return usage();
    } else {
      dir = a;
    }
  }
  fs::create_directories(dir);
  bench::print_machine_facts(dir.string());
  // Noisy uint16 in 8 shards of (R/4)x(C/2) with 64x64 inner chunks (zstd 1).
  const Shape shape = {rows, cols}, shards = {rows / 4, cols / 2}, chunks = {64, 64};
  auto data = bench::noisy_u16(static_cast<std::size_t>(shape[0] * shape[1]));
  const NDArray values = NDArray::from_vector<std::uint16_t>(shape, data);
  const ArraySpec spec{.shape = shape,
                       .chunks = chunks,
                       .dtype = DataType::uint16,
                       .compressor = codec::Zstd{.level = 1},
                       .shards = shards,
                       .overwrite = true};
  fs::remove_all(dir);
  auto file = FileStore::open(dir);
  Array::create(file, spec).write({}, values);
  auto s3 = S3Store::open(S3Store::Options{.bucket = bucket, .prefix = "bench", .endpoint = endpoint});
  Array::create(s3, spec).write({}, values);
  const double mb = static_cast<double>(values.nbytes()) / 1e6;
  std::printf(
      "Sharded uint16 array %lldx%lld (%.1f MB), shards %lldx%lld of 64x64 zstd-1 chunks; whole-array read.\n\n",
      static_cast<long long>(shape[0]), static_cast<long long>(shape[1]), mb, static_cast<long long>(shards[0]),
      static_cast<long long>(shards[1]));
  std::printf("| store | requests in flight | MB/s | time / file-store time |\n|---|---|---|---|\n");
  double file_t = 0;
  for (std::size_t conc : {1u, 2u, 8u, 16u}) {
    for (int which = 0; which < 2; ++which) {
      auto z = Array::open(which == 0 ? StorePtr(file) : StorePtr(s3));
      z.set_concurrency(conc);
      const double t = bench::median_seconds(3, [&] {
        const auto a = z.read();
        if (!(a == values)) std::abort();
      });
      if (which == 0) file_t = t;
      std::printf("| %s | %zu | %.0f | %.2f |\n", which == 0 ? "file" : "S3 (local moto server)", conc, mb / t,
                  t / file_t);
      std::fflush(stdout);
    }
  }
  fs::remove_all(dir);
  return 0;
}
