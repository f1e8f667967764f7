// The headline: prepend, append and resize at both ends on the regular_bounded grid, with no
// stale data, crash safety and concurrent growers.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <map>
#include <set>
#include <thread>

#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;
using K = StoreOp::Kind;

using ref::DomainModel;

namespace {
Bytes get(const StorePtr& s, const std::string& k) { return *s->get(k); }

void check_against(const Array& z, const DomainModel& m) {
  RC_ASSERT(z.domain() == m.dom);
  RC_ASSERT(z.read().to_vector<std::int32_t>() == m.expected());
}
}  // namespace

TEST(Growth, TheUpstreamExampleHoldsExactly) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  const Bytes c00 = get(store, "c/0/0"), c10 = get(store, "c/1/0");
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 0);
  EXPECT_EQ(z.shape(), (Shape{9, 4}));
  EXPECT_EQ(z.domain(), (Domain{{-3, 6}, {0, 4}}));
  EXPECT_EQ(store->list_prefix("c/"), (std::vector<std::string>{"c/-1/0", "c/0/0", "c/1/0"}));
  EXPECT_EQ(get(store, "c/0/0"), c00);
  EXPECT_EQ(get(store, "c/1/0"), c10);
  const auto reopened = Array::open(store);
  const auto g = reopened.metadata().chunk_grid;
  EXPECT_EQ(g.name(), "regular_bounded");
  EXPECT_EQ(g.origin, (Shape{0, 0}));
  EXPECT_EQ(g.lower_bound, (Shape{-3, 0}));
  std::vector<std::int32_t> expect(12, 2);
  expect.resize(36, 1);
  EXPECT_EQ(Array::open(store).read().to_vector<std::int32_t>(), expect);
  // c/-1/0 has buffer offset 1: row 0 of the chunk is the fill value, rows 1-3 hold the 2s
  std::vector<std::int32_t> chunk(16);
  const Bytes raw = get(store, "c/-1/0");
  std::memcpy(chunk.data(), raw.data(), 64);
  EXPECT_EQ(chunk, (std::vector<std::int32_t>{0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}));
}

TEST(Growth, PrependTouchesOnlyNewChunksThePartlyFilledFirstChunkAndMetadata) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {10, 6},
                               .chunks = {4, 3},
                               .dtype = DataType::int32,
                               .lower_bound = Shape{-2, 0},
                               .origin = Shape{0, 0}});
  z.fill<std::int32_t>(1);  // first chunk row -1 covers coordinates [-4, 0): partly filled
  const auto old_keys = mem->list_prefix("c/");
  rec->clear();
  z.prepend(NDArray::full<std::int32_t>({7, 6}, 2), 0);  // new domain starts at -9
  std::set<std::string> touched;
  for (const auto& op : rec->ops())
    if (op.kind == K::Get || op.kind == K::Set || op.kind == K::Erase || op.kind == K::SetIf) touched.insert(op.key);
  // chunk rows -3 (coords -12..-9, partly), -2 (-8..-5), and -1 (old partly filled); never rows 0..1
  for (const auto& k : touched) {
    EXPECT_TRUE(k == "zarr.json" || k.rfind("c/-3/", 0) == 0 || k.rfind("c/-2/", 0) == 0 || k.rfind("c/-1/", 0) == 0)
        << k;
  }
  EXPECT_TRUE(touched.count("zarr.json"));
  EXPECT_EQ(z.domain(), (Domain{{-9, 8}, {0, 6}}));
  DomainModel m{z.domain(), {}, 0};
  m.put({-9, 0}, NDArray::full<std::int32_t>({7, 6}, 2));
  m.put({-2, 0}, NDArray::full<std::int32_t>({10, 6}, 1));
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), m.expected());
}

TEST(Growth, PrependOnAnAlignedArrayNeverReadsOldChunks) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {8, 8}, .chunks = {4, 4}, .dtype = DataType::uint8});
  z.fill<std::uint8_t>(9);
  rec->clear();
  z.prepend(NDArray::full<std::uint8_t>({8, 8}, 3), 0);  // two whole chunk rows in front
  for (const auto& op : rec->ops()) {
    if (op.kind == K::Get || op.kind == K::Set || op.kind == K::Erase) {
      EXPECT_TRUE(op.key == "zarr.json" || op.key.rfind("c/-", 0) == 0) << to_string(op.kind) << " " << op.key;
      if (op.kind == K::Get) {
        EXPECT_EQ(op.key, "zarr.json");
      }
    }
  }
  EXPECT_EQ(mem->list_prefix("c/").size(), 8u);
}

TEST(Growth, AppendResizeAndDomainsAtBothEnds) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {5}, .chunks = {3}, .dtype = DataType::int32, .fill_value = -1});
  z.write({}, NDArray::from_vector<std::int32_t>({5}, {0, 1, 2, 3, 4}));
  z.append(NDArray::from_vector<std::int32_t>({2}, {5, 6}));
  EXPECT_EQ(z.metadata().chunk_grid.name(), "regular");  // append keeps a regular grid
  z.prepend(NDArray::from_vector<std::int32_t>({1}, {-7}));
  EXPECT_EQ(z.domain(), (Domain{{-1, 7}}));
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{-7, 0, 1, 2, 3, 4, 5, 6}));
  z.resize_domain({{1, 4}});  // shrink at both ends
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2, 3}));
  EXPECT_EQ(z.stored_chunk_keys(), (std::vector<std::string>{"c/0", "c/1"}));
  EXPECT_EQ(store->list_prefix("c/"), (std::vector<std::string>{"c/0", "c/1"}));  // c/-1 and c/2 deleted
  z.resize_domain({{-2, 6}});  // grow again at both ends: no stale data
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{-1, -1, -1, 1, 2, 3, -1, -1}));
  z.resize({3});
  EXPECT_EQ(z.domain(), (Domain{{-2, 1}}));
  z.resize({10});
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{-1, -1, -1, -1, -1, -1, -1, -1, -1, -1}));
  EXPECT_EQ(Array::open(store).read(), z.read());
}

TEST(Growth, CreateWithADomainAndSwitchWithoutGrowing) {
  auto store = MemoryStore::create();
  auto z = Array::create(
      store, "d", {.shape = {11, 5}, .chunks = {3, 2}, .dtype = DataType::int16, .lower_bound = Shape{-100, 40}});
  EXPECT_EQ(z.metadata().chunk_grid.origin, (Shape{-100, 40}));  // origin defaults to the lower bound
  EXPECT_EQ(z.domain(), (Domain{{-100, -89}, {40, 45}}));
  z.fill<std::int16_t>(3);
  EXPECT_EQ(z.stored_chunk_keys().front(), "d/c/0/0");
  auto r = Array::create(store, "r", {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int32});
  r.fill<std::int32_t>(8);
  const Bytes c00 = get(store, "r/c/0/0");
  r.convert_to_regular_bounded();
  EXPECT_EQ(Array::open(store, "r").metadata().chunk_grid.name(), "regular_bounded");
  EXPECT_EQ(r.domain(), (Domain{{0, 4}, {0, 4}}));
  EXPECT_EQ(get(store, "r/c/0/0"), c00);
  EXPECT_EQ(Array::open(store, "r").read().to_vector<std::int32_t>(), std::vector<std::int32_t>(16, 8));
}

TEST(Growth, BadInputChangesNothing) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  const auto snapshot = mem->list_prefix("");
  const Bytes meta = get(mem, "zarr.json");
  rec->clear();
  auto err = [&](const std::function<void()>& f) { return zarrpp::test::catch_error(f).what; };
  EXPECT_NE(err([&] { z.prepend(NDArray::full<std::int32_t>({3, 5}, 2), 0); }).find("dimension 1"), std::string::npos);
  EXPECT_NE(err([&] { z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 2); }).find("axis 2"), std::string::npos);
  EXPECT_NE(err([&] { z.append(NDArray::full<double>({3, 4}, 2), 0); }).find("data type"), std::string::npos);
  EXPECT_NE(err([&] { z.append(NDArray::full<std::int32_t>({3}, 2), 0); }).find("dimensions"), std::string::npos);
  EXPECT_NE(err([&] { z.resize({-1, 4}); }).find("shape[0]"), std::string::npos);
  EXPECT_NE(err([&] { z.resize({1}); }).find("dimensions"), std::string::npos);
  EXPECT_NE(err([&] { z.resize_domain({{3, 2}, {0, 4}}); }).find("inclusive_min"), std::string::npos);
  EXPECT_NE(err([&] { z.resize_domain({{-(std::int64_t{1} << 53), 6}, {0, 4}}); }).find("2^53"), std::string::npos);
  EXPECT_NE(err([&] { z.resize_domain({{INT64_MIN, 6}, {0, 4}}); }).find("overflow"), std::string::npos);
  EXPECT_EQ(get(mem, "zarr.json"), meta);
  EXPECT_EQ(mem->list_prefix(""), snapshot);
  for (const auto& op : rec->ops()) EXPECT_TRUE(op.kind != K::Set && op.kind != K::Erase && op.kind != K::SetIf);
}

TEST(Growth, NoStaleDataAfterShrinkThenGrowEvenWhenCleanupIsInterrupted) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {10}, .chunks = {4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(5);
  // A prepend that dies at its metadata step leaves orphan chunk data outside the domain.
  std::shared_ptr<RecordingStore> done;  // a copy the prepend completed on
  auto ops_before_cas = [&](const std::function<void(StorePtr)>& op) {
    auto rec = done = std::make_shared<RecordingStore>(MemoryStore::create());
    for (const auto& k : mem->list_prefix("")) rec->set(k, get(mem, k));
    rec->clear();
    op(rec);
    std::int64_t n = 0;
    for (const auto& o : rec->ops()) {
      if (o.kind == K::SetIf && o.key == "zarr.json") return n;
      if (o.kind != K::Lock) ++n;
    }
    return n;
  };
  const auto n = ops_before_cas([](StorePtr s) { Array::open(s).prepend(NDArray::full<std::int32_t>({6}, 7)); });
  auto faulty = std::make_shared<FaultyStore>(mem, n);
  // One that fails there (and can read back that its switch did not happen) removes them itself...
  test::expect_throw_with<StoreError>([&] { Array::open(faulty).prepend(NDArray::full<std::int32_t>({6}, 7)); },
                                      {"not applied; the array is unchanged", "removed"});
  EXPECT_FALSE(mem->exists("c/-1"));
  // ...so the leftovers of one killed there are made here, from the copy it completed on.
  for (const auto& k : done->list_prefix("c/-")) mem->set(k, get(done, k));
  EXPECT_TRUE(mem->exists("c/-1"));  // orphan data, outside the domain
  EXPECT_EQ(Array::open(mem).domain(), (Domain{{0, 10}}));
  auto z2 = Array::open(mem);
  z2.resize_domain({{-8, 10}});
  EXPECT_EQ(z2.read().to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5}));
  // shrink inside a chunk, then grow again: the old elements must not come back
  z2.resize({12});  // domain [-8, 4)
  z2.resize({18});
  EXPECT_EQ(z2.read().to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0, 0, 0, 0, 0, 0, 0, 0, 5, 5, 5, 5, 0, 0, 0, 0, 0, 0}));
}

TEST(Growth, HugeGrowthVisitsOnlyStoredChunks) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {10}, .chunks = {4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  rec->clear();
  z.resize_domain({{-(std::int64_t{1} << 50), std::int64_t{1} << 50}});
  EXPECT_LT(rec->ops().size(), 50u);
  EXPECT_EQ(z.read({slice(std::int64_t{1} << 50, (std::int64_t{1} << 50) + 12)}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}));
  z.resize_domain({{0, 10}});
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), std::vector<std::int32_t>(10, 1));
}

namespace {
// (offset, nbytes) of each inner chunk of a shard whose index (bytes + crc32c) is at the end.
std::vector<std::pair<std::uint64_t, std::uint64_t>> shard_entries(const Bytes& shard, std::size_t n) {
  std::vector<std::uint64_t> raw(2 * n);
  std::memcpy(raw.data(), shard.data() + shard.size() - (16 * n + 4), 16 * n);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  for (std::size_t i = 0; i < n; ++i) out.emplace_back(raw[2 * i], raw[2 * i + 1]);
  return out;
}
Bytes inner_bytes(const Bytes& shard, std::pair<std::uint64_t, std::uint64_t> e) {
  return Bytes(shard.begin() + static_cast<std::ptrdiff_t>(e.first),
               shard.begin() + static_cast<std::ptrdiff_t>(e.first + e.second));
}
}  // namespace

TEST(Growth, ShardedPrependsKeepExistingInnerChunks) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {8, 4},
                               .chunks = {2, 4},
                               .dtype = DataType::uint16,
                               .compressor = codec::Gzip{.level = 1},
                               .shards = Shape{8, 4}});
  NDArray v(DataType::uint16, {8, 4});
  for (std::int64_t i = 0; i < v.size(); ++i) v.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(i + 1);
  z.write({}, v);
  const Bytes s0 = get(mem, "c/0/0");
  // 1. by part of a shard: 3 rows -> new shard c/-1/0 holds coordinates [-8, 0), rows -3..-1 set
  z.prepend(NDArray::full<std::uint16_t>({3, 4}, 100), 0);
  EXPECT_EQ(get(mem, "c/0/0"), s0);
  const Bytes sm1 = get(mem, "c/-1/0");
  auto e = shard_entries(sm1, 4);
  EXPECT_EQ(e[0].first, ~std::uint64_t{0});  // inner chunk [-8,-6) holds no in-domain element: empty
  EXPECT_EQ(e[1].first, ~std::uint64_t{0});  // [-6,-4) also outside the domain [-3, 8)
  EXPECT_NE(e[2].first, ~std::uint64_t{0});
  // 2. across the partly filled first shard: 4 more rows -> domain [-7, 8); inner chunk 3
  //    ([-2, 0)) is untouched and keeps its encoded bytes, inner chunk 2 ([-4,-2)) is rewritten
  const Bytes inner3 = inner_bytes(sm1, e[3]);
  z.prepend(NDArray::full<std::uint16_t>({4, 4}, 200), 0);
  const Bytes sm1b = get(mem, "c/-1/0");
  const auto e2 = shard_entries(sm1b, 4);
  EXPECT_EQ(inner_bytes(sm1b, e2[3]), inner3);
  EXPECT_NE(e2[0].first, ~std::uint64_t{0});  // [-8,-6) now holds coordinate -7
  EXPECT_EQ(get(mem, "c/0/0"), s0);
  // 3. by whole shards: 9 rows -> domain [-16, 8): shard c/-2/0 is new and whole
  z.prepend(NDArray::full<std::uint16_t>({9, 4}, 300), 0);
  EXPECT_EQ(get(mem, "c/0/0"), s0);
  EXPECT_EQ(z.domain(), (Domain{{-16, 8}, {0, 4}}));
  std::vector<std::uint16_t> expect;
  for (int i = 0; i < 9; ++i) expect.insert(expect.end(), 4, 300);
  for (int i = 0; i < 4; ++i) expect.insert(expect.end(), 4, 200);
  for (int i = 0; i < 3; ++i) expect.insert(expect.end(), 4, 100);
  for (int i = 0; i < 32; ++i) expect.push_back(static_cast<std::uint16_t>(i + 1));
  EXPECT_EQ(Array::open(mem).read().to_vector<std::uint16_t>(), expect);
}

// ---- random sequences against a model of the domain ---------------------------------------------

RC_GTEST_PROP(Growth, RandomSequencesMatchTheModel, ()) {
  auto l = ref::gen_layout(2, 6);
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, ref::spec_of(l));
  DomainModel m{z.domain(), {}, l.fill};
  const int steps = *rc::gen::inRange(1, 8);
  for (int step = 0; step < steps; ++step) {
    const auto rank = m.dom.size();
    const int op = *rc::gen::inRange(0, 5);
    if (op == 0 || op == 1) {  // prepend / append
      const auto axis = *rc::gen::inRange<std::size_t>(0, rank);
      Shape s = m.shape();
      s[axis] = *rc::gen::inRange<std::int64_t>(0, 6);
      const auto data = ref::random_values(s);
      std::vector<std::int64_t> at(rank);
      for (std::size_t d = 0; d < rank; ++d) at[d] = m.dom[d].inclusive_min;
      if (op == 0) {
        z.prepend(data, axis);
        m.dom[axis].inclusive_min -= s[axis];
        at[axis] = m.dom[axis].inclusive_min;
      } else {
        z.append(data, axis);
        at[axis] = m.dom[axis].exclusive_max;
        m.dom[axis].exclusive_max += s[axis];
      }
      m.put(at, data);
    } else if (op == 2 || op == 3) {  // resize the domain, shrinking or growing at either end
      Domain nd = m.dom;
      for (auto& d : nd) {
        d.inclusive_min += *rc::gen::inRange<std::int64_t>(-5, 4);
        d.exclusive_max += *rc::gen::inRange<std::int64_t>(-4, 6);
        if (d.exclusive_max < d.inclusive_min) d.exclusive_max = d.inclusive_min;
      }
      if (op == 2) {
        z.resize_domain(nd);
      } else {
        Shape s;
        for (std::size_t d = 0; d < rank; ++d) {
          s.push_back(nd[d].exclusive_max - m.dom[d].inclusive_min);
          if (s.back() < 0) s.back() = 0;
          nd[d] = {m.dom[d].inclusive_min, m.dom[d].inclusive_min + s.back()};
        }
        z.resize(s);
      }
      m.dom = nd;
      m.restrict_to_domain();
    } else {  // a write of a random box
      const Shape s = m.shape();
      if (shape_size(s) == 0) continue;
      Selection sel;
      std::vector<std::int64_t> at(rank);
      Shape bs(rank);
      for (std::size_t d = 0; d < rank; ++d) {
        const auto a = *rc::gen::inRange<std::int64_t>(0, s[d]);
        const auto b = *rc::gen::inRange<std::int64_t>(a, s[d] + 1);
        sel.push_back(slice(a, b));
        at[d] = m.dom[d].inclusive_min + a;
        bs[d] = b - a;
      }
      const auto data = ref::random_values(bs);
      z.write(sel, data);
      m.put(at, data);
    }
    check_against(z, m);
  }
  check_against(Array::open(mem), m);
  // A regular copy holds the same elements from index 0, whatever the domain and origin.
  auto copy = copy_array(z, MemoryStore::create(), "", with_chunk_grid(z.metadata(), "regular"));
  RC_ASSERT(copy.metadata().chunk_grid.name() == "regular");
  RC_ASSERT(copy.shape() == m.shape());
  RC_ASSERT(copy.read().to_vector<std::int32_t>() == m.expected());
}

// Growth in front undone (the domain starts at 0 again, chunk 0 too) writes `regular` again, which
// every reader reads; an array given its domain at creation (origin = lower bound, not 0) keeps
// `regular_bounded`.
TEST(Growth, RolledBackGrowthIsRegularAgain) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "a", {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  const auto before = z.read();
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 2), 0);
  z.resize_domain({{0, 6}, {0, 4}});
  EXPECT_EQ(Array::open(store, "a").metadata().chunk_grid, ChunkGridMetadata::regular({4, 4}));
  EXPECT_EQ(Array::open(store, "a").read(), before);
  EXPECT_EQ(store->list_prefix("a/c/"), (std::vector<std::string>{"a/c/0/0", "a/c/1/0"}));
  z.prepend(NDArray::full<std::int32_t>({5, 4}, 2), 0);
  (void)z.expand_domain(0, -5);
  EXPECT_EQ(Array::open(store, "a").metadata().chunk_grid.name(), "regular");
  // Given a domain at creation (origin -4): starting at 0 does not make chunk 0 start there.
  auto d = Array::create(store, "d", {.shape = {6}, .chunks = {4}, .dtype = DataType::int32, .lower_bound = Shape{-4}});
  d.resize_domain({{0, 2}});
  EXPECT_EQ(Array::open(store, "d").metadata().chunk_grid.name(), "regular_bounded");
  // A bounded grid asked for by name, never moved, stays bounded through a resize at the end.
  auto b = Array::create(store, "b", {.shape = {6}, .chunks = {4}, .dtype = DataType::int32});
  b.convert_to_regular_bounded();
  b.resize({9});
  EXPECT_EQ(Array::open(store, "b").metadata().chunk_grid.name(), "regular_bounded");
}

// In place back to `regular`: zarr.json only, and only where no chunk would move.
TEST(Growth, ConvertToRegularMovesNoChunkOrRefuses) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(5);
  const Bytes c00 = get(store, "c/0/0");
  z.convert_to_regular();  // already regular: nothing changes
  z.convert_to_regular_bounded();
  z.convert_to_regular();
  EXPECT_EQ(Array::open(store).metadata().chunk_grid, ChunkGridMetadata::regular({4, 4}));
  EXPECT_EQ(get(store, "c/0/0"), c00);
  z.prepend(NDArray::full<std::int32_t>({2, 4}, 7), 0);
  const Bytes meta = get(store, "zarr.json");
  try {
    z.convert_to_regular();
    FAIL() << "switched a grid whose domain starts at -2";
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("its domain starts at (-2, 0) (lower_bound)"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--grid regular"), std::string::npos) << e.what();
  }
  EXPECT_EQ(get(store, "zarr.json"), meta);
  auto o = Array::create(
      MemoryStore::create(), "o",
      {.shape = {4}, .chunks = {4}, .dtype = DataType::int32, .lower_bound = Shape{0}, .origin = Shape{-1}});
  EXPECT_THROW(o.convert_to_regular(), ArgumentError);
  EXPECT_THROW((void)with_chunk_grid(z.metadata(), "rectilinear"), ArgumentError);
}

// A regular copy of a prepended array: index 0 is the first element, re-chunked from there
// (chunk boundaries move when the lower bound is not a multiple of the chunk), every format of
// element kept, sharded and variable-length too.
TEST(Growth, CopyIntoARegularGridStartsAtTheDomainsStart) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {6, 4}, .chunks = {4, 4}, .dtype = DataType::int32, .fill_value = -1});
  z.write({}, NDArray::from_vector<std::int32_t>({6, 4}, [] {
            std::vector<std::int32_t> v(24);
            for (int i = 0; i < 24; ++i) v[i] = i;
            return v;
          }()));
  z.prepend(NDArray::full<std::int32_t>({3, 4}, 100), 0);
  auto out = MemoryStore::create();
  auto c = copy_array(z, out, "", with_chunk_grid(z.metadata(), "regular"));
  EXPECT_EQ(c.metadata().chunk_grid, ChunkGridMetadata::regular({4, 4}));
  EXPECT_EQ(c.domain(), (Domain{{0, 9}, {0, 4}}));
  EXPECT_EQ(c.read(), z.read());
  EXPECT_EQ(out->list_prefix("c/"), (std::vector<std::string>{"c/0/0", "c/1/0", "c/2/0"}));
  // Without asking for a grid, the copy keeps the source's lower bound (and bounded grid).
  EXPECT_EQ(copy_array(z, MemoryStore::create(), "", z.metadata()).domain(), z.domain());
  // Sharded.
  auto s = Array::create(MemoryStore::create(), "s",
                         {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::int32, .shards = Shape{4, 4}});
  s.fill<std::int32_t>(3);
  s.prepend(NDArray::full<std::int32_t>({1, 8}, 4), 0);
  auto sc = copy_array(s, MemoryStore::create(), "s", with_chunk_grid(s.metadata(), "regular"));
  EXPECT_EQ(sc.metadata().chunk_grid.name(), "regular");
  EXPECT_EQ(sc.read(), s.read());
  // Strings.
  auto v = Array::create(MemoryStore::create(), "v", {.shape = {3}, .chunks = {2}, .dtype = DataType::string_t});
  write_vlen(v, {}, VlenValues{{3}, {"a", "b", "c"}});
  v.prepend(VlenValues{{1}, {"z"}});
  auto vc = copy_array(v, MemoryStore::create(), "v", with_chunk_grid(v.metadata(), "regular"));
  EXPECT_EQ(read_vlen(vc).values, (std::vector<std::string>{"z", "a", "b", "c"}));
}

// ---- faults at every store operation ------------------------------------------------------------

namespace {
struct GrowthOp {
  const char* name;
  std::function<void(Array&)> run;
  std::function<void(DomainModel&)> apply;
};

void fault_sweep(const ArraySpec& spec, const GrowthOp& op) {
  for (std::int64_t n = 0;; ++n) {
    auto mem = MemoryStore::create();
    auto z = Array::create(mem, spec);
    NDArray init(DataType::int32, z.shape());
    for (std::int64_t i = 0; i < init.size(); ++i) init.data<std::int32_t>()[i] = static_cast<std::int32_t>(i + 1);
    z.write({}, init);
    DomainModel old_m{z.domain(), {}, 0};
    std::vector<std::int64_t> at;
    for (const auto& d : old_m.dom) at.push_back(d.inclusive_min);
    old_m.put(at, init);
    DomainModel new_m = old_m;
    op.apply(new_m);
    auto faulty = std::make_shared<FaultyStore>(mem, n);
    bool failed = false;
    try {
      auto fz = Array::open(faulty);
      op.run(fz);
    } catch (const StoreError&) {
      failed = true;
    }
    auto re = Array::open(mem);
    const auto& m = re.domain() == new_m.dom ? new_m : old_m;
    ASSERT_TRUE(re.domain() == old_m.dom || re.domain() == new_m.dom) << op.name << " fault at " << n;
    ASSERT_EQ(re.read().to_vector<std::int32_t>(), m.expected()) << op.name << " fault at " << n;
    if (!failed) {
      ASSERT_EQ(re.domain(), new_m.dom) << op.name;
      break;  // the sweep passed every operation
    }
    // the array can keep going: the same operation now succeeds and gives the new state
    op.run(re);
    ASSERT_EQ(re.read().to_vector<std::int32_t>(), new_m.expected()) << op.name << " retry after fault at " << n;
    ASSERT_LT(n, 500);
  }
}
}  // namespace

TEST(Growth, FaultAtEveryStoreOperationLeavesOldOrNewState) {
  const ArraySpec plain{
      .shape = {7, 5}, .chunks = {3, 2}, .dtype = DataType::int32, .compressor = codec::Zstd{}, .crc32c = true};
  ArraySpec sharded{.shape = {7, 5}, .chunks = {2, 2}, .dtype = DataType::int32, .shards = Shape{4, 4}};
  for (const auto& spec : {plain, sharded}) {
    fault_sweep(spec, {"prepend", [](Array& z) { z.prepend(NDArray::full<std::int32_t>({4, 5}, -9), 0); },
                       [](DomainModel& m) {
                         m.dom[0].inclusive_min -= 4;
                         m.put({m.dom[0].inclusive_min, 0}, NDArray::full<std::int32_t>({4, 5}, -9));
                       }});
    fault_sweep(spec, {"append", [](Array& z) { z.append(NDArray::full<std::int32_t>({7, 3}, -8), 1); },
                       [](DomainModel& m) {
                         m.put({m.dom[0].inclusive_min, m.dom[1].exclusive_max},
                               NDArray::full<std::int32_t>({7, 3}, -8));
                         m.dom[1].exclusive_max += 3;
                       }});
    fault_sweep(spec, {"shrink", [](Array& z) { z.resize_domain({{2, 5}, {1, 4}}); },
                       [](DomainModel& m) {
                         m.dom = {{2, 5}, {1, 4}};
                         m.restrict_to_domain();
                       }});
    fault_sweep(spec, {"grow", [](Array& z) { z.resize_domain({{-3, 9}, {0, 8}}); },
                       [](DomainModel& m) { m.dom = {{-3, 9}, {0, 8}}; }});
    // Shrink one end while growing into a chunk that still holds old elements (rows 6 and 7-8
    // share a chunk): a fault before the switch must not have cleared row 6.
    fault_sweep(spec, {"shift", [](Array& z) { z.resize_domain({{7, 10}, {-1, 4}}); },
                       [](DomainModel& m) {
                         m.dom = {{7, 10}, {-1, 4}};
                         m.restrict_to_domain();
                       }});
  }
}

// ---- concurrent growers -------------------------------------------------------------------------

namespace {
// Every row of a (rows x 3) int32 array holds one value; returns the multiset of row values.
std::multiset<std::int32_t> row_values(const Array& z) {
  const auto v = z.read().to_vector<std::int32_t>();
  std::multiset<std::int32_t> out;
  for (std::size_t r = 0; r < v.size() / 3; ++r) {
    EXPECT_TRUE(v[3 * r] == v[3 * r + 1] && v[3 * r] == v[3 * r + 2]) << "torn row " << r;
    out.insert(v[3 * r]);
  }
  return out;
}
}  // namespace

TEST(Growth, TwoThreadsGrowingAtBothEndsLoseNothing) {
  for (int kind = 0; kind < 2; ++kind) {
    ref::TempDir tmp("threads");
    StorePtr store = kind == 0 ? StorePtr(MemoryStore::create()) : StorePtr(FileStore::open(tmp.path()));
    Array::create(store, {.shape = {0, 3}, .chunks = {4, 3}, .dtype = DataType::int32});
    constexpr int kEach = 15;
    auto worker = [&](int id) {
      auto z = Array::open(store);  // each thread its own handle with its own cached metadata
      for (int i = 0; i < kEach; ++i) {
        const auto v = NDArray::full<std::int32_t>({1, 3}, id * 1000 + i);
        if (id % 2 == 0)
          z.prepend(v, 0);
        else
          z.append(v, 0);
      }
    };
    std::thread a(worker, 0), b(worker, 1), c(worker, 2);
    a.join();
    b.join();
    c.join();
    const auto rows = row_values(Array::open(store));
    std::multiset<std::int32_t> expect;
    for (int id = 0; id < 3; ++id)
      for (int i = 0; i < kEach; ++i) expect.insert(id * 1000 + i);
    EXPECT_EQ(rows, expect) << (kind == 0 ? "memory" : "file");
  }
}

TEST(Growth, TwoProcessesGrowingTheSameArrayLoseNothing) {
  ref::TempDir tmp("procs");
  const auto root = tmp.path();
  Array::create(FileStore::open(root),
                {.shape = {0, 3}, .chunks = {3, 3}, .dtype = DataType::int32, .compressor = codec::Zstd{}});
  constexpr int kEach = 20;
  EXPECT_EQ(ref::run_in_processes(2,
                                  [&](int id) {
                                    auto z = Array::open(FileStore::open(root));
                                    for (int i = 0; i < kEach; ++i) {
                                      const auto v = NDArray::full<std::int32_t>({1, 3}, id * 1000 + i);
                                      if (id == 0)
                                        z.prepend(v, 0);
                                      else
                                        z.append(v, 0);
                                    }
                                  }),
            0);
  auto z = Array::open(FileStore::open(root));
  EXPECT_EQ(z.domain(), (Domain{{-kEach, kEach}, {0, 3}}));
  const auto v = z.read().to_vector<std::int32_t>();
  for (int i = 0; i < kEach; ++i) {
    EXPECT_EQ(v[static_cast<std::size_t>(3 * i)], kEach - 1 - i);       // prepends, newest first
    EXPECT_EQ(v[static_cast<std::size_t>(3 * (kEach + i))], 1000 + i);  // appends in order
  }
}

TEST(Growth, RegularBoundedWithZeroOriginReadsLikeRegular) {
  auto store = MemoryStore::create();
  auto r = Array::create(store, "r", {.shape = {7, 5}, .chunks = {3, 2}, .dtype = DataType::int32});
  auto b = Array::create(
      store, "b",
      {.shape = {7, 5}, .chunks = {3, 2}, .dtype = DataType::int32, .lower_bound = Shape{0, 0}, .origin = Shape{0, 0}});
  NDArray v(DataType::int32, {7, 5});
  for (std::int64_t i = 0; i < v.size(); ++i) v.data<std::int32_t>()[i] = static_cast<std::int32_t>(i);
  r.write({}, v);
  b.write({}, v);
  EXPECT_EQ(b.metadata().chunk_grid.name(), "regular_bounded");
  for (const auto& k : store->list_prefix("r/c/")) EXPECT_EQ(get(store, k), get(store, "b" + k.substr(1)));
  EXPECT_EQ(b.read(), r.read());
}

// A lease lost while the new data was being written (S3: not renewed in time, taken over) stops
// the growth before zarr.json changes: the array stays as it was.
TEST(Growth, ALockLostDuringTheDataWorkStopsBeforeTheSwitch) {
  struct LosingStore : RecordingStore {
    using RecordingStore::RecordingStore;
    std::atomic<bool> lost{false};
    struct Lease : StoreLock {
      std::unique_ptr<StoreLock> inner;
      const std::atomic<bool>* lost;
      void check() const override {
        if (*lost) throw ConflictError("the lock on 'zarr.json' was lost (test)");
      }
    };
    std::unique_ptr<StoreLock> do_lock(const std::string& key) override {
      auto l = std::make_unique<Lease>();
      l->inner = RecordingStore::do_lock(key);
      l->lost = &lost;
      return l;
    }
    void do_set(const std::string& key, const Bytes& value) override {
      RecordingStore::do_set(key, value);
      if (key.find("/c/") != std::string::npos) lost = true;  // lost while writing chunk data
    }
  };
  auto store = std::make_shared<LosingStore>(MemoryStore::create());
  auto z = Array::create(store, "a", {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int32});
  z.fill<std::int32_t>(5);
  const Bytes meta = *store->get("a/zarr.json");
  store->lost = false;
  try {
    z.prepend(NDArray::full<std::int32_t>({2, 4}, 9));
    ADD_FAILURE() << "no ConflictError";
  } catch (const ConflictError& e) {
    EXPECT_NE(std::string(e.what()).find("was lost"), std::string::npos) << e.what();
  }
  EXPECT_EQ(*store->get("a/zarr.json"), meta);
  auto fresh = Array::open(store, "a");
  EXPECT_EQ(fresh.domain(), (Domain{{0, 4}, {0, 4}}));
  EXPECT_EQ(fresh.read(), NDArray::full<std::int32_t>({4, 4}, 5));
  // Metadata-only changes take no lock at all.
  store->clear();
  z.update_attributes({{"k", 1}});
  EXPECT_EQ(fresh.attributes().size(), 0u);
  fresh.refresh();
  EXPECT_EQ(fresh.attributes()["k"], 1);
}

namespace {
// A writer of attributes that takes no lock (another program) slips in before this process's
// first swap of zarr.json: the swap is lost once, and the change is computed again.
class AttributeWriterBeforeFirstSwap : public StoreWrapper {
 public:
  using StoreWrapper::StoreWrapper;
  std::string describe() const override { return "racing(" + inner()->describe() + ")"; }
  int lost = 0;

 protected:
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override {
    if (key == "zarr.json" && lost == 0) {
      ++lost;
      auto old = inner()->get("zarr.json");
      Json now = Json::parse(std::string(old->begin(), old->end()));
      now["attributes"]["by"] = "someone else";
      const std::string text = now.dump();
      inner()->set("zarr.json", Bytes(text.begin(), text.end()));
    }
    return StoreWrapper::do_set_if(key, value, expected);
  }
};
}  // namespace

TEST(Growth, ASwapLostToAnAttributeWriterWritesEachNewChunkOnce) {
  for (const bool front : {true, false}) {
    auto mem = MemoryStore::create();
    auto racing = std::make_shared<AttributeWriterBeforeFirstSwap>(mem);
    auto rec = std::make_shared<RecordingStore>(racing);
    auto z = Array::create(rec, {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int32});
    z.fill<std::int32_t>(1);
    rec->clear();
    const auto data = NDArray::full<std::int32_t>({4, 4}, 7);
    if (front)
      z.prepend(data.view());
    else
      z.append(data.view());
    EXPECT_EQ(racing->lost, 1);
    std::map<std::string, int> writes;
    for (const auto& k : rec->keys({K::Set, K::SetIf})) ++writes[k];
    EXPECT_EQ(writes["zarr.json"], 2) << "one lost swap, one that took";
    int chunks = 0;
    for (const auto& [key, n] : writes) {
      if (key == "zarr.json") continue;
      ++chunks;
      EXPECT_EQ(n, 1) << key << " written " << n << " times";
    }
    EXPECT_EQ(chunks, 4);
    // The other writer's attribute survives, and the growth is in place once.
    const auto reopened = Array::open(mem);
    EXPECT_EQ(reopened.attributes()["by"], "someone else");
    EXPECT_EQ(reopened.shape(), (Shape{8, 4}));
    std::vector<std::int32_t> expect(16, front ? 7 : 1);
    expect.resize(32, front ? 1 : 7);
    EXPECT_EQ(reopened.read().to_vector<std::int32_t>(), expect);
  }
}
