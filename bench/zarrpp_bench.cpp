// zarrpp-bench: writes and reads a 1 GiB uint16 array on the local file store, for every layout,
// codec, crc32c setting, data kind, thread count and workload, against limits measured in the same
// run with the same threads (memcpy, plain POSIX I/O, the raw codec libraries), and against
// zarrita.js reading the same arrays. Prints a Markdown table; --json FILE writes every row.
//
//   zarrpp-bench [--shape 1024,1024,512 | --scale F] [--dir DIR] [--repeats 3]
//                [--layouts 256,64,shard] [--codecs none,zstd,blosc,gzip] [--crc both|on|off]
//                [--data smooth,noisy] [--threads 1,2] [--workloads write,whole,chunks,boxes]
//                [--no-peer] [--json FILE] ...      (--help lists everything)
#include <blosc.h>
#include <fcntl.h>
#include <isa-l/crc.h>
#include <libdeflate.h>
#include <malloc.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "bench_util.hpp"
#include "zarrpp/zarrpp.hpp"

namespace fs = std::filesystem;
using namespace zarrpp;

namespace {

using u8 = std::uint8_t;
using u16 = std::uint16_t;
using i64 = std::int64_t;

// ---- small utilities -----------------------------------------------------------------------------

struct Fatal : std::runtime_error {
  int code;
  Fatal(const std::string& m, int c) : std::runtime_error(m), code(c) {}
};
[[noreturn]] void usage_error(const std::string& m) { throw Fatal("zarrpp-bench: " + m + " (see --help)", 2); }
[[noreturn]] void mismatch(const std::string& m) { throw Fatal("zarrpp-bench: VALIDATION FAILED: " + m, 1); }

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

std::string shape_text(const Shape& s, const char* sep = "×") {
  std::string r;
  for (std::size_t i = 0; i < s.size(); ++i) r += (i ? sep : "") + std::to_string(s[i]);
  return r;
}

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Medians of `reps` timed runs of a and of b, interleaved (a, b, a, b, ...) so that both see the
// same conditions on a shared machine; `before` runs untimed before each run.
struct Timing {
  double a = 0, b = 0;                 // medians
  std::vector<double> a_runs, b_runs;  // every run, in order
};
template <class A, class B>
Timing time_pair(int reps, A&& a, B&& b, const std::function<void()>& before = {}) {
  std::vector<double> ta, tb;
  for (int i = 0; i < reps; ++i) {
    for (int k = 0; k < 2; ++k) {
      if (before) before();
      const double s = now_s();
      if (k == 0)
        a();
      else
        b();
      (k == 0 ? ta : tb).push_back(now_s() - s);
    }
  }
  Timing r{0, 0, ta, tb};
  std::sort(ta.begin(), ta.end());
  std::sort(tb.begin(), tb.end());
  r.a = ta[ta.size() / 2];
  r.b = tb[tb.size() / 2];
  return r;
}

// Runs f(thread, item) for item in [0, count) on n threads (the caller is thread 0), items handed
// out one at a time.
template <class F>
void parallel(int n, std::size_t count, F&& f) {
  std::atomic<std::size_t> next{0};
  auto work = [&](int t) {
    for (;;) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= count) break;
      f(t, i);
    }
  };
  std::vector<std::thread> th;
  for (int t = 1; t < n; ++t) th.emplace_back(work, t);
  work(0);
  for (auto& x : th) x.join();
}

std::uint32_t crc32c_of(const u8* p, std::size_t n) {
  return ~crc32_iscsi(const_cast<u8*>(p), static_cast<int>(n), 0xffffffffu);
}

long status_kb(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0) return std::stol(line.substr(n));
  return -1;
}

bool reset_peak_rss() {
  FILE* f = std::fopen("/proc/self/clear_refs", "w");
  if (!f) return false;
  const bool ok = std::fputs("5", f) >= 0;
  return std::fclose(f) == 0 && ok;
}

void write_file_fully(const std::string& path, const u8* p, std::size_t n) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path + ": " + std::strerror(errno));
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      ::close(fd);
      throw std::runtime_error("cannot write " + path + ": " + std::strerror(errno));
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  ::close(fd);
}

void pread_fully(int fd, u8* p, std::size_t n, std::uint64_t off, const std::string& path) {
  while (n > 0) {
    const ssize_t r = ::pread(fd, p, n, static_cast<off_t>(off));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) throw std::runtime_error("cannot read " + path);
    p += r;
    n -= static_cast<std::size_t>(r);
    off += static_cast<std::uint64_t>(r);
  }
}

std::string md_escape(std::string s) {
  for (auto& c : s)
    if (c == '|' || c == '\n') c = '/';
  return s;
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a + " " + b + " " + c;
}

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

// ---- options --------------------------------------------------------------------------------------

struct Options {
  Shape shape = {1024, 1024, 512};
  std::optional<fs::path> dir;
  bool keep = false;
  int repeats = 3;
  std::vector<std::string> layouts = {"256", "64", "shard"};
  std::vector<std::string> codecs = {"none", "zstd", "blosc", "gzip"};
  std::vector<bool> crcs = {false, true};
  std::vector<std::string> data = {"smooth", "noisy"};
  std::vector<int> threads = {1, 2};
  std::vector<std::string> workloads = {"write", "whole", "chunks", "boxes"};
  bool peer = true;
  int peer_repeats = 0;  // 0: --repeats
  double peer_budget = 60;
  std::string node = "node";
  fs::path peer_script =
      fs::path(__FILE__).parent_path().parent_path() / "tests" / "interop" / "bench_with_zarrita.mjs";
  std::string json;
  i64 box = 32;
  double box_fraction = 0.05;
  std::uint64_t seed = 12345;
  int blosc_clevel = 5;
};

const char* kHelp = R"(zarrpp-bench: zarrpp reading and writing a uint16 array on the local file store, against
limits measured in the same run (memcpy, POSIX I/O, raw codec libraries) and against zarrita.js.

  --shape Z,Y,X        array shape (default 1024,1024,512 = 1 GiB of uint16)
  --scale F            F times the default volume (0 < F <= 1): halves the largest dimension until
                       the volume is <= F x 1 GiB (0.125 gives 512x512x256 = 128 MiB)
  --dir DIR            where to create the work directory (a fresh subdirectory, removed at the
                       end); default: a fresh directory under /tmp
  --keep               do not remove the work directory
  --repeats R          timed runs per measurement; the median is reported (default 3)
  --layouts L,...      256 (256^3 chunks), 64 (64^3 chunks), shard (256^3 shards of 64^3 chunks)
  --codecs C,...       none, zstd (level 1), blosc (lz4, shuffle, clevel 5), gzip (level 1)
  --crc both|on|off    crc32c codec after the compressor (default both)
  --data D,...         smooth, noisy (smooth plus 6 random low bits per sample)
  --threads N,...      zarrpp concurrency and limit threads (default 1,2)
  --workloads W,...    write, whole, chunks, boxes
  --box B              edge of the random boxes (default 32)
  --box-fraction F     boxes are drawn until they cover F of the array (default 0.05)
  --seed S             seed of the box positions (default 12345)
  --blosc-clevel N     blosc clevel (default 5)
  --no-peer            do not run zarrita.js
  --peer-repeats R     zarrita runs per workload (default: --repeats)
  --peer-budget S      stop repeating a zarrita workload once its runs took S seconds (default 60)
  --node PATH          node executable (default: node from PATH)
  --peer-script PATH   tests/interop/bench_with_zarrita.mjs (default: next to this source tree)
  --json FILE          also write every row (and the machine and parameters) as JSON
)";

std::vector<int> parse_ints(const std::string& s, const char* what) {
  std::vector<int> out;
  for (const auto& p : split(s, ',')) {
    try {
      out.push_back(std::stoi(p));
    } catch (...) {
      usage_error(std::string("bad ") + what + " '" + s + "'");
    }
    if (out.back() < 1) usage_error(std::string("bad ") + what + " '" + s + "'");
  }
  if (out.empty()) usage_error(std::string("empty ") + what);
  return out;
}

Shape scaled_shape(double f) {
  if (!(f > 0 && f <= 1)) usage_error("--scale must be in (0, 1]");
  Shape s = {1024, 1024, 512};
  const double target = f * 1024.0 * 1024.0 * 512.0;
  auto vol = [&] { return static_cast<double>(s[0]) * static_cast<double>(s[1]) * static_cast<double>(s[2]); };
  while (vol() > target * (1 + 1e-9)) {
    auto it = std::max_element(s.begin(), s.end());
    if (*it == 1) break;
    *it /= 2;
  }
  return s;
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::vector<std::string> args(argv + 1, argv + argc);
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string a = args[i], v;
    bool has_v = false;
    if (const auto eq = a.find('='); a.rfind("--", 0) == 0 && eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
      has_v = true;
    }
    auto val = [&]() -> std::string {
      if (has_v) return v;
      if (i + 1 >= args.size()) usage_error(a + " needs a value");
      return args[++i];
    };
    auto list = [&](const std::vector<std::string>& allowed) {
      auto l = split(val(), ',');
      if (l.empty()) usage_error(a + ": empty list");
      for (const auto& x : l)
        if (!contains(allowed, x)) usage_error(a + ": unknown '" + x + "'");
      return l;
    };
    try {
      if (a == "--help" || a == "-h") {
        std::fputs(kHelp, stdout);
        std::exit(0);
      } else if (a == "--shape") {
        std::string s = val();
        std::replace(s.begin(), s.end(), 'x', ',');
        o.shape.clear();
        for (int d : parse_ints(s, "shape")) o.shape.push_back(d);
        if (o.shape.size() != 3) usage_error("--shape takes three dimensions");
      } else if (a == "--scale") {
        o.shape = scaled_shape(std::stod(val()));
      } else if (a == "--dir") {
        o.dir = fs::path(val());
      } else if (a == "--keep") {
        o.keep = true;
      } else if (a == "--repeats") {
        o.repeats = parse_ints(val(), "repeats").at(0);
      } else if (a == "--layouts") {
        o.layouts = list({"256", "64", "shard"});
      } else if (a == "--codecs") {
        o.codecs = list({"none", "zstd", "blosc", "gzip"});
      } else if (a == "--crc") {
        const std::string c = val();
        if (c == "both")
          o.crcs = {false, true};
        else if (c == "on")
          o.crcs = {true};
        else if (c == "off")
          o.crcs = {false};
        else
          usage_error("--crc takes both, on or off");
      } else if (a == "--data") {
        o.data = list({"smooth", "noisy"});
      } else if (a == "--threads") {
        o.threads = parse_ints(val(), "threads");
      } else if (a == "--workloads") {
        o.workloads = list({"write", "whole", "chunks", "boxes"});
      } else if (a == "--box") {
        o.box = parse_ints(val(), "box").at(0);
      } else if (a == "--box-fraction") {
        o.box_fraction = std::stod(val());
        if (!(o.box_fraction > 0 && o.box_fraction <= 1)) usage_error("--box-fraction must be in (0, 1]");
      } else if (a == "--seed") {
        o.seed = std::stoull(val());
      } else if (a == "--blosc-clevel") {
        o.blosc_clevel = std::stoi(val());
      } else if (a == "--no-peer") {
        o.peer = false;
      } else if (a == "--peer-repeats") {
        o.peer_repeats = parse_ints(val(), "peer-repeats").at(0);
      } else if (a == "--peer-budget") {
        o.peer_budget = std::stod(val());
      } else if (a == "--node") {
        o.node = val();
      } else if (a == "--peer-script") {
        o.peer_script = val();
      } else if (a == "--json") {
        o.json = val();
      } else {
        usage_error("unknown option '" + a + "'");
      }
    } catch (const std::invalid_argument&) {
      usage_error("bad value for " + a);
    } catch (const std::out_of_range&) {
      usage_error("bad value for " + a);
    }
  }
  if (o.peer_repeats == 0) o.peer_repeats = o.repeats;
  return o;
}

// ---- the machine ------------------------------------------------------------------------------------

struct Machine {
  long nproc = 0;
  std::string cpu, kernel;
};

Machine machine() {
  Machine m;
  m.nproc = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpu = bench::cpu_model();
  utsname u{};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  return m;
}

// ---- test data --------------------------------------------------------------------------------------

std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Smooth: 1000 plus a sine along each axis (amplitude 300 each). Noisy: the same plus six random
// low bits per sample (like a microscope's), from a per-row generator seeded by the row.
std::vector<u16> make_data(const Shape& s, bool noisy, int threads) {
  const i64 Z = s[0], Y = s[1], X = s[2];
  std::vector<double> sz(static_cast<std::size_t>(Z)), sy(static_cast<std::size_t>(Y)), sx(static_cast<std::size_t>(X));
  for (i64 i = 0; i < Z; ++i) sz[static_cast<std::size_t>(i)] = 300 * std::sin(0.017 * static_cast<double>(i));
  for (i64 i = 0; i < Y; ++i) sy[static_cast<std::size_t>(i)] = 300 * std::sin(0.031 * static_cast<double>(i));
  for (i64 i = 0; i < X; ++i) sx[static_cast<std::size_t>(i)] = 300 * std::sin(0.02 * static_cast<double>(i));
  std::vector<u16> v(static_cast<std::size_t>(Z * Y * X));
  parallel(threads, static_cast<std::size_t>(Z * Y), [&](int, std::size_t row) {
    const double base = 1000 + sz[row / static_cast<std::size_t>(Y)] + sy[row % static_cast<std::size_t>(Y)];
    u16* p = v.data() + row * static_cast<std::size_t>(X);
    std::uint64_t st = splitmix(row ^ 0x5eedull);
    for (i64 x = 0; x < X; ++x) {
      int val = static_cast<int>(std::lround(base + sx[static_cast<std::size_t>(x)]));
      if (noisy) {
        st ^= st << 13;
        st ^= st >> 7;
        st ^= st << 17;
        val += static_cast<int>(st & 0x3f);
      }
      p[x] = static_cast<u16>(val);
    }
  });
  return v;
}

// ---- geometry ----------------------------------------------------------------------------------------

struct Box {
  i64 org[3];
  i64 ext[3];
  i64 volume() const { return ext[0] * ext[1] * ext[2]; }
  Selection selection() const {
    return {slice(org[0], org[0] + ext[0]), slice(org[1], org[1] + ext[1]), slice(org[2], org[2] + ext[2])};
  }
};

// The codec units (chunks, or inner chunks when sharded) in C order of their grid.
struct Grid {
  Shape shape, chunk;
  i64 n[3];
  std::vector<Box> units;
  Grid(const Shape& s, const Shape& c) : shape(s), chunk(c) {
    for (int d = 0; d < 3; ++d) n[d] = (s[d] + c[d] - 1) / c[d];
    for (i64 i = 0; i < n[0]; ++i)
      for (i64 j = 0; j < n[1]; ++j)
        for (i64 k = 0; k < n[2]; ++k) {
          Box b{{i * c[0], j * c[1], k * c[2]}, {}};
          for (int d = 0; d < 3; ++d) b.ext[d] = std::min(c[d], s[d] - b.org[d]);
          units.push_back(b);
        }
  }
  std::size_t id(i64 i, i64 j, i64 k) const { return static_cast<std::size_t>((i * n[1] + j) * n[2] + k); }
  std::size_t unit_bytes() const { return static_cast<std::size_t>(chunk[0] * chunk[1] * chunk[2]) * 2; }
  // Units a box touches.
  std::vector<std::size_t> touched(const Box& b) const {
    std::vector<std::size_t> r;
    for (i64 i = b.org[0] / chunk[0]; i <= (b.org[0] + b.ext[0] - 1) / chunk[0]; ++i)
      for (i64 j = b.org[1] / chunk[1]; j <= (b.org[1] + b.ext[1] - 1) / chunk[1]; ++j)
        for (i64 k = b.org[2] / chunk[2]; k <= (b.org[2] + b.ext[2] - 1) / chunk[2]; ++k) r.push_back(id(i, j, k));
    return r;
  }
};

// Copies a region of the C-order source into dst, a C-order buffer of shape `dshape` (>= the
// region; the rest, the padding of an edge chunk, is zero = the fill value).
void gather(const u16* src, const Shape& s, const Box& b, const Shape& dshape, u16* dst) {
  if (b.ext[0] != dshape[0] || b.ext[1] != dshape[1] || b.ext[2] != dshape[2])
    std::memset(dst, 0, static_cast<std::size_t>(dshape[0] * dshape[1] * dshape[2]) * 2);
  for (i64 z = 0; z < b.ext[0]; ++z)
    for (i64 y = 0; y < b.ext[1]; ++y)
      std::memcpy(dst + (z * dshape[1] + y) * dshape[2], src + ((b.org[0] + z) * s[1] + b.org[1] + y) * s[2] + b.org[2],
                  static_cast<std::size_t>(b.ext[2]) * 2);
}

// Whether buf (C order, the region's shape) equals the region of the source.
bool region_equal(const u16* src, const Shape& s, const Box& b, const u16* buf) {
  for (i64 z = 0; z < b.ext[0]; ++z)
    for (i64 y = 0; y < b.ext[1]; ++y)
      if (std::memcmp(buf + (z * b.ext[1] + y) * b.ext[2],
                      src + ((b.org[0] + z) * s[1] + b.org[1] + y) * s[2] + b.org[2],
                      static_cast<std::size_t>(b.ext[2]) * 2) != 0)
        return false;
  return true;
}

std::uint64_t region_sum(const u16* src, const Shape& s, const Box& b) {
  std::uint64_t t = 0;
  for (i64 z = 0; z < b.ext[0]; ++z)
    for (i64 y = 0; y < b.ext[1]; ++y) {
      const u16* p = src + ((b.org[0] + z) * s[1] + b.org[1] + y) * s[2] + b.org[2];
      for (i64 x = 0; x < b.ext[2]; ++x) t += p[x];
    }
  return t;
}

std::vector<Box> make_boxes(const Shape& s, i64 edge, double fraction, std::uint64_t seed) {
  Box proto{{0, 0, 0}, {std::min(edge, s[0]), std::min(edge, s[1]), std::min(edge, s[2])}};
  const double volume = static_cast<double>(s[0]) * static_cast<double>(s[1]) * static_cast<double>(s[2]);
  const auto n = static_cast<std::size_t>(std::ceil(fraction * volume / static_cast<double>(proto.volume())));
  std::vector<Box> boxes;
  std::uint64_t st = seed;
  for (std::size_t i = 0; i < n; ++i) {
    Box b = proto;
    for (int d = 0; d < 3; ++d) {
      st = splitmix(st);
      b.org[d] = static_cast<i64>(st % static_cast<std::uint64_t>(s[d] - b.ext[d] + 1));
    }
    boxes.push_back(b);
  }
  return boxes;
}

// ---- configurations ---------------------------------------------------------------------------------

struct Layout {
  std::string key, name;
  Shape chunk;
  std::optional<Shape> shard;
};

Layout layout_of(const std::string& k) {
  if (k == "256") return {k, "256³ chunks", {256, 256, 256}, std::nullopt};
  if (k == "64") return {k, "64³ chunks", {64, 64, 64}, std::nullopt};
  return {k, "256³ shards of 64³", {64, 64, 64}, Shape{256, 256, 256}};
}

enum class Kind { none, zstd, blosc, gzip };
struct Codec {
  std::string key, name;
  Kind kind;
  int level;
};

Codec codec_of(const std::string& k, int blosc_clevel) {
  if (k == "zstd") return {k, "zstd 1", Kind::zstd, 1};
  if (k == "blosc") return {k, "blosc lz4 shuffle " + std::to_string(blosc_clevel), Kind::blosc, blosc_clevel};
  if (k == "gzip") return {k, "gzip 1", Kind::gzip, 1};
  return {k, "none", Kind::none, 0};
}

// zarrpp's codec for a benchmark codec, from the registry by its shorthand (the same settings
// as the raw library calls this benchmark compares against).
std::optional<codec::Any> zarrpp_codec(const Codec& c) {
  const std::string level = std::to_string(c.level);
  switch (c.kind) {
    case Kind::zstd:
      return codec::from_shorthand("zstd:" + level);
    case Kind::blosc:
      return codec::from_shorthand("blosc:lz4:" + level + ":shuffle:2");
    case Kind::gzip:
      return codec::from_shorthand("gzip:" + level);
    case Kind::none:
      break;
  }
  return std::nullopt;
}

// Per-thread contexts of the raw libraries.
struct RawCtx {
  ZSTD_CCtx* zc = nullptr;
  ZSTD_DCtx* zd = nullptr;
  libdeflate_compressor* gc = nullptr;
  libdeflate_decompressor* gd = nullptr;
  explicit RawCtx(const Codec& c) {
    if (c.kind == Kind::zstd) {
      zc = ZSTD_createCCtx();
      zd = ZSTD_createDCtx();
    } else if (c.kind == Kind::gzip) {
      gc = libdeflate_alloc_compressor(c.level);
      gd = libdeflate_alloc_decompressor();
    }
  }
  RawCtx(const RawCtx&) = delete;
  RawCtx& operator=(const RawCtx&) = delete;
  ~RawCtx() {
    if (zc) ZSTD_freeCCtx(zc);
    if (zd) ZSTD_freeDCtx(zd);
    if (gc) libdeflate_free_compressor(gc);
    if (gd) libdeflate_free_decompressor(gd);
  }
};

std::size_t raw_bound(const Codec& c, RawCtx& x, std::size_t n) {
  switch (c.kind) {
    case Kind::zstd:
      return ZSTD_compressBound(n);
    case Kind::blosc:
      return n + BLOSC_MAX_OVERHEAD;
    case Kind::gzip:
      return libdeflate_gzip_compress_bound(x.gc, n);
    case Kind::none:
      break;
  }
  return n;
}

std::size_t raw_encode(const Codec& c, RawCtx& x, const u8* in, std::size_t n, u8* out, std::size_t cap) {
  std::size_t m = 0;
  switch (c.kind) {
    case Kind::zstd: {
      m = ZSTD_compressCCtx(x.zc, out, cap, in, n, c.level);
      if (ZSTD_isError(m)) m = 0;
      break;
    }
    case Kind::blosc: {
      const int r = blosc_compress_ctx(c.level, BLOSC_SHUFFLE, 2, n, in, out, cap, "lz4", 0, 1);
      m = r > 0 ? static_cast<std::size_t>(r) : 0;
      break;
    }
    case Kind::gzip:
      m = libdeflate_gzip_compress(x.gc, in, n, out, cap);
      break;
    case Kind::none:
      std::memcpy(out, in, n);
      m = n;
      break;
  }
  if (m == 0) throw std::runtime_error("raw encode failed (" + c.name + ")");
  return m;
}

void raw_decode(const Codec& c, RawCtx& x, const u8* in, std::size_t n, u8* out, std::size_t outn) {
  bool ok = false;
  switch (c.kind) {
    case Kind::zstd: {
      const std::size_t r = ZSTD_decompressDCtx(x.zd, out, outn, in, n);
      ok = !ZSTD_isError(r) && r == outn;
      break;
    }
    case Kind::blosc:
      ok = blosc_decompress_ctx(in, out, outn, 1) == static_cast<int>(outn);
      break;
    case Kind::gzip: {
      std::size_t got = 0;
      ok = libdeflate_gzip_decompress(x.gd, in, n, out, outn, &got) == LIBDEFLATE_SUCCESS && got == outn;
      break;
    }
    case Kind::none:
      std::memcpy(out, in, outn);
      ok = n == outn;
      break;
  }
  if (!ok) throw std::runtime_error("raw decode failed (" + c.name + ")");
}

// ---- results ----------------------------------------------------------------------------------------

struct Row {
  std::string layout, codec, data, workload, limit_kind;
  bool crc = false;
  int threads = 1;
  double bytes = 0, seconds = 0, limit_seconds = 0;
  std::vector<double> runs, limit_runs;
  std::optional<double> peer_seconds;
  std::string peer_note;
  std::optional<double> peak;  // peak additional memory / output bytes (whole reads)
  // Uncompressed whole reads: the least a read() of the stored files costs here (every chunk or
  // shard file read with pread into a small reused buffer, N threads; nothing copied further).
  // Compressed writes: the raw encode plus writing the encoded bytes to one file per object.
  std::optional<double> floor_seconds;
  double stored_ratio = 0;
  std::vector<std::string> misses;

  double gbs() const { return bytes / seconds / 1e9; }
  double limit_gbs() const { return bytes / limit_seconds / 1e9; }
  double vs_limit() const { return limit_seconds / seconds; }
  bool is_read() const { return workload != "write"; }
};

void judge(Row& r, bool compressed) {
  r.misses.clear();
  if (r.workload == "write" && r.vs_limit() < 0.80) r.misses.push_back("write<0.80×limit");
  if (r.workload == "whole" && !compressed && r.vs_limit() < 0.60) r.misses.push_back("uncompressed whole<0.60×memcpy");
  if (r.is_read() && compressed && r.vs_limit() < 0.85) r.misses.push_back("read<0.85×decode");
  if (r.is_read() && r.peer_seconds && r.peer_seconds.value() / r.seconds < 5) r.misses.push_back("<5×zarrita");
  if (r.peak && *r.peak > 1.15) r.misses.push_back("peak>1.15×output");
}

void print_header() {
  std::printf(
      "| layout | codec | crc32c | data | threads | workload | seconds | GB/s | limit GB/s | ÷ limit | zarrita GB/s | "
      "÷ zarrita | peak mem ÷ output | stored ratio | file floor GB/s | ÷ floor | misses |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
}

void print_row(const Row& r) {
  std::string peer = "—", vs_peer = "—";
  if (r.peer_seconds) {
    peer = fmt("%.3f", r.bytes / *r.peer_seconds / 1e9);
    vs_peer = fmt("%.1f×", *r.peer_seconds / r.seconds);
  } else if (!r.peer_note.empty()) {
    peer = md_escape(r.peer_note.size() > 70 ? r.peer_note.substr(0, 70) + "…" : r.peer_note);
  }
  std::string misses;
  for (const auto& m : r.misses) misses += (misses.empty() ? "" : ", ") + m;
  const std::string floor_gbs = r.floor_seconds ? fmt("%.3f", r.bytes / *r.floor_seconds / 1e9) : "—";
  const std::string vs_floor = r.floor_seconds ? fmt("%.2f", *r.floor_seconds / r.seconds) : "—";
  std::printf("| %s | %s | %s | %s | %d | %s | %s | %.3f | %.3f | %.2f | %s | %s | %s | %.2f | %s | %s | %s |\n",
              r.layout.c_str(), r.codec.c_str(), r.crc ? "on" : "off", r.data.c_str(), r.threads, r.workload.c_str(),
              fmt(r.seconds < 0.1 ? "%.5f" : "%.3f", r.seconds).c_str(), r.gbs(), r.limit_gbs(), r.vs_limit(),
              peer.c_str(), vs_peer.c_str(), r.peak ? fmt("%.3f", *r.peak).c_str() : "—", r.stored_ratio,
              floor_gbs.c_str(), vs_floor.c_str(), misses.c_str());
  std::fflush(stdout);
}

Json row_json(const Row& r) {
  Json j = Json::object();
  j["layout"] = r.layout;
  j["codec"] = r.codec;
  j["crc32c"] = r.crc;
  j["data"] = r.data;
  j["threads"] = r.threads;
  j["workload"] = r.workload;
  j["logical_bytes"] = r.bytes;
  j["seconds"] = r.seconds;
  if (r.floor_seconds) j["file_read_floor_seconds"] = *r.floor_seconds;
  j["runs"] = r.runs;
  j["gb_per_s"] = r.gbs();
  j["limit"] = r.limit_kind;
  j["limit_seconds"] = r.limit_seconds;
  j["limit_runs"] = r.limit_runs;
  j["limit_gb_per_s"] = r.limit_gbs();
  j["ratio_to_limit"] = r.vs_limit();
  if (r.peer_seconds) {
    j["zarrita_seconds"] = *r.peer_seconds;
    j["zarrita_gb_per_s"] = r.bytes / *r.peer_seconds / 1e9;
    j["ratio_to_zarrita"] = *r.peer_seconds / r.seconds;
  } else {
    j["zarrita_seconds"] = nullptr;
    j["ratio_to_zarrita"] = nullptr;
  }
  if (!r.peer_note.empty()) j["zarrita_note"] = r.peer_note;
  j["peak_memory_over_output"] = r.peak ? Json(*r.peak) : Json(nullptr);
  j["stored_ratio"] = r.stored_ratio;
  j["misses"] = r.misses;
  return j;
}

// ---- zarrita ----------------------------------------------------------------------------------------

struct PeerResult {
  std::map<std::string, double> seconds;
  std::map<std::string, std::string> note;
};

PeerResult run_peer(const Options& o, const fs::path& root, const std::string& path,
                    const std::vector<std::string>& workloads, const fs::path& boxes_file,
                    const std::map<std::string, std::uint64_t>& expected_sum, const fs::path& errfile) {
  PeerResult res;
  auto fail_all = [&](const std::string& m) {
    for (const auto& w : workloads) res.note[w] = m;
    return res;
  };
  if (!fs::exists(o.peer_script)) return fail_all("zarrita script not found: " + o.peer_script.string());
  std::string wl;
  for (const auto& w : workloads) wl += (wl.empty() ? "" : ",") + w;
  auto q = [](const std::string& s) {
    std::string r = "'";
    for (char c : s) r += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return r + "'";
  };
  const std::string cmd = q(o.node) + " " + q(o.peer_script.string()) + " --store " + q(root.string()) + " --path " +
                          q(path) + " --workloads " + wl + " --boxes " + q(boxes_file.string()) + " --repeats " +
                          std::to_string(o.peer_repeats) + " --budget " + fmt("%g", o.peer_budget) + " 2>" +
                          q(errfile.string());
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return fail_all("cannot run node");
  std::string out;
  char buf[4096];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int st = ::pclose(p);
  std::string err;
  {
    std::ifstream f(errfile);
    std::getline(f, err);
  }
  Json j;
  try {
    j = Json::parse(out);
  } catch (...) {
    return fail_all("zarrita failed (exit " + std::to_string(WIFEXITED(st) ? WEXITSTATUS(st) : -1) + ")" +
                    (err.empty() ? "" : ": " + err));
  }
  if (j.contains("error")) return fail_all("zarrita: " + j["error"].get<std::string>());
  for (const auto& w : workloads) {
    if (!j.contains(w)) {
      res.note[w] = "zarrita: no result";
      continue;
    }
    const auto& r = j[w];
    if (r.contains("error")) {
      res.note[w] = "zarrita: " + r["error"].get<std::string>();
      continue;
    }
    const std::string sum = r["sum"].get<std::string>();
    if (sum != std::to_string(expected_sum.at(w))) {
      res.note[w] = "zarrita: wrong result (sum " + sum + ", expected " + std::to_string(expected_sum.at(w)) + ")";
      continue;
    }
    res.seconds[w] = r["median"].get<double>();
    const auto runs = r["runs"].size();
    if (static_cast<int>(runs) < o.peer_repeats) res.note[w] = "zarrita: " + std::to_string(runs) + " run(s) (budget)";
  }
  return res;
}

// ---- the benchmark ----------------------------------------------------------------------------------

std::uint64_t stored_bytes(const fs::path& array_dir) {
  std::uint64_t t = 0;
  const fs::path c = array_dir / "c";
  if (!fs::exists(c)) return 0;
  for (const auto& e : fs::recursive_directory_iterator(c))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') t += e.file_size();
  return t;
}

// Where each codec unit's stored bytes are (for the pread limit of uncompressed box reads).
struct Loc {
  std::string path;
  std::uint64_t off = 0, len = 0;
};

std::vector<Loc> locate_units(const Array& z, const fs::path& root, const Grid& g, const Layout& L) {
  std::vector<Loc> locs(g.units.size());
  if (!L.shard) {
    for (i64 i = 0; i < g.n[0]; ++i)
      for (i64 j = 0; j < g.n[1]; ++j)
        for (i64 k = 0; k < g.n[2]; ++k) {
          Loc& l = locs[g.id(i, j, k)];
          l.path = (root / z.chunk_key({i, j, k})).string();
          l.len = fs::file_size(l.path);
        }
    return locs;
  }
  const Shape& sh = *L.shard;
  const i64 r[3] = {sh[0] / L.chunk[0], sh[1] / L.chunk[1], sh[2] / L.chunk[2]};
  const i64 ninner = r[0] * r[1] * r[2];
  const std::size_t index_bytes =
      static_cast<std::size_t>(ninner) * 16 + 4;  // default index codecs: bytes + crc32c, at the end
  for (i64 a = 0; a < (g.shape[0] + sh[0] - 1) / sh[0]; ++a)
    for (i64 b = 0; b < (g.shape[1] + sh[1] - 1) / sh[1]; ++b)
      for (i64 c = 0; c < (g.shape[2] + sh[2] - 1) / sh[2]; ++c) {
        const std::string path = (root / z.chunk_key({a, b, c})).string();
        const std::uint64_t size = fs::file_size(path);
        if (size < index_bytes) throw std::runtime_error("shard too small: " + path);
        std::vector<std::uint64_t> idx(static_cast<std::size_t>(ninner) * 2);
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) throw std::runtime_error("cannot open " + path);
        pread_fully(fd, reinterpret_cast<u8*>(idx.data()), idx.size() * 8, size - index_bytes, path);
        ::close(fd);
        for (i64 x = 0; x < r[0]; ++x)
          for (i64 y = 0; y < r[1]; ++y)
            for (i64 w = 0; w < r[2]; ++w) {
              const i64 gi = a * r[0] + x, gj = b * r[1] + y, gk = c * r[2] + w;
              if (gi >= g.n[0] || gj >= g.n[1] || gk >= g.n[2]) continue;
              const std::size_t e = static_cast<std::size_t>((x * r[1] + y) * r[2] + w) * 2;
              Loc& l = locs[g.id(gi, gj, gk)];
              l.path = path;
              l.off = idx[e];
              l.len = idx[e + 1];
              if (l.off == ~0ull || l.off + l.len > size - index_bytes)
                throw std::runtime_error("unexpected shard index in " + path);
            }
      }
  return locs;
}

struct Bench {
  Options o;
  Machine mach;
  fs::path work, store_root, boxes_file;
  StorePtr store;
  std::vector<Box> boxes;
  std::vector<Row> rows;
  Json compression = Json::array();
  double t_start = now_s();
  std::string load_start = loadavg();

  void progress(const std::string& m) const {
    std::fprintf(stderr, "[%7.1f s] %s\n", now_s() - t_start, m.c_str());
    std::fflush(stderr);
  }

  void save_json() const {
    if (o.json.empty()) return;
    Json j = Json::object();
    j["machine"] = {{"nproc", mach.nproc},
                    {"cpu", mach.cpu},
                    {"kernel", mach.kernel},
                    {"loadavg_start", load_start},
                    {"loadavg_now", loadavg()}};
    j["params"] = {{"shape", o.shape},
                   {"dtype", "uint16"},
                   {"repeats", o.repeats},
                   {"box", o.box},
                   {"boxes", boxes.size()},
                   {"box_fraction", o.box_fraction},
                   {"seed", o.seed},
                   {"blosc", "lz4, shuffle, typesize 2, clevel " + std::to_string(o.blosc_clevel)},
                   {"peer", o.peer},
                   {"peer_repeats", o.peer_repeats},
                   {"peer_budget_s", o.peer_budget}};
    Json rs = Json::array();
    for (const auto& r : rows) rs.push_back(row_json(r));
    j["rows"] = rs;
    j["compression"] = compression;
    j["elapsed_s"] = now_s() - t_start;
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
  }

  void run();
  void run_config(const std::vector<u16>& src, const std::string& data, const Layout& L, const Grid& g,
                  const std::vector<Bytes>& raw, const Codec& C, bool crc);
};

void Bench::run() {
  const Shape& S = o.shape;
  const std::size_t nbytes = static_cast<std::size_t>(S[0] * S[1] * S[2]) * 2;
  boxes = make_boxes(S, o.box, o.box_fraction, o.seed);
  {
    Json b = {{"box", {boxes.at(0).ext[0], boxes.at(0).ext[1], boxes.at(0).ext[2]}}, {"origins", Json::array()}};
    for (const auto& x : boxes) b["origins"].push_back({x.org[0], x.org[1], x.org[2]});
    std::ofstream f(boxes_file);
    f << b.dump() << "\n";
  }
  std::printf("# zarrpp-bench\n\n");
  std::printf("Machine: %ld CPUs (nproc), %s, %s. Load average at the start: %s.\n\n", mach.nproc, mach.cpu.c_str(),
              mach.kernel.c_str(), loadavg().c_str());
  std::printf(
      "Array: uint16 %s (%.3f GiB) on the local file store (%s), page cache warm (one untimed whole read before "
      "timing reads). Each time is the median of %d runs. Box reads: %zu boxes of %s at random positions (seed %llu), "
      "%.1f%% of the array. blosc: lz4, shuffle, typesize 2, clevel %d. zstd level 1, gzip level 1 (libdeflate). "
      "Data: smooth = 1000 + a sine along each axis; noisy = smooth + 6 random low bits per sample.\n\n",
      shape_text(S).c_str(), static_cast<double>(nbytes) / (1u << 30), store_root.c_str(), o.repeats, boxes.size(),
      shape_text({boxes[0].ext[0], boxes[0].ext[1], boxes[0].ext[2]}).c_str(), static_cast<unsigned long long>(o.seed),
      100.0 * static_cast<double>(boxes.size() * static_cast<std::size_t>(boxes[0].volume())) /
          static_cast<double>(S[0] * S[1] * S[2]),
      o.blosc_clevel);
  std::printf(
      "Limits (same run, same number of threads N; GB/s of logical bytes, ÷ limit = zarrpp GB/s / limit GB/s):\n");
  std::printf(
      "- write, uncompressed: gather each stored object's bytes from the source (memcpy), crc32c per chunk when on, "
      "and write() each object to its own file (open/O_TRUNC/write/close), N threads splitting the objects;\n");
  std::printf(
      "- write, compressed: the raw library compressing each chunk's contiguous bytes (ZSTD_compressCCtx, "
      "blosc_compress_ctx, libdeflate_gzip_compress) + ISA-L crc32c of the output when on, N threads splitting the "
      "chunks (no gather, no file I/O);\n");
  std::printf(
      "- whole and chunks reads, uncompressed: memcpy of the same number of bytes (N threads, a share each), "
      "+ ISA-L crc32c over every chunk when on;\n");
  std::printf(
      "- writes, compressed, also: the file-write floor — the raw encode as above, then each stored object's "
      "encoded bytes (a chunk, or a shard's chunks back to back) written to a new file (open O_EXCL/write/close) "
      "renamed over the "
      "old one (atomic replacement, as zarrpp does);\n");
  std::printf(
      "- whole reads, uncompressed, also: the file-read floor — every stored file read with pread in 256 KiB "
      "pieces into a small reused buffer (N threads), nothing copied further: what reading the files costs before a "
      "single byte reaches the caller's buffer;\n");
  std::printf(
      "- whole and chunks reads, compressed: the raw library decoding every chunk from memory into a per-thread "
      "buffer (ZSTD_decompressDCtx, blosc_decompress_ctx, libdeflate_gzip_decompress) + crc32c check when on;\n");
  std::printf(
      "- box reads: the same per chunk a box touches, once per (box, chunk) pair; compressed: decode from memory; "
      "uncompressed: open + pread of the chunk's stored bytes (the whole chunk, or its range in the shard) + close, "
      "+ crc32c when on.\n");
  std::printf(
      "The chunks workload: N threads share the chunks of the grid (the inner 64³ chunks when sharded), each "
      "calling read_into for one chunk at a time into its own reused buffer; box reads likewise. zarrita.js "
      "(single-threaded JS) reads whole, chunk by chunk and the same boxes, timed inside "
      "node; ÷ zarrita = zarrita time / zarrpp time. Peak memory: (VmHWM − VmRSS before) / output bytes for "
      "Array::read of the whole array into a fresh NDArray.\n\n");
  print_header();

  const int gen_threads = std::max<int>(1, static_cast<int>(mach.nproc));
  for (const auto& data : o.data) {
    progress("generating " + data + " data");
    const std::vector<u16> src = make_data(S, data == "noisy", gen_threads);
    std::optional<Grid> grid;
    std::vector<Bytes> raw;
    for (const auto& lk : o.layouts) {
      const Layout L = layout_of(lk);
      if (!grid || grid->chunk != L.chunk) {
        raw.clear();
        grid.emplace(S, L.chunk);
        raw.resize(grid->units.size());
        parallel(gen_threads, grid->units.size(), [&](int, std::size_t i) {
          raw[i] = Bytes(grid->unit_bytes());
          gather(src.data(), S, grid->units[i], L.chunk, reinterpret_cast<u16*>(raw[i].data()));
        });
      }
      for (const auto& ck : o.codecs) {
        const Codec C = codec_of(ck, o.blosc_clevel);
        for (bool crc : o.crcs) run_config(src, data, L, *grid, raw, C, crc);
      }
    }
  }
}

// One configuration (layout, codec, crc32c setting, data kind) measured at every thread count:
// zarrpp on one array against the limits of the same run, then zarrita.js on it; prints its rows.
// The phases, in the order run() calls them, each in its own function below.
struct ConfigRun {
  ConfigRun(Bench& owner, const std::vector<u16>& source, const std::string& data_kind, const Layout& layout,
            const Grid& grid, const std::vector<Bytes>& raw_units, const Codec& codec, bool with_crc);
  ConfigRun(const ConfigRun&) = delete;
  ConfigRun& operator=(const ConfigRun&) = delete;

  void run();

  // ---- the phases ----
  Array create_and_write();
  void validate_whole(const Array& z, const char* what) const;
  void prepare_raw_limits();
  void prepare_read_buffers(const Array& z);
  void measure_threads(Array& z, int n);
  void measure_write(Array& z, int n, const std::string& tl);
  double measure_write_floor(Array& z, int n);
  void measure_whole(const Array& z, int n, const std::string& tl);
  double measure_read_floor(const Array& z, int n) const;
  void measure_peak_memory(const Array& z, std::size_t ri);
  void measure_chunks(const Array& z, int n, const std::string& tl);
  void measure_boxes(const Array& z, int n, const std::string& tl);
  void check_boxes(const Array& z, Bytes& bbuf) const;
  void run_zarrita();
  void report();

  // ---- the limits ----
  void encode_all(int n);
  void decode_unit(int t, std::size_t i);
  std::vector<std::vector<std::size_t>> stored_objects() const;
  void write_objects(int n, const std::vector<std::vector<std::size_t>>& objs, std::vector<Bytes>& obuf) const;
  void replace_objects_encoded(int n, const std::vector<std::vector<std::size_t>>& wobjs);
  std::string read_limit_kind() const;
  void read_limit(int n);
  void pread_touched_chunks(int n, std::vector<Bytes>& pbuf);

  std::size_t add_row(int threads, const std::string& w, double bytes, const Timing& tm, const std::string& lim_kind);

  // ---- the configuration ----
  Bench& bench;
  const Options& o;
  const std::vector<Box>& boxes;
  const std::vector<u16>& src;
  const std::string& data;
  const Layout& L;
  const Grid& g;
  const std::vector<Bytes>& raw;
  const Codec& C;
  const bool crc;
  const Shape& S;
  const std::size_t nbytes;
  const std::string name, label;
  const bool compressed;
  const NDView src_view;
  const int maxthreads;
  const bool w_write, w_whole, w_chunks, w_boxes;
  const std::size_t ub;
  const std::size_t box_bytes;
  const fs::path scratch;  // the files of the write limits

  double stored_ratio = 0;
  // Raw-library state: per-thread contexts and buffers, the encoded chunks.
  std::vector<std::unique_ptr<RawCtx>> ctx;
  std::vector<Bytes> enc;
  std::vector<std::size_t> enc_len;
  std::size_t cap = 0;
  std::vector<Bytes> dst;
  // Where the stored chunks are (pread limit of uncompressed box reads), and the (box, chunk) pairs.
  std::vector<Loc> locs;
  std::vector<std::size_t> pairs;
  std::size_t maxloc = 0;
  Bytes out;  // the reused output of whole reads (touched once)
  NDView out_view;
  Bytes cbuf;
  Bytes lim_out;  // the memcpy limit's destination (uncompressed whole and chunks reads)
  std::atomic<std::uint32_t> crc_sink{0};
  std::vector<Row> cfg_rows;
};

ConfigRun::ConfigRun(Bench& owner, const std::vector<u16>& source, const std::string& data_kind, const Layout& layout,
                     const Grid& grid, const std::vector<Bytes>& raw_units, const Codec& codec, bool with_crc)
    : bench(owner),
      o(owner.o),
      boxes(owner.boxes),
      src(source),
      data(data_kind),
      L(layout),
      g(grid),
      raw(raw_units),
      C(codec),
      crc(with_crc),
      S(o.shape),
      nbytes(static_cast<std::size_t>(S[0] * S[1] * S[2]) * 2),
      name("a-" + L.key + "-" + C.key + (crc ? "-crc" : "") + "-" + data),
      label(L.name + ", " + C.name + ", crc32c " + (crc ? "on" : "off") + ", " + data),
      compressed(C.kind != Kind::none),
      src_view(NDView::c_order(src.data(), DataType::uint16, S)),
      maxthreads(*std::max_element(o.threads.begin(), o.threads.end())),
      w_write(contains(o.workloads, "write")),
      w_whole(contains(o.workloads, "whole")),
      w_chunks(contains(o.workloads, "chunks")),
      w_boxes(contains(o.workloads, "boxes")),
      ub(g.unit_bytes()),
      box_bytes([&] {
        std::size_t t = 0;
        for (const auto& b : boxes) t += static_cast<std::size_t>(b.volume()) * 2;
        return t;
      }()),
      scratch(owner.work / "limit-write") {}

void ConfigRun::run() {
  Array z = create_and_write();
  prepare_raw_limits();
  prepare_read_buffers(z);
  for (int n : o.threads) measure_threads(z, n);
  run_zarrita();
  report();
}

// Creates the array, writes it once (untimed), checks it and records its compression ratio.
Array ConfigRun::create_and_write() {
  bench.progress(label + ": create and write (untimed)");
  Array z = Array::create(bench.store, name,
                          ArraySpec{.shape = S,
                                    .chunks = L.chunk,
                                    .dtype = DataType::uint16,
                                    .compressor = zarrpp_codec(C),
                                    .crc32c = crc,
                                    .shards = L.shard,
                                    .overwrite = true});
  z.set_concurrency(static_cast<std::size_t>(maxthreads));
  z.write({}, src_view);
  validate_whole(z, "after the first write");
  const std::uint64_t stored = stored_bytes(bench.store_root / name);
  stored_ratio = stored ? static_cast<double>(nbytes) / static_cast<double>(stored) : 0;
  bench.compression.push_back({{"layout", L.name},
                               {"codec", C.name},
                               {"crc32c", crc},
                               {"data", data},
                               {"logical_bytes", nbytes},
                               {"stored_bytes", stored},
                               {"ratio", stored_ratio}});
  return z;
}

void ConfigRun::validate_whole(const Array& z, const char* what) const {
  const NDArray back = z.read();
  if (back.nbytes() != nbytes || std::memcmp(back.raw_data(), src.data(), nbytes) != 0)
    mismatch(label + ": " + what + ": data read back differs from the source");
}

// The raw libraries' per-thread contexts and buffers; when compressed, every chunk encoded
// (untimed: the input of the decode limits) and decoded back once as a check.
void ConfigRun::prepare_raw_limits() {
  for (int t = 0; t < maxthreads; ++t) ctx.push_back(std::make_unique<RawCtx>(C));
  enc.resize(g.units.size());
  enc_len.resize(g.units.size());
  cap = raw_bound(C, *ctx[0], ub);
  dst.resize(static_cast<std::size_t>(maxthreads));
  if (compressed) {
    for (auto& e : enc) e = Bytes(cap + 4);
    for (auto& d : dst) d = Bytes(ub, 0);
    encode_all(maxthreads);  // untimed: the encoded chunks for the decode limits; checked once
    parallel(maxthreads, g.units.size(), [&](int t, std::size_t i) {
      decode_unit(t, i);
      if (std::memcmp(dst[static_cast<std::size_t>(t)].data(), raw[i].data(), ub) != 0)
        throw std::runtime_error("raw round trip differs");
    });
  }
}

// The raw encode limit: every chunk compressed (+ crc32c of the output when on) on n threads.
void ConfigRun::encode_all(int n) {
  parallel(n, g.units.size(), [&](int t, std::size_t i) {
    std::size_t m = raw_encode(C, *ctx[static_cast<std::size_t>(t)], raw[i].data(), ub, enc[i].data(), cap);
    if (crc) {
      const std::uint32_t c = crc32c_of(enc[i].data(), m);
      std::memcpy(enc[i].data() + m, &c, 4);
      m += 4;
    }
    enc_len[i] = m;
  });
}

// The raw decode of encoded chunk i on thread t (crc32c checked when on).
void ConfigRun::decode_unit(int t, std::size_t i) {
  std::size_t m = enc_len[i];
  if (crc) {
    m -= 4;
    std::uint32_t stored_crc;
    std::memcpy(&stored_crc, enc[i].data() + m, 4);
    if (crc32c_of(enc[i].data(), m) != stored_crc) throw std::runtime_error("crc mismatch in the limit");
  }
  raw_decode(C, *ctx[static_cast<std::size_t>(t)], enc[i].data(), m, dst[static_cast<std::size_t>(t)].data(), ub);
}

// The (box, chunk) pairs, where the stored chunks are, and the buffers the reads reuse.
void ConfigRun::prepare_read_buffers(const Array& z) {
  for (const auto& b : boxes)
    for (std::size_t u : g.touched(b)) pairs.push_back(u);
  if (w_boxes && !compressed) locs = locate_units(z, bench.store_root, g, L);
  for (const auto& l : locs) maxloc = std::max<std::size_t>(maxloc, l.len);

  out = Bytes(nbytes, 0);
  out_view = NDView::c_order(out.data(), DataType::uint16, S);
  cbuf = Bytes(ub, 0);
  if (!compressed && (w_whole || w_chunks)) lim_out = Bytes(nbytes, 0);
}

// A row of this configuration; returns its index in cfg_rows.
std::size_t ConfigRun::add_row(int threads, const std::string& w, double bytes, const Timing& tm,
                               const std::string& lim_kind) {
  Row r;
  r.layout = L.name;
  r.codec = C.name;
  r.crc = crc;
  r.data = data;
  r.threads = threads;
  r.workload = w;
  r.bytes = bytes;
  r.seconds = tm.a;
  r.limit_seconds = tm.b;
  r.runs = tm.a_runs;
  r.limit_runs = tm.b_runs;
  r.limit_kind = lim_kind;
  r.stored_ratio = stored_ratio;
  cfg_rows.push_back(r);
  return cfg_rows.size() - 1;
}

// Every workload at n threads.
void ConfigRun::measure_threads(Array& z, int n) {
  z.set_concurrency(static_cast<std::size_t>(n));
  const std::string tl = label + ", " + std::to_string(n) + " thread(s)";
  // (a) write the whole array from one buffer
  if (w_write) measure_write(z, n, tl);
  if (w_whole || w_chunks || w_boxes) {
    bench.progress(tl + ": warm-up read (untimed)");
    z.read_into({}, out_view);
  }
  // (b) the whole array into one reused buffer
  if (w_whole) measure_whole(z, n, tl);
  // (c) chunk by chunk into one reused buffer
  if (w_chunks) measure_chunks(z, n, tl);
  // (d) random boxes, 5% of the array
  if (w_boxes) measure_boxes(z, n, tl);
}

// ---- (a) write the whole array from one buffer ----
void ConfigRun::measure_write(Array& z, int n, const std::string& tl) {
  bench.progress(tl + ": write");
  std::function<void()> limit;
  std::string kind;
  std::vector<std::vector<std::size_t>> objs;
  std::vector<Bytes> obuf;
  if (!compressed) {
    // Objects: chunks, or shards of inner chunks (each + crc), written with plain POSIX I/O.
    kind = "memcpy+write()";
    fs::create_directories(scratch);
    objs = stored_objects();
    std::size_t maxobj = 0;
    for (const auto& ob : objs) maxobj = std::max(maxobj, ob.size() * (ub + 4) + (L.shard ? ob.size() * 16 + 4 : 0));
    obuf.resize(static_cast<std::size_t>(n));
    for (auto& b : obuf) b = Bytes(maxobj, 0);
    limit = [&] { write_objects(n, objs, obuf); };
    limit();  // untimed: creates the files, so every timed run overwrites as zarrpp's do
  } else {
    kind = std::string("raw encode") + (crc ? "+crc32c" : "");
    limit = [&] { encode_all(n); };
  }
  const Timing tm = time_pair(o.repeats, [&] { z.write({}, src_view); }, limit, [] { ::sync(); });
  if (!compressed) fs::remove_all(scratch);
  validate_whole(z, "after the timed writes");
  const std::size_t wi = add_row(n, "write", static_cast<double>(nbytes), tm, kind);
  if (compressed) cfg_rows[wi].floor_seconds = measure_write_floor(z, n);
}

// The stored objects as the codec units each holds: every chunk alone, or each shard's inner
// chunks (those inside the array) in C order.
std::vector<std::vector<std::size_t>> ConfigRun::stored_objects() const {
  std::vector<std::vector<std::size_t>> objs;
  if (!L.shard) {
    for (std::size_t i = 0; i < g.units.size(); ++i) objs.push_back({i});
    return objs;
  }
  const Shape& sh = *L.shard;
  const i64 r[3] = {sh[0] / L.chunk[0], sh[1] / L.chunk[1], sh[2] / L.chunk[2]};
  for (i64 a = 0; a < (S[0] + sh[0] - 1) / sh[0]; ++a)
    for (i64 b = 0; b < (S[1] + sh[1] - 1) / sh[1]; ++b)
      for (i64 c = 0; c < (S[2] + sh[2] - 1) / sh[2]; ++c) {
        std::vector<std::size_t> us;
        for (i64 x = 0; x < r[0]; ++x)
          for (i64 y = 0; y < r[1]; ++y)
            for (i64 w = 0; w < r[2]; ++w) {
              const i64 gi = a * r[0] + x, gj = b * r[1] + y, gk = c * r[2] + w;
              if (gi < g.n[0] && gj < g.n[1] && gk < g.n[2]) us.push_back(g.id(gi, gj, gk));
            }
        objs.push_back(us);
      }
  return objs;
}

// The limit of an uncompressed write: each stored object's bytes gathered from the source
// (+ crc32c per chunk, + the shard index) into a per-thread buffer and written to its own file.
void ConfigRun::write_objects(int n, const std::vector<std::vector<std::size_t>>& objs,
                              std::vector<Bytes>& obuf) const {
  parallel(n, objs.size(), [&](int th, std::size_t oi) {
    u8* p = obuf[static_cast<std::size_t>(th)].data();
    std::size_t pos = 0;
    std::vector<std::uint64_t> index;
    for (std::size_t u : objs[oi]) {
      gather(src.data(), S, g.units[u], L.chunk, reinterpret_cast<u16*>(p + pos));
      std::size_t m = ub;
      if (crc) {
        const std::uint32_t c = crc32c_of(p + pos, ub);
        std::memcpy(p + pos + ub, &c, 4);
        m += 4;
      }
      index.push_back(pos);
      index.push_back(m);
      pos += m;
    }
    if (L.shard) {
      std::memcpy(p + pos, index.data(), index.size() * 8);
      const std::uint32_t c = crc32c_of(p + pos, index.size() * 8);
      pos += index.size() * 8;
      std::memcpy(p + pos, &c, 4);
      pos += 4;
    }
    write_file_fully((scratch / std::to_string(oi)).string(), p, pos);
  });
}

// The file-write floor of a compressed write: the raw encode, then each stored object's
// encoded bytes (a chunk, or a shard's inner chunks back to back) written to a new file
// (open O_EXCL/write/close) renamed over the old one, N threads: the encode limit plus the
// least file I/O that atomic replacement of every object needs. Returns its median seconds.
double ConfigRun::measure_write_floor(Array& z, int n) {
  const std::vector<std::vector<std::size_t>> wobjs = stored_objects();
  fs::create_directories(scratch);
  const auto floor_fn = [&] { replace_objects_encoded(n, wobjs); };
  floor_fn();  // untimed: creates the files, so timed runs replace them as zarrpp does
  const Timing ft = time_pair(o.repeats, [&] { z.write({}, src_view); }, floor_fn, [] { ::sync(); });
  fs::remove_all(scratch);
  return ft.b;
}

void ConfigRun::replace_objects_encoded(int n, const std::vector<std::vector<std::size_t>>& wobjs) {
  encode_all(n);
  parallel(n, wobjs.size(), [&](int, std::size_t oi) {
    const std::string path = (scratch / std::to_string(oi)).string(), tmp = path + ".tmp";
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error("cannot create " + tmp);
    for (std::size_t u : wobjs[oi]) {
      std::size_t done = 0;
      while (done < enc_len[u]) {
        const ssize_t w = ::write(fd, enc[u].data() + done, enc_len[u] - done);
        if (w <= 0) throw std::runtime_error("cannot write " + path);
        done += static_cast<std::size_t>(w);
      }
    }
    ::close(fd);
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw std::runtime_error("cannot rename " + tmp);
  });
}

std::string ConfigRun::read_limit_kind() const {
  return std::string(compressed ? "raw decode" : "memcpy") + (crc ? "+crc32c" : "");
}

// The limit of whole and chunks reads: the raw decode of every chunk, or a memcpy of the array
// (+ crc32c over every chunk when on), on n threads.
void ConfigRun::read_limit(int n) {
  if (compressed) {
    parallel(n, g.units.size(), [this](int t, std::size_t i) { decode_unit(t, i); });
    return;
  }
  parallel(n, static_cast<std::size_t>(n), [&](int, std::size_t i) {
    const std::size_t a = nbytes * i / static_cast<std::size_t>(n), b = nbytes * (i + 1) / static_cast<std::size_t>(n);
    std::memcpy(lim_out.data() + a, reinterpret_cast<const u8*>(src.data()) + a, b - a);
  });
  if (crc) parallel(n, g.units.size(), [&](int, std::size_t i) { crc_sink ^= crc32c_of(raw[i].data(), ub); });
}

// ---- (b) the whole array into one reused buffer ----
void ConfigRun::measure_whole(const Array& z, int n, const std::string& tl) {
  bench.progress(tl + ": whole read");
  const Timing tm = time_pair(o.repeats, [&] { z.read_into({}, out_view); }, [&] { read_limit(n); });
  if (std::memcmp(out.data(), src.data(), nbytes) != 0) mismatch(label + ": whole read_into differs from the source");
  const std::size_t ri = add_row(n, "whole", static_cast<double>(nbytes), tm, read_limit_kind());
  if (!compressed) cfg_rows[ri].floor_seconds = measure_read_floor(z, n);
  measure_peak_memory(z, ri);
}

// The file-read floor of an uncompressed whole read: every stored file read with pread in
// 256 KiB pieces into a small per-thread buffer, N threads; what the kernel's page-cache copy
// alone costs. Returns its median seconds.
double ConfigRun::measure_read_floor(const Array& z, int n) const {
  std::vector<std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(bench.store_root / name / "c"))
    if (e.is_regular_file()) files.push_back(e.path().string());
  std::vector<Bytes> fbuf(static_cast<std::size_t>(n));
  for (auto& b : fbuf) b = Bytes(std::size_t{256} << 10, 0);
  const Timing ft = time_pair(
      o.repeats, [&] { z.read_into({}, out_view); },
      [&] {
        parallel(n, files.size(), [&](int th, std::size_t i) {
          const int fd = ::open(files[i].c_str(), O_RDONLY | O_CLOEXEC);
          if (fd < 0) throw std::runtime_error("cannot open " + files[i]);
          u8* b = fbuf[static_cast<std::size_t>(th)].data();
          for (off_t off = 0;; off += 256 << 10) {
            const ssize_t got = ::pread(fd, b, 256 << 10, off);
            if (got <= 0) break;
          }
          ::close(fd);
        });
      });
  return ft.b;
}

// Peak memory of Array::read into a fresh NDArray, as a fraction of the output, into row ri.
void ConfigRun::measure_peak_memory(const Array& z, std::size_t ri) {
  ::malloc_trim(0);
  if (reset_peak_rss()) {
    const long before = status_kb("VmRSS:");
    NDArray a = z.read();
    const long hwm = status_kb("VmHWM:");
    cfg_rows[ri].peak = static_cast<double>(hwm - before) * 1024.0 / static_cast<double>(nbytes);
    if (a.nbytes() != nbytes || std::memcmp(a.raw_data(), src.data(), nbytes) != 0)
      mismatch(label + ": Array::read differs from the source");
  }
}

// ---- (c) chunk by chunk into one reused buffer ----
void ConfigRun::measure_chunks(const Array& z, int n, const std::string& tl) {
  bench.progress(tl + ": chunk-by-chunk read (" + std::to_string(g.units.size()) + " chunks)");
  // N user threads share the chunks, each reading into its own reused buffer (a chunk is one
  // read; more threads help only by reading different chunks at once).
  std::vector<Bytes> cbufs(static_cast<std::size_t>(n));
  for (auto& b : cbufs) b = Bytes(cbuf.size(), 0);
  const Timing tm = time_pair(
      o.repeats,
      [&] {
        parallel(n, g.units.size(), [&](int th, std::size_t i) {
          const auto& u = g.units[i];
          z.read_into(u.selection(), NDView::c_order(cbufs[static_cast<std::size_t>(th)].data(), DataType::uint16,
                                                     {u.ext[0], u.ext[1], u.ext[2]}));
        });
      },
      [&] { read_limit(n); });
  for (const auto& u : g.units) {  // untimed check of every chunk
    z.read_into(u.selection(), NDView::c_order(cbuf.data(), DataType::uint16, {u.ext[0], u.ext[1], u.ext[2]}));
    if (!region_equal(src.data(), S, u, reinterpret_cast<const u16*>(cbuf.data())))
      mismatch(label + ": a chunk read differs from the source");
  }
  add_row(n, "chunks", static_cast<double>(nbytes), tm, read_limit_kind());
}

// ---- (d) random boxes, 5% of the array ----
void ConfigRun::measure_boxes(const Array& z, int n, const std::string& tl) {
  bench.progress(tl + ": box reads (" + std::to_string(boxes.size()) + " boxes, " + std::to_string(pairs.size()) +
                 " chunk visits)");
  Bytes bbuf(static_cast<std::size_t>(boxes[0].volume()) * 2, 0);
  std::function<void()> limit;
  std::string kind;
  std::vector<Bytes> pbuf;
  if (compressed) {
    kind = std::string("raw decode per touched chunk") + (crc ? "+crc32c" : "");
    limit = [&] { parallel(n, pairs.size(), [&](int th, std::size_t p) { decode_unit(th, pairs[p]); }); };
  } else {
    kind = std::string("pread per touched chunk") + (crc ? "+crc32c" : "");
    pbuf.resize(static_cast<std::size_t>(n));
    for (auto& b : pbuf) b = Bytes(maxloc, 0);
    limit = [&] { pread_touched_chunks(n, pbuf); };
  }
  std::vector<Bytes> bbufs(static_cast<std::size_t>(n));
  for (auto& b : bbufs) b = Bytes(bbuf.size(), 0);
  const Timing tm = time_pair(
      o.repeats,
      [&] {
        parallel(n, boxes.size(), [&](int th, std::size_t i) {
          const auto& b = boxes[i];
          z.read_into(b.selection(), NDView::c_order(bbufs[static_cast<std::size_t>(th)].data(), DataType::uint16,
                                                     {b.ext[0], b.ext[1], b.ext[2]}));
        });
      },
      limit);
  check_boxes(z, bbuf);
  add_row(n, "boxes", static_cast<double>(box_bytes), tm, kind);
}

// The limit of an uncompressed box read: open + pread of each touched chunk's stored bytes (the
// whole chunk, or its range in the shard) + close, + crc32c when on, once per (box, chunk) pair.
void ConfigRun::pread_touched_chunks(int n, std::vector<Bytes>& pbuf) {
  parallel(n, pairs.size(), [&](int th, std::size_t p) {
    const Loc& l = locs[pairs[p]];
    const int fd = ::open(l.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("cannot open " + l.path);
    u8* buf = pbuf[static_cast<std::size_t>(th)].data();
    pread_fully(fd, buf, l.len, l.off, l.path);
    ::close(fd);
    if (crc) crc_sink ^= crc32c_of(buf, l.len - 4);
  });
}

// Untimed check of the first boxes, read into bbuf.
void ConfigRun::check_boxes(const Array& z, Bytes& bbuf) const {
  auto box_view = [&](const Box& b) {
    return NDView::c_order(bbuf.data(), DataType::uint16, {b.ext[0], b.ext[1], b.ext[2]});
  };
  for (std::size_t i = 0; i < std::min<std::size_t>(boxes.size(), 64); ++i) {
    z.read_into(boxes[i].selection(), box_view(boxes[i]));
    if (!region_equal(src.data(), S, boxes[i], reinterpret_cast<const u16*>(bbuf.data())))
      mismatch(label + ": a box read differs from the source");
  }
}

// ---- zarrita.js on the same array ----
void ConfigRun::run_zarrita() {
  std::vector<std::string> peer_w;
  for (const char* w : {"whole", "chunks", "boxes"})
    if (contains(o.workloads, w)) peer_w.push_back(w);
  if (o.peer && !peer_w.empty()) {
    bench.progress(label + ": zarrita.js");
    std::uint64_t total = 0;
    for (u16 v : src) total += v;
    std::uint64_t bsum = 0;
    for (const auto& b : boxes) bsum += region_sum(src.data(), S, b);
    const PeerResult pr =
        run_peer(o, bench.store_root, name, peer_w, bench.boxes_file,
                 {{"whole", total}, {"chunks", total}, {"boxes", bsum}}, bench.work / "zarrita-stderr.txt");
    for (auto& r : cfg_rows) {
      if (auto it = pr.seconds.find(r.workload); it != pr.seconds.end()) r.peer_seconds = it->second;
      if (auto it = pr.note.find(r.workload); it != pr.note.end()) r.peer_note = it->second;
    }
  } else {
    for (auto& r : cfg_rows)
      if (r.is_read()) r.peer_note = o.peer ? "" : "not run";
  }
}

// Judges and prints this configuration's rows, adds them to the run's, and removes the array.
void ConfigRun::report() {
  for (auto& r : cfg_rows) {
    judge(r, compressed);
    print_row(r);
    bench.rows.push_back(r);
  }
  bench.save_json();
  fs::remove_all(bench.store_root / name);
}

void Bench::run_config(const std::vector<u16>& src, const std::string& data, const Layout& L, const Grid& g,
                       const std::vector<Bytes>& raw, const Codec& C, bool crc) {
  ConfigRun cfg(*this, src, data, L, g, raw, C, crc);
  cfg.run();
}

// The work directory, removed by the signal handler when the run is interrupted.
char g_workdir[4096] = {0};

extern "C" void on_signal(int sig) {
  if (g_workdir[0]) {  // only async-signal-safe calls: fork + exec rm
    const pid_t p = ::fork();
    if (p == 0) {
      ::execl("/bin/rm", "rm", "-rf", "--", g_workdir, static_cast<char*>(nullptr));
      ::_exit(127);
    }
    if (p > 0) {
      int st = 0;
      ::waitpid(p, &st, 0);
    }
  }
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  Bench b;
  fs::path work;
  try {
    b.o = parse_options(argc, argv);
    b.mach = machine();
    blosc_init();
    {
      const fs::path parent = b.o.dir ? *b.o.dir : fs::temp_directory_path();
      fs::create_directories(parent);
      std::string tmpl = (parent / "zarrpp-bench-XXXXXX").string();
      if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a directory in " + parent.string());
      work = tmpl;
      if (!b.o.keep && tmpl.size() < sizeof g_workdir) {
        std::memcpy(g_workdir, tmpl.c_str(), tmpl.size() + 1);
        for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::signal(sig, on_signal);
      }
    }
    bench::print_machine_facts(work.string());
    b.work = work;
    b.store_root = work / "store";
    b.boxes_file = work / "boxes.json";
    b.store = FileStore::open(b.store_root);
    b.run();
    std::printf("\n## Compression ratio (logical bytes / bytes of the chunk files on disk)\n\n");
    std::printf("| layout | codec | crc32c | data | stored MB | ratio |\n|---|---|---|---|---|---|\n");
    for (const auto& c : b.compression)
      std::printf("| %s | %s | %s | %s | %.1f | %.2f |\n", c["layout"].get<std::string>().c_str(),
                  c["codec"].get<std::string>().c_str(), c["crc32c"].get<bool>() ? "on" : "off",
                  c["data"].get<std::string>().c_str(), c["stored_bytes"].get<double>() / 1e6,
                  c["ratio"].get<double>());
    std::size_t missed = 0;
    for (const auto& r : b.rows) missed += !r.misses.empty();
    std::printf(
        "\n## Targets\n\nuncompressed whole read >= 0.60 × memcpy; compressed reads >= 0.85 × raw decode; writes >= "
        "0.80 × "
        "limit; every read >= 5 × zarrita; peak memory <= 1.15 × output. %zu of %zu rows miss one or more:\n\n",
        missed, b.rows.size());
    for (const auto& r : b.rows) {
      if (r.misses.empty()) continue;
      std::string m;
      for (const auto& x : r.misses) m += (m.empty() ? "" : ", ") + x;
      std::printf("- %s, %s, crc32c %s, %s, %d thread(s), %s: %s\n", r.layout.c_str(), r.codec.c_str(),
                  r.crc ? "on" : "off", r.data.c_str(), r.threads, r.workload.c_str(), m.c_str());
    }
    std::printf("\nTotal time: %.0f s. Load average at the end: %s.\n", now_s() - b.t_start, loadavg().c_str());
    b.save_json();
  } catch (const Fatal& f) {
    std::fprintf(stderr, "%s\n", f.what());
    std::fflush(stdout);
    if (!work.empty() && !b.o.keep) fs::remove_all(work);
    return f.code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "zarrpp-bench: error: %s\n", e.what());
    if (!work.empty() && !b.o.keep) fs::remove_all(work);
    return 3;
  }
  if (!b.o.keep)
    fs::remove_all(work);
  else
    std::fprintf(stderr, "kept %s\n", work.c_str());
  return 0;
}
