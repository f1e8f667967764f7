// What growing in front costs on the local file store: two chunk rows in front of an array of
// 64^3 uint8 chunks, done four ways (the upstream prototype's table), plus zarrpp's prepend.
// Then the rectilinear_bounded grid: the metadata step after 1, 100 and 10,000 prepends of one
// chunk each, of varying sizes (every prepend adds an entry to the sizes) and of one size (a run).
// Usage: zarrpp-bench-prepend [--large] [--sizes N,...] [--prepends K,...] [DIR]
//   --sizes N,...     arrays of N^3 chunks (default 8,16: 512 and 4,096 chunks); --large adds 32
//                     (32,768 chunks = 8 GiB). The test suite runs --sizes 2 to keep this working.
//   --prepends K,...  rectilinear_bounded rows after K prepends (default 1,100,10000).
#include <algorithm>
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

// "8,16" -> {8, 16}; every entry an integer in [1, max].
std::vector<std::int64_t> parse_sizes(const std::string& s, long max = 64) {
  std::vector<std::int64_t> out;
  std::size_t i = 0;
  while (i <= s.size()) {
    const std::size_t j = std::min(s.find(',', i), s.size());
    const std::string part = s.substr(i, j - i);
    char* end = nullptr;
    const long v = std::strtol(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 1 || v > max) {
      std::fprintf(stderr, "zarrpp-bench-prepend: takes integers in [1, %ld], got '%s'\n", max, s.c_str());
      std::exit(2);
    }
    out.push_back(v);
    i = j + 1;
  }
  return out;
}

// The metadata step of a growth, through the store calls a prepend makes after its chunk write
// (the array's lock, zarr.json read with its version, parsed and validated, compare-and-swap).
double metadata_step(const StorePtr& zs) {
  return bench::median_seconds(21, [&] {
    auto lock = zs->lock("zarr.json");
    const auto cur = zs->get_versioned("zarr.json");
    const ArrayMetadata m = ArrayMetadata::parse(std::string(cur->bytes.begin(), cur->bytes.end()));
    const std::string next = m.dump();
    if (!zs->set("zarr.json", Bytes(next.begin(), next.end()), WriteOptions::if_equal(cur->version))) std::abort();
  });
}

// The least any crash-safe replacement of a document of `bytes` costs here: create, write, rename.
double atomic_replace(const fs::path& dir, std::size_t bytes) {
  const std::string doc(bytes, ' ');
  return bench::median_seconds(21, [&] {
    const auto tmp = dir / ".limit-tmp";
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    std::fwrite(doc.data(), 1, doc.size(), f);
    std::fclose(f);
    fs::rename(tmp, dir / ".limit");
  });
}

// rectilinear_bounded: a 1024-column int32 array whose rows are chunks of listed sizes, after `k`
// prepends of one chunk each (sizes 1..7 in turn, or all 7). The grid is built on the memory store
// (the document is what k prepends leave) and measured on the file store: the metadata step, one
// more prepend of 3 rows (its one chunk and the step), and the replace limit for that document.
void rectilinear_row(const fs::path& dir, std::int64_t k, bool varying) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {10, 1024}, .dtype = DataType::int32, .chunk_sizes = {{3, 7}, {1024}}});
  std::vector<NDArray> rows;  // rows[n]: n rows of ones
  for (std::int64_t n = 0; n <= 7; ++n) rows.push_back(NDArray::full<std::int32_t>({n, 1024}, 1));
  for (std::int64_t i = 0; i < k; ++i) z.prepend(rows[static_cast<std::size_t>(varying ? 1 + i % 7 : 7)], 0);
  fs::remove_all(dir);
  auto fsz = FileStore::open(dir);
  const auto doc = *mem->get("zarr.json");
  fsz->set("zarr.json", doc);
  const double t_meta = metadata_step(fsz);
  auto zf = Array::open(fsz);
  const std::int64_t entries = static_cast<std::int64_t>(zf.metadata().chunk_grid.chunk_runs[0].size());
  std::vector<double> grow;
  for (int i = 0; i < 5; ++i) grow.push_back(seconds([&] { zf.prepend(rows[3], 0); }));
  std::sort(grow.begin(), grow.end());
  const double t_limit = atomic_replace(dir, doc.size());
  std::printf("| %lld | %s | %lld | %zu | %.3f ms | %.3f ms | %.3f ms | %.2f |\n", static_cast<long long>(k),
              varying ? "1..7 in turn" : "all 7", static_cast<long long>(entries), doc.size(), t_meta * 1e3,
              grow[2] * 1e3, t_limit * 1e3, t_meta / t_limit);
  std::fflush(stdout);
  fs::remove_all(dir);
}
}  // namespace

int main(int argc, char** argv) {
  fs::path base = fs::temp_directory_path() / "zarrpp-bench-prepend";
  std::vector<std::int64_t> sizes = {8, 16};  // 512 and 4,096 chunks
  std::vector<std::int64_t> prepends = {1, 100, 10000};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--large")
      sizes.push_back(32);  // 32,768 chunks
    else if (a == "--sizes" && i + 1 < argc)
      sizes = parse_sizes(argv[++i]);
    else if (a == "--prepends" && i + 1 < argc)
      prepends = parse_sizes(argv[++i], 1000000);
    else if (a.rfind("--", 0) == 0) {
      std::fprintf(stderr, "usage: zarrpp-bench-prepend [--large] [--sizes N,...] [--prepends K,...] [DIR]\n");
      return 2;
    } else
      base = a;
  }
  fs::create_directories(base);
  bench::print_machine_facts(base.string());
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
    const double t_meta = metadata_step(z.store());
    // The physical limit of any crash-safe metadata update on this file system: create, write
    // and rename one small file (what replacing zarr.json atomically needs at the least).
    const double t_limit = atomic_replace(dir, z.metadata().dump().size());
    std::printf("| %lld | %.2f GiB | %.3f s | %.2f s | %.2f s | %.3f s | %.3f ms | %.3f ms | %.2f |\n",
                static_cast<long long>(n) * n * n, gib, t_rename, t_store, t_copy, t_prepend, t_meta * 1e3,
                t_limit * 1e3, t_meta / t_limit);
    std::fflush(stdout);
    fs::remove_all(dir);
  }
  std::printf(
      "\nrectilinear_bounded: after K prepends of one chunk each (1024 int32 columns; file store)\n\n"
      "| prepends | sizes | entries in the sizes | zarr.json bytes | metadata step | one more prepend (3 rows) | "
      "limit: one atomic replace of the document | metadata step / limit |\n|---|---|---|---|---|---|---|---|\n");
  for (const auto k : prepends) rectilinear_row(base / "rect", k, true);
  if (!prepends.empty()) rectilinear_row(base / "rect", prepends.back(), false);
  return 0;
}
