// Hostile and careless input, by class (issue: data safety): each case is refused quickly, in
// bounded memory, with a specific error, and changes nothing.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include <chrono>
#include <string>

#include "common.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using namespace zarrpp::test;

namespace {
const char* kArrayHead =
    R"({"zarr_format": 3, "node_type": "array", "shape": [4], "data_type": "int8",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [2]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 0, "codecs": [{"name": "bytes"}], "attributes": )";
}  // namespace

// ---- JSON: nesting, many keys, amplification ------------------------------------------------------

TEST(HostileJson, DeepNestingIsRefusedNotACrash) {
  auto store = MemoryStore::create();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  store->set("zarr.json", B(std::string(kArrayHead) + R"({"a": )" + deep + "}}"));
  expect_error<MetadataError>([&] { Array::open(store); }, ErrorCode::invalid_metadata, {"nested deeper than 256 levels"});
  // Just under the cap is fine.
  const std::string ok = std::string(250, '[') + std::string(250, ']');
  store->set("zarr.json", B(std::string(kArrayHead) + R"({"a": )" + ok + "}}"));
  EXPECT_NO_THROW(Array::open(store));
  // Attributes given in code are held to the same cap.
  auto z = Array::create(MemoryStore::create(), {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  Json v = Json::array();
  for (int i = 0; i < 300; ++i) v = Json::array({v});
  expect_error<MetadataError>([&] { z.update_attributes({{"deep", v}}); }, ErrorCode::invalid_metadata, {"nested deeper"});
  EXPECT_TRUE(z.attributes().empty());
}

TEST(HostileJson, ManyAttributesParseInLinearTime) {
  std::string attrs = "{";
  for (int i = 0; i < 200000; ++i) attrs += (i ? ",\"k" : "\"k") + std::to_string(i) + "\": " + std::to_string(i);
  attrs += "}";
  auto store = MemoryStore::create();
  store->set("zarr.json", B(std::string(kArrayHead) + attrs + "}"));
  const auto t0 = std::chrono::steady_clock::now();
  auto z = Array::open(store);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(z.attributes().size(), 200000u);
  EXPECT_EQ(z.attributes()["k199999"], 199999);
  EXPECT_LT(secs, 20.0) << "quadratic parsing took 48 s for this document";
  // Keys keep their order; a repeated key keeps its last value (as Python's json does).
  store->set("zarr.json", B(std::string(kArrayHead) + R"({"b": 1, "a": 2, "b": 3}})"));
  const auto a = Array::open(store).attributes();
  EXPECT_EQ(a.dump(), R"({"b":3,"a":2})");
}

TEST(HostileJson, RewritingMetadataNeverAmplifiesIt) {
  auto store = MemoryStore::create();
  // 20 KB of nested attributes: indenting every level on its own line would make MBs of spaces.
  std::string nested;
  for (int i = 0; i < 200; ++i) nested += "[1, ";
  nested += "2";
  for (int i = 0; i < 200; ++i) nested += "]";
  std::string attrs = "{";
  for (int i = 0; i < 20; ++i) attrs += (i ? ",\"n" : "\"n") + std::to_string(i) + "\": " + nested;
  attrs += "}";
  store->set("zarr.json", B(std::string(kArrayHead) + attrs + "}"));
  const auto before = store->get("zarr.json")->size();
  auto z = Array::open(store);
  z.resize({6});
  const auto after = store->get("zarr.json")->size();
  EXPECT_LT(after, 2 * before) << before << " bytes became " << after;
  EXPECT_EQ(Array::open(store).attributes(), z.attributes());
}

// ---- sizes from untrusted stores are checked before allocating ---------------------------------------

TEST(HostileStore, ValuesLargerThanTheyCanBeAreRefusedBeforeReading) {
  TempDir dir("big");
  auto store = FileStore::open(dir.path());
  auto z = Array::create(store, "z", {.shape = {4}, .chunks = {2}, .dtype = DataType::int8, .compressor = codec::Zstd{}});
  z.fill<std::int8_t>(1);
  // A "chunk" of 64 MiB where a few bytes are the most it can hold: refused, not read.
  auto plant = [&](const char* name) {
    std::ofstream f(dir / "z" / "c" / name, std::ios::binary | std::ios::trunc);
    f.seekp((64 << 20) - 1);
    f.put('\0');
  };
  plant("0");
  expect_error<StoreError>([&] { (void)z.read(); }, ErrorCode::limit_exceeded, {"z/c/0", "67108864 bytes"});
  // Uncompressed chunks are streamed: the size is checked before anything is read.
  auto u = Array::create(store, "u", {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  u.fill<std::int8_t>(1);
  {
    std::ofstream f(dir / "u" / "c" / "0", std::ios::binary | std::ios::trunc);
    f.seekp((64 << 20) - 1);
    f.put('\0');
  }
  expect_error<CodecError>([&] { (void)u.read(); }, ErrorCode::corrupt_data, {"c/0", "expected 2 bytes", "67108864"});
  expect_error<StoreError>([&] { (void)store->get("z/c/0", ByteRange::all(), 100); }, ErrorCode::limit_exceeded, {"more than the 100"});
  EXPECT_EQ(store->get("z/c/0", ByteRange::range(0, 10), 100)->size(), 10u);
}

TEST(HostileStore, FifosAndDirectoriesAreErrorsNotHangsOrMissing) {
  TempDir dir("fifo");
  auto store = FileStore::open(dir.path());
  auto z = Array::create(store, {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  z.fill<std::int8_t>(1);
  std::filesystem::remove(dir / "c" / "0");
  ASSERT_EQ(::mkfifo((dir / "c" / "0").c_str(), 0644), 0);
  const auto t0 = std::chrono::steady_clock::now();
  expect_error<StoreError>([&] { (void)z.read(); }, ErrorCode::store_failure, {"FIFO"});
  std::filesystem::remove(dir / "c" / "0");
  std::filesystem::create_directory(dir / "c" / "0");
  expect_error<StoreError>([&] { (void)z.read(); }, ErrorCode::store_failure, {"directory"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);
}
