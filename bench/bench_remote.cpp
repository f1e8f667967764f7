// Reading a sharded array from an S3-compatible server, with 1..N requests in flight, against the
// same read from the file store. Usage (scripts/bench_remote.sh starts a local moto server):
//   zarrpp-bench-remote ENDPOINT BUCKET [DIR]
#include <cstdio>
#include <filesystem>
#include <string>

#include "bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

namespace fs = std::filesystem;
using namespace zarrpp;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: zarrpp-bench-remote ENDPOINT BUCKET [DIR]\n");
    return 2;
  }
  const std::string endpoint = argv[1], bucket = argv[2];
  const fs::path dir = argc > 3 ? fs::path(argv[3]) : fs::temp_directory_path() / "zarrpp-bench-remote";
  // 32 MiB of noisy uint16 in 8 shards of 1024x2048 with 64x64 inner chunks (zstd 1).
  const Shape shape = {4096, 4096}, shards = {1024, 2048}, chunks = {64, 64};
  auto data = bench::noisy_u16(static_cast<std::size_t>(shape[0] * shape[1]));
  const NDArray values = NDArray::from_vector<std::uint16_t>(shape, data);
  const ArraySpec spec{.shape = shape, .chunks = chunks, .dtype = DataType::uint16, .compressor = codec::Zstd{.level = 1},
                       .shards = shards, .overwrite = true};
  fs::remove_all(dir);
  auto file = FileStore::open(dir);
  Array::create(file, spec).write({}, values);
  auto s3 = S3Store::open(S3Store::Options{.bucket = bucket, .prefix = "bench", .endpoint = endpoint});
  Array::create(s3, spec).write({}, values);
  const double mb = static_cast<double>(values.nbytes()) / 1e6;
  std::printf("Sharded uint16 array %lldx%lld (%.0f MB), shards 1024x2048 of 64x64 zstd-1 chunks; whole-array read.\n\n",
              static_cast<long long>(shape[0]), static_cast<long long>(shape[1]), mb);
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
      std::printf("| %s | %zu | %.0f | %.2f |\n", which == 0 ? "file" : "S3 (local moto server)", conc, mb / t, t / file_t);
      std::fflush(stdout);
    }
  }
  fs::remove_all(dir);
  return 0;
}
