// Data safety (issue: data safety): a failed write changes nothing; concurrent writers lose
// nothing; destructive operations touch only the node they were told to replace.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "zarrpp/store/testing.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;

namespace {
std::map<std::string, Bytes> snapshot_of(Store& s) {
  std::map<std::string, Bytes> out;
  for (const auto& k : s.list_prefix("")) out[k] = *s.get(k);
  return out;
}
}  // namespace

// ---- 2. A failed write changes nothing -------------------------------------------------------------

TEST(FailedWrite, ACorruptChunkFailsTheWriteBeforeAnyChunkIsWritten) {
  for (bool sharded : {false, true}) {
    SCOPED_TRACE(sharded ? "sharded" : "chunks");
    auto mem = MemoryStore::create();
    ArraySpec spec{.shape = {6, 2}, .chunks = {2, 2}, .dtype = DataType::int32, .crc32c = true};
    if (sharded) spec.shards = Shape{2, 2};
    auto z = Array::create(mem, spec);
    z.fill<std::int32_t>(1);
    // c/1/0 corrupt: one byte of its data flipped (its checksum no longer matches)
    auto bad = *mem->get("c/1/0");
    bad[0] ^= 0xff;
    mem->set("c/1/0", bad);
    const auto before = snapshot_of(*mem);
    // Column 0 of every chunk: three read-modify-writes, the second of which cannot decode.
    for (std::size_t conc : {std::size_t{1}, std::size_t{4}}) {
      z.set_concurrency(conc);
      const auto c = catch_error([&] { z.write_scalar<std::int32_t>({slice(0, 6), 0}, 99); });
      EXPECT_TRUE(c.thrown);
      EXPECT_EQ(c.code, ErrorCode::corrupt_data) << c.what;
      EXPECT_TRUE(c.has("c/1/0")) << c.what;
      EXPECT_EQ(snapshot_of(*mem), before) << "a chunk was rewritten before the corrupt one was found";
    }
  }
}

TEST(FailedWrite, AnErrorAfterChunksWereWrittenSaysHowManyWere) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {6, 2}, .chunks = {2, 2}, .dtype = DataType::int32});
  // Whole-chunk writes of three chunks; the store fails at some write after the first.
  bool saw_partial = false;
  for (std::int64_t fail_at = 0; fail_at < 12 && !saw_partial; ++fail_at) {
    auto faulty = std::make_shared<FaultyStore>(mem, fail_at);
    const auto c = catch_error([&] {
      auto f = Array::open(faulty);
      f.set_concurrency(1);
      f.write({}, NDArray::full<std::int32_t>({6, 2}, 3).view());
    });
    if (!c.thrown) break;
    if (c.has("of 3 chunks of this write were written")) {
      saw_partial = true;
      EXPECT_EQ(c.code, ErrorCode::store_failure) << c.what;
      EXPECT_TRUE(c.has("the others are unchanged")) << c.what;
    }
  }
  EXPECT_TRUE(saw_partial);
}

// ---- 3. Concurrent writers lose nothing ------------------------------------------------------------

// Threads each write their own column of one chunk (read-modify-writes of the same chunk) while
// another thread prepends and appends rows into it, every handle opened once at the start (so
// their view of the domain goes stale). Every write must be there, every time.
TEST(ConcurrentWriters, DisjointWritesIntoOneChunkWhileItGrowsLoseNothing) {
  for (const char* kind : {"memory", "file"}) {
    SCOPED_TRACE(kind);
    TempDir dir("race");
    for (int round = 0; round < 4; ++round) {
      StorePtr store = std::string(kind) == "memory" ? StorePtr(MemoryStore::create())
                                                     : StorePtr(FileStore::open((dir / std::to_string(round)).string()));
      // One chunk of 8 rows covering rows [-4, 4): the domain starts as rows [0, 2).
      Array::create(store, {.shape = {2, 8}, .chunks = {8, 8}, .dtype = DataType::int32, .lower_bound = Shape{0, 0},
                            .origin = Shape{-4, 0}});
      constexpr int kWriters = 6, kWritesEach = 8;
      std::atomic<bool> go{false};
      std::atomic<int> ready{0};  // every handle is opened before anyone writes
      std::vector<std::thread> ts;
      for (int w = 0; w < kWriters; ++w)
        ts.emplace_back([&, w] {
          auto a = Array::open(store);
          ++ready;
          while (!go) std::this_thread::yield();
          for (int i = 0; i < kWritesEach; ++i) {
            // rows 0..1 stay rows 0..1 of this handle's (stale) domain: the original rows
            a.write_scalar<std::int32_t>({slice(0, 2), w}, 100 * (w + 1) + i);
          }
        });
      ts.emplace_back([&] {
        auto a = Array::open(store);
        ++ready;
        while (!go) std::this_thread::yield();
        for (int i = 0; i < 2; ++i) {
          a.prepend(NDArray::full<std::int32_t>({1, 8}, -1 - i).view());
          a.append(NDArray::full<std::int32_t>({1, 8}, 50 + i).view());
        }
      });
      while (ready < kWriters + 1) std::this_thread::yield();
      go = true;
      for (auto& t : ts) t.join();
      auto z = Array::open(store);
      ASSERT_EQ(z.domain(), (Domain{{-2, 4}, {0, 8}}));
      const auto v = z.read().to_vector<std::int32_t>();
      // rows -2, -1: the prepends; rows 0, 1: the writers' last values in their columns; rows 2, 3
      // the appends.
      for (int c = 0; c < 8; ++c) {
        EXPECT_EQ(v[0 * 8 + c], -2) << "prepended row lost, column " << c;
        EXPECT_EQ(v[1 * 8 + c], -1) << "prepended row lost, column " << c;
        const std::int32_t want = c < kWriters ? 100 * (c + 1) + kWritesEach - 1 : 0;
        EXPECT_EQ(v[2 * 8 + c], want) << "write lost, column " << c;
        EXPECT_EQ(v[3 * 8 + c], want) << "write lost, column " << c;
        EXPECT_EQ(v[4 * 8 + c], 50) << "appended row lost, column " << c;
        EXPECT_EQ(v[5 * 8 + c], 51) << "appended row lost, column " << c;
      }
    }
  }
}

TEST(ConcurrentWriters, ShardPartialWritesFromManyThreadsLoseNothing) {
  TempDir dir("shardrace");
  auto store = FileStore::open((dir / "a.zarr").string());
  Array::create(store, {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::uint8, .shards = Shape{8, 8}});
  std::vector<std::thread> ts;
  for (int w = 0; w < 8; ++w)
    ts.emplace_back([&, w] {
      auto a = Array::open(store);
      a.set_concurrency(1);
      for (int c = 0; c < 8; ++c) a.write_scalar<std::uint8_t>({w, c}, static_cast<std::uint8_t>(w * 8 + c + 1));
    });
  for (auto& t : ts) t.join();
  const auto v = Array::open(store).read().to_vector<std::uint8_t>();
  for (int i = 0; i < 64; ++i) EXPECT_EQ(v[i], i + 1) << "element " << i;
}

TEST(ConcurrentWriters, NoBookkeepingFileIsLeftInTheArraysFolder) {
  TempDir dir("nolocks");
  const auto root = dir / "a.zarr";
  auto store = FileStore::open(root.string());
  auto z = Array::create(store, {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int16});
  z.write_scalar<std::int16_t>({slice(0, 1), slice(0, 3)}, 4);  // partial: conditional writes
  z.prepend(NDArray::full<std::int16_t>({1, 4}, 1).view());     // the growth lock
  z.set_attributes({{"a", 1}});
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    const auto name = e.path().filename().string();
    EXPECT_EQ(name.find(".zarrpp"), std::string::npos) << e.path();
  }
}
