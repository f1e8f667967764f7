// What growing in front costs on the local file store: two chunk rows in front of an array of
// 64^3 uint8 chunks, done four ways (the upstream prototype's table), plus zarrpp's prepend.
// Usage: zarrpp-bench-prepend [--large] [--sizes N,...] [DIR]
//   --sizes N,...  arrays of N^3 chunks (default 8,16: 512 and 4,096 chunks); --large adds 32
//                  (32,768 chunks = 8 GiB). The test suite runs --sizes 2 to keep this working.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

namespace fs = std::filesystem;
using namespace zarrpp;

namespace {
double seconds(const std::function<void()>& f) {
  const auto a = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
}

// A (n x n x n)-chunk array of 64^3 uint8 chunks, every chunk stored.
Array make(const fs::path& dir, std::int64_t n) {
  fs::remove_all(dir);
  auto z = Array::create(FileStore::open(dir),
                         {.shape = {64 * n, 64 * n, 64 * n}, .chunks = {64, 64, 64}, .dtype = DataType::uint8});
  NDArray slab(DataType::uint8, {64, 64 * n, 64 * n});
  for (std::int64_t i = 0; i < slab.size(); ++i) slab.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(i * 7 + 1);
  for (std::int64_t r = 0; r < n; ++r) z.write({slice(64 * r, 64 * (r + 1))}, slab);
  return z;
}

// "8,16" -> {8, 16}; every entry an integer in [1, 64].
std::vector<std::int64_t> parse_sizes(const std::string& s) {
  std::vector<std::int64_t> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    char* end = nullptr;
    const long v = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 1 || v > 64) {
      std::fprintf(stderr, "zarrpp-bench-prepend: --sizes takes integers in [1, 64], got '%s'\n", s.c_str());
      std::exit(2);
    }
    out.push_back(v);
    i = j + 1;
  }
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  fs::path base = fs::temp_directory_path() / "zarrpp-bench-prepend";
  std::vector<std::int64_t> sizes = {8, 16};  // 512 and 4,096 chunks
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--large")
      sizes.push_back(32);  // 32,768 chunks
    else if (a == "--sizes" && i + 1 < argc)
      sizes = parse_sizes(argv[++i]);
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: zarrpp-bench-prepend [--large] [--sizes N,...] [DIR]\n");
      return 2;
    } else
      base = a;
  }
  std::printf(
      "| chunks | data | rename every chunk file | store get/set/erase | copy to a new array | zarrpp prepend (2 rows "
      "of data) | zarrpp metadata step | limit: one atomic file replace | metadata step / limit |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  for (auto n : sizes) {
    const auto dir = base / ("n" + std::to_string(n));
    const double gib = static_cast<double>(n * n * n) * 64 * 64 * 64 / (1 << 30);
    // 1. Rename every chunk file two rows up (in reverse order so nothing is overwritten).
    make(dir, n);
    const double t_rename = seconds([&] {
      for (std::int64_t i = n - 1; i >= 0; --i)
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t k = 0; k < n; ++k) {
            const auto from = dir / "c" / std::to_string(i) / std::to_string(j) / std::to_string(k);
            const auto to_dir = dir / "c" / std::to_string(i + 2) / std::to_string(j);
            fs::create_directories(to_dir);
            fs::rename(from, to_dir / std::to_string(k));
          }
    });
    // 2. Move every chunk through the store interface.
    auto z = make(dir, n);
    auto store = z.store();
    const double t_store = seconds([&] {
      for (std::int64_t i = n - 1; i >= 0; --i)
        for (std::int64_t j = 0; j < n; ++j)
          for (std::int64_t k = 0; k < n; ++k) {
            const std::string from = "c/" + std::to_string(i) + "/" + std::to_string(j) + "/" + std::to_string(k);
            const std::string to = "c/" + std::to_string(i + 2) + "/" + std::to_string(j) + "/" + std::to_string(k);
            store->set(to, *store->get(from));
            store->erase(from);
          }
    });
    // 3. Copy to a new, larger array (the data shifted by two rows).
    z = make(dir, n);
    const auto dir2 = base / ("copy" + std::to_string(n));
    const double t_copy = seconds([&] {
      fs::remove_all(dir2);
      auto dst =
          Array::create(FileStore::open(dir2),
                        {.shape = {64 * (n + 2), 64 * n, 64 * n}, .chunks = {64, 64, 64}, .dtype = DataType::uint8});
      for (std::int64_t r = 0; r < n; ++r)
        dst.write({slice(64 * (r + 2), 64 * (r + 3))}, z.read({slice(64 * r, 64 * (r + 1))}));
    });
    fs::remove_all(dir2);
    // 4. zarrpp: prepend two chunk rows of data; and the metadata step alone: the steps a
    //    prepend takes after its chunk writes, through the same store calls (take the array's
    //    lock, read zarr.json with its version, parse and validate it, compare-and-swap the new
    //    document). (A prepend of zero rows changes nothing at all, so it cannot measure this.)
    z = make(dir, n);
    NDArray rows(DataType::uint8, {128, 64 * n, 64 * n});
    std::memset(rows.raw_data(), 1, rows.nbytes());
    const double t_prepend = seconds([&] { z.prepend(rows, 0); });
    const auto zs = z.store();
    const double t_meta = bench::median_seconds(21, [&] {
      auto lock = zs->lock("zarr.json");
      const auto cur = zs->get_versioned("zarr.json");
      const ArrayMetadata m = ArrayMetadata::parse(std::string(cur->bytes.begin(), cur->bytes.end()));

      const std::string next = m.dump();
      if (!zs->set("zarr.json", Bytes(next.begin(), next.end()), WriteOptions::if_equal(cur->version))) std::abort();
    });
    // The physical limit of any crash-safe metadata update on this file system: create, write
    // and rename one small file (what replacing zarr.json atomically needs at the least).
    const std::string meta = std::string(z.metadata().dump());
    const double t_limit = bench::median_seconds(21, [&] {
      const auto tmp = dir / ".limit-tmp";
      {
        std::FILE* f = std::fopen(tmp.c_str(), "wb");
        std::fwrite(meta.data(), 1, meta.size(), f);
        std::fclose(f);
      }
      fs::rename(tmp, dir / ".limit");
    });
    std::printf("| %lld | %.2f GiB | %.3f s | %.2f s | %.2f s | %.3f s | %.3f ms | %.3f ms | %.2f |\n",
                static_cast<long long>(n) * n * n, gib, t_rename, t_store, t_copy, t_prepend, t_meta * 1e3,
                t_limit * 1e3, t_meta / t_limit);
    std::fflush(stdout);
    fs::remove_all(dir);
  }
  return 0;
}
