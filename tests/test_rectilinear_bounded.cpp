// The rectilinear_bounded chunk grid (docs/extensions/rectilinear_bounded): a rectilinear grid
// whose first listed chunk has an index and a start, so growth in front adds one chunk of exactly
// the data's extent and touches no existing chunk; metadata accepted and refused, growth with
// chunk_size, shrinking, sharding, switching grids in place, and random growth against a model.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <set>

#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;
using K = StoreOp::Kind;
using Sizes = std::vector<std::vector<std::int64_t>>;

namespace {

Json json_of(const Bytes& b) { return Json::parse(std::string(b.begin(), b.end())); }

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }

// The chunk grid as stored (the arrays here sit at the store's root).
Json grid_json(const Array& z) { return json_of(*z.store()->get("zarr.json"))["chunk_grid"]; }

std::set<std::string> touched(const RecordingStore& rec) {
  std::set<std::string> out;
  for (const auto& op : rec.ops())
    if (op.kind == K::Get || op.kind == K::Set || op.kind == K::Erase || op.kind == K::SetIf) out.insert(op.key);
  return out;
}

std::vector<std::int32_t> rows(std::int64_t n, std::int64_t width, std::int32_t first) {
  std::vector<std::int32_t> v;
  for (std::int64_t i = 0; i < n * width; ++i) v.push_back(first + static_cast<std::int32_t>(i));
  return v;
}

NDArray block(std::int64_t n, std::int64_t width, std::int32_t first) {
  NDArray a(DataType::int32, {n, width});
  const auto v = rows(n, width, first);
  std::memcpy(a.raw_data(), v.data(), v.size() * 4);
  return a;
}

Json array_doc(const Json& config, const Shape& shape) {
  Json j = Json::parse(R"({"zarr_format": 3, "node_type": "array", "data_type": "int32",
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})");
  j["shape"] = shape;
  j["chunk_grid"] = {{"name", "rectilinear_bounded"}, {"configuration", config}};
  return j;
}

std::string refusal(const Json& j) {
  try {
    (void)ArrayMetadata::from_json(j);
  } catch (const MetadataError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

// The issue's done-when: 7 rows in front of a 2-d array with one column of chunks write one new
// chunk and zarr.json; no existing chunk is read, written or deleted.
TEST(RectilinearBounded, PrependOfSevenRowsWritesOneChunkAndTheMetadata) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {30, 6}, .dtype = DataType::int32, .chunk_sizes = {{10, 20}, {6}}});
  z.write({}, block(30, 6, 0));
  const Bytes c0 = *mem->get("c/0/0"), c1 = *mem->get("c/1/0");
  rec->clear();
  z.prepend(block(7, 6, 1000), 0);
  const auto keys = touched(*rec);
  EXPECT_EQ(keys, (std::set<std::string>{"zarr.json", "c/-1/0"}));
  for (const auto& op : rec->ops())
    if (op.key == "c/-1/0") {
      EXPECT_NE(op.kind, K::Get) << "the new chunk is written whole, never read";
    }
  EXPECT_EQ(*mem->get("c/0/0"), c0);
  EXPECT_EQ(*mem->get("c/1/0"), c1);
  EXPECT_EQ(mem->get("c/-1/0")->size(), 7U * 6 * 4);  // exactly 7 rows
  EXPECT_EQ(z.domain(), (Domain{{-7, 30}, {0, 6}}));
  EXPECT_EQ(grid_json(z).dump(),
            R"({"name":"rectilinear_bounded","configuration":{"kind":"inline","chunk_shapes":[[7,10,20],[6]],)"
            R"("first_chunk":[-1,0],"origin":[-7,0],"lower_bound":[-7,0]}})");
  auto expect = rows(7, 6, 1000);
  const auto old = rows(30, 6, 0);
  expect.insert(expect.end(), old.begin(), old.end());
  EXPECT_EQ(Array::open(mem).read().to_vector<std::int32_t>(), expect);
  // and an append: one chunk of exactly its rows at the end
  rec->clear();
  z.append(block(3, 6, 2000), 0);
  EXPECT_EQ(touched(*rec), (std::set<std::string>{"zarr.json", "c/2/0"}));
  EXPECT_EQ(z.write_chunk_sizes()[0], (std::vector<std::int64_t>{7, 10, 20, 3}));
}

TEST(RectilinearBounded, ChunkSizeSplitsGrowthWithOnlyTheInnermostChunkSmaller) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {8}, .dtype = DataType::int32, .chunk_sizes = {{3, 5}}});
  z.fill<std::int32_t>(1);
  z.prepend(NDArray::full<std::int32_t>({25}, 2), 0, 10);
  EXPECT_EQ(z.write_chunk_sizes()[0], (std::vector<std::int64_t>{10, 10, 5, 3, 5}));
  z.append(NDArray::full<std::int32_t>({23}, 3), 0, 10);
  EXPECT_EQ(z.write_chunk_sizes()[0], (std::vector<std::int64_t>{10, 10, 5, 3, 5, 3, 10, 10}));
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[[10,2],5,3,5,3,[10,2]]]");
  EXPECT_EQ(grid_json(z)["configuration"]["first_chunk"].dump(), "[-3]");
  EXPECT_EQ(store->list_prefix("c/").size(), 8U);
  std::vector<std::int32_t> expect(25, 2);
  expect.resize(33, 1);
  expect.resize(56, 3);
  EXPECT_EQ(Array::open(store).read().to_vector<std::int32_t>(), expect);
  // growth by less than chunk_size is one chunk; a multiple of it has no smaller chunk
  z.prepend(NDArray::full<std::int32_t>({4}, 4), 0, 10);
  z.prepend(NDArray::full<std::int32_t>({20}, 5), 0, 10);
  EXPECT_EQ(z.write_chunk_sizes()[0].front(), 10);
  EXPECT_EQ(z.write_chunk_sizes()[0].size(), 11U);
}

TEST(RectilinearBounded, ShrinkingDropsChunksWhollyOutsideAndKeepsTheEdgeChunks) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {30}, .dtype = DataType::int32, .chunk_sizes = {{10, 20}}});
  z.fill<std::int32_t>(1);
  z.prepend(NDArray::full<std::int32_t>({6}, 2), 0);
  z.prepend(NDArray::full<std::int32_t>({4}, 3), 0);  // chunks c/-2 (4), c/-1 (6), c/0, c/1
  z.resize_domain({{-8, 25}});                        // c/-2 holds [-10,-6): partly inside, kept
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[4,6,10,20]]");
  z.resize_domain({{-3, 12}});  // c/-2 wholly outside (dropped), c/1 [10,30) partly
  EXPECT_EQ(grid_json(z)["configuration"].dump(),
            R"({"kind":"inline","chunk_shapes":[[6,10,20]],"first_chunk":[-1],"origin":[-6],"lower_bound":[-3]})");
  EXPECT_EQ(store->list_prefix("c/"), (std::vector<std::string>{"c/-1", "c/0", "c/1"}));
  z.resize_domain({{2, 5}});  // only c/0 holds the domain
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[10]]");
  EXPECT_EQ(store->list_prefix("c/"), (std::vector<std::string>{"c/0"}));
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 1, 1}));
  // growing back in front first fills the room in c/0 ([0, 2)), then one chunk for the rest
  z.prepend(NDArray::full<std::int32_t>({5}, 7), 0);
  EXPECT_EQ(z.write_chunk_sizes()[0], (std::vector<std::int64_t>{3, 5}));
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[3,10]]");
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{7, 7, 7, 7, 7, 1, 1, 1}));
  // an empty domain keeps one chunk, and growth from it works
  z.resize_domain({{0, 0}});
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[10]]");
  z.append(NDArray::full<std::int32_t>({12}, 8), 0);
  EXPECT_EQ(z.domain(), (Domain{{0, 12}}));
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), std::vector<std::int32_t>(12, 8));
}

// A domain moved clear of every listed chunk gets a list of its own (no chunk spans the gap), and
// growth without data never makes a chunk larger than the codecs decode.
TEST(RectilinearBounded, FarMovesAndHugeGrowthMakeNoHugeChunk) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {30, 4}, .dtype = DataType::int32, .chunk_sizes = {{10, 20}, {4}}});
  z.fill<std::int32_t>(1);
  z.resize_domain({{10'000'000, 10'000'002}, {0, 4}});
  EXPECT_EQ(grid_json(z)["configuration"].dump(),
            R"({"kind":"inline","chunk_shapes":[[2],[4]],"first_chunk":[2,0],"origin":[10000000,0],)"
            R"("lower_bound":[10000000,0]})");
  EXPECT_TRUE(store->list_prefix("c/").empty());
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), std::vector<std::int32_t>(8, 0));
  z.resize_domain({{-50, -45}, {0, 4}});  // and before it
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[5],[4]]");
  EXPECT_EQ(grid_json(z)["configuration"]["first_chunk"].dump(), "[1,0]");
  z.write_scalar<std::int32_t>({slice(0, 5)}, 3);
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), std::vector<std::int32_t>(20, 3));
  z.resize_domain({{7, 7}, {0, 4}});  // an empty domain far off: one chunk of 1
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[1],[4]]");
  // 2^31 rows of 4 int32 (32 GiB) in front: chunks of 2^28 rows (4 GiB each), the innermost less
  z.resize_domain({{0, 5}, {0, 4}});
  z.expand_domain(0, std::int64_t{1} << 31);
  const auto runs = z.metadata().chunk_grid.chunk_runs[0];
  ASSERT_GE(runs.size(), 2U);
  EXPECT_EQ(runs[0].size, std::int64_t{1} << 28);
  for (const auto& r : runs) EXPECT_LE(r.size * 16, std::int64_t{1} << 32);
  EXPECT_EQ(z.read({slice(0, 1)}).to_vector<std::int32_t>(), std::vector<std::int32_t>(4, 0));
}

TEST(RectilinearBounded, KeysStayWithinWhatJavaScriptHolds) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {4}, .dtype = DataType::int32, .chunk_sizes = {{1, 3}}});
  auto doc = json_of(*store->get("zarr.json"));
  doc["chunk_grid"] = Json::parse(R"({"name": "rectilinear_bounded", "configuration": {"kind": "inline",
    "chunk_shapes": [[1, 3]], "first_chunk": [9007199254740990], "origin": [0], "lower_bound": [0]}})");
  store->set("zarr.json", to_bytes(doc.dump()));
  z = Array::open(store);
  std::string why;
  try {
    z.append(NDArray::full<std::int32_t>({1}, 1), 0);
  } catch (const MetadataError& e) {
    why = e.what();
  }
  EXPECT_NE(why.find("the last listed chunk's index"), std::string::npos) << why;
  EXPECT_EQ(z.shape(), (Shape{4}));
}

TEST(RectilinearBounded, UndoingTheGrowthInFrontGoesBackToRectilinear) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {30}, .dtype = DataType::int32, .chunk_sizes = {{10, 20}}});
  z.prepend(NDArray::full<std::int32_t>({5}, 2), 0);
  EXPECT_EQ(z.metadata().chunk_grid.name(), "rectilinear_bounded");
  z.expand_domain(0, -5);
  EXPECT_EQ(z.metadata().chunk_grid.name(), "rectilinear");
  EXPECT_EQ(grid_json(z)["configuration"].dump(), R"({"kind":"inline","chunk_shapes":[[10,20]]})");
}

// Sharded: every shard holds whole inner chunks, so a prepend that is not a multiple of the inner
// chunk gets a shard rounded up in front, whose first inner chunk is partly filled; the next
// prepend fills that room before adding a shard.
TEST(RectilinearBounded, ShardedPrependRoundsTheNewShardUpAndFillsItsRoomNext) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z =
      Array::create(rec, {.shape = {16, 2}, .chunks = {4, 2}, .dtype = DataType::int32, .shard_sizes = {{8, 12}, {2}}});
  z.write({}, block(16, 2, 0));
  const Bytes s0 = *mem->get("c/0/0");
  rec->clear();
  z.prepend(block(7, 2, 100), 0);
  EXPECT_EQ(touched(*rec), (std::set<std::string>{"zarr.json", "c/-1/0"}));
  EXPECT_EQ(grid_json(z)["configuration"]["origin"].dump(), "[-8,0]");
  EXPECT_EQ(grid_json(z)["configuration"]["lower_bound"].dump(), "[-7,0]");
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[[8,2],12],[2]]");
  z.prepend(block(1, 2, 200), 0);  // the room: no new shard
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[[8,2],12],[2]]");
  z.prepend(block(5, 2, 300), 0, 4);  // chunk_size in whole inner chunks: 4 + a rounded-up 4
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[[4,2],[8,2],12],[2]]");
  EXPECT_EQ(grid_json(z)["configuration"]["lower_bound"].dump(), "[-13,0]");
  EXPECT_EQ(*mem->get("c/0/0"), s0);
  auto expect = rows(5, 2, 300);
  for (const auto& part : {rows(1, 2, 200), rows(7, 2, 100), rows(16, 2, 0)})
    expect.insert(expect.end(), part.begin(), part.end());
  EXPECT_EQ(Array::open(mem).read().to_vector<std::int32_t>(), expect);
  EXPECT_THROW(z.prepend(block(3, 2, 0), 0, 6), ArgumentError);  // not whole inner chunks
}

TEST(RectilinearBounded, GrowthAlongABareDimensionListsIt) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {20, 9}, .dtype = DataType::int32, .chunk_sizes = {{5, 15}, {4, 4, 4}}});
  // a bare size in the document: chunks of 4 along dimension 1
  auto doc = json_of(*store->get("zarr.json"));
  doc["chunk_grid"]["configuration"]["chunk_shapes"][1] = 4;
  store->set("zarr.json", to_bytes(doc.dump()));
  z = Array::open(store);
  z.fill<std::int32_t>(1);
  z.prepend(NDArray::full<std::int32_t>({20, 3}, 2), 1);
  EXPECT_EQ(grid_json(z)["configuration"].dump(),
            R"({"kind":"inline","chunk_shapes":[[5,15],[3,[4,3]]],"first_chunk":[0,-1],"origin":[0,-3],)"
            R"("lower_bound":[0,-3]})");
  EXPECT_EQ(z.read({slice(0, 1)}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1}));
}

TEST(RectilinearBounded, GridsSwitchInPlaceWithoutMovingAChunk) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {25, 4},
                                 .chunks = {10, 4},
                                 .dtype = DataType::int32,
                                 .lower_bound = Shape{-5, 0},
                                 .origin = Shape{0, 0}});
  z.write({}, block(25, 4, 0));
  const auto before = store->list_prefix("c/");
  z.convert_grid("rectilinear_bounded");
  EXPECT_EQ(grid_json(z)["configuration"].dump(),
            R"({"kind":"inline","chunk_shapes":[10,4],"first_chunk":[0,0],"origin":[0,0],"lower_bound":[-5,0]})");
  EXPECT_EQ(z.read().to_vector<std::int32_t>(), rows(25, 4, 0));
  z.convert_grid("regular_bounded");  // equal sizes: back
  EXPECT_EQ(z.metadata().chunk_grid, ChunkGridMetadata::regular_bounded({10, 4}, {0, 0}, {-5, 0}));
  z.convert_grid("rectilinear_bounded");
  // 8 rows: the 5 free rows of the partly filled c/-1 first, then one chunk of exactly 3
  z.prepend(block(8, 4, 500), 0);
  EXPECT_EQ(grid_json(z)["configuration"]["chunk_shapes"].dump(), "[[3,[10,3]],4]");
  EXPECT_EQ(grid_json(z)["configuration"]["first_chunk"].dump(), "[-2,0]");
  EXPECT_EQ(grid_json(z)["configuration"]["origin"].dump(), "[-13,0]");
  std::string why;
  try {
    z.convert_grid("regular_bounded");
  } catch (const ArgumentError& e) {
    why = e.what();
  }
  EXPECT_NE(why.find("the chunks of dimension 0 differ in size"), std::string::npos) << why;
  EXPECT_THROW(z.convert_grid("regular"), ArgumentError);
  EXPECT_THROW(z.convert_grid("hexagonal"), ArgumentError);
  // every chunk is where it was: the old keys, plus the new one
  auto after = store->list_prefix("c/");
  EXPECT_EQ(after.size(), before.size() + 1);
  auto expect = rows(8, 4, 500);
  const auto old = rows(25, 4, 0);
  expect.insert(expect.end(), old.begin(), old.end());
  EXPECT_EQ(Array::open(store).read().to_vector<std::int32_t>(), expect);
  // shrinking away the odd chunk makes the sizes regular again
  z.resize_domain({{-5, 20}, {0, 4}});
  z.convert_grid("regular_bounded");
  EXPECT_EQ(z.metadata().chunk_grid, ChunkGridMetadata::regular_bounded({10, 4}, {0, 0}, {-5, 0}));
}

TEST(RectilinearBounded, RegularAndRectilinearRoundTrip) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {30}, .dtype = DataType::int32, .chunk_sizes = {{10, 20}}});
  z.convert_grid("rectilinear_bounded");
  EXPECT_EQ(z.metadata().chunk_grid.name(), "rectilinear_bounded");
  z.convert_grid("rectilinear");
  EXPECT_EQ(grid_json(z)["configuration"].dump(), R"({"kind":"inline","chunk_shapes":[[10,20]]})");
  auto r = Array::create(MemoryStore::create(), {.shape = {30}, .chunks = {10}, .dtype = DataType::int32});
  r.convert_grid("rectilinear");
  EXPECT_EQ(grid_json(r)["configuration"].dump(), R"({"kind":"inline","chunk_shapes":[10]})");
  r.convert_grid("regular");
  EXPECT_EQ(r.metadata().chunk_grid, ChunkGridMetadata::regular({10}));
  // chunk_size is for rectilinear grids
  EXPECT_THROW(r.prepend(NDArray::full<std::int32_t>({3}, 1), 0, 5), ArgumentError);
  EXPECT_THROW(z.prepend(NDArray::full<std::int32_t>({3}, 1), 0, -1), ArgumentError);
  EXPECT_EQ(r.metadata().chunk_grid, ChunkGridMetadata::regular({10}));
}

TEST(RectilinearBounded, MetadataIsReadAsWrittenAndRefusedWithTheField) {
  const Json good = {{"kind", "inline"},
                     {"chunk_shapes", Json::parse("[[3, [10, 2]], 4]")},
                     {"first_chunk", Json::parse("[-1, 0]")},
                     {"origin", Json::parse("[-3, 0]")},
                     {"lower_bound", Json::parse("[-2, 0]")}};
  const auto m = ArrayMetadata::from_json(array_doc(good, {20, 8}));
  EXPECT_EQ(m.domain(), (Domain{{-2, 18}, {0, 8}}));
  EXPECT_EQ(m.to_json()["chunk_grid"]["configuration"], good);
  const ChunkGrid g = ChunkGrid::from_metadata(m);
  EXPECT_EQ(g.first_chunk(0), -1);
  EXPECT_EQ(g.end_chunk(0), 2);
  EXPECT_EQ(g.locate(0, 0).chunk, -1);
  EXPECT_EQ(g.locate(0, 0).position, 1);
  EXPECT_EQ(g.locate(0, 1).chunk, -1);
  EXPECT_EQ(g.locate(0, 2).chunk, 0);
  struct Case {
    const char* key;
    Json value;
    const char* says;
  };
  for (const auto& c : std::vector<Case>{
           {"first_chunk", nullptr, "missing \"first_chunk\""},
           {"origin", nullptr, "missing \"origin\""},
           {"lower_bound", nullptr, "missing \"lower_bound\""},
           {"origin", Json::parse("[-1, 0]"), "after the domain's start -2"},
           {"lower_bound", Json::parse("[-2.0, 0]"), "expected an integer"},
           {"first_chunk", Json::parse("[-1]"), "first_chunk"},
           {"chunk_shapes", Json::parse("[[3, 10], 4]"), "short of the domain's end 18"},
           {"chunk_shape", Json::parse("[3, 4]"), "chunk_shape"},
           {"first_chunk", Json::parse("[9223372036854775807, 0]"), "first_chunk + the number of chunks"},
       }) {
    Json cfg = good;
    if (c.value.is_null())
      cfg.erase(c.key);
    else
      cfg[c.key] = c.value;
    const auto why = refusal(array_doc(cfg, {20, 8}));
    EXPECT_NE(why.find(c.says), std::string::npos) << c.key << ": " << why;
  }
  // rectilinear does not take the bounded fields
  Json plain = array_doc(good, {20, 8});
  plain["chunk_grid"]["name"] = "rectilinear";
  EXPECT_NE(refusal(plain).find("first_chunk"), std::string::npos) << refusal(plain);
}

// Random prepends and appends (with and without chunk_size) and resizes at both ends of a
// rectilinear array, against a model of the domain; every growth in front writes only new chunks
// and the room of the first one.
RC_GTEST_PROP(RectilinearBounded, RandomGrowthMatchesTheModel, ()) {
  const bool sharded = *rc::gen::arbitrary<bool>();
  const std::int64_t inner = sharded ? *rc::gen::inRange<std::int64_t>(1, 4) : 1;
  // sizes {inner, 2 inner}: not regular-looking, so the grid is rectilinear
  Shape shape{inner * *rc::gen::inRange<std::int64_t>(2, 4), *rc::gen::inRange<std::int64_t>(1, 4)};
  auto mem = MemoryStore::create();
  ArraySpec spec{.shape = shape, .dtype = DataType::int32};
  const std::vector<std::int64_t> first{inner, inner * 2};
  if (sharded) {
    spec.chunks = {inner, 1};
    spec.shard_sizes = Sizes{first, {shape[1]}};
  } else {
    spec.chunk_sizes = Sizes{first, {shape[1]}};
  }
  auto z = Array::create(mem, spec);
  ref::DomainModel m{z.domain(), {}, 0};
  for (int step = 0, steps = *rc::gen::inRange(1, 10); step < steps; ++step) {
    const int op = *rc::gen::inRange(0, 5);
    const auto axis = *rc::gen::inRange<std::size_t>(0, 2);
    if (op <= 2) {
      Shape s = m.shape();
      s[axis] = *rc::gen::inRange<std::int64_t>(0, 12);
      const auto data = ref::random_values(s);
      const std::int64_t unit = axis == 0 ? inner : 1;
      const std::int64_t cs = *rc::gen::arbitrary<bool>() ? unit * *rc::gen::inRange<std::int64_t>(1, 4) : 0;
      std::vector<std::int64_t> at{m.dom[0].inclusive_min, m.dom[1].inclusive_min};
      if (op <= 1) {
        z.prepend(data, axis, cs);
        m.dom[axis].inclusive_min -= s[axis];
        at[axis] = m.dom[axis].inclusive_min;
      } else {
        z.append(data, axis, cs);
        at[axis] = m.dom[axis].exclusive_max;
        m.dom[axis].exclusive_max += s[axis];
      }
      m.put(at, data);
    } else if (op == 3) {
      Domain nd = m.dom;
      nd[axis].inclusive_min += *rc::gen::inRange<std::int64_t>(-6, 6);
      nd[axis].exclusive_max += *rc::gen::inRange<std::int64_t>(-6, 6);
      if (nd[axis].exclusive_max < nd[axis].inclusive_min) nd[axis].exclusive_max = nd[axis].inclusive_min;
      z.resize_domain(nd);
      m.dom = nd;
      m.restrict_to_domain();
    } else {
      z.convert_grid("rectilinear_bounded");
    }
    RC_ASSERT(z.domain() == m.dom);
    RC_ASSERT(z.read().to_vector<std::int32_t>() == m.expected());
    // the document stays small: one entry per growth at most
    RC_ASSERT(z.metadata().chunk_grid.chunk_runs[0].size() <= static_cast<std::size_t>(3 + 2 * (step + 1)));
  }
  const auto back = Array::open(mem);
  RC_ASSERT(back.read().to_vector<std::int32_t>() == m.expected());
  // every stored chunk is a chunk of the grid
  for (const auto& key : mem->list_prefix("c/")) {
    const auto idx = back.metadata().chunk_key_encoding.decode(key, 2);
    RC_ASSERT(idx.has_value());
    RC_ASSERT(ChunkGrid::from_metadata(back.metadata()).contains_chunk(*idx));
  }
}
