// Several processes (standing in for machines) write disjoint regions of one array and grow it at
// both ends at the same time, then one of them checks that nothing was lost.
//
//   zarrpp-example-distributed URL [WORKERS] [STEPS]
//
// URL is any store URL: s3://bucket/path.zarr (credentials, region and endpoint from the AWS_*
// environment variables), file:///path or a plain path. The program creates a 2-d int32 array of
// WORKERS blocks of 16 rows x 32 columns, starts WORKERS copies of itself, and each copy
//   1. writes its own block (domain rows [16 i, 16 i + 16)), and
//   2. grows the array STEPS times by 4 rows, prepending and appending in turn.
// Growth is serialized by the store's lock (a lease on S3, built from conditional PUTs); plain
// writes need no coordination because their chunks are disjoint. Every row holds a unique tag:
// element (row, column) = tag * 100 + column. At the end the coordinator reads the whole array and
// checks that every tag is there exactly once, every grown block is contiguous and the domain is
// what the growth steps add up to. Exit status 0 when complete.
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <zarrpp/zarrpp.hpp>
using namespace zarrpp;

extern char** environ;

namespace {

constexpr std::int64_t kBlockRows = 16, kColumns = 32, kGrowRows = 4;

// Tags: block of worker w -> 1'000'000 + w * 1000 + row; growth step s of worker w -> 2'000'000 +
// w * 10'000 + s * 10 + row.
std::int32_t block_tag(int w, std::int64_t row) { return static_cast<std::int32_t>(1'000'000 + w * 1000 + row); }
std::int32_t grow_tag(int w, int step, std::int64_t row) {
  return static_cast<std::int32_t>(2'000'000 + w * 10'000 + step * 10 + row);
}

NDArray rows_with_tags(std::int64_t n, const std::function<std::int32_t(std::int64_t)>& tag) {
  NDArray a(DataType::int32, {n, kColumns});
  auto* p = a.data<std::int32_t>();
  for (std::int64_t r = 0; r < n; ++r)
    for (std::int64_t c = 0; c < kColumns; ++c) p[r * kColumns + c] = tag(r) * 100 + static_cast<std::int32_t>(c);
  return a;
}

int worker(const std::string& url, int w, int steps) {
  auto z = Array::open(url);
  // 1. Our own block: domain rows [16 w, 16 w + 16), addressed by coordinates (z.coords()), which
  //    mean the same rows however the others have grown the array meanwhile; chunks never move,
  //    so the block lands in place.
  const std::int64_t first = w * kBlockRows;
  z.coords().write({slice(first, first + kBlockRows), all},
                   rows_with_tags(kBlockRows, [&](std::int64_t r) { return block_tag(w, r); }));
  // 2. Growth at both ends, interleaved with the other workers' growth.
  for (int s = 0; s < steps; ++s) {
    const auto rows = rows_with_tags(kGrowRows, [&](std::int64_t r) { return grow_tag(w, s, r); });
    if ((w + s) % 2 == 0)
      z.prepend(rows);
    else
      z.append(rows);
  }
  return 0;
}

int check(const std::string& url, int workers, int steps) {
  const auto z = Array::open(url);
  const auto d = z.domain();
  const std::int64_t grown = static_cast<std::int64_t>(workers) * steps * kGrowRows;
  const std::int64_t want_rows = workers * kBlockRows + grown;
  std::cout << "final domain [" << d[0].inclusive_min << ", " << d[0].exclusive_max << ") x [" << d[1].inclusive_min
            << ", " << d[1].exclusive_max << "), " << z.nshards_stored() << " chunks stored\n";
  if (z.shape()[0] != want_rows || d[0].inclusive_min > 0 || d[0].exclusive_max < workers * kBlockRows) {
    std::cerr << "FAIL: expected " << want_rows << " rows, the array has " << z.shape()[0] << "\n";
    return 1;
  }
  const auto all_rows = z.read<std::int32_t>();
  const auto* p = all_rows.data<std::int32_t>();
  std::vector<std::int32_t> tags;
  for (std::int64_t r = 0; r < want_rows; ++r) {
    const std::int32_t tag = p[r * kColumns] / 100;
    for (std::int64_t c = 0; c < kColumns; ++c)
      if (p[r * kColumns + c] != tag * 100 + c) {
        std::cerr << "FAIL: row " << r << " is torn (column " << c << " holds " << p[r * kColumns + c] << ")\n";
        return 1;
      }
    tags.push_back(tag);
  }
  // The original blocks sit where they were written: domain rows [0, workers * 16).
  const std::int64_t zero = -d[0].inclusive_min;
  for (int w = 0; w < workers; ++w)
    for (std::int64_t r = 0; r < kBlockRows; ++r)
      if (tags[zero + w * kBlockRows + r] != block_tag(w, r)) {
        std::cerr << "FAIL: block of worker " << w << " row " << r << " holds tag " << tags[zero + w * kBlockRows + r]
                  << "\n";
        return 1;
      }
  // Every growth step's rows are there once, contiguous and in order.
  std::map<std::int32_t, std::int64_t> where;
  for (std::int64_t r = 0; r < want_rows; ++r)
    if (!where.emplace(tags[r], r).second) {
      std::cerr << "FAIL: tag " << tags[r] << " appears twice\n";
      return 1;
    }
  for (int w = 0; w < workers; ++w)
    for (int s = 0; s < steps; ++s) {
      const auto it = where.find(grow_tag(w, s, 0));
      if (it == where.end()) {
        std::cerr << "FAIL: growth step " << s << " of worker " << w << " is missing\n";
        return 1;
      }
      for (std::int64_t r = 1; r < kGrowRows; ++r)
        if (it->second + r >= want_rows || tags[it->second + r] != grow_tag(w, s, r)) {
          std::cerr << "FAIL: growth step " << s << " of worker " << w << " is not contiguous\n";
          return 1;
        }
    }
  std::cout << "complete: " << workers << " workers, " << workers * steps << " growth steps, every row present once\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc >= 5 && std::string(argv[1]) == "--worker") return worker(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
    if (argc < 2 || argc > 4) {
      std::cerr << "usage: " << argv[0] << " URL [WORKERS] [STEPS]\n";
      return 2;
    }
    const std::string url = argv[1];
    const int workers = argc > 2 ? std::atoi(argv[2]) : 4;
    const int steps = argc > 3 ? std::atoi(argv[3]) : 5;
    if (workers < 1 || workers > 64 || steps < 0 || steps > 100) {
      std::cerr << "WORKERS must be 1..64 and STEPS 0..100\n";
      return 2;
    }
    Array::create(open_store(url), {.shape = {workers * kBlockRows, kColumns},
                                    .chunks = {kBlockRows, kColumns},
                                    .dtype = DataType::int32,
                                    .compressor = codec::Zstd{.level = 1},
                                    .overwrite = true});
    std::vector<pid_t> pids;
    for (int w = 0; w < workers; ++w) {
      const std::string ws = std::to_string(w), ss = std::to_string(steps);
      std::vector<char*> args = {argv[0],
                                 const_cast<char*>("--worker"),
                                 const_cast<char*>(url.c_str()),
                                 const_cast<char*>(ws.c_str()),
                                 const_cast<char*>(ss.c_str()),
                                 nullptr};
      pid_t pid = 0;
      if (::posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, args.data(), environ) != 0) {
        std::cerr << "cannot start worker " << w << "\n";
        return 1;
      }
      pids.push_back(pid);
    }
    int failed = 0;
    for (auto pid : pids) {
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) ++failed;
    }
    if (failed) {
      std::cerr << "FAIL: " << failed << " worker(s) failed\n";
      return 1;
    }
    return check(url, workers, steps);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
