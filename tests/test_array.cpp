// Arrays and groups end to end: create/open, attributes, chunk accounting, which chunks a
// selection touches, sharded partial reads and writes.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

#include "select/scatter.hpp"
#include "selections.hpp"
#include "support.hpp"

using namespace zarrpp;
using K = StoreOp::Kind;

namespace {
std::set<std::string> keyset(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }
}  // namespace

// array_metadata is what create writes, made without a store: the CLI and Python check a new
// array with it before they make anything.
TEST(Array, ArraySpecBecomesTheMetadataCreateWritesWithoutAStore) {
  ArraySpec spec{.shape = {100, 50},
                 .chunks = {10, 25},
                 .dtype = DataType::float32,
                 .fill_value = "NaN",
                 .compressor = codec::Zstd{.level = 3},
                 .crc32c = true,
                 .shards = Shape{20, 50}};
  const auto as_created = [](const ArraySpec& sp) { return Array::create(MemoryStore::create(), sp).metadata(); };
  EXPECT_EQ(array_metadata(spec).dump(), as_created(spec).dump());
  ArraySpec v2{.shape = {7}, .chunks = {3}, .dtype = DataType::int16, .compressor = codec::Zstd{}, .zarr_format = 2};
  EXPECT_EQ(array_metadata(v2).dump(), as_created(v2).dump());
  EXPECT_EQ(array_metadata(v2).zarr_format, 2);
  ArraySpec rect{.shape = {10}, .dtype = DataType::uint8, .chunk_sizes = {{3, 7}}};
  EXPECT_EQ(array_metadata(rect).dump(), as_created(rect).dump());
  // The same refusals as create, by the same errors.
  ArraySpec zero_chunk = spec;
  zero_chunk.chunks = {0, 25};
  EXPECT_THROW((void)array_metadata(zero_chunk), MetadataError);
  ArraySpec no_fill_v3 = spec;
  no_fill_v3.fill_value = Json(nullptr);
  EXPECT_THROW((void)array_metadata(no_fill_v3), ArgumentError);
  ArraySpec uneven_shards = spec;
  uneven_shards.shards = Shape{15, 50};  // not a multiple of the chunks
  EXPECT_THROW((void)array_metadata(uneven_shards), Error);
  // Metadata given as it is (CLI copy's target) is checked as create checks it.
  ArrayMetadata huge = array_metadata(ArraySpec{.shape = {10}, .chunks = {5}, .dtype = DataType::float64});
  EXPECT_NO_THROW((void)checked_for_create(huge));
  huge.chunk_grid = ChunkGridMetadata::regular({std::int64_t{1} << 30});  // 8 GiB decoded
  EXPECT_THROW((void)checked_for_create(huge), LimitError);
}

// copy_array checks its destination as create does: every chunk size of a rectilinear grid, not
// only the first one's.
TEST(Array, CopyRefusesADestinationWhoseLargestChunkCannotBeDecoded) {
  const std::int64_t n = (std::int64_t{1} << 30) + 1;
  const auto src = Array::create(MemoryStore::create(), ArraySpec{.shape = {n}, .chunks = {1 << 20}});
  ArrayMetadata meta = src.metadata();
  meta.chunk_grid = ChunkGridMetadata::rectilinear_sizes({{1, n - 1}});  // float64: 8 GiB in the second
  const auto dst = MemoryStore::create();
  EXPECT_THROW(copy_array(src, dst, "", meta), LimitError);
  EXPECT_TRUE(dst->list_prefix("").empty()) << "nothing was written";
}

TEST(Array, CreateWritesValidMetadataAndOpenReadsIt) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, "data/temp",
                         {.shape = {100, 50},
                          .chunks = {10, 25},
                          .dtype = DataType::float32,
                          .fill_value = "NaN",
                          .compressor = codec::Zstd{.level = 3},
                          .crc32c = true,
                          .dimension_names = std::vector<std::optional<std::string>>{"t", std::nullopt},
                          .attributes = {{"units", "K"}}});
  EXPECT_TRUE(store->exists("data/temp/zarr.json"));
  EXPECT_TRUE(store->exists("data/zarr.json"));  // parents become groups
  EXPECT_TRUE(store->exists("zarr.json"));
  const Bytes meta = *store->get("data/temp/zarr.json");
  const auto j = Json::parse(std::string(meta.begin(), meta.end()));
  EXPECT_EQ(j["fill_value"], "NaN");
  EXPECT_EQ(j["codecs"].size(), 3u);
  EXPECT_EQ(j["codecs"][1]["name"], "zstd");
  EXPECT_EQ(j["chunk_grid"]["name"], "regular");  // never grown in front: stays readable by everyone
  auto o = Array::open(store, "data/temp");
  EXPECT_EQ(o.shape(), (Shape{100, 50}));
  EXPECT_EQ(o.chunks(), (Shape{10, 25}));
  EXPECT_FALSE(o.shards());
  EXPECT_EQ(o.dtype(), DataType::float32);
  EXPECT_EQ(o.attributes()["units"], "K");
  EXPECT_EQ(o.nchunks(), 20);
  EXPECT_EQ(o.nshards_stored(), 0);
  EXPECT_EQ(o.nshards(), 20);
  EXPECT_EQ(o.nchunks_initialized(), 0);
  EXPECT_EQ(o.fill_value_json(), "NaN");
  const auto all = o.read();  // missing chunks read as the fill value
  EXPECT_TRUE(std::isnan(all.data<float>()[0]));
  try {
    Array::create(store, "data/temp", {.shape = {1}, .chunks = {1}});
    ADD_FAILURE() << "created over an existing node";
  } catch (const ConflictError& e) {
    EXPECT_EQ(e.code(), ErrorCode::already_exists);
  }
  EXPECT_NO_THROW(Array::create(store, "data/temp", {.shape = {1}, .chunks = {1}, .overwrite = true}));
  EXPECT_EQ(Array::open(store, "data/temp").shape(), Shape{1});
}

TEST(Array, DefaultFillValuesAndOneLineCodecs) {
  auto store = MemoryStore::create();
  auto b = Array::create(store, "b", {.shape = {3}, .chunks = {2}, .dtype = DataType::bool_t});
  EXPECT_EQ(b.fill_value_json(), false);
  auto f = Array::create(store, "f", {.shape = {3}, .chunks = {2}, .dtype = DataType::float64});
  EXPECT_EQ(f.fill_value_json(), 0.0);
  auto c = Array::create(store, "c", {.shape = {3}, .chunks = {2}, .dtype = DataType::complex64});
  EXPECT_EQ(c.fill_value_json(), Json::parse("[0.0, 0.0]"));
  auto s = Array::create(store, "s",
                         {.shape = {64, 64},
                          .chunks = {8, 8},
                          .dtype = DataType::uint16,
                          .compressor = codec::Blosc{},
                          .crc32c = true,
                          .shards = Shape{32, 32}});
  EXPECT_EQ(s.chunks(), (Shape{8, 8}));
  EXPECT_EQ(*s.shards(), (Shape{32, 32}));
  EXPECT_EQ(s.nshards(), 4);
  EXPECT_EQ(s.nchunks(), 64);  // inner chunks, as zarr-python 3 counts them
  const auto meta = s.metadata();
  const auto& cfg = *meta.codecs[0].configuration;
  EXPECT_EQ(cfg["codecs"][1]["configuration"]["typesize"], 2);  // resolved automatically
  EXPECT_EQ(cfg["codecs"][1]["configuration"]["shuffle"], "shuffle");
}

TEST(Array, BadCreateArgumentsWriteNothing) {
  auto store = MemoryStore::create();
  int line = 0;
  auto bad = [&](ArraySpec s) {
    ++line;
    EXPECT_THROW(Array::create(store, "x", s), MetadataError) << "case " << line;
    EXPECT_TRUE(store->list_prefix("").empty());
  };
  bad({.shape = {4, 4}, .chunks = {2}});
  bad({.shape = {4, 4}, .chunks = {2, 0}});
  bad({.shape = {4, 4}, .chunks = {2, 2}, .shards = Shape{3, 2}});
  bad({.shape = {4}, .chunks = {2}, .dtype = DataType::uint8, .fill_value = 300});
  bad({.shape = {4}, .chunks = {2}, .compressor = codec::Gzip{.level = 11}});
  bad({.shape = {4}, .chunks = {2}, .compressor = codec::Blosc{.cname = "nope"}});
  bad({.shape = {4}, .chunks = {2}, .lower_bound = Shape{std::int64_t{1} << 60}});
  bad({.shape = {4}, .chunks = {2}, .dimension_names = std::vector<std::optional<std::string>>{"a", "b"}});
  EXPECT_THROW(Array::create(store, "../x", {.shape = {4}, .chunks = {2}}), MetadataError);
  EXPECT_THROW(Array::create(store, "__x", {.shape = {4}, .chunks = {2}}), MetadataError);  // v3 reserves it
  EXPECT_TRUE(store->list_prefix("").empty());
}

TEST(Array, OpenRefusesWhatItDoesNotUnderstand) {
  auto store = MemoryStore::create();
  EXPECT_THROW(Array::open(store, "missing"), NotFoundError);
  auto put = [&](const std::string& text) { store->set("a/zarr.json", Bytes(text.begin(), text.end())); };
  const std::string base = R"({"zarr_format":3,"node_type":"array","shape":[4],"data_type":"int32",
    "chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},
    "chunk_key_encoding":{"name":"default"},"fill_value":0,"codecs":[CODECS]})";
  auto with_codecs = [&](const std::string& c) {
    std::string s = base;
    s.replace(s.find("CODECS"), 6, c);
    return s;
  };
  put(with_codecs(R"({"name":"bytes","configuration":{"endian":"little"}},{"name":"fancy_compressor"})"));
  try {
    Array::open(store, "a");
    ADD_FAILURE();
  } catch (const UnsupportedError& e) {
    EXPECT_NE(std::string(e.what()).find("fancy_compressor"), std::string::npos);
  }
  put(with_codecs(R"({"name":"bytes","configuration":{"endian":"little"}})"));
  EXPECT_NO_THROW(Array::open(store, "a"));
  put("{not json");
  EXPECT_THROW(Array::open(store, "a"), MetadataError);
  put(R"({"zarr_format":3,"node_type":"group"})");
  EXPECT_THROW(Array::open(store, "a"), MetadataError);
}

TEST(Array, AttributesAreReadAndUpdatedAtomically) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {4}, .chunks = {2}, .attributes = {{"a", 1}}});
  z.update_attributes({{"b", 2}});
  EXPECT_EQ(Array::open(store).attributes(), Json({{"a", 1}, {"b", 2}}));
  z.set_attributes({{"c", 3}});
  EXPECT_EQ(Array::open(store).attributes(), Json({{"c", 3}}));
  EXPECT_THROW(z.set_attributes(Json::array()), MetadataError);
}

TEST(Array, WriteEmptyChunksOffErasesAllFillChunks) {
  auto store = MemoryStore::create();
  auto z = Array::create(store, {.shape = {8}, .chunks = {4}, .dtype = DataType::int32, .fill_value = 7});
  z.fill<std::int32_t>(1);
  EXPECT_EQ(z.nshards_stored(), 2);
  z.write_scalar<std::int32_t>({slice(0, 4)}, 7);
  EXPECT_EQ(z.stored_chunk_keys(), std::vector<std::string>{"c/1"});
  z.set_write_empty_chunks(true);
  z.write_scalar<std::int32_t>({slice(0, 4)}, 7);
  EXPECT_EQ(z.nshards_stored(), 2);
}

TEST(Array, SelectionsTouchExactlyTheChunksTheyNeed) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {10, 10}, .chunks = {3, 4}, .dtype = DataType::int32});
  z.fill<std::int32_t>(1);
  auto check = [&](const std::function<void()>& f, std::set<std::string> expect_get, std::set<std::string> expect_set) {
    rec->clear();
    f();
    EXPECT_EQ(keyset(rec->keys({K::Get})), expect_get);
    EXPECT_EQ(keyset(rec->keys({K::Set, K::Erase, K::SetIf, K::EraseIf})), expect_set);
  };
  check([&] { z.read({slice(0, 3), slice(0, 4)}); }, {"c/0/0"}, {});
  check([&] { z.read({slice(2, 4), 5}); }, {"c/0/1", "c/1/1"}, {});
  check([&] { z.read({IndexArray{9, 0}, IndexArray{9}}); }, {"c/3/2", "c/0/2"}, {});
  check([&] { read_points(z, {{4, 8}, {1, 9}}); }, {"c/1/0", "c/2/2"}, {});
  check([&] { read_blocks(z, {1, 2}); }, {"c/1/2"}, {});
  check([&] { z.read({slice(9, 2, -3), 0}); }, {"c/3/0", "c/2/0", "c/1/0"}, {});
  // a write covering a chunk whole does not read it; a partial one reads it
  check([&] { z.write_scalar<std::int32_t>({slice(3, 6), slice(4, 8)}, 5); }, {}, {"c/1/1"});
  check([&] { z.write_scalar<std::int32_t>({slice(3, 5), slice(4, 8)}, 5); }, {"c/1/1"}, {"c/1/1"});
  // the edge chunk c/3/2 holds only row 9 and cols 8-9 of the domain: writing those still reads
  // it, since its elements outside the domain may be a concurrent growth's (kept as they are)
  check([&] { z.write_scalar<std::int32_t>({9, slice(8, 10)}, 5); }, {"c/3/2"}, {"c/3/2"});
  // a partial write is conditioned on the chunk it read; a whole-chunk write is not
  rec->clear();
  z.write_scalar<std::int32_t>({slice(3, 5), slice(4, 8)}, 6);
  EXPECT_EQ(keyset(rec->keys({K::SetIf})), (std::set<std::string>{"c/1/1"}));
  rec->clear();
  z.write_scalar<std::int32_t>({slice(3, 6), slice(4, 8)}, 6);
  EXPECT_EQ(keyset(rec->keys({K::Set})), (std::set<std::string>{"c/1/1"}));
  EXPECT_TRUE(rec->keys({K::SetIf}).empty());
}

namespace {
// A store that cannot erase conditionally (as an S3 server ignoring If-Match on DELETE).
class NoConditionalErase : public RecordingStore {
 public:
  using RecordingStore::RecordingStore;
  StoreCapabilities capabilities() const override {
    auto c = RecordingStore::capabilities();
    c.conditional_erase = false;
    return c;
  }
  StoreCapabilities confirm_capabilities() override { return capabilities(); }
  int erase_if_tried = 0;

 protected:
  bool do_erase_if(const std::string& key, const std::optional<Version>&) override {
    ++erase_if_tried;
    throw ConflictError("test store: no conditional erase of '" + key + "'");
  }
};
}  // namespace

// A partial write that leaves a chunk holding only the fill value erases it only if it is still
// the chunk that was read; a store that cannot erase so (asked, not tried) gets the fill value
// written over it on the same condition, unsharded and sharded alike.
TEST(Array, AChunkEmptiedByAPartialWriteIsErasedOnlyWhereTheStoreCanDoItSafely) {
  for (const bool sharded : {false, true}) {
    for (const bool can_erase : {true, false}) {
      SCOPED_TRACE(std::string(sharded ? "sharded" : "unsharded") + (can_erase ? ", conditional erase" : ", none"));
      auto mem = MemoryStore::create();
      std::shared_ptr<RecordingStore> rec =
          can_erase ? std::make_shared<RecordingStore>(mem) : std::make_shared<NoConditionalErase>(mem);
      ArraySpec spec{.shape = {8}, .chunks = {4}, .dtype = DataType::int32};
      if (sharded) spec.shards = Shape{8};
      auto z = Array::create(rec, spec);
      z.write_scalar<std::int32_t>({slice(0, 2)}, 5);
      rec->clear();
      z.write_scalar<std::int32_t>({slice(0, 2)}, 0);  // read, found empty
      EXPECT_TRUE(rec->keys({K::Set, K::Erase}).empty());
      if (can_erase) {
        EXPECT_EQ(rec->keys({K::EraseIf}), std::vector<std::string>{"c/0"});
        EXPECT_FALSE(mem->exists("c/0"));
      } else {
        EXPECT_EQ(std::static_pointer_cast<NoConditionalErase>(rec)->erase_if_tried, 0);  // asked, not tried
        EXPECT_EQ(rec->keys({K::SetIf}), std::vector<std::string>{"c/0"});
        EXPECT_TRUE(mem->exists("c/0"));
      }
      EXPECT_EQ(z.read().to_vector<std::int32_t>(), std::vector<std::int32_t>(8, 0));
      // The fill value written into a part of a chunk that is not stored: nothing to erase, and
      // nothing the store cannot do is asked. (Sharded, the shard is still stored without
      // conditional erases: it holds the fill value.)
      if (sharded && !can_erase) continue;
      rec->clear();
      z.write_scalar<std::int32_t>({slice(4, 6)}, 0);
      EXPECT_TRUE(rec->keys({K::Set, K::SetIf, K::Erase, K::EraseIf}).empty());
      EXPECT_FALSE(mem->exists("c/1"));
    }
  }
}

TEST(Array, ShardedPartialReadFetchesTheIndexAndOnlyNeededInnerChunks) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  auto z = Array::create(rec, {.shape = {16, 16},
                               .chunks = {4, 4},
                               .dtype = DataType::uint16,
                               .compressor = codec::Zstd{.level = 1},
                               .shards = Shape{8, 8}});
  NDArray v(DataType::uint16, {16, 16});
  for (std::int64_t i = 0; i < v.size(); ++i) v.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(i + 1);
  rec->clear();
  z.write({}, v);
  // whole shards: each written once, none read
  EXPECT_TRUE(rec->keys({K::Get}).empty());
  EXPECT_EQ(rec->keys({K::Set}).size(), 4u);
  rec->clear();
  const auto part = z.read({slice(0, 2), slice(0, 2)});  // one inner chunk of shard c/0/0
  EXPECT_EQ(part.to_vector<std::uint16_t>(), (std::vector<std::uint16_t>{1, 2, 17, 18}));
  std::vector<StoreOp> ops;
  for (const auto& op : rec->ops())
    if (op.kind == K::Get) ops.push_back(op);
  ASSERT_EQ(ops.size(), 2u);  // besides one size() of the shard, to validate the index against
  EXPECT_EQ(ops[0].key, "c/0/0");
  EXPECT_EQ(ops[0].range.kind, ByteRange::Kind::Suffix);  // the index, by a suffix request
  EXPECT_EQ(ops[1].range.kind, ByteRange::Kind::FromOffset);
  EXPECT_TRUE(ops[1].range.length.has_value());
  const auto shard_size = mem->get("c/0/0")->size();
  EXPECT_LT(*ops[1].range.length, shard_size / 2);  // only that inner chunk's bytes
  EXPECT_EQ(z.read(), v);
}

// A store where every read takes a while, counting how many are in flight at once.
class SlowCountingStore : public StoreWrapper {
 public:
  explicit SlowCountingStore(StorePtr inner) : StoreWrapper(std::move(inner)) {}
  std::atomic<int> in_flight{0}, most{0}, ranged{0};
  std::string describe() const override { return "slow(" + inner()->describe() + ")"; }

 protected:
  std::optional<VersionedBytes> do_get(const std::string& key, const ByteRange& range,
                                       std::uint64_t max_bytes) override {
    if (range.kind != ByteRange::Kind::FromOffset) return StoreWrapper::do_get(key, range, max_bytes);
    ++ranged;
    const int now = ++in_flight;
    for (int m = most.load(); now > m && !most.compare_exchange_weak(m, now);) {
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    auto r = StoreWrapper::do_get(key, range, max_bytes);
    --in_flight;
    return r;
  }
};

TEST(Array, RemoteShardRangesAreFetchedConcurrently) {
  // A store without native streaming (like HTTP/S3): the ranges of one shard's inner chunks that
  // a read needs go out at the same time, not one after another.
  auto slow = std::make_shared<SlowCountingStore>(StorePtr(MemoryStore::create()));
  ASSERT_FALSE(slow->capabilities().native_streaming);
  auto z = Array::create(
      slow, {.shape = {256, 256}, .chunks = {64, 64}, .dtype = DataType::float64, .shards = Shape{256, 256}});
  NDArray v(DataType::float64, {256, 256});
  for (std::int64_t i = 0; i < v.size(); ++i) v.data<double>()[i] = static_cast<double>(i) * 0.5;
  z.write({}, v);
  z.set_concurrency(2);
  // Every other row of inner chunks: four ranges with 128 KiB gaps between them.
  slow->ranged = 0;
  const auto rows = z.read({slice(0, 256, 128)});
  for (std::int64_t c = 0; c < 256; ++c) {
    EXPECT_EQ(rows.data<double>()[c], v.data<double>()[c]);
    EXPECT_EQ(rows.data<double>()[256 + c], v.data<double>()[128 * 256 + c]);
  }
  EXPECT_GE(slow->ranged.load(), 2);
  EXPECT_GE(slow->most.load(), 2) << "the shard's ranges were fetched one at a time";
  EXPECT_EQ(z.read(), v);
}

TEST(Array, PartialShardWriteKeepsOtherInnerChunksEncodedBytes) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {8, 8},
                               .chunks = {4, 4},
                               .dtype = DataType::int32,
                               .compressor = codec::Gzip{.level = 5},
                               .shards = Shape{8, 8}});
  NDArray v(DataType::int32, {8, 8});
  for (std::int64_t i = 0; i < v.size(); ++i) v.data<std::int32_t>()[i] = static_cast<std::int32_t>(i * 7);
  z.write({}, v);
  const Bytes before = *mem->get("c/0/0");
  z.write_scalar<std::int32_t>({0, 0}, -1);  // touches inner chunk (0,0) only
  const Bytes after = *mem->get("c/0/0");
  // The index is at the end; inner chunks (0,1), (1,0), (1,1) follow (0,0): their bytes are the
  // same sequence, shifted by the change in (0,0)'s size.
  auto entries = [](const Bytes& b) {
    std::vector<std::uint64_t> e(8);
    std::memcpy(e.data(), b.data() + b.size() - 68, 64);
    return e;
  };
  const auto eb = entries(before), ea = entries(after);
  for (int k = 1; k < 4; ++k) {
    const Bytes ib(before.begin() + static_cast<std::ptrdiff_t>(eb[2 * k]),
                   before.begin() + static_cast<std::ptrdiff_t>(eb[2 * k] + eb[2 * k + 1]));
    const Bytes ia(after.begin() + static_cast<std::ptrdiff_t>(ea[2 * k]),
                   after.begin() + static_cast<std::ptrdiff_t>(ea[2 * k] + ea[2 * k + 1]));
    EXPECT_EQ(ib, ia) << "inner chunk " << k;
  }
  v.data<std::int32_t>()[0] = -1;
  EXPECT_EQ(z.read(), v);
}

TEST(Array, CorruptChunksNameTheKey) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {8}, .chunks = {4}, .dtype = DataType::int32, .crc32c = true});
  z.fill<std::int32_t>(3);
  Bytes b = *mem->get("c/1");
  b[0] ^= 1;
  mem->set("c/1", b);
  try {
    z.read();
    ADD_FAILURE();
  } catch (const CodecError& e) {
    EXPECT_NE(std::string(e.what()).find("c/1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("crc32c"), std::string::npos) << e.what();
  }
  EXPECT_EQ(z.read({slice(0, 4)}).to_vector<std::int32_t>(), std::vector<std::int32_t>(4, 3));
}

// On local files uncompressed chunks are read in pieces (and without a checksum, only the slabs
// a selection needs); a wrong size, a flipped bit or a short file is still an error naming the key.
TEST(Array, StreamedReadsOfLocalUncompressedChunks) {
  struct Counting : FileStore {
    using FileStore::FileStore;
    std::mutex mu;
    std::vector<std::pair<std::string, std::uint64_t>> ranges;  // key, bytes asked for
    bool do_get_streamed(const std::string& key, const ByteRange& r, std::size_t piece,
                         const PieceSink& sink) override {
      std::uint64_t asked = 0;
      const bool found = FileStore::do_get_streamed(
          key, r, piece, [&](std::uint64_t total, std::uint64_t off, std::span<const std::uint8_t> b) {
            asked += b.size();
            sink(total, off, b);
          });
      std::lock_guard lk(mu);
      ranges.emplace_back(key, asked);
      return found;
    }
  };
  ref::TempDir tmp("streamed");
  const auto dir = tmp.path();
  for (const bool crc : {false, true}) {
    std::filesystem::remove_all(dir);
    auto fs = std::make_shared<Counting>(dir, FileStore::Options{});
    // 3-d uint16 chunks of 64x64x64 = 512 KiB: several 256 KiB pieces per chunk.
    auto z = Array::create(fs, "a",
                           {.shape = {100, 70, 64}, .chunks = {64, 64, 64}, .dtype = DataType::uint16, .crc32c = crc});
    NDArray v = NDArray::uninitialized(DataType::uint16, {100, 70, 64});
    for (std::int64_t i = 0; i < v.size(); ++i)
      v.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(i * 2654435761u >> 7);
    z.write({}, v);
    EXPECT_EQ(z.read(), v);
    const Selection box = {slice(3, 9), slice(60, 66), slice(1, 63, 3)};
    fs->ranges.clear();
    const auto got = z.read(box);
    NDArray want(DataType::uint16, {6, 6, 21});
    for (std::int64_t i = 0; i < 6; ++i)
      for (std::int64_t j = 0; j < 6; ++j)
        for (std::int64_t k = 0; k < 21; ++k)
          want.data<std::uint16_t>()[(i * 6 + j) * 21 + k] =
              v.data<std::uint16_t>()[((3 + i) * 70 + 60 + j) * 64 + 1 + 3 * k];
    EXPECT_EQ(got, want);
    ASSERT_EQ(fs->ranges.size(), 2u);
    for (const auto& [key, asked] : fs->ranges) {
      if (crc)
        EXPECT_EQ(asked, 64u * 64 * 64 * 2 + 4) << key << ": a checksum needs the whole chunk";
      else
        EXPECT_EQ(asked, 6u * 64 * 64 * 2) << key << ": only the 6 slabs the box needs";
    }
    // A flipped bit (checksum), a short file, a long file: errors naming the key.
    auto bytes = *fs->get("a/c/0/0/0");
    auto expect_error = [&](const std::string& what) {
      try {
        (void)z.read(box);
        ADD_FAILURE() << "no error for " << what;
      } catch (const CodecError& e) {
        EXPECT_NE(std::string(e.what()).find("c/0/0/0"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      }
    };
    auto b = bytes;
    if (crc) {
      b[1000] ^= 4;
      fs->set("a/c/0/0/0", b);
      expect_error("checksum mismatch");
    }
    b = bytes;
    b.resize(b.size() - 10);
    fs->set("a/c/0/0/0", b);
    expect_error("expected");
    b = bytes;
    b.push_back(0);
    fs->set("a/c/0/0/0", b);
    expect_error("expected");
    fs->set("a/c/0/0/0", bytes);
    EXPECT_EQ(z.read(box), got);
    // A missing chunk reads as the fill value.
    fs->erase("a/c/0/0/0");
    EXPECT_EQ(z.read({slice(0, 2), slice(0, 2), slice(0, 2)}), NDArray(DataType::uint16, {2, 2, 2}));
  }
  std::filesystem::remove_all(dir);
}

TEST(Array, KeyEncodings) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, "d",
                         {.shape = {4, 4},
                          .chunks = {2, 2},
                          .dtype = DataType::uint8,
                          .chunk_key_encoding = ChunkKeyEncoding::default_('.')});
  z.fill<std::uint8_t>(1);
  EXPECT_TRUE(mem->exists("d/c.1.1"));
  auto v = Array::create(
      mem, "v",
      {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::uint8, .chunk_key_encoding = ChunkKeyEncoding::v2('.')});
  v.fill<std::uint8_t>(1);
  EXPECT_TRUE(mem->exists("v/1.1"));
  EXPECT_EQ(v.nshards_stored(), 4);
  EXPECT_EQ(v.stored_chunk_keys().front(), "v/0.0");
}

TEST(Array, ParallelReadsAndWritesAgreeWithSerial) {
  for (std::size_t conc : {1u, 2u, 4u}) {
    auto z =
        Array::create(MemoryStore::create(),
                      {.shape = {37, 41}, .chunks = {5, 6}, .dtype = DataType::int32, .compressor = codec::Zstd{}});
    z.set_concurrency(conc);
    NDArray v(DataType::int32, {37, 41});
    for (std::int64_t i = 0; i < v.size(); ++i) v.data<std::int32_t>()[i] = static_cast<std::int32_t>(i);
    z.write({}, v);
    EXPECT_EQ(z.read(), v) << conc;
  }
}

TEST(Group, HierarchyAndAttributes) {
  auto store = MemoryStore::create();
  auto root = Group::create(store, "", {{"title", "x"}});
  auto g = root.create_group("sub", {{"k", 1}});
  g.create_array("arr", {.shape = {4}, .chunks = {2}});
  root.create_array("top", {.shape = {2}, .chunks = {2}});
  EXPECT_EQ(root.children(), (std::vector<Group::Child>{{"sub", NodeType::Group}, {"top", NodeType::Array}}));
  EXPECT_EQ(Group::open(store, "sub").children(), (std::vector<Group::Child>{{"arr", NodeType::Array}}));
  EXPECT_EQ(Group::open(store, "sub").attributes()["k"], 1);
  auto sub = Group::open(store, "sub");
  auto other = Group::open(store, "sub");  // a second handle with its own cached attributes
  other.update_attributes({{"i", 0}});
  sub.update_attributes({{"j", 2}});  // must not drop "i", written through the other handle
  EXPECT_EQ(Group::open(store, "sub").attributes(), Json({{"k", 1}, {"i", 0}, {"j", 2}}));
  other.set_attributes({{"k", 1}});
  sub.update_attributes({{"j", 2}});
  EXPECT_EQ(Group::open(store, "sub").attributes(), Json({{"k", 1}, {"j", 2}}));
  EXPECT_EQ(sub.open_array("arr").shape(), Shape{4});
  EXPECT_THROW(root.open_group("top"), MetadataError);
  EXPECT_THROW(root.open_array("sub"), MetadataError);
  EXPECT_THROW(root.create_group("a/b"), MetadataError);
  EXPECT_THROW(root.create_group("__hidden"), MetadataError);
  EXPECT_THROW(Group::open(store, "nope"), NotFoundError);
  EXPECT_EQ(node_type(store, "sub/arr"), NodeType::Array);
  EXPECT_FALSE(node_type(store, "sub/none"));
  Group::create(store, "deep/er/group");
  EXPECT_EQ(node_type(store, "deep/er"), NodeType::Group);
  EXPECT_THROW(Group::create(store, "top/inner"), MetadataError);  // under an array
}

// The build option that forces the portable copy path takes effect: the sanitizer build runs the
// whole suite that way (ZARRPP_PORTABLE), the release build with SSE2 streaming stores.
TEST(Portability, TheCopyPathIsTheOneTheBuildAsksFor) {
#if defined(__SSE2__)
  EXPECT_EQ(uses_streaming_stores(), !ZARRPP_PORTABLE_BUILD);
#else
  EXPECT_FALSE(uses_streaming_stores());
#endif
}

// Outputs of 64 MiB and more take the streaming-store path (where there is one): the values,
// at unaligned starts and odd run lengths, are the same as the portable path's.
TEST(Portability, LargeReadsCopyExactlyOnEitherPath) {
  auto z = Array::create(MemoryStore::create(),
                         {.shape = {1030, 1030, 70}, .chunks = {257, 515, 35}, .dtype = DataType::uint8});
  NDArray v = NDArray::uninitialized(DataType::uint8, {1030, 1030, 70});
  for (std::int64_t i = 0; i < v.size(); ++i)
    v.data<std::uint8_t>()[i] = static_cast<std::uint8_t>((i * 2654435761u) >> 13);
  z.write({}, v);
  EXPECT_EQ(z.read(), v);  // 74 MB: streamed into the output
  const auto part = z.read({slice(1, 1030), slice(3, 1029), slice(1, 69)});
  for (std::int64_t i = 0; i < 1029; i += 97)
    for (std::int64_t j = 0; j < 1026; j += 89)
      for (std::int64_t k = 0; k < 68; ++k)
        ASSERT_EQ(part.at<std::uint8_t>({i, j, k}), v.at<std::uint8_t>({i + 1, j + 3, k + 1}))
            << i << " " << j << " " << k;
}

// The spellings a newcomer writes first mean what they say: a codec configuration in braces is a
// JSON object, and shapes in designated initialisers need no Shape{...}.
TEST(Array, NaturalSpellingsOfCodecsAndShapesWork) {
  const CodecMetadata zstd{"zstd", {{"level", 3}}};
  ASSERT_TRUE(zstd.configuration.has_value());
  EXPECT_EQ(*zstd.configuration, Json::parse(R"({"level": 3})"));
  EXPECT_FALSE(CodecMetadata{"crc32c"}.configuration.has_value());
  auto z = Array::create(MemoryStore::create(),
                         {.shape = {8, 8},
                          .chunks = {2, 2},
                          .dtype = DataType::int16,
                          .codecs = std::vector<codec::Any>{CodecMetadata{"bytes", {{"endian", "little"}}}, zstd},
                          .lower_bound = {-4, 0}});
  EXPECT_EQ(z.domain()[0].inclusive_min, -4);
  EXPECT_EQ(z.metadata().codecs.back().name, "zstd");
  auto sh = Array::create(MemoryStore::create(),
                          {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::int16, .shards = {4, 4}});
  EXPECT_EQ(sh.shards(), (std::optional<Shape>{Shape{4, 4}}));
  ArraySpec spec;
  spec.shards = Shape{2, 2};
  EXPECT_EQ(spec.shards, (ArraySpec{.shards = {2, 2}}.shards));
  EXPECT_NE(spec.shards, ArraySpec{}.shards);
  spec.shards = {4, 4};
  EXPECT_EQ(*spec.shards, (Shape{4, 4}));
  spec.shards = std::nullopt;
  EXPECT_FALSE(spec.shards.has_value());
  spec.lower_bound = {-1};
  spec.lower_bound = {};
  EXPECT_FALSE(spec.lower_bound.has_value());
  EXPECT_FALSE((CodecMetadata{"gzip", {}}.configuration.has_value())) << "{} is no configuration, not null";
}

// chunks="auto" is zarr-python 3's choice (issue 38): values observed from its guess_chunks.
TEST(GridDefaults, AutoChunksAreZarrPythons) {
  EXPECT_EQ(auto_chunks({1000, 1000}, 1), (std::vector<std::int64_t>{500, 500}));
  EXPECT_EQ(auto_chunks({1000, 1000}, 8), (std::vector<std::int64_t>{250, 250}));
  EXPECT_EQ(auto_chunks({10000, 10000}, 4), (std::vector<std::int64_t>{625, 625}));
  EXPECT_EQ(auto_chunks({100}, 8), (std::vector<std::int64_t>{100}));
  EXPECT_EQ(auto_chunks({0, 7}, 2), (std::vector<std::int64_t>{1, 7}));
  EXPECT_EQ(auto_chunks({20000, 20000}, 8, kShardedInnerChunkMaxBytes), (std::vector<std::int64_t>{313, 313}));
  EXPECT_EQ(auto_chunks({}, 4), (std::vector<std::int64_t>{}));
  EXPECT_EQ(auto_shards({1000, 10}, {100, 10}), (std::vector<std::int64_t>{200, 10}));
  // With zarr.config's array.target_shard_size_bytes: n chunks along every dimension, n^ndim within
  // the target (zarr-python's example: (2, 2, 2) chunks of 4-byte items, 256 bytes -> 2 per axis).
  EXPECT_EQ(auto_shards({100, 100, 100}, {2, 2, 2}, 4, 256), (std::vector<std::int64_t>{4, 4, 4}));
  EXPECT_EQ(auto_shards({5, 100}, {2, 10}, 1, 1 << 20), (std::vector<std::int64_t>{4, 20}));  // within the array
  EXPECT_EQ(auto_shards({100}, {10}, 8, 8), (std::vector<std::int64_t>{10}));  // a chunk above the target: 1
}

// "auto" for every data type as zarr-python 3 decides it (issue 68): the table the CLI and Python
// are held to too (tests/data/auto_grids.json, worked out from zarr-python 3's source).
TEST(GridDefaults, AutoGridsFollowTheSharedTable) {
  std::ifstream in(std::string(ZARRPP_TEST_DATA_DIR) + "/auto_grids.json");
  ASSERT_TRUE(in) << "tests/data/auto_grids.json";
  const Json table = Json::parse(in);
  ASSERT_GT(table["cases"].size(), 20U);
  for (const auto& c : table["cases"]) {
    const auto shape = c["shape"].get<std::vector<std::int64_t>>();
    const DataType t = data_type_from_user(c["cli"].get<std::string>());
    const bool sharded = c["sharded"].get<bool>();
    const auto chunks = auto_chunks(shape, t, sharded);
    EXPECT_EQ(chunks, c["chunks"].get<std::vector<std::int64_t>>()) << c.dump();
    if (sharded) {
      EXPECT_EQ(auto_shards(shape, chunks, t, std::nullopt), c["shards"].get<std::vector<std::int64_t>>()) << c.dump();
    }
  }
  EXPECT_EQ(auto_item_size(DataType::Id::string), 1U);  // a type without a fixed size counts one byte
  EXPECT_EQ(auto_item_size(DataType::fixed_utf32(10)), 40U);
}

// set_progress: every stored object a read, write, growth or shrink finishes is reported once,
// with the bytes of the selection's elements in it (what the CLI's progress line adds up).
TEST(Array, ProgressReportsEachObjectAndTheSelectionsBytes) {
  auto z = Array::create(MemoryStore::create(), {.shape = {10, 9}, .chunks = {4, 4}, .dtype = DataType::int16});
  std::atomic<std::int64_t> objects{0};
  std::atomic<std::uint64_t> bytes{0};
  z.set_concurrency(3);
  z.set_progress([&](const ProgressStep& s) {
    objects += s.objects;
    bytes += s.bytes;
  });
  auto reset = [&] {
    objects = 0;
    bytes = 0;
  };
  z.write({slice(1, 9), slice(2, 7)}, NDArray::full<std::int16_t>({8, 5}, 3));
  EXPECT_EQ(objects, 3 * 2);       // rows 1-8 touch chunks 0-2, columns 2-6 chunks 0-1
  EXPECT_EQ(bytes, 8u * 5u * 2u);  // the selection's elements, not the chunks'
  reset();
  (void)z.read({slice(0, 10), 4});
  EXPECT_EQ(objects, 3);
  EXPECT_EQ(bytes, 10u * 2u);
  reset();
  z.prepend(NDArray::full<std::int16_t>({3, 9}, 1), 0);
  EXPECT_EQ(bytes, 3u * 9u * 2u);
  reset();
  z.resize({2, 9});  // keeps row chunk -1 (coordinates -4..-1): removes those with rows 0..9
  EXPECT_EQ(objects, 6);
  EXPECT_EQ(bytes, 0u);
  reset();
  z.set_progress(nullptr);
  (void)z.read();
  EXPECT_EQ(objects, 0);
}

// zarr-python's open modes, read once by the core (decide_open) for every front end: one look at
// the path (none for "w"), and each mode's answer for nothing, the kind wanted, and the other kind.
TEST(OpenModes, EachModeOpensCreatesReplacesOrRefusesFromOneLook) {
  using Step = OpenDecision::Step;
  auto mem = MemoryStore::create();
  Group::create(mem, "g");
  Array::create(mem, "a", {.shape = {2}, .chunks = {2}, .dtype = DataType::int8});
  struct Row {
    const char* mode;
    Step nothing, group, array;  // at "new", "g" and "a", for a group wanted
  };
  const Row rows[] = {
      {"r", Step::refuse, Step::open, Step::refuse},    {"r+", Step::refuse, Step::open, Step::refuse},
      {"a", Step::create, Step::open, Step::refuse},    {"w", Step::replace, Step::replace, Step::replace},
      {"w-", Step::create, Step::refuse, Step::refuse}, {"x", Step::create, Step::refuse, Step::refuse}};
  for (const auto& r : rows) {
    const auto m = parse_open_mode(r.mode);
    SCOPED_TRACE(r.mode);
    EXPECT_EQ(decide_open(mem, "new", m, NodeType::Group).step, r.nothing);
    EXPECT_EQ(decide_open(mem, "g", m, NodeType::Group).step, r.group);
    EXPECT_EQ(decide_open(mem, "a", m, NodeType::Group).step, r.array);
    if (r.array == Step::refuse) {
      EXPECT_EQ(decide_open(mem, "a", m, NodeType::Group).found, NodeType::Array);  // names what is there
    }
  }
  // "w" asks the store nothing; the others once.
  auto rec = std::make_shared<RecordingStore>(mem);
  decide_open(rec, "g", OpenMode::w, NodeType::Group);
  EXPECT_TRUE(rec->ops().empty());
  zarrpp::test::expect_throw_with<ArgumentError>([] { parse_open_mode("rw"); }, {"mode 'rw'", "r, r+, a, w, w-, x"});
}
