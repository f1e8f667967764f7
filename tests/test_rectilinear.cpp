// The rectilinear chunk grid (zarr-extensions chunk-grids/rectilinear): chunks of different sizes
// along a dimension. Metadata accepted and refused as the document and zarr-python's cases say,
// written byte for byte as zarr-python writes it, chunks read and written at their own sizes,
// sharded with rectilinear shards, resized and appended as zarr-python does.
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <set>

#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;

namespace {

Json array_with_grid(const Json& chunk_shapes, const Shape& shape) {
  Json j = Json::parse(R"({"zarr_format": 3, "node_type": "array", "data_type": "int32",
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})");
  j["shape"] = shape;
  j["chunk_grid"] = {{"name", "rectilinear"}, {"configuration", {{"kind", "inline"}, {"chunk_shapes", chunk_shapes}}}};
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

std::vector<std::int32_t> iota(std::int64_t n) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

using Sizes = std::vector<std::vector<std::int64_t>>;

Json json_of(const Bytes& b) { return Json::parse(std::string(b.begin(), b.end())); }

}  // namespace

// zarr-python's packages/zarr-metadata cases (explicit sizes, a bare integer, a run-length pair)
// and the document's example, each with the sizes it expands to.
TEST(Rectilinear, AcceptsTheDocumentsForms) {
  struct Case {
    const char* shapes;
    Shape shape;
    Sizes expect;  // write_chunk_sizes
  };
  const std::vector<Case> cases = {
      {"[[10, 20, 30, 40], [50]]", {100, 50}, {{10, 20, 30, 40}, {50}}},
      {"[[10, 20, 30, 40], 50]", {100, 100}, {{10, 20, 30, 40}, {50, 50}}},
      {"[[[10, 5], 5, 5], [15, 15]]", {60, 30}, {{10, 10, 10, 10, 10, 5, 5}, {15, 15}}},
      {"[4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]",
       {6, 6, 6, 6, 6},
       {{4, 2}, {1, 2, 3}, {4, 2}, {1, 1, 1, 3}, {4, 2}}},
      {"[[[10, 2], [20, 1]]]", {40}, {{10, 10, 20}}},
      {"[[10, 20, 30]]", {0}, {{}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.shapes);
    const auto m = ArrayMetadata::from_json(array_with_grid(Json::parse(c.shapes), c.shape));
    EXPECT_EQ(m.chunk_grid.name(), "rectilinear");
    auto store = MemoryStore::create();
    auto z = Array::create(store, "", m);
    EXPECT_EQ(z.write_chunk_sizes(), c.expect);
    EXPECT_TRUE(z.rectilinear());
  }
}

TEST(Rectilinear, RefusesWhatTheDocumentRefuses) {
  const Json ok = array_with_grid(Json::parse("[[10, 20], 5]"), {30, 10});
  ASSERT_EQ(refusal(ok), "");
  struct Case {
    Json shapes;
    Shape shape;
    const char* says;
  };
  const std::vector<Case> cases = {
      {Json::parse("[[10, 20], 5]"), {31, 10}, "short of the array's extent 31"},
      {Json::parse("[[0, 30], 5]"), {30, 10}, ">= 1"},
      {Json::parse("[[-5, 35], 5]"), {30, 10}, ">= 1"},
      {Json::parse("[[10, 20], 0]"), {30, 10}, ">= 1"},
      {Json::parse("[[[10, 0], 30], 5]"), {30, 10}, ">= 1"},
      {Json::parse("[[[0, 3], 30], 5]"), {30, 10}, ">= 1"},
      {Json::parse("[[[10, 2, 1], 10], 5]"), {30, 10}, "[size, count]"},
      {Json::parse("[[[10]], 5]"), {30, 10}, "[size, count]"},
      {Json::parse("[[], 5]"), {30, 10}, "at least one chunk size"},
      {Json::parse("[[10, 20]]"), {30, 10}, "one per dimension"},
      {Json::parse("[[10.5, 20], 5]"), {30, 10}, "integer"},
      {Json::parse("[[true, 29], 5]"), {30, 10}, "integer"},
      {Json::parse("[\"10\", 5]"), {30, 10}, "expected a chunk size"},
      {Json::parse("[null, 5]"), {30, 10}, "expected a chunk size"},
      {Json::parse("[[10, 20], 5.0]"), {30, 10}, "expected a chunk size"},
      {Json::parse("[[9223372036854775807, 2], 5]"), {30, 10}, "int64"},
      {Json::parse("[[[1, 4611686018427387904], [1, 4611686018427387904]], 5]"), {30, 10}, "chunk_shapes[0]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.shapes.dump());
    EXPECT_NE(refusal(array_with_grid(c.shapes, c.shape)).find(c.says), std::string::npos)
        << refusal(array_with_grid(c.shapes, c.shape));
  }
  // The configuration: "kind" is required and only "inline" is defined; nothing else is known.
  Json j = ok;
  j["chunk_grid"]["configuration"].erase("kind");
  EXPECT_NE(refusal(j).find("kind"), std::string::npos);
  j = ok;
  j["chunk_grid"]["configuration"]["kind"] = "reference";
  EXPECT_NE(refusal(j).find("kind"), std::string::npos);
  j = ok;
  j["chunk_grid"]["configuration"]["origin"] = {0, 0};
  EXPECT_NE(refusal(j).find("origin"), std::string::npos);
  j = ok;
  j["chunk_grid"]["configuration"].erase("chunk_shapes");
  EXPECT_NE(refusal(j).find("chunk_shapes"), std::string::npos);
  j = ok;
  j["chunk_grid"] = "rectilinear";  // the short-hand name form: no configuration
  EXPECT_NE(refusal(j).find("configuration"), std::string::npos);
}

// zarr-python's rule: bare integers stay bare, a list is written with [size, count] for every run
// longer than one, and never collapsed to a bare integer.
TEST(Rectilinear, WritesItsMetadataAsZarrPythonDoes) {
  auto written = [](const char* shapes, const Shape& shape) {
    const auto m = ArrayMetadata::from_json(array_with_grid(Json::parse(shapes), shape));
    return m.chunk_grid.to_json().dump();
  };
  EXPECT_EQ(written("[[10, 20, 30], [50, 50]]", {60, 100}),
            R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[10,20,30],[[50,2]]]}})");
  EXPECT_EQ(written("[[[10, 5], 5, 5], [15, 15]]", {60, 30}),
            R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[[10,5],[5,2]],[[15,2]]]}})");
  EXPECT_EQ(
      written("[4, [4], [10, 10, 5], [10, 20, 20, 30]]", {8, 4, 25, 80}),
      R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[4,[4],[[10,2],5],[10,[20,2],30]]}})");
  // Created from sizes: every dimension a list, as zarr-python's create_array writes it.
  auto store = MemoryStore::create();
  Array::create(store, {.shape = {60, 100}, .dtype = DataType::int32, .chunk_sizes = {{10, 20, 30}, {50, 50}}});
  const auto doc = json_of(*store->get("zarr.json"));
  EXPECT_EQ(doc["chunk_grid"].dump(),
            R"({"name":"rectilinear","configuration":{"kind":"inline","chunk_shapes":[[10,20,30],[[50,2]]]}})");
  // Sizes that a regular grid states make a regular grid, as zarr-python makes it.
  auto r =
      Array::create(MemoryStore::create(), {.shape = {25}, .dtype = DataType::int32, .chunk_sizes = {{10, 10, 5}}});
  EXPECT_FALSE(r.rectilinear());
  EXPECT_EQ(r.chunks(), (Shape{10}));
}

TEST(Rectilinear, CreateRefusesSizesThatDoNotFit) {
  auto store = MemoryStore::create();
  auto create = [&](ArraySpec s) {
    s.dtype = DataType::int32;
    s.overwrite = true;
    return Array::create(store, s);
  };
  EXPECT_THROW(create({.shape = {60}, .chunk_sizes = {{10, 20}}}), MetadataError);     // 30 != 60
  EXPECT_THROW(create({.shape = {60}, .chunk_sizes = {{10, 50, 5}}}), MetadataError);  // 5 wholly past 60
  EXPECT_THROW(create({.shape = {60}, .chunk_sizes = {{0, 60}}}), MetadataError);      // size 0
  EXPECT_THROW(create({.shape = {60}, .chunk_sizes = {{}}}), MetadataError);           // no sizes
  EXPECT_THROW(create({.shape = {60, 5}, .chunk_sizes = {{10, 50}}}), MetadataError);  // rank
  EXPECT_THROW(create({.shape = {60}, .chunks = {10}, .chunk_sizes = {{10, 50}}}), ArgumentError);
  EXPECT_THROW(create({.shape = {60}, .shards = Shape{20}, .chunk_sizes = {{10, 50}}}), ArgumentError);
  EXPECT_THROW(create({.shape = {60}, .lower_bound = Shape{-3}, .chunk_sizes = {{10, 50}}}), UnsupportedError);
  EXPECT_THROW(create({.shape = {60}, .zarr_format = 2, .chunk_sizes = {{10, 50}}}), UnsupportedError);
  // shards of whole inner chunks only
  EXPECT_THROW(create({.shape = {60}, .chunks = {10}, .shard_sizes = {{15, 45}}}), MetadataError);
  EXPECT_TRUE(store->list_prefix("").empty());  // nothing was written
}

// Each chunk is stored at its own full size; keys are the chunk's index in the sizes.
TEST(Rectilinear, StoresEachChunkAtItsSize) {
  auto store = MemoryStore::create();
  auto z =
      Array::create(store, {.shape = {60, 100}, .dtype = DataType::int32, .chunk_sizes = {{10, 20, 30}, {50, 50}}});
  const auto all = iota(6000);
  z.write({}, NDArray::from_vector<std::int32_t>({60, 100}, all));
  EXPECT_EQ(store->list_prefix("c/").size(), 6U);
  EXPECT_EQ(store->get("c/1/1")->size(), 20U * 50 * 4);
  // c/1/1 holds rows 10..29, columns 50..99 in C order
  std::vector<std::int32_t> chunk(1000);
  std::memcpy(chunk.data(), store->get("c/1/1")->data(), 4000);
  EXPECT_EQ(chunk[0], 10 * 100 + 50);
  EXPECT_EQ(chunk[999], 29 * 100 + 99);
  EXPECT_EQ(z.read({slice(5, 25), slice(0, 5)}).to_vector<std::int32_t>()[5], 6 * 100 + 0);
  EXPECT_EQ(Array::open(store).read().to_vector<std::int32_t>(), all);
  EXPECT_EQ(z.nchunks(), 6);
  EXPECT_EQ(z.read_chunk_sizes(), (Sizes{{10, 20, 30}, {50, 50}}));
  EXPECT_THROW((void)z.chunks(), UnsupportedError);
  // blocks address the chunks by position
  EXPECT_EQ(read_blocks(z, {1, 1}).to_vector<std::int32_t>(),
            z.read({slice(10, 30), slice(50, 100)}).to_vector<std::int32_t>());
}

TEST(Rectilinear, ShardBoundariesMayBeRectilinear) {
  auto rec = std::make_shared<RecordingStore>(MemoryStore::create());
  auto z = Array::create(
      rec,
      {.shape = {120, 100}, .chunks = {10, 10}, .dtype = DataType::int32, .shard_sizes = {{60, 40, 20}, {50, 50}}});
  const auto all = iota(12000);
  z.write({}, NDArray::from_vector<std::int32_t>({120, 100}, all));
  EXPECT_EQ(rec->list_prefix("c/"), (std::vector<std::string>{"c/0/0", "c/0/1", "c/1/0", "c/1/1", "c/2/0", "c/2/1"}));
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{60, 40, 20}, {50, 50}}));
  EXPECT_EQ(z.read_chunk_sizes()[0].size(), 12U);
  EXPECT_EQ(z.chunks(), (Shape{10, 10}));
  EXPECT_THROW((void)z.shards(), UnsupportedError);
  EXPECT_EQ(z.nchunks_initialized(), 120);
  const auto got = z.read({slice(50, 70), slice(40, 60)}).to_vector<std::int32_t>();
  for (std::int64_t i = 0; i < 20; ++i)
    for (std::int64_t j = 0; j < 20; ++j) ASSERT_EQ(got[static_cast<std::size_t>(i * 20 + j)], (50 + i) * 100 + 40 + j);
  // one inner chunk of the middle shard: only that shard is rewritten
  rec->clear();
  z.write_scalar<std::int32_t>({slice(60, 70), slice(0, 10)}, -1);
  const auto keys = rec->keys({StoreOp::Kind::Set, StoreOp::Kind::SetIf});
  EXPECT_EQ(std::set<std::string>(keys.begin(), keys.end()), (std::set<std::string>{"c/1/0"}));
  EXPECT_EQ(Array::open(rec).read({slice(60, 61), slice(0, 1)}).to_vector<std::int32_t>()[0], -1);
}

// zarr-python's resize: growing past the last chunk adds one chunk for the rest; shrinking keeps
// every size (chunks past the end become inactive and are deleted); append is resize + write.
TEST(Rectilinear, ResizeAndAppendAsZarrPython) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {30}, .dtype = DataType::float64, .chunk_sizes = {{10, 20}}});
  z.write({}, NDArray::full<double>({30}, 1.0));
  z.resize({50});
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{10, 20, 20}}));
  z.append(NDArray::full<double>({10}, 2.0), 0);
  EXPECT_EQ(z.shape(), (Shape{60}));
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{10, 20, 20, 10}}));
  EXPECT_EQ(Array::open(store).read({slice(25, 35)}).to_vector<double>(),
            (std::vector<double>{1, 1, 1, 1, 1, 0, 0, 0, 0, 0}));
  // shrink into the second chunk: every size stays, chunks 2 and 3 are gone
  z.resize({15});
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{10, 5}}));
  EXPECT_EQ(store->list_prefix("c/"), (std::vector<std::string>{"c/0", "c/1"}));
  const auto doc = json_of(*store->get("zarr.json"));
  EXPECT_EQ(doc["chunk_grid"]["configuration"]["chunk_shapes"].dump(), "[[10,[20,2],10]]");
  // growing back within the sizes adds none, and reads the fill value
  z.resize({40});
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{10, 20, 10}}));
  EXPECT_EQ(z.read({slice(14, 16)}).to_vector<double>(), (std::vector<double>{1, 0}));
  // the chunk that passes the end is stored at its full size
  z.write_scalar<double>({slice(30, 40)}, 3.0);
  EXPECT_EQ(store->get("c/2")->size(), 20U * 8);
}

// A new shard is a whole number of inner chunks: growth by less rounds it up (the grid may pass the
// array's end), where zarr-python refuses the growth; creation may pass the end by the last size.
TEST(Rectilinear, ShardedGrowthRoundsTheNewShardUpToWholeInnerChunks) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {30}, .chunks = {5}, .dtype = DataType::int32, .shard_sizes = {{10, 20}}});
  z.fill<std::int32_t>(1);
  z.append(NDArray::full<std::int32_t>({7}, 2), 0);
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{10, 20, 7}}));
  EXPECT_EQ(json_of(*store->get("zarr.json"))["chunk_grid"]["configuration"]["chunk_shapes"].dump(), "[[10,20,10]]");
  z.append(NDArray::full<std::int32_t>({2}, 3), 0);  // inside the last shard: no new size
  EXPECT_EQ(z.write_chunk_sizes(), (Sizes{{10, 20, 9}}));
  EXPECT_EQ(Array::open(store).read({slice(28, 39)}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{1, 1, 2, 2, 2, 2, 2, 2, 2, 3, 3}));
  auto odd = Array::create(MemoryStore::create(),
                           {.shape = {7}, .chunks = {2}, .dtype = DataType::int8, .shard_sizes = {{4, 4}}});
  EXPECT_EQ(odd.write_chunk_sizes(), (Sizes{{4, 3}}));
}

// A grid of one run of a billion chunks is held as one run, not a billion sizes.
TEST(Rectilinear, HugeRunsAreHeldAsRuns) {
  const auto m =
      ArrayMetadata::from_json(array_with_grid(Json::parse("[[[1, 1000000000000]], 7]"), {1000000000000, 7}));
  auto z = Array::create(MemoryStore::create(), "", m);
  EXPECT_EQ(z.nchunks(), 1000000000000);
  z.write_scalar<std::int32_t>({slice(999999999999, 1000000000000), slice(3, 4)}, 5);
  EXPECT_EQ(z.read({slice(999999999999, 1000000000000), slice(3, 4)}).to_vector<std::int32_t>()[0], 5);
  EXPECT_EQ(z.stored_chunk_keys(), (std::vector<std::string>{"c/999999999999/0"}));
}

// Every chunk of its own size: more object shapes than the snapshot keeps codecs for at once.
TEST(Rectilinear, ChunksOfManyDifferentSizes) {
  std::vector<std::int64_t> sizes(1100);
  std::iota(sizes.begin(), sizes.end(), 1);
  const auto n = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  auto store = MemoryStore::create();
  auto z = Array::create(
      store, {.shape = {n}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}, .chunk_sizes = {sizes}});
  z.set_concurrency(2);
  const auto all = iota(n);
  z.write({}, NDArray::from_vector<std::int32_t>({n}, all));
  EXPECT_EQ(store->list_prefix("c/").size(), 1099U);  // c/0 holds only 0, the fill value: not stored
  EXPECT_EQ(Array::open(store).read().to_vector<std::int32_t>(), all);
  EXPECT_EQ(z.read({slice(n - 3, n)}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{all[all.size() - 3], all[all.size() - 2], all[all.size() - 1]}));
}
