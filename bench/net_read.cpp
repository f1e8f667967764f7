// bench/bench_network.py's C++ rows: one read through the library, timed from opening the array
// to having its data (like the Python rows, after the process started).
//   zarrpp-bench-net-read URL [SELECTION]    prints "SECONDS BYTES"
#include <chrono>
#include <cstdio>
#include <exception>

#include "zarrpp/zarrpp.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: zarrpp-bench-net-read URL [SELECTION]\n");
    return 2;
  }
  try {
    const auto t = std::chrono::steady_clock::now();
    const auto a = zarrpp::Array::open(argv[1]);
    const zarrpp::NDArray data = a.read(argc == 3 ? zarrpp::parse_selection(argv[2]) : zarrpp::Selection{});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
    std::printf("%.6f %lld\n", s, static_cast<long long>(data.nbytes()));
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrpp-bench-net-read: %s\n", e.what());
    return 1;
  }
}
