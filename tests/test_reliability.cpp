// Reliability under faults and concurrency (docs/reliability.md records the counts).
//  - Long random sequences of every kind of operation on memory and file stores whose operations
//    fail at random (and, on the file store, leave torn temp files behind, as a crash would).
//    After every fault: reopen; the domain is the old or the new one; every element matches the
//    model; nothing stale or orphaned is visible; the array keeps going.
//  - Threads and processes writing disjoint regions and growing one array at both ends while
//    readers check that they never see a torn chunk or an element outside its domain.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <thread>

#include "../src/core/retry.hpp"
#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;
using ref::DomainModel;

namespace {

// Fails each operation (but locks) with probability p; on a failing set() into a FileStore it
// first leaves a torn temp file beside the key, as a process dying mid-write would.
class RandomFaultStore : public StoreWrapper {
 public:
  RandomFaultStore(StorePtr inner, double p, unsigned seed, std::filesystem::path file_root = {})
      : StoreWrapper(std::move(inner)), p_(p), rng_(seed), root_(std::move(file_root)) {}
  std::int64_t faults = 0, operations = 0;
  bool armed = true;
  std::string describe() const override { return "random-faults(" + inner()->describe() + ")"; }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& k, const ByteRange& r, std::uint64_t max_bytes) override {
    step("get", k);
    return StoreWrapper::do_get(k, r, max_bytes);
  }
  bool do_get_streamed(const std::string& k, const ByteRange& r, std::size_t piece, const PieceSink& sink) override {
    step("get_streamed", k);
    return StoreWrapper::do_get_streamed(k, r, piece, sink);
  }
  void do_set(const std::string& k, const Bytes& v) override {
    if (fire()) {
      if (!root_.empty()) {  // a torn temp file, never renamed into place
        const auto p = root_ / k;
        std::filesystem::create_directories(p.parent_path());
        std::ofstream(p.parent_path() / (".zarrpp-tmp-torn-" + std::to_string(faults) + "-" + p.filename().string()))
            .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() / 2));
      }
      throw StoreError("injected fault (set '" + k + "')");
    }
    StoreWrapper::do_set(k, v);
  }
  bool do_set_if(const std::string& k, const Bytes& v, const std::optional<Version>& e) override {
    step("set_if", k);
    return StoreWrapper::do_set_if(k, v, e);
  }
  void do_erase(const std::string& k) override {
    step("erase", k);
    StoreWrapper::do_erase(k);
  }
  void do_erase_prefix(const std::string& k) override {
    step("erase_prefix", k);
    StoreWrapper::do_erase_prefix(k);
  }
  std::optional<std::uint64_t> do_size(const std::string& k) override {
    step("size", k);
    return StoreWrapper::do_size(k);
  }
  std::vector<std::string> do_list_prefix(const std::string& k) override {
    step("list_prefix", k);
    return StoreWrapper::do_list_prefix(k);
  }
  DirListing do_list_dir(const std::string& k) override {
    step("list_dir", k);
    return StoreWrapper::do_list_dir(k);
  }

 private:
  bool fire() {
    ++operations;
    if (!armed || std::uniform_real_distribution<double>(0, 1)(rng_) >= p_) return false;
    ++faults;
    return true;
  }
  void step(const char* op, const std::string& k) {
    if (fire()) throw StoreError(std::string("injected fault (") + op + " '" + k + "')");
  }
  double p_;
  std::mt19937 rng_;
  std::filesystem::path root_;
};

struct Counts {
  std::int64_t sequences = 0, operations = 0, faults = 0, store_ops = 0;
};

NDArray values(const Shape& s, std::mt19937& rng) {
  NDArray a(DataType::int32, s);
  for (std::int64_t i = 0; i < a.size(); ++i) a.data<std::int32_t>()[i] = static_cast<std::int32_t>(rng() % 1000);
  return a;
}

// Checks the reopened array against the model; where an interrupted write may have landed in
// some chunks and not others, `loose` elements may hold either value and are re-synced.
void check(const Array& z, DomainModel& m, const std::map<std::vector<std::int64_t>, std::int32_t>& loose) {
  ASSERT_EQ(z.domain(), m.dom);
  const auto got = z.read().to_vector<std::int32_t>();
  const auto want = m.expected();
  ASSERT_EQ(got.size(), want.size());
  std::vector<std::int64_t> x(m.dom.size());
  for (std::size_t d = 0; d < x.size(); ++d) x[d] = m.dom[d].inclusive_min;
  for (std::size_t k = 0; k < got.size(); ++k) {
    if (got[k] != want[k]) {
      auto it = loose.find(x);
      ASSERT_TRUE(it != loose.end() && it->second == got[k])
          << "element " << k << " at coordinate (" << x[0] << ", " << (x.size() > 1 ? x[1] : 0) << "): got " << got[k]
          << ", want " << want[k];
      m.values[x] = got[k];
    }
    for (std::size_t d = x.size(); d-- > 0;) {
      if (++x[d] < m.dom[d].exclusive_max) break;
      x[d] = m.dom[d].inclusive_min;
    }
  }
}

void run_sequences(bool file, int sequences, int ops_per_sequence, Counts& c) {
  std::mt19937 rng(file ? 1234 : 4321);
  for (int seq = 0; seq < sequences; ++seq) {
    ref::TempDir tmp("soak");
    const auto root = tmp.path();
    StorePtr base = file ? StorePtr(FileStore::open(root)) : StorePtr(MemoryStore::create());
    const bool sharded = rng() % 3 == 0;
    ArraySpec spec{.shape = {static_cast<std::int64_t>(rng() % 7), static_cast<std::int64_t>(1 + rng() % 6)},
                   .chunks = {static_cast<std::int64_t>(1 + rng() % 3), static_cast<std::int64_t>(1 + rng() % 3)},
                   .dtype = DataType::int32,
                   .fill_value = -1};
    if (sharded) spec.shards = Shape{spec.chunks[0] * 2, spec.chunks[1]};
    if (rng() % 2) spec.compressor = codec::Zstd{.level = 1};
    spec.crc32c = rng() % 2;
    Array::create(base, spec);
    auto faulty = std::make_shared<RandomFaultStore>(base, 0.03, static_cast<unsigned>(rng()),
                                                     file ? root : std::filesystem::path{});
    DomainModel m{Array::open(base).domain(), {}, -1};
    Json attrs = Json::object();
    ++c.sequences;
    for (int op = 0; op < ops_per_sequence; ++op) {
      ++c.operations;
      DomainModel next = m;
      Json next_attrs = attrs;
      std::map<std::vector<std::int64_t>, std::int32_t> loose;  // elements a failed write may have set
      const auto shape = m.shape();
      const int kind = static_cast<int>(rng() % 8);
      std::function<void(Array&)> run;
      if (kind == 0 || kind == 1) {  // prepend / append
        const std::size_t axis = rng() % 2;
        Shape s = shape;
        s[axis] = static_cast<std::int64_t>(rng() % 4);
        const auto data = values(s, rng);
        std::vector<std::int64_t> at = {next.dom[0].inclusive_min, next.dom[1].inclusive_min};
        if (kind == 0) {
          next.dom[axis].inclusive_min -= s[axis];
          at[axis] = next.dom[axis].inclusive_min;
          run = [data, axis](Array& z) { z.prepend(data, axis); };
        } else {
          at[axis] = next.dom[axis].exclusive_max;
          next.dom[axis].exclusive_max += s[axis];
          run = [data, axis](Array& z) { z.append(data, axis); };
        }
        next.put(at, data);
      } else if (kind == 2) {  // resize the domain at both ends
        Domain nd = next.dom;
        for (auto& d : nd) {
          d.inclusive_min += static_cast<std::int64_t>(rng() % 7) - 3;
          d.exclusive_max += static_cast<std::int64_t>(rng() % 7) - 3;
          if (d.exclusive_max < d.inclusive_min) d.exclusive_max = d.inclusive_min;
        }
        next.dom = nd;
        next.restrict_to_domain();
        run = [nd](Array& z) { z.resize_domain(nd); };
      } else if (kind == 3) {  // attributes
        next_attrs["k" + std::to_string(rng() % 3)] = static_cast<int>(rng() % 100);
        run = [next_attrs](Array& z) { z.set_attributes(next_attrs); };
      } else {  // writes of every selection type
        if (shape_size(shape) == 0) continue;
        Selection sel;
        std::vector<std::vector<std::int64_t>> idx(2);
        const int st = kind - 4;  // 0 basic, 1 orthogonal, 2 points, 3 mask
        if (st == 0 || st == 1) {
          for (std::size_t d = 0; d < 2; ++d) {
            if (st == 0) {
              const auto a = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(shape[d]));
              const auto b = a + 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(shape[d] - a));
              sel.push_back(slice(a, b));
              for (auto i = a; i < b; ++i) idx[d].push_back(i);
            } else {
              std::set<std::int64_t> pick;
              for (int k = 0; k < 3; ++k)
                pick.insert(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(shape[d])));
              idx[d].assign(pick.rbegin(), pick.rend());  // descending order
              sel.push_back(IndexArray(idx[d]));
            }
          }
          const auto data =
              values({static_cast<std::int64_t>(idx[0].size()), static_cast<std::int64_t>(idx[1].size())}, rng);
          for (std::size_t i = 0; i < idx[0].size(); ++i)
            for (std::size_t j = 0; j < idx[1].size(); ++j) {
              const std::vector<std::int64_t> x = {m.dom[0].inclusive_min + idx[0][i],
                                                   m.dom[1].inclusive_min + idx[1][j]};
              next.values[x] = loose[x] = data.data<std::int32_t>()[i * idx[1].size() + j];
            }
          run = [sel, data](Array& z) { z.write(sel, data); };
        } else {
          NDArray mask(DataType::bool_t, shape);
          Coordinates pts(2);
          for (std::int64_t i = 0; i < shape[0]; ++i)
            for (std::int64_t j = 0; j < shape[1]; ++j)
              if (rng() % 3 == 0) {
                mask.data<bool>()[i * shape[1] + j] = true;
                pts[0].push_back(i);
                pts[1].push_back(j);
              }
          const auto data = values({static_cast<std::int64_t>(pts[0].size())}, rng);
          for (std::size_t k = 0; k < pts[0].size(); ++k) {
            const std::vector<std::int64_t> x = {m.dom[0].inclusive_min + pts[0][k],
                                                 m.dom[1].inclusive_min + pts[1][k]};
            next.values[x] = loose[x] = data.data<std::int32_t>()[k];
          }
          if (st == 2)
            run = [pts, data](Array& z) { write_points(z, pts, data); };
          else
            run = [mask, data](Array& z) { write_mask(z, mask, data); };
        }
      }
      SCOPED_TRACE("sequence " + std::to_string(seq) + " op " + std::to_string(op) + " kind " + std::to_string(kind) +
                   (sharded ? " sharded" : "") + " shape " + shape_str(shape) + " chunks " + shape_str(spec.chunks));
      bool failed = false;
      try {
        auto z = Array::open(faulty);
        run(z);
      } catch (const StoreError& e) {
        failed = true;
        SCOPED_TRACE(std::string("fault: ") + e.what());
      }
      faulty->armed = false;
      if (std::getenv("ZARRPP_SOAK_DEBUG"))
        std::fprintf(stderr, "seq %d op %d kind %d failed %d dom [%lld,%lld)x[%lld,%lld) -> [%lld,%lld)x[%lld,%lld)\n",
                     seq, op, kind, failed, (long long)m.dom[0].inclusive_min, (long long)m.dom[0].exclusive_max,
                     (long long)m.dom[1].inclusive_min, (long long)m.dom[1].exclusive_max,
                     (long long)next.dom[0].inclusive_min, (long long)next.dom[0].exclusive_max,
                     (long long)next.dom[1].inclusive_min, (long long)next.dom[1].exclusive_max);
      auto re = Array::open(base);
      const bool is_write = kind >= 4;
      if (failed) {
        if (is_write) {
          check(re, m, loose);  // each chunk old or new
        } else if (re.domain() == next.dom && kind != 3) {
          m = next;
          check(re, m, {});
        } else if (kind == 3) {
          attrs = re.attributes() == next_attrs ? next_attrs : attrs;
          ASSERT_TRUE(re.attributes() == attrs);
          check(re, m, {});
        } else {
          check(re, m, {});  // the old domain, intact
        }
        // and the array keeps going: the same operation now succeeds
        run(re);
      }
      m = next;
      attrs = next_attrs;
      check(Array::open(base), m, {});
      ASSERT_EQ(Array::open(base).attributes(), attrs);
      if (file) {
        for (const auto& k : base->list_prefix(""))
          ASSERT_EQ(k.find(".zarrpp-tmp"), std::string::npos) << k;  // torn temp files stay invisible
      }
      faulty->armed = true;
      if (::testing::Test::HasFatalFailure()) return;
    }
    c.faults += faulty->faults;
    c.store_ops += faulty->operations;
    if (file) std::filesystem::remove_all(root);
  }
}

int env_int(const char* name, int def) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : def;
}
}  // namespace

TEST(Reliability, RandomFaultsOnMemoryAndFileStores) {
  const int seqs = env_int("ZARRPP_SOAK_SEQUENCES", 40), ops = env_int("ZARRPP_SOAK_OPS", 40);
  for (bool file : {false, true}) {
    Counts c;
    run_sequences(file, seqs, ops, c);
    if (HasFatalFailure()) return;
    std::printf("[soak] %s store: %lld sequences, %lld operations, %lld store operations, %lld injected faults\n",
                file ? "file" : "memory", static_cast<long long>(c.sequences), static_cast<long long>(c.operations),
                static_cast<long long>(c.store_ops), static_cast<long long>(c.faults));
    EXPECT_GT(c.faults, 0);
  }
}

TEST(Reliability, WritersGrowersAndReadersAtOnce) {
  ref::TempDir tmp("load");
  const auto root = tmp.path();
  // 8 column blocks of width 4; writers own a block each and rewrite it; growers add rows.
  constexpr int kWriters = 4, kWidth = 4;
  Array::create(FileStore::open(root), {.shape = {8, kWriters * kWidth},
                                        .chunks = {3, 4},
                                        .dtype = DataType::int32,
                                        .fill_value = -1,
                                        .compressor = codec::Zstd{.level = 1}});
  std::atomic<bool> stop{false};
  std::atomic<int> bad{0}, reads{0};
  std::vector<std::thread> ts;
  // Every row of every block holds (block * 100000 + version) in all its cells, or fill -1.
  for (int w = 0; w < kWriters; ++w)
    ts.emplace_back([&, w] {
      auto z = Array::open(FileStore::open(root));
      for (int v = 1; !stop; ++v) {
        z.refresh();
        const auto rows = z.shape()[0];
        z.write({slice(0, rows), slice(w * kWidth, (w + 1) * kWidth)}, NDArray::full<std::int32_t>({}, w * 100000 + v));
      }
    });
  for (int g = 0; g < 2; ++g)
    ts.emplace_back([&, g] {
      auto z = Array::open(FileStore::open(root));
      for (int i = 0; i < 15 && !stop; ++i) {
        const auto row = NDArray::full<std::int32_t>({1, kWriters * kWidth}, -1);
        if (g == 0)
          z.prepend(row, 0);
        else
          z.append(row, 0);
      }
    });
  for (int r = 0; r < 2; ++r)
    ts.emplace_back([&] {
      auto z = Array::open(FileStore::open(root));
      while (!stop) {
        z.refresh();
        const auto a = z.read();
        ++reads;
        // A cell is -1 or a writer's value for its own block; a row of a block is never mixed
        // within one chunk (chunks are 3x4, aligned with the blocks).
        const auto n = a.shape()[0];
        for (std::int64_t i = 0; i < n; ++i)
          for (int w = 0; w < kWriters; ++w) {
            const auto* p = a.data<std::int32_t>() + i * kWriters * kWidth + w * kWidth;
            for (int k = 0; k < kWidth; ++k) {
              if (p[k] != -1 && p[k] / 100000 != w) ++bad;
              if (p[k] != p[0]) ++bad;  // torn chunk
            }
          }
      }
    });
  std::this_thread::sleep_for(std::chrono::seconds(3));
  stop = true;
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
  EXPECT_GT(reads.load(), 0);
  auto z = Array::open(FileStore::open(root));
  EXPECT_EQ(z.shape()[0], 8 + 30);  // no growth lost
  EXPECT_EQ(z.domain()[0].inclusive_min, -15);
}

TEST(Reliability, EightProcessesGrowAndWriteWithoutLosingAnything) {
  ref::TempDir tmp("procs8");
  const auto root = tmp.path();
  constexpr int kProcs = 8, kEach = 6;
  Array::create(FileStore::open(root),
                {.shape = {0, kProcs}, .chunks = {2, 1}, .dtype = DataType::int32, .fill_value = -1});
  EXPECT_EQ(ref::run_in_processes(kProcs,
                                  [&](int p) {
                                    auto z = Array::open(FileStore::open(root));
                                    for (int i = 0; i < kEach; ++i) {
                                      NDArray row = NDArray::full<std::int32_t>({1, kProcs}, -1);
                                      row.data<std::int32_t>()[p] =
                                          p * 1000 + i;  // each process owns a column of its rows
                                      if (p % 2)
                                        z.append(row, 0);
                                      else
                                        z.prepend(row, 0);
                                    }
                                  }),
            0);
  auto z = Array::open(FileStore::open(root));
  ASSERT_EQ(z.shape()[0], kProcs * kEach);
  const auto a = z.read();
  std::multiset<std::int32_t> seen;
  for (std::int64_t i = 0; i < a.shape()[0]; ++i) {
    int owners = 0;
    for (int p = 0; p < kProcs; ++p) {
      const auto v = a.data<std::int32_t>()[i * kProcs + p];
      if (v != -1) {
        ++owners;
        seen.insert(v);
      }
    }
    EXPECT_EQ(owners, 1) << "row " << i;
  }
  std::multiset<std::int32_t> expect;
  for (int p = 0; p < kProcs; ++p)
    for (int i = 0; i < kEach; ++i) expect.insert(p * 1000 + i);
  EXPECT_EQ(seen, expect);
}

TEST(Reliability, HostileSizesAreRefusedWithoutLargeAllocations) {
  auto store = MemoryStore::create();
  // metadata claiming huge sizes: a 2^62-element chunk
  const std::string huge = R"({"zarr_format":3,"node_type":"array","shape":[4611686018427387904],"data_type":"uint8",
    "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4611686018427387904]}},
    "chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]})";
  store->set("zarr.json", Bytes(huge.begin(), huge.end()));
  auto z = Array::open(store);  // opening is fine: nothing is allocated
  EXPECT_EQ(z.read({slice(0, 2)}).to_vector<std::uint8_t>(),
            (std::vector<std::uint8_t>{0, 0}));  // missing: fill, no chunk buffer
  try {
    z.write_scalar<std::uint8_t>({0}, 1);
    ADD_FAILURE();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("4 GiB"), std::string::npos) << e.what();
  }
  store->set("c/0", Bytes(16, 1));  // a stored chunk of that array: refused before decoding
  EXPECT_THROW(z.read({slice(0, 2)}), Error);
  // products that overflow int64
  const std::string overflow =
      R"({"zarr_format":3,"node_type":"array","shape":[4294967296,4294967296],"data_type":"uint8",
    "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[1,1]}},
    "chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[{"name":"bytes"}]})";
  store->set("zarr.json", Bytes(overflow.begin(), overflow.end()));
  EXPECT_THROW(Array::open(store), MetadataError);
  EXPECT_THROW(Array::create(store, "x", {.shape = {std::int64_t{1} << 40, std::int64_t{1} << 40}, .chunks = {1, 1}}),
               MetadataError);
}

// The one retry policy every retry loop uses: attempts, deadline, delays within their bounds.
TEST(Reliability, TheRetryPolicyBoundsAttemptsDeadlineAndDelays) {
  using namespace std::chrono;
  using Clock = steady_clock;
  detail::Retry three({.initial_delay = microseconds(100),
                       .max_delay = microseconds(400),
                       .deadline = milliseconds(0),
                       .max_attempts = 3});
  EXPECT_EQ(three.attempts(), 1);
  EXPECT_TRUE(three.next());
  EXPECT_TRUE(three.next());
  EXPECT_EQ(three.attempts(), 3);
  EXPECT_TRUE(three.exhausted());
  EXPECT_FALSE(three.next());
  EXPECT_EQ(three.attempts(), 3);
  // A wait is at least half its delay, and a server's "at least" never exceeds max_delay.
  detail::Retry capped({.initial_delay = milliseconds(20), .max_delay = milliseconds(40), .deadline = milliseconds(0)});
  auto t0 = Clock::now();
  EXPECT_TRUE(capped.next(seconds(30)));
  const auto waited = Clock::now() - t0;
  EXPECT_GE(waited, milliseconds(20));
  EXPECT_LT(waited, seconds(5));
  // The deadline: no new attempt once it has passed; progress restarts it.
  detail::Retry timed({.initial_delay = milliseconds(5), .max_delay = milliseconds(5), .deadline = milliseconds(30)});
  int n = 0;
  t0 = Clock::now();
  while (timed.next()) ++n;
  EXPECT_GE(Clock::now() - t0, milliseconds(30));
  EXPECT_GE(n, 2);
  EXPECT_TRUE(timed.deadline_passed());
  timed.progress();
  EXPECT_FALSE(timed.deadline_passed());
  // A cap lowers the delays from then on.
  detail::Retry slow({.initial_delay = seconds(10), .max_delay = seconds(10), .deadline = milliseconds(0)});
  slow.cap_delay(milliseconds(2));
  t0 = Clock::now();
  EXPECT_TRUE(slow.next());
  EXPECT_LT(Clock::now() - t0, seconds(1));
  // The swap policy gives up after a minute, with waits of at most 50 ms.
  EXPECT_EQ(detail::kSwapRetry.deadline, seconds(60));
  EXPECT_EQ(detail::kSwapRetry.max_delay, milliseconds(50));
}
