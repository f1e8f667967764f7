// The floor of `zarrpp get ARRAY --out FILE.npy` for bench/bench_cli.py: only what `get` must do
// with an uncompressed array, with nothing of zarrpp in between. For each chunk row along the first
// dimension, two threads read the row's chunk files (by `pread` into a reused chunk buffer and a
// scatter, or by `preadv` straight into place) into one reused buffer, mapped in by both threads
// first as `get`'s is, which is then appended to the output with `write`.
//
//   zarrpp-bench-get-floor ARRAY OUT.npy scatter|preadv
//
// ARRAY is bench_cli.py's: Zarr v3, uint16, 3-d, regular chunks, "/" chunk keys, bytes codec only
// (checked; anything else is refused). The output is a valid .npy file (bench_cli compares it).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct Layout {
  std::array<std::int64_t, 3> shape{}, chunk{};
};

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

Layout read_layout(const std::string& dir) {
  std::ifstream f(dir + "/zarr.json");
  if (!f) fail("cannot open " + dir + "/zarr.json");
  const auto m = nlohmann::json::parse(f);
  const auto& codecs = m.at("codecs");
  if (m.at("data_type") != "uint16" || m.at("shape").size() != 3 || codecs.size() != 1 ||
      codecs[0].at("name") != "bytes" || m.at("chunk_grid").at("name") != "regular" ||
      m.at("chunk_key_encoding").at("configuration").at("separator") != "/")
    fail("not bench_cli's layout (uint16, 3-d, regular chunks, '/' keys, bytes codec only)");
  Layout l;
  for (int d = 0; d < 3; ++d) {
    l.shape[d] = m["shape"][d];
    l.chunk[d] = m["chunk_grid"]["configuration"]["chunk_shape"][d];
    if (l.shape[d] % l.chunk[d] != 0) fail("the shape must be a multiple of the chunk shape");
  }
  return l;
}

std::string npy_header(const Layout& l) {
  std::string h = "{'descr': '<u2', 'fortran_order': False, 'shape': (" + std::to_string(l.shape[0]) + ", " +
                  std::to_string(l.shape[1]) + ", " + std::to_string(l.shape[2]) + "), }";
  const std::size_t total = (10 + h.size() + 1 + 63) / 64 * 64;
  h.append(total - 10 - h.size() - 1, ' ');
  h.push_back('\n');
  const auto n = static_cast<std::uint16_t>(h.size());
  return std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(n & 0xff) + static_cast<char>(n >> 8) + h;
}

void write_all(int fd, const std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) fail(std::string("write: ") + std::strerror(errno));
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

// Reads chunk (row, j, k) into its place in `slab` (one chunk row, C order).
void read_chunk(const std::string& dir, const Layout& l, bool scatter, std::int64_t row, std::int64_t j, std::int64_t k,
                std::uint8_t* slab, std::uint8_t* chunk_buf, std::size_t chunk_bytes) {
  const std::string key = dir + "/c/" + std::to_string(row) + "/" + std::to_string(j) + "/" + std::to_string(k);
  const int fd = ::open(key.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail("cannot open " + key);
  const auto [c0, c1, c2] = l.chunk;
  const std::size_t run = static_cast<std::size_t>(c2) * 2;
  auto place = [&](std::int64_t x, std::int64_t y) {
    return slab + ((static_cast<std::size_t>(x) * l.shape[1] + j * c1 + y) * l.shape[2] + k * c2) * 2;
  };
  if (scatter) {
    if (::pread(fd, chunk_buf, chunk_bytes, 0) != static_cast<ssize_t>(chunk_bytes)) fail("short read of " + key);
    for (std::int64_t x = 0; x < c0; ++x)
      for (std::int64_t y = 0; y < c1; ++y) std::memcpy(place(x, y), chunk_buf + (x * c1 + y) * run, run);
  } else {
    std::vector<iovec> iov;
    off_t off = 0;
    auto flush = [&] {
      const std::size_t want = iov.size() * run;
      if (::preadv(fd, iov.data(), static_cast<int>(iov.size()), off) != static_cast<ssize_t>(want))
        fail("short read of " + key);
      off += static_cast<off_t>(want);
      iov.clear();
    };
    for (std::int64_t x = 0; x < c0; ++x)
      for (std::int64_t y = 0; y < c1; ++y) {
        iov.push_back({place(x, y), run});
        if (iov.size() == IOV_MAX) flush();
      }
    if (!iov.empty()) flush();
  }
  ::close(fd);
}

void run(const std::string& dir, const std::string& out, bool scatter) {
  const Layout l = read_layout(dir);
  const std::size_t slab_bytes = static_cast<std::size_t>(l.chunk[0] * l.shape[1] * l.shape[2]) * 2;
  // Mapped in by both threads before use (MADV_POPULATE_WRITE, small pages), as get's buffer is.
  void* mem = ::mmap(nullptr, slab_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) fail("mmap failed");
  auto* slab = static_cast<std::uint8_t*>(mem);
  ::madvise(slab, slab_bytes, MADV_NOHUGEPAGE);
  {
    const std::size_t half = slab_bytes / 2 / 4096 * 4096;
    std::thread other([&] { ::madvise(slab + half, slab_bytes - half, MADV_POPULATE_WRITE); });
    ::madvise(slab, half, MADV_POPULATE_WRITE);
    other.join();
  }
  const std::size_t chunk_bytes = static_cast<std::size_t>(l.chunk[0] * l.chunk[1] * l.chunk[2]) * 2;
  std::array<std::unique_ptr<std::uint8_t[]>, 2> chunk_bufs;  // reused, not zeroed
  for (auto& b : chunk_bufs) b.reset(new std::uint8_t[chunk_bytes]);
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create " + out);
  const std::string header = npy_header(l);
  write_all(fd, reinterpret_cast<const std::uint8_t*>(header.data()), header.size());
  const std::int64_t nj = l.shape[1] / l.chunk[1], nk = l.shape[2] / l.chunk[2];
  for (std::int64_t row = 0; row < l.shape[0] / l.chunk[0]; ++row) {
    auto work = [&](int part) {
      for (std::int64_t c = part; c < nj * nk; c += 2)
        read_chunk(dir, l, scatter, row, c / nk, c % nk, slab, chunk_bufs[part].get(), chunk_bytes);
    };
    std::exception_ptr error;
    std::thread other([&] {
      try {
        work(1);
      } catch (...) {
        error = std::current_exception();
      }
    });
    work(0);
    other.join();
    if (error) std::rethrow_exception(error);
    write_all(fd, slab, slab_bytes);
  }
  if (::close(fd) != 0) fail("close " + out);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.size() != 3 || (args[2] != "scatter" && args[2] != "preadv")) {
    std::fprintf(stderr, "usage: zarrpp-bench-get-floor ARRAY OUT.npy scatter|preadv\n");
    return 2;
  }
  try {
    run(args[0], args[1], args[2] == "scatter");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrpp-bench-get-floor: %s\n", e.what());
    return 1;
  }
  return 0;
}
