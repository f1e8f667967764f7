// zarrpp-bench-fresh: whole reads into fresh outputs and whole writes, from C++, against the
// fresh-memory floor measured in the same process (bench/bench_python.py runs it beside the
// Python bindings, NumPy and zarrita.js; docs/benchmarks.md).
//
//   zarrpp-bench-fresh ARRAY DATA.npy [ROUNDS] [THREADS]
//
// DATA.npy holds the array's contents (loaded once, untimed). Each round, interleaved:
//   floor  an output allocated as Array::read allocates it (NDArray::uninitialized), filled by
//          THREADS threads each copying one contiguous part from DATA (first touch included);
//   read   Array::read() of the whole array into a fresh NDArray (checked against DATA);
//   write  Array::write of the whole array from DATA.
// Prints one JSON line: {"floor": [s...], "read": [s...], "write": [s...], "bytes": N}.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: zarrpp-bench-fresh ARRAY DATA.npy [ROUNDS] [THREADS]\n");
    return 2;
  }
  try {
    const int rounds = argc > 3 ? std::stoi(argv[3]) : 3;
    const std::size_t threads = argc > 4 ? std::stoul(argv[4]) : default_concurrency();
    auto z = Array::open(argv[1]);
    bench::print_machine_facts(argv[1], stderr);  // stdout carries the one JSON line
    z.set_concurrency(threads);
    const NDArray data = npy::load(argv[2]);
    if (data.shape() != z.shape() || !(data.dtype() == z.dtype()))
      throw ArgumentError("DATA.npy does not match the array");
    const std::size_t n = data.nbytes();
    std::vector<double> floor, read, write;
    auto secs = [](Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); };
    auto run_floor = [&] {
      auto t = Clock::now();
      NDArray out = NDArray::uninitialized(data.dtype(), data.shape());
      std::vector<std::thread> ts;
      for (std::size_t i = 0; i < threads; ++i)
        ts.emplace_back([&, i] {
          const std::size_t a = n / threads * i, b = i + 1 == threads ? n : n / threads * (i + 1);
          std::memcpy(out.raw_data() + a, data.raw_data() + a, b - a);
        });
      for (auto& th : ts) th.join();
      floor.push_back(secs(t));
      if (std::memcmp(out.raw_data(), data.raw_data(), n) != 0) throw std::runtime_error("floor copy differs");
    };
    auto run_read = [&] {
      auto t = Clock::now();
      const NDArray out = z.read();
      read.push_back(secs(t));
      if (std::memcmp(out.raw_data(), data.raw_data(), n) != 0) throw std::runtime_error("read differs from DATA.npy");
    };
    auto run_write = [&] {
      auto t = Clock::now();
      z.write({}, data);
      write.push_back(secs(t));
    };
    const std::vector<std::function<void()>> ops = {run_floor, run_read, run_write};
    // One untimed read first (page cache warm), then each round starts with another operation, so
    // none always pays for being first.
    (void)z.read();
    for (int r = 0; r < rounds; ++r)
      for (std::size_t k = 0; k < ops.size(); ++k) ops[(k + static_cast<std::size_t>(r)) % ops.size()]();
    auto list = [](const std::vector<double>& v) {
      std::string s = "[";
      for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
      return s + "]";
    };
    std::printf("{\"floor\": %s, \"read\": %s, \"write\": %s, \"bytes\": %zu}\n", list(floor).c_str(),
                list(read).c_str(), list(write).c_str(), n);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrpp-bench-fresh: %s\n", e.what());
    return 1;
  }
}
