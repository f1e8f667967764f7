// Interoperability with an independent implementation, zarrita.js (tests/interop, pinned in its
// package-lock.json):
//   (a) zarrpp writes a matrix of arrays (every data type zarrita has x byte order x transpose x
//       gzip/zstd/blosc x crc32c x sharding x chunk key encodings x shapes 0-d..4-d with partial
//       edge chunks and missing chunks) and groups; zarrita reads them, and every element must
//       match exactly, except for two known zarrita bugs (bool with a big-endian bytes codec;
//       shard index at the start), which must still show;
//   (b) zarrita writes what it can (tests/interop/write_with_zarrita.mjs); zarrpp reads it all;
//   (c) what zarrita does with a zarrpp array grown at the front (a regular_bounded grid).
// The scripts are found through ZARRPP_INTEROP_DIR, node through PATH. Without node or without
// tests/interop/node_modules (`npm ci` there) the tests fail: CI installs both.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "common.hpp"
#include "zarrpp/zarrpp.hpp"

#ifndef ZARRPP_INTEROP_DIR
#error "ZARRPP_INTEROP_DIR must name the tests/interop directory (a string literal)"
#endif

namespace {

using namespace zarrpp;
namespace fs = std::filesystem;
using PlainJson = nlohmann::json;
using Box = std::vector<std::pair<std::int64_t, std::int64_t>>;  // [lo, hi) per dimension

const fs::path kInteropDir{ZARRPP_INTEROP_DIR};

// ---- running node ----------------------------------------------------------------------------

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'')
      out += "'\\''";
    else
      out += c;
  }
  return out + "'";
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

RunResult run(const std::string& command) {
  static int counter = 0;
  const fs::path err_file = fs::temp_directory_path() /
                            ("zarrpp-interop-stderr-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  RunResult r;
  FILE* p = ::popen((command + " 2>" + quote(err_file.string())).c_str(), "r");
  if (!p) {
    r.err = "popen failed for: " + command;
    return r;
  }
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = slurp(err_file);
  fs::remove(err_file);
  return r;
}

// Empty when node and the pinned zarrita are there, else what is missing and how to get it.
std::string interop_env_problem() {
  static const std::string problem = [] {
    const RunResult v = run("node --version");
    if (v.exit_code != 0) {
      std::string why = v.err;
      while (!why.empty() && std::isspace(static_cast<unsigned char>(why.back()))) why.pop_back();
      return "node is not on PATH (" + why +
             "): the interop tests need Node.js >= 20; CI installs it (scripts/setup.sh)";
    }
    if (!fs::exists(kInteropDir / "node_modules" / "zarrita" / "package.json"))
      return "zarrita is not installed: run `npm ci` in " + kInteropDir.string() + " (scripts/setup.sh does)";
    return std::string();
  }();
  return problem;
}

#define REQUIRE_INTEROP_ENV()                           \
  do {                                                  \
    const std::string problem_ = interop_env_problem(); \
    ASSERT_TRUE(problem_.empty()) << problem_;          \
  } while (0)

// Runs read_with_zarrita.mjs on `paths` of the store at `root`; one JSON object per path. The
// script answers path by path; if node dies on one (zarrita can make it abort, see Sharding),
// that path gets {"error": "node crashed: ..."} and the rest are read by a new process.
std::map<std::string, PlainJson> zarrita_read(const fs::path& root, const std::vector<std::string>& paths,
                                              bool attrs = false) {
  std::map<std::string, PlainJson> out;
  std::size_t next = 0;
  while (next < paths.size()) {
    std::string cmd = "node " + quote((kInteropDir / "read_with_zarrita.mjs").string()) + (attrs ? " --attrs " : " ") +
                      quote(root.string());
    for (std::size_t k = next; k < paths.size(); ++k) cmd += " " + quote(paths[k]);
    const RunResult r = run(cmd);
    std::istringstream lines(r.out);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.empty()) continue;
      PlainJson j = PlainJson::parse(line, nullptr, false);
      if (j.is_discarded() || !j.contains("path") || next >= paths.size() || j["path"] != paths[next]) {
        ADD_FAILURE() << "read_with_zarrita.mjs printed an unexpected line: " << line << "\nstderr:\n" << r.err;
        return out;
      }
      out[paths[next++]] = std::move(j);
    }
    if (next < paths.size()) {
      if (r.exit_code == 0 || r.exit_code == 1) {  // it exited normally without answering: broken
        ADD_FAILURE() << "read_with_zarrita.mjs answered for " << next << " of " << paths.size() << " paths (exit "
                      << r.exit_code << "); stderr:\n"
                      << r.err;
        return out;
      }
      std::string err = r.err;
      const auto pos = err.find("Assertion failed");
      err = pos != std::string::npos ? err.substr(pos, err.find('\n', pos) - pos) : err.substr(0, 300);
      out[paths[next]] = PlainJson{{"path", paths[next]}, {"error", "node crashed: " + err}};
      ++next;
    }
  }
  return out;
}

using zarrpp::test::TempDir;  // kept when a test fails or ZARRPP_TEST_KEEP is set

// ---- values ----------------------------------------------------------------------------------

// The data types zarrita 0.7.5 reads on Node 20 (no float16: Node 20 has no Float16Array; no
// complex types at all).
const std::vector<DataType> kZarritaTypes = {DataType::int8,    DataType::int16,   DataType::int32,  DataType::int64,
                                             DataType::uint8,   DataType::uint16,  DataType::uint32, DataType::uint64,
                                             DataType::float32, DataType::float64, DataType::bool_t};

template <class F>
void dispatch(const DataType& dt, F&& f) {
  switch (dt.id()) {
    case DataType::Id::bool_:
      f.template operator()<bool>();
      return;
    case DataType::Id::int8:
      f.template operator()<std::int8_t>();
      return;
    case DataType::Id::int16:
      f.template operator()<std::int16_t>();
      return;
    case DataType::Id::int32:
      f.template operator()<std::int32_t>();
      return;
    case DataType::Id::int64:
      f.template operator()<std::int64_t>();
      return;
    case DataType::Id::uint8:
      f.template operator()<std::uint8_t>();
      return;
    case DataType::Id::uint16:
      f.template operator()<std::uint16_t>();
      return;
    case DataType::Id::uint32:
      f.template operator()<std::uint32_t>();
      return;
    case DataType::Id::uint64:
      f.template operator()<std::uint64_t>();
      return;
    case DataType::Id::float32:
      f.template operator()<float>();
      return;
    case DataType::Id::float64:
      f.template operator()<double>();
      return;
    default:
      FAIL() << "no element type for " << dt.name();
  }
}

// Element i of an array; `salt` varies the formula between arrays. The first elements are the
// type's extremes (and NaN, +-Infinity, -0 and the smallest subnormal for floats).
template <class T>
T value_at(std::int64_t i, int salt) {
  const std::int64_t v = (i * (7 + salt)) % 100;
  if constexpr (std::is_same_v<T, bool>) {
    return (i * (salt + 3)) % 5 < 2;
  } else if constexpr (std::is_floating_point_v<T>) {
    using L = std::numeric_limits<T>;
    const T special[] = {L::quiet_NaN(), L::infinity(), -L::infinity(), T(-0.0), L::max(), L::denorm_min()};
    if (i < 6) return special[i];
    return static_cast<T>(static_cast<double>(v - 20) + 0.25 * static_cast<double>(i % 4) +
                          (std::is_same_v<T, double> ? 1e-9 * static_cast<double>(i) : 0.0));
  } else {
    if (i == 0) return std::numeric_limits<T>::min();
    if (i == 1) return std::numeric_limits<T>::max();
    return static_cast<T>(std::is_signed_v<T> ? v - 20 : v);
  }
}

NDArray make_values(const DataType& dt, const Shape& shape, int salt) {
  NDArray a(dt, shape);
  dispatch(dt, [&]<class T>() {
    T* p = a.data<T>();
    for (std::int64_t i = 0; i < a.size(); ++i) p[i] = value_at<T>(i, salt);
  });
  return a;
}

// Calls f(flat index in an array of `shape`, flat index inside the box) for every element of box.
void for_each_in_box(const Shape& shape, const Box& box, const std::function<void(std::int64_t, std::int64_t)>& f) {
  const std::size_t r = shape.size();
  for (std::size_t d = 0; d < r; ++d)
    if (box[d].first >= box[d].second) return;
  std::vector<std::int64_t> idx(r);
  for (std::size_t d = 0; d < r; ++d) idx[d] = box[d].first;
  for (std::int64_t k = 0;; ++k) {
    std::int64_t flat = 0;
    for (std::size_t d = 0; d < r; ++d) flat = flat * shape[d] + idx[d];
    f(flat, k);
    std::size_t d = r;
    while (d > 0) {
      --d;
      if (++idx[d] < box[d].second) break;
      idx[d] = box[d].first;
      if (d == 0) return;
    }
    if (r == 0) return;
  }
}

Shape box_shape(const Box& box) {
  Shape s;
  for (const auto& [lo, hi] : box) s.push_back(hi - lo);
  return s;
}

Selection box_selection(const Box& box) {
  Selection sel;
  for (const auto& [lo, hi] : box) sel.push_back(slice(lo, hi));
  return sel;
}

// ---- comparing with what zarrita printed -----------------------------------------------------

template <class T>
std::string describe(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    std::ostringstream s;
    s.precision(17);
    s << v;
    return (v == 0 && std::signbit(v)) ? "-0" : s.str();
  } else {
    return std::to_string(v);
  }
}

// "" when the JSON element (read_with_zarrita.mjs's encoding) is exactly v, else why not.
template <class T>
std::string element_mismatch(T v, const PlainJson& e) {
  if constexpr (std::is_same_v<T, bool>) {
    if (e.is_boolean() && e.get<bool>() == v) return "";
  } else if constexpr (std::is_floating_point_v<T>) {
    if (e.is_string()) {
      const auto s = e.get<std::string>();
      if ((s == "NaN" && std::isnan(v)) || (s == "Infinity" && std::isinf(v) && v > 0) ||
          (s == "-Infinity" && std::isinf(v) && v < 0) || (s == "-0" && v == 0 && std::signbit(v)))
        return "";
    } else if (e.is_number()) {
      const double d = e.get<double>();
      if (static_cast<double>(v) == d && !std::signbit(v)) return "";
      if (static_cast<double>(v) == d && v != 0) return "";
    }
  } else if constexpr (sizeof(T) == 8) {
    if (e.is_string()) {
      const auto s = e.get<std::string>();
      T parsed{};
      const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), parsed);
      if (ec == std::errc() && ptr == s.data() + s.size() && parsed == v) return "";
    }
  } else {
    if (e.is_number_integer() && e.get<std::int64_t>() == static_cast<std::int64_t>(v)) return "";
  }
  return "expected " + describe(v) + ", got " + e.dump();
}

struct Comparison {
  std::int64_t mismatches = 0;
  std::string first;  // the first mismatch, described
};

Comparison compare(const NDArray& expected, const PlainJson& data) {
  Comparison c;
  if (!data.is_array() || static_cast<std::int64_t>(data.size()) != expected.size()) {
    c.mismatches = expected.size() == 0 ? 1 : expected.size();
    c.first = "expected " + std::to_string(expected.size()) + " values, got " + data.dump().substr(0, 200);
    return c;
  }
  dispatch(expected.dtype(), [&]<class T>() {
    const T* p = expected.data<T>();
    for (std::int64_t i = 0; i < expected.size(); ++i) {
      std::string m = element_mismatch<T>(p[i], data[static_cast<std::size_t>(i)]);
      if (!m.empty()) {
        if (c.mismatches++ == 0) c.first = "element " + std::to_string(i) + ": " + m;
      }
    }
  });
  return c;
}

PlainJson shape_json(const Shape& s) {
  PlainJson j = PlainJson::array();
  for (auto x : s) j.push_back(x);
  return j;
}

// ---- (a) zarrpp writes, zarrita reads --------------------------------------------------------

// zarrita 0.7.5's bytes codec swaps bytes in groups of bytesPerElement(TypedArray), which is 4 for
// its BoolArray (it has no static BYTES_PER_ELEMENT); for 1-byte bool it should swap nothing.
const char* const kBoolBigEndianBug =
    "zarrita swaps bool bytes in groups of 4 when the bytes codec says \"endian\": \"big\"";
// zarrita 0.7.5 always reads the shard index from the end of the shard.
const char* const kIndexAtStartBug =
    "zarrita ignores \"index_location\": \"start\" and reads the shard index from the end";

struct Case {
  std::string path = {};
  ArraySpec spec = {};
  int salt = 0;
  std::vector<Box> regions = {};  // what is written; empty: everything
  // Non-empty: zarrita is known to misread this (the bug). Such cases are not asserted one by
  // one; at least one case of each bug must still show it, so a fixed zarrita shows up here.
  std::string zarrita_misreads = {};
};

struct Written {
  Case c;
  NDArray expected;  // what zarrpp reads back (asserted) and zarrita must read
};

// Writes every case with zarrpp under `root`, then reads them all with one zarrita process and
// compares element by element. Returns the number of cases checked.
std::size_t check_zarrita_reads(const fs::path& root, std::vector<Case> cases,
                                const std::function<void(const StorePtr&)>& before_read = nullptr) {
  auto store = FileStore::open(root);
  std::vector<Written> written;
  std::vector<std::string> paths;
  for (auto& c : cases) {
    SCOPED_TRACE(c.path);
    try {
      Array z = Array::create(store, c.path, c.spec);
      NDArray full = make_values(c.spec.dtype, c.spec.shape, c.salt);
      NDArray expected;
      if (c.regions.empty()) {
        z.write({}, full);
        expected = full;
      } else {
        expected = NDArray(c.spec.dtype, c.spec.shape);
        // The fill value everywhere, then each box from `full`, written to the array too.
        const Bytes fill = z.fill_value();
        const std::size_t es = c.spec.dtype.size();
        auto at = [es](auto& a, std::int64_t i) { return a.raw_data() + static_cast<std::size_t>(i) * es; };
        for (std::int64_t i = 0; i < expected.size(); ++i) std::memcpy(at(expected, i), fill.data(), es);
        for (const Box& box : c.regions) {
          NDArray part(c.spec.dtype, box_shape(box));
          for_each_in_box(c.spec.shape, box, [&](std::int64_t flat, std::int64_t k) {
            std::memcpy(at(part, k), at(full, flat), es);
            std::memcpy(at(expected, flat), at(full, flat), es);
          });
          z.write(box_selection(box), part);
        }
      }
      // zarrpp itself must read back what it wrote, or the comparison below means nothing.
      EXPECT_TRUE(Array::open(store, c.path).read() == expected) << "zarrpp does not read back " << c.path;
      paths.push_back(c.path);
      written.push_back({std::move(c), std::move(expected)});
    } catch (const std::exception& e) {
      ADD_FAILURE() << "zarrpp could not write " << c.path << ": " << e.what();
    }
  }
  if (before_read) before_read(store);
  const auto results = zarrita_read(root, paths);
  std::map<std::string, std::pair<int, std::vector<std::string>>> known_bugs;  // bug -> (cases, misread ones)
  for (const auto& w : written) {
    SCOPED_TRACE(w.c.path);
    auto it = results.find(w.c.path);
    if (it == results.end()) continue;  // already reported
    const PlainJson& r = it->second;
    if (!w.c.zarrita_misreads.empty()) {
      // A known zarrita bug: this case is not asserted (the misread can happen to give the right
      // values for some data); below, at least one case per bug must still show it.
      const bool misread = r.contains("error") || r.value("shape", PlainJson()) != shape_json(w.c.spec.shape) ||
                           compare(w.expected, r.at("data")).mismatches > 0;
      auto& [count, misreads] = known_bugs[w.c.zarrita_misreads];
      ++count;
      if (misread)
        misreads.push_back(w.c.path + (r.contains("error") ? " (" + r.at("error").get<std::string>() + ")" : ""));
      continue;
    }
    if (r.contains("error")) {
      ADD_FAILURE() << w.c.path << ": zarrita failed: " << r.at("error").get<std::string>();
      continue;
    }
    EXPECT_EQ(r.at("shape"), shape_json(w.c.spec.shape)) << w.c.path;
    EXPECT_EQ(r.at("dtype"), w.c.spec.dtype.name()) << w.c.path;
    const Comparison cmp = compare(w.expected, r.at("data"));
    EXPECT_EQ(cmp.mismatches, 0) << w.c.path << ": " << cmp.mismatches << " of " << w.expected.size()
                                 << " elements differ; first: " << cmp.first;
  }
  for (const auto& [bug, cases_misread] : known_bugs) {
    const auto& [count, misreads] = cases_misread;
    EXPECT_FALSE(misreads.empty()) << "zarrita now reads all " << count << " cases of a known bug correctly (\"" << bug
                                   << "\"): make them cases that must match";
    std::printf("zarrita misreads %zu of %d cases: %s\n", misreads.size(), count, bug.c_str());
    for (const auto& m : misreads) std::printf("    %s\n", m.c_str());
  }
  return written.size();
}

Json fill_for(const DataType& dt, int variant) {
  if (dt == DataType::bool_t) return variant % 2 == 1;
  if (dt == DataType::float32 || dt == DataType::float64) {
    const Json f[] = {Json(0.0), Json("NaN"), Json("-Infinity"), Json(-2.5)};
    return f[variant % 4];
  }
  if (dt.name().starts_with("uint")) return variant % 2 == 1 ? Json(42) : Json(0);
  return variant % 2 == 1 ? Json(-7) : Json(0);
}

std::string endian_name(codec::Endian e) { return e == codec::Endian::little ? "le" : "be"; }

TEST(InteropZarritaReads, DataTypesByteOrdersCompressorsChecksums) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-dtypes");
  const std::vector<std::pair<std::string, std::optional<codec::Any>>> compressors = {
      {"raw", std::nullopt},
      {"gzip", codec::Gzip{.level = 5}},
      {"zstd", codec::Zstd{.level = 3, .checksum = false}},
      {"zstd_ck", codec::Zstd{.level = 1, .checksum = true}},
      {"blosc", codec::Blosc{}},  // lz4, shuffle resolved from the data type
  };
  std::vector<Case> cases;
  int salt = 0;
  for (const auto& dt : kZarritaTypes) {
    for (auto endian : {codec::Endian::little, codec::Endian::big}) {
      for (const auto& [cname, comp] : compressors) {
        for (bool crc : {false, true}) {
          ++salt;
          Case c{.path = "m/" + dt.name() + "_" + endian_name(endian) + "_" + cname + (crc ? "_crc32c" : ""),
                 .spec = {.shape = {7, 5},
                          .chunks = {3, 2},
                          .dtype = dt,
                          .fill_value = fill_for(dt, salt),
                          .compressor = comp,
                          .crc32c = crc,
                          .endian = endian},
                 .salt = salt};
          if (dt == DataType::bool_t && endian == codec::Endian::big) c.zarrita_misreads = kBoolBigEndianBug;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases)), 11u * 2 * 5 * 2);
}

TEST(InteropZarritaReads, BloscCompressorsAndShuffles) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-blosc");
  using S = codec::Blosc::Shuffle;
  const std::vector<std::pair<std::string, S>> shuffles = {
      {"noshuffle", S::NoShuffle}, {"shuffle", S::Shuffle}, {"bitshuffle", S::BitShuffle}, {"auto", S::Auto}};
  const std::vector<DataType> types = {DataType::uint8,   DataType::int16, DataType::int32, DataType::float32,
                                       DataType::float64, DataType::int64, DataType::bool_t};
  std::vector<Case> cases;
  int salt = 0;
  for (std::string cname : {"lz4", "lz4hc", "zstd", "blosclz", "zlib"}) {
    for (const auto& [sname, shuffle] : shuffles) {
      for (const auto& dt : types) {
        ++salt;
        // 64x8 chunks: big enough that blosc compresses (and shuffles) rather than copies.
        const auto endian = salt % 2 ? codec::Endian::big : codec::Endian::little;
        Case c{.path = "b/" + cname + "_" + sname + "_" + endian_name(endian) + "_" + dt.name(),
               .spec = {.shape = {130, 9},
                        .chunks = {64, 8},
                        .dtype = dt,
                        .compressor = codec::Blosc{.cname = cname, .clevel = 1 + salt % 9, .shuffle = shuffle},
                        .crc32c = salt % 3 == 0,
                        .endian = endian},
               .salt = salt};
        if (dt == DataType::bool_t && endian == codec::Endian::big) c.zarrita_misreads = kBoolBigEndianBug;
        cases.push_back(std::move(c));
      }
    }
  }
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases)), 5u * 4 * 7);
}

TEST(InteropZarritaReads, Transpose) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-transpose");
  struct Geometry {
    Shape shape, chunks;
    std::vector<std::int64_t> order;
  };
  const std::vector<Geometry> geometries = {
      {{7, 5}, {3, 2}, {1, 0}},          {{5, 4, 3}, {2, 3, 2}, {2, 0, 1}},          {{5, 4, 3}, {2, 3, 2}, {1, 2, 0}},
      {{5, 4, 3}, {4, 4, 3}, {0, 2, 1}}, {{3, 4, 2, 5}, {2, 3, 2, 2}, {3, 1, 0, 2}},
  };
  std::vector<Case> cases;
  int salt = 0;
  for (std::size_t g = 0; g < geometries.size(); ++g) {
    for (const auto& dt : kZarritaTypes) {
      ++salt;
      const auto endian = salt % 2 ? codec::Endian::big : codec::Endian::little;
      std::vector<codec::Any> pipeline = {codec::Transpose{geometries[g].order}, codec::BytesCodec{endian}};
      if (salt % 3 == 1) pipeline.push_back(codec::Zstd{.level = 2});
      if (salt % 3 == 2) pipeline.push_back(codec::Gzip{.level = 1});
      if (salt % 4 == 0) pipeline.push_back(codec::Crc32c{});
      std::string order;
      for (auto o : geometries[g].order) order += std::to_string(o);
      Case c{.path = "t/o" + order + "_g" + std::to_string(g) + "_" + dt.name(),
             .spec = {.shape = geometries[g].shape,
                      .chunks = geometries[g].chunks,
                      .dtype = dt,
                      .fill_value = fill_for(dt, salt),
                      .codecs = pipeline},
             .salt = salt};
      if (dt == DataType::bool_t && endian == codec::Endian::big) c.zarrita_misreads = kBoolBigEndianBug;
      cases.push_back(std::move(c));
    }
  }
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases)), 5u * 11);
}

TEST(InteropZarritaReads, Sharding) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-sharding");
  using Loc = codec::Sharding::IndexLocation;
  const std::vector<std::pair<std::string, std::vector<codec::Any>>> index_pipelines = {
      {"ixcrc", {codec::BytesCodec{}, codec::Crc32c{}}},
      {"ix", {codec::BytesCodec{}}},
      {"ixbe", {codec::BytesCodec{codec::Endian::big}, codec::Crc32c{}}},
  };
  const std::vector<std::pair<std::string, std::vector<codec::Any>>> inner_pipelines = {
      {"bytes", {codec::BytesCodec{}}},
      {"zstd", {codec::BytesCodec{}, codec::Zstd{.level = 3}}},
      {"gzipcrc", {codec::BytesCodec{codec::Endian::big}, codec::Gzip{.level = 6}, codec::Crc32c{}}},
      {"tblosc", {codec::Transpose{{1, 0}}, codec::BytesCodec{}, codec::Blosc{.cname = "zstd"}}},
  };
  // 10x9 in 4x6 shards of 2x3 inner chunks: partial shards and partial inner chunks at the edges.
  // "partial" writes two boxes only: some inner chunks and one whole shard stay empty.
  const std::vector<Box> partial = {{{0, 3}, {0, 4}}, {{8, 10}, {6, 9}}};
  std::vector<Case> cases;
  int salt = 0;
  for (auto loc : {Loc::end, Loc::start}) {
    for (const auto& [iname, ix] : index_pipelines) {
      for (const auto& [cname, inner] : inner_pipelines) {
        for (bool part : {false, true}) {
          ++salt;
          const DataType dt = kZarritaTypes[static_cast<std::size_t>(salt) % kZarritaTypes.size()];
          auto sh = std::make_shared<codec::Sharding>(
              codec::Sharding{.chunk_shape = {2, 3}, .codecs = inner, .index_codecs = ix, .index_location = loc});
          Case c{.path = std::string("s/") + (loc == Loc::end ? "end" : "start") + "_" + iname + "_" + cname +
                         (part ? "_partial_" : "_full_") + dt.name(),
                 .spec = {.shape = {10, 9},
                          .chunks = {4, 6},
                          .dtype = dt,
                          .fill_value = fill_for(dt, salt),
                          .codecs = std::vector<codec::Any>{sh}},
                 .salt = salt,
                 .regions = part ? partial : std::vector<Box>{}};
          if (loc == Loc::start)
            c.zarrita_misreads = kIndexAtStartBug;
          else if (dt == DataType::bool_t && cname == "gzipcrc")  // inner bytes codec is big-endian
            c.zarrita_misreads = kBoolBigEndianBug;
          cases.push_back(std::move(c));
        }
      }
    }
  }
  // The shorthand (.shards) and other ranks.
  cases.push_back({.path = "s/shorthand_1d",
                   .spec = {.shape = {29},
                            .chunks = {3},
                            .dtype = DataType::int16,
                            .compressor = codec::Zstd{},
                            .crc32c = true,
                            .shards = Shape{9}},
                   .salt = 1,
                   .regions = {{{0, 10}}, {{20, 22}}}});
  cases.push_back({.path = "s/shorthand_3d",
                   .spec = {.shape = {5, 6, 7},
                            .chunks = {2, 2, 3},
                            .dtype = DataType::float64,
                            .fill_value = Json("NaN"),
                            .compressor = codec::Gzip{},
                            .shards = Shape{4, 4, 6}},
                   .salt = 2});
  cases.push_back({.path = "s/shorthand_4d",
                   .spec = {.shape = {3, 4, 5, 2},
                            .chunks = {1, 2, 2, 2},
                            .dtype = DataType::uint32,
                            .shards = Shape{2, 4, 4, 2},
                            .endian = codec::Endian::big},
                   .salt = 3,
                   .regions = {{{0, 1}, {0, 4}, {0, 5}, {0, 2}}}});
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases)), 2u * 3 * 4 * 2 + 3);
}

TEST(InteropZarritaReads, ChunkKeyEncodingsAndShapes) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-keys");
  struct Geometry {
    std::string name;
    Shape shape, chunks;
  };
  const std::vector<Geometry> geometries = {
      {"0d", {}, {}},
      {"1d", {13}, {4}},
      {"2d", {7, 5}, {3, 2}},
      {"3d", {5, 4, 3}, {2, 3, 2}},
      {"4d", {3, 4, 2, 5}, {2, 3, 2, 2}},
      {"chunk_bigger_than_shape", {3, 4}, {8, 8}},
      {"unit_dims", {1, 6, 1}, {1, 4, 1}},
      {"long_1d", {1000}, {7}},
  };
  const std::vector<std::pair<std::string, ChunkKeyEncoding>> encodings = {
      {"default_slash", ChunkKeyEncoding::default_('/')},
      {"default_dot", ChunkKeyEncoding::default_('.')},
      {"v2_dot", ChunkKeyEncoding::v2('.')},
      {"v2_slash", ChunkKeyEncoding::v2('/')},
  };
  std::vector<Case> cases;
  int salt = 0;
  for (const auto& [ename, enc] : encodings) {
    for (const auto& g : geometries) {
      ++salt;
      const DataType dt = kZarritaTypes[static_cast<std::size_t>(salt * 5) % kZarritaTypes.size()];
      cases.push_back({.path = "k/" + ename + "_" + g.name + "_" + dt.name(),
                       .spec = {.shape = g.shape,
                                .chunks = g.chunks,
                                .dtype = dt,
                                .fill_value = fill_for(dt, salt),
                                .compressor = salt % 2 ? std::optional<codec::Any>(codec::Zstd{}) : std::nullopt,
                                .chunk_key_encoding = enc},
                       .salt = salt});
    }
  }
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases)), 4u * 8);
}

// Zarr v2 arrays converted to v3 in place (no chunk rewritten): zarrita reads the result.
TEST(InteropZarritaReads, ZarrV2ArraysConvertedInPlace) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-converted");
  std::vector<Case> cases;
  int salt = 0;
  const std::vector<std::pair<std::string, std::optional<codec::Any>>> compressors = {
      {"none", std::nullopt},
      {"zstd", codec::Zstd{.level = 2}},
      {"gzip", codec::Gzip{.level = 4}},
      {"blosc", codec::Blosc{.cname = "lz4", .clevel = 5, .shuffle = codec::Blosc::Shuffle::Shuffle}}};
  for (const auto& [cname, comp] : compressors) {
    for (const char sep : {'.', '/'}) {
      for (const bool f_order : {false, true}) {
        ++salt;
        const DataType dt = kZarritaTypes[static_cast<std::size_t>(salt * 3) % kZarritaTypes.size()];
        ArraySpec spec{.shape = {9, 7},
                       .chunks = {4, 3},
                       .dtype = dt,
                       .fill_value = fill_for(dt, salt),
                       .chunk_key_encoding = ChunkKeyEncoding::v2(sep),
                       .zarr_format = 2};
        std::vector<codec::Any> codecs;
        if (f_order) codecs.push_back(codec::Transpose{{1, 0}});
        codecs.push_back(codec::BytesCodec{});
        if (comp) codecs.push_back(*comp);
        spec.codecs = codecs;
        cases.push_back({.path = std::string("v2/") + cname + (sep == '.' ? "_dot" : "_slash") +
                                 (f_order ? "_F_" : "_C_") + dt.name(),
                         .spec = spec,
                         .salt = salt,
                         .regions = salt % 3 ? std::vector<Box>{} : std::vector<Box>{{{0, 5}, {0, 7}}}});
      }
    }
  }
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases),
                                [](const StorePtr& store) {
                                  std::map<std::string, Bytes> chunks;
                                  for (const auto& k : store->list_prefix("v2/"))
                                    if (k.find("/.z") == std::string::npos) chunks[k] = *store->get(k);
                                  ASSERT_FALSE(chunks.empty());
                                  const auto rep = convert_to_v3(store, "v2");
                                  EXPECT_EQ(rep.nodes, 4 * 2 * 2 + 1);
                                  for (const auto& [k, b] : chunks)
                                    EXPECT_EQ(store->get(k), b) << k << " was rewritten";
                                  EXPECT_TRUE(store->exists("v2/zarr.json"));
                                  EXPECT_FALSE(store->exists("v2/.zgroup"));
                                }),
            4u * 2 * 2);
}

TEST(InteropZarritaReads, FillValuesAndMissingChunks) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-fill");
  std::vector<Case> cases;
  int salt = 0;
  for (const auto& dt : kZarritaTypes) {
    for (int variant : {1, 2, 3}) {
      ++salt;
      Json fill = fill_for(dt, variant);
      if (variant == 3 && dt.name().starts_with("int")) fill = Json(-1);
      if (variant == 3 && dt == DataType::uint64) fill = Json(std::uint64_t{9007199254740991});  // 2^53 - 1
      // Only rows 0..3 and a corner are written: the chunks in between are never stored.
      cases.push_back({.path = "f/" + dt.name() + "_v" + std::to_string(variant),
                       .spec = {.shape = {11, 7},
                                .chunks = {3, 3},
                                .dtype = dt,
                                .fill_value = fill,
                                .compressor = variant == 2 ? std::optional<codec::Any>(codec::Gzip{}) : std::nullopt},
                       .salt = salt,
                       .regions = {{{0, 4}, {0, 7}}, {{9, 11}, {5, 7}}}});
    }
  }
  // Nothing written at all.
  cases.push_back(
      {.path = "f/empty_float64",
       .spec = {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::float64, .fill_value = Json("Infinity")},
       .regions = {{{0, 0}, {0, 0}}}});
  EXPECT_EQ(check_zarrita_reads(dir.path(), std::move(cases)), 11u * 3 + 1);
}

TEST(InteropZarritaReads, GroupsAndAttributes) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-groups");
  auto store = FileStore::open(dir.path());
  const Json root_attrs = {{"title", "written by zarrpp"},
                           {"version", 3},
                           {"pi", 3.141592653589793},
                           {"nested", {{"list", {1, 2.5, "x", nullptr, true}}, {"empty", Json::object()}}}};
  const Json g_attrs = {{"unicode", "ünïcødé ✓"}, {"big", 9007199254740991LL}, {"neg", -1.5e300}};
  const Json arr_attrs = {{"units", "m"}, {"scale", {0.5, 2}}};
  Group::create(store, "", root_attrs);
  Group::create(store, "g", g_attrs);
  Group::create(store, "g/h", Json::object());
  Group::create(store, "g/h/i", Json{{"depth", 3}});
  Array a = Array::create(store, "g/h/arr",
                          {.shape = {4, 6},
                           .chunks = {4, 4},
                           .dtype = DataType::float64,
                           .dimension_names = std::vector<std::optional<std::string>>{"y", "x"},
                           .attributes = arr_attrs});
  a.write({}, make_values(DataType::float64, {4, 6}, 3));
  const std::map<std::string, std::pair<std::string, Json>> nodes = {{"", {"group", root_attrs}},
                                                                     {"g", {"group", g_attrs}},
                                                                     {"g/h", {"group", Json::object()}},
                                                                     {"g/h/i", {"group", Json{{"depth", 3}}}},
                                                                     {"g/h/arr", {"array", arr_attrs}}};
  std::vector<std::string> paths;
  for (const auto& [p, _] : nodes) paths.push_back(p);
  const auto results = zarrita_read(dir.path(), paths, /*attrs=*/true);
  for (const auto& [p, want] : nodes) {
    auto it = results.find(p);
    if (it == results.end()) continue;
    ASSERT_FALSE(it->second.contains("error")) << p << ": " << it->second["error"];
    EXPECT_EQ(it->second["kind"], want.first) << p;
    EXPECT_EQ(it->second["attributes"], PlainJson::parse(want.second.dump())) << p;
  }
  // And the array's values, with its dimension names in zarr.json.
  const auto data = zarrita_read(dir.path(), {"g/h/arr"});
  ASSERT_EQ(data.count("g/h/arr"), 1u);
  EXPECT_EQ(compare(make_values(DataType::float64, {4, 6}, 3), data.at("g/h/arr")["data"]).mismatches, 0);
}

TEST(InteropZarritaReads, DataTypesZarritaCannotRead) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("a-unreadable");
  auto store = FileStore::open(dir.path());
  // zarrita 0.7.5 maps float16 to globalThis.Float16Array, which Node 20 does not have, and has
  // no complex types: it refuses these (rather than misreading them).
  const std::map<std::string, DataType> types = {
      {"float16", DataType::float16_t}, {"complex64", DataType::complex64}, {"complex128", DataType::complex128}};
  std::vector<std::string> paths;
  for (const auto& [name, dt] : types) {
    Array z = Array::create(store, name, {.shape = {4}, .chunks = {2}, .dtype = dt});
    z.write({}, NDArray(dt, {4}));
    paths.push_back(name);
  }
  const auto results = zarrita_read(dir.path(), paths);
  for (const auto& [name, dt] : types) {
    auto it = results.find(name);
    if (it == results.end()) continue;
    ASSERT_TRUE(it->second.contains("error"))
        << name << ": zarrita now reads " << name << "; add it to kZarritaTypes: " << it->second.dump().substr(0, 300);
    EXPECT_NE(it->second["error"].get<std::string>().find("Unknown or unsupported dataType: " + name),
              std::string::npos)
        << it->second["error"];
  }
}

// ---- (b) zarrita writes, zarrpp reads --------------------------------------------------------

TEST(InteropZarrppReads, EverythingZarritaWrites) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("b-zarrita-wrote");
  const RunResult w =
      run("node " + quote((kInteropDir / "write_with_zarrita.mjs").string()) + " " + quote(dir.path().string()));
  ASSERT_EQ(w.exit_code, 0) << "write_with_zarrita.mjs failed:\n" << w.out << w.err;
  const PlainJson expected = PlainJson::parse(slurp(dir.path() / "expected.json"));
  auto store = FileStore::open(dir.path());

  // What zarrita 0.7.5 cannot write (its own errors); a newer zarrita that writes more gets
  // tested automatically, but this list (and the README) should then be updated.
  std::set<std::string> unsupported;
  for (const auto& [k, _] : expected["unsupported"].items()) unsupported.insert(k);
  EXPECT_EQ(unsupported, (std::set<std::string>{"crc32c", "float16", "gzip", "sharding_indexed"}))
      << expected["unsupported"].dump(1);
  // Arrays zarrita writes but does not read back itself: bool with "endian": "big".
  std::set<std::string> bugs;
  for (const auto& [k, _] : expected["zarrita_bugs"].items()) bugs.insert(k);
  EXPECT_EQ(bugs, (std::set<std::string>{"dtypes_be/bool"})) << expected["zarrita_bugs"].dump(1);

  std::size_t checked = 0;
  for (const auto& [path, a] : expected["arrays"].items()) {
    SCOPED_TRACE(path);
    const DataType dt = DataType::parse(a["dtype"].get<std::string>());
    const Shape shape = a["shape"].get<Shape>();
    if (!a["spec_valid"].get<bool>()) continue;  // checked below
    try {
      Array z = Array::open(store, path);
      EXPECT_EQ(z.dtype(), dt) << path;
      EXPECT_EQ(z.shape(), shape) << path;
      EXPECT_EQ(z.chunks(), a["chunks"].get<Shape>()) << path;
      const NDArray got = z.read();
      const Comparison cmp = compare(got, a["data"]);
      EXPECT_EQ(cmp.mismatches, 0) << path << ": " << cmp.mismatches << " of " << got.size()
                                   << " elements differ; first (zarrpp's value is 'expected'): " << cmp.first;
      ++checked;
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << ": zarrpp failed: " << e.what();
    }
  }
  EXPECT_GE(checked, 100u);
  std::printf("zarrpp read %zu arrays written by zarrita %s\n", checked,
              expected["zarrita_version"].get<std::string>().c_str());

  // Attributes of groups and arrays.
  for (const auto& [path, g] : expected["groups"].items()) {
    try {
      EXPECT_EQ(PlainJson::parse(Group::open(store, path).attributes().dump()), g["attributes"]) << path;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "group '" << path << "': zarrpp failed: " << e.what();
    }
  }
  for (const auto& [path, attrs] : expected["array_attributes"].items()) {
    EXPECT_EQ(PlainJson::parse(Array::open(store, path).attributes().dump()), attrs) << path;
  }
  {
    const auto meta = Array::open(store, "shapes/deeper/with_attrs").metadata();
    ASSERT_TRUE(meta.dimension_names.has_value());
    EXPECT_EQ(*meta.dimension_names, (std::vector<std::optional<std::string>>{"y", "x"}));
  }

  // zarrita's defaults break the v3 spec; zarrpp refuses them, naming the field.
  for (const auto& [path, field] :
       std::map<std::string, std::string>{{"defaults/no_codecs", "codecs"}, {"defaults/null_fill", "fill_value"}}) {
    ASSERT_TRUE(expected["arrays"].contains(path));
    try {
      Array z = Array::open(store, path);
      ADD_FAILURE() << path << ": zarrpp opened zarrita's non-conforming " << field << " (shape "
                    << shape_str(z.shape()) << ")";
    } catch (const MetadataError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
      std::printf("zarrpp refuses zarrita's %s: %s\n", path.c_str(), e.what());
    }
  }
}

// ---- (c) an array grown at the front --------------------------------------------------------

TEST(InteropZarritaReads, PrependedArrayIsMisreadNotRefused) {
  REQUIRE_INTEROP_ENV();
  TempDir dir("c-prepend");
  auto store = FileStore::open(dir.path());
  // 4x3 in 2x3 chunks, values 10*row + col (rows 0..3); then 3 rows 100+... in front.
  Array z =
      Array::create(store, "p", {.shape = {4, 3}, .chunks = {2, 3}, .dtype = DataType::int32, .fill_value = Json(-1)});
  std::vector<std::int32_t> orig, front;
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 3; ++c) orig.push_back(10 * r + c);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) front.push_back(100 + 10 * r + c);
  z.write({}, NDArray::from_vector<std::int32_t>({4, 3}, orig));
  z.prepend(NDArray::from_vector<std::int32_t>({3, 3}, front), 0);

  // What zarrpp sees: 7 rows, the new ones first, in the domain [-3, 4).
  ASSERT_EQ(z.domain(), (Domain{{-3, 4}, {0, 3}}));
  std::vector<std::int32_t> all = front;
  all.insert(all.end(), orig.begin(), orig.end());
  EXPECT_EQ(Array::open(store, "p").read().to_vector<std::int32_t>(), all);
  const PlainJson meta = PlainJson::parse(slurp(dir.path() / "p" / "zarr.json"));
  ASSERT_EQ(meta["chunk_grid"]["name"], "regular_bounded");
  EXPECT_EQ(meta["chunk_grid"]["configuration"]["lower_bound"], PlainJson({-3, 0}));
  EXPECT_TRUE(fs::exists(dir.path() / "p" / "c" / "-1" / "0"));
  EXPECT_TRUE(fs::exists(dir.path() / "p" / "c" / "-2" / "0"));

  // What zarrita 0.7.5 sees: it does not check chunk_grid.name, takes chunk_shape as a regular
  // grid's and reads chunks 0..3 from index 0. So it does NOT refuse the array; it returns the
  // same 7x3 shape, with the 4 original rows on top (chunks c/0/0 and c/1/0), then 3 rows of
  // the fill value (chunks c/2/0 and c/3/0 do not exist), and never reads the prepended rows
  // (chunks c/-1/0 and c/-2/0).
  const auto results = zarrita_read(dir.path(), {"p"});
  ASSERT_EQ(results.count("p"), 1u);
  const PlainJson& r = results.at("p");
  ASSERT_FALSE(r.contains("error")) << "zarrita now refuses the regular_bounded grid: " << r.at("error");
  EXPECT_EQ(r.at("shape"), PlainJson({7, 3}));
  EXPECT_EQ(r.at("chunks"), PlainJson({2, 3}));
  std::vector<std::int32_t> zarrita_sees = orig;
  for (int i = 0; i < 9; ++i) zarrita_sees.push_back(-1);
  EXPECT_EQ(r.at("data").get<std::vector<std::int32_t>>(), zarrita_sees);
  EXPECT_NE(r.at("data").get<std::vector<std::int32_t>>(), all);
}

}  // namespace
