// Data safety (issue: data safety): a failed write changes nothing; concurrent writers lose
// nothing; destructive operations touch only the node they were told to replace.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "common.hpp"
#include "core/temp_names.hpp"
#include "zarrpp/testing/store_doubles.hpp"
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
      StorePtr store = std::string(kind) == "memory"
                           ? StorePtr(MemoryStore::create())
                           : StorePtr(FileStore::open((dir / std::to_string(round)).string()));
      // One chunk of 8 rows covering rows [-4, 4): the domain starts as rows [0, 2).
      Array::create(store, {.shape = {2, 8},
                            .chunks = {8, 8},
                            .dtype = DataType::int32,
                            .lower_bound = Shape{0, 0},
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

// ---- 1. Destructive operations are explicit, bounded and all-or-nothing ----------------------------

TEST(Overwrite, DeletesOnlyWhatBelongsToTheNode) {
  TempDir dir("over");
  const auto root = dir / "a.zarr";
  auto store = FileStore::open(root.string());
  auto z = Array::create(store, {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int16});
  z.fill<std::int16_t>(3);
  std::filesystem::create_directories(root / "c" / "mine");
  std::ofstream(root / "notes.txt") << "mine";
  std::ofstream(root / "c" / "mine" / "x.txt") << "mine";
  std::ofstream(root / "c" / "readme") << "mine";  // not a chunk key of a 2-d array
  auto z2 = Array::create(store, {.shape = {4}, .chunks = {4}, .dtype = DataType::int8, .overwrite = true});
  EXPECT_TRUE(fs::exists(root / "notes.txt"));
  EXPECT_TRUE(fs::exists(root / "c" / "mine" / "x.txt"));
  EXPECT_TRUE(fs::exists(root / "c" / "readme"));
  EXPECT_FALSE(fs::exists(root / "c" / "0" / "0"));
  EXPECT_EQ(z2.read().to_vector<std::int8_t>(), (std::vector<std::int8_t>{0, 0, 0, 0}));
  // A group replaced: its child nodes go, other files stay.
  auto g = Group::create(store, "", Json::object(), true);
  Array::create(store, "g/kid", {.shape = {2}, .chunks = {2}, .dtype = DataType::int8}).fill<std::int8_t>(1);
  std::ofstream(root / "g" / "keep.txt") << "mine";
  remove_node(store, "g");
  EXPECT_FALSE(fs::exists(root / "g" / "kid"));
  EXPECT_FALSE(store->exists("g/zarr.json"));
  EXPECT_TRUE(fs::exists(root / "g" / "keep.txt"));
  EXPECT_TRUE(fs::exists(root / "notes.txt"));
}

TEST(Overwrite, StopsAtTheFirstDeletionErrorAndSaysSo) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {8}, .chunks = {2}, .dtype = DataType::int8});
  z.fill<std::int8_t>(1);
  // Fail the second erase, forever: the create must fail, not report success over old data.
  for (std::int64_t at = 0; at < 40; ++at) {
    auto copy = MemoryStore::create();
    for (const auto& k : mem->list_prefix("")) copy->set(k, *mem->get(k));
    auto faulty = std::make_shared<FaultyStore>(copy, at, true);
    const auto c = catch_error(
        [&] { Array::create(faulty, {.shape = {8}, .chunks = {2}, .dtype = DataType::int16, .overwrite = true}); });
    if (!c.thrown) break;
    // Whatever failed: the old array whole, no node at all (zarr.json goes first), or the new
    // array without old chunks; never an old zarr.json over some of its chunks, nor a new array
    // over old ones.
    if (!copy->exists("zarr.json")) {
      EXPECT_TRUE(c.has("no longer opens") || c.has("nothing was deleted") || !c.has("removing")) << c.what;
    } else if (auto now = Array::open(copy); now.dtype() == DataType::int16) {
      EXPECT_EQ(now.nshards_stored(), 0) << "new array shows old chunks (fault at " << at << ")";
    } else {
      EXPECT_EQ(now.read().to_vector<std::int8_t>(), std::vector<std::int8_t>(8, 1))
          << "old array torn (fault at " << at << ")";
    }
    // Doing it again finishes the job.
    auto z2 = Array::create(copy, {.shape = {8}, .chunks = {2}, .dtype = DataType::int16, .overwrite = true});
    EXPECT_EQ(z2.nshards_stored(), 0);
  }
}

TEST(Overwrite, BrokenMetadataIsNotGuessedAround) {
  auto mem = MemoryStore::create();
  mem->set("zarr.json", B("{not json"));
  mem->set("c/0", B("x"));
  mem->set("other", B("y"));
  const auto c = catch_error(
      [&] { Array::create(mem, {.shape = {2}, .chunks = {2}, .dtype = DataType::int8, .overwrite = true}); });
  EXPECT_EQ(c.code, ErrorCode::invalid_metadata) << c.what;
  EXPECT_TRUE(c.has("nothing was deleted")) << c.what;
  EXPECT_TRUE(mem->exists("c/0"));
  EXPECT_TRUE(mem->exists("other"));
}

TEST(Overwrite, StrayChunksWithoutMetadataAreNotAdopted) {
  auto mem = MemoryStore::create();
  mem->set("c/0", B("junk"));  // an interrupted removal left a chunk key without a zarr.json
  expect_error<ConflictError>([&] { Array::create(mem, {.shape = {4}, .chunks = {2}, .dtype = DataType::int8}); },
                              ErrorCode::already_exists, {"chunk key", "c/0"});
  EXPECT_TRUE(mem->exists("c/0"));
  auto z = Array::create(mem, {.shape = {4}, .chunks = {2}, .dtype = DataType::int8, .overwrite = true});
  EXPECT_FALSE(mem->exists("c/0"));
  EXPECT_EQ(z.read().to_vector<std::int8_t>(), (std::vector<std::int8_t>{0, 0, 0, 0}));
}

TEST(Copy, RefusesTheSameOrNestedNodes) {
  TempDir dir("copy");
  auto s1 = FileStore::open((dir / "g").string());
  auto src = Array::create(s1, "arr", {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  src.fill<std::int8_t>(5);
  const auto meta = src.metadata();
  auto same = FileStore::open((dir / "g" / "." / "arr" / "").string());
  expect_error<ArgumentError>([&] { copy_array(src, same, "", meta, {.overwrite = true}); },
                              ErrorCode::invalid_argument, {"same node"});
  expect_error<ArgumentError>([&] { copy_array(src, s1, "", meta, {.overwrite = true}); }, ErrorCode::invalid_argument,
                              {"source lies inside the destination"});
  expect_error<ArgumentError>([&] { copy_array(src, s1, "arr/sub", meta); }, ErrorCode::invalid_argument,
                              {"destination lies inside"});
  fs::create_directory_symlink(dir / "g", dir / "link");
  expect_error<ArgumentError>(
      [&] { copy_array(src, FileStore::open((dir / "link").string()), "arr", meta, {.overwrite = true}); },
      ErrorCode::invalid_argument, {"same node"});
  EXPECT_EQ(Array::open(s1, "arr").read().to_vector<std::int8_t>(), (std::vector<std::int8_t>{5, 5, 5, 5}));
}

TEST(Copy, ACorruptSourceLeavesTheDestinationAsItWas) {
  auto src_store = MemoryStore::create();
  auto src = Array::create(src_store, {.shape = {6}, .chunks = {2}, .dtype = DataType::int32, .crc32c = true});
  src.fill<std::int32_t>(7);
  auto bad = *src_store->get("c/2");
  bad[0] ^= 1;
  src_store->set("c/2", bad);
  auto dst = MemoryStore::create();
  auto old = Array::create(dst, {.shape = {3}, .chunks = {3}, .dtype = DataType::int8});
  old.fill<std::int8_t>(1);
  const auto before = snapshot_of(*dst);
  ArrayMetadata m = src.metadata();
  m.chunk_grid.chunk_shape = {3};
  const auto c = catch_error([&] { copy_array(src, dst, "", m, {.overwrite = true}); });
  EXPECT_EQ(c.code, ErrorCode::corrupt_data) << c.what;
  EXPECT_EQ(snapshot_of(*dst), before);
  // To a new place: nothing is left behind.
  auto fresh = MemoryStore::create();
  EXPECT_TRUE(catch_error([&] { copy_array(src, fresh, "x", m); }).thrown);
  EXPECT_TRUE(fresh->list_prefix("x/").empty());
}

TEST(Copy, WalksOnlyStoredChunks) {
  auto src_store = MemoryStore::create();
  const std::int64_t huge = std::int64_t{1} << 30;  // 10^18 elements, ~7e16 grid positions
  auto src = Array::create(src_store, {.shape = {huge, huge}, .chunks = {4, 4}, .dtype = DataType::uint8});
  src.write_scalar<std::uint8_t>({huge - 1, 3}, 9);
  auto rec = std::make_shared<RecordingStore>(MemoryStore::create());
  ArrayMetadata m = src.metadata();
  m.chunk_grid.chunk_shape = {8, 8};
  const auto t0 = std::chrono::steady_clock::now();
  auto dst = copy_array(src, rec, "", m);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10.0);
  EXPECT_EQ(dst.stored_chunk_keys(), (std::vector<std::string>{"c/" + std::to_string((huge - 1) / 8) + "/0"}));
  EXPECT_EQ(dst.read({huge - 1, 3}).to_vector<std::uint8_t>(), (std::vector<std::uint8_t>{9}));
  // zarr.json is the last thing written.
  const auto ops = rec->ops();
  std::size_t last_set = 0;
  for (std::size_t i = 0; i < ops.size(); ++i)
    if (ops[i].kind == StoreOp::Kind::Set || ops[i].kind == StoreOp::Kind::SetIf) last_set = i;
  EXPECT_EQ(ops[last_set].key, "zarr.json");
}

// ---- growth edge cases -----------------------------------------------------------------------------

TEST(Growth0, ZeroRowsChangeNothing) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {4, 2}, .chunks = {2, 2}, .dtype = DataType::int8});
  const auto before = *mem->get("zarr.json");
  z.prepend(NDArray(DataType::int8, {0, 2}).view());
  z.append(NDArray(DataType::int8, {0, 2}).view());
  EXPECT_EQ(*mem->get("zarr.json"), before);
  EXPECT_EQ(z.metadata().chunk_grid.name(), "regular");
  // the data is still checked
  EXPECT_TRUE(catch_error([&] { z.prepend(NDArray(DataType::int8, {0, 3}).view()); }).thrown);
}

TEST(Create, RefusesChunksThatCouldNeverBeWritten) {
  auto mem = MemoryStore::create();
  expect_error<LimitError>(
      [&] {
        Array::create(
            mem, {.shape = {std::int64_t{1} << 32, 4}, .chunks = {std::int64_t{1} << 32, 4}, .dtype = DataType::int8});
      },
      ErrorCode::limit_exceeded, {"4 GiB"});
  expect_error<LimitError>(
      [&] {
        Array::create(mem, {.shape = {std::int64_t{3} << 29},
                            .chunks = {std::int64_t{3} << 29},
                            .dtype = DataType::int16,
                            .compressor = codec::Blosc{}});
      },
      ErrorCode::limit_exceeded, {"blosc", "limit"});
  EXPECT_FALSE(mem->exists("zarr.json"));
  // Sharded: the inner chunk is what must fit.
  EXPECT_NO_THROW(Array::create(mem, {.shape = {std::int64_t{1} << 33},
                                      .chunks = {1 << 20},
                                      .dtype = DataType::int8,
                                      .shards = Shape{std::int64_t{1} << 33}}));
}

TEST(Temps, StaleTemporaryFilesOfKilledWritersAreRemovedOnTheNextWrite) {
  TempDir dir("temps");
  const auto root = dir / "a.zarr";
  auto store = FileStore::open(root.string());
  auto z = Array::create(store, {.shape = {4}, .chunks = {2}, .dtype = DataType::int8});
  fs::create_directories(root / "c");
  // a dead writer's temp file, an hour old; a live one (this process), fresh
  // a dead writer's temp file, an hour old; a live one (this process), fresh; another machine's
  // with a pid unknown here, an hour old (only a day's age makes it stale)
  // (this machine's tag, as the file store names temp files: src/core/temp_names.hpp)
  const std::string tag = detail::host_tag();
  const auto dead = root / "c" / (".zarrpp-tmp-" + tag + "-999999999-1-0");
  const auto live = root / "c" / (".zarrpp-tmp-" + tag + "-" + std::to_string(::getpid()) + "-77-0");
  const auto remote = root / "c" / ".zarrpp-tmp-0badf00d-999999999-1-0";
  std::ofstream(dead) << "x";
  std::ofstream(live) << "x";
  std::ofstream(remote) << "x";
  const auto old = fs::file_time_type::clock::now() - std::chrono::hours(1);
  fs::last_write_time(dead, old);
  fs::last_write_time(remote, old);
  auto z2 = Array::open(FileStore::open(root.string()));
  z2.write_scalar<std::int8_t>({0}, 1);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(remote));
  fs::remove(live);
  fs::remove(remote);
}

TEST(Shrink, AFailureAfterTheSwitchSaysTheNewDomainIsInEffect) {
  auto mem = MemoryStore::create();
  auto z = Array::create(mem, {.shape = {8}, .chunks = {2}, .dtype = DataType::int8});
  z.fill<std::int8_t>(1);
  bool seen = false;
  for (std::int64_t at = 0; at < 40 && !seen; ++at) {
    auto copy = MemoryStore::create();
    for (const auto& k : mem->list_prefix("")) copy->set(k, *mem->get(k));
    auto faulty = std::make_shared<FaultyStore>(copy, at, true);
    const auto c = catch_error([&] { Array::open(faulty).resize({2}); });
    if (!c.thrown) break;
    if (c.has("the new domain [0:2] is in effect")) {
      seen = true;
      EXPECT_EQ(Array::open(copy).shape(), (Shape{2}));
    }
  }
  EXPECT_TRUE(seen);
}

TEST(ConcurrentWriters, StoresOpenedOnOverlappingFoldersShareTheirLocks) {
  TempDir dir("overlap");
  auto outer = FileStore::open(dir.path());
  std::filesystem::create_directories(dir / "a");
  auto inner = FileStore::open(dir / "a");
  outer->set("a/n", B("0"));
  constexpr int kThreads = 4, kEach = 40;
  std::vector<std::thread> ts;
  for (int t = 0; t < 2 * kThreads; ++t)
    ts.emplace_back([&, t] {
      Store& s = t % 2 ? static_cast<Store&>(*inner) : static_cast<Store&>(*outer);
      const std::string key = t % 2 ? "n" : "a/n";
      for (int i = 0; i < kEach;) {
        const auto cur = s.get_versioned(key);
        const std::string next = std::to_string(std::stoi(S(cur->bytes)) + 1);
        if (s.set(key, B(next), WriteOptions::if_equal(cur->version))) ++i;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(S(*outer->get("a/n")), std::to_string(2 * kThreads * kEach));
}

TEST(Copy, AnotherFillValueStillCopiesWhatTheSourceDoesNotStore) {
  auto src_store = MemoryStore::create();
  auto src = Array::create(src_store, {.shape = {6}, .chunks = {2}, .dtype = DataType::int8});
  src.write_scalar<std::int8_t>({0}, 5);  // chunks 1 and 2 not stored: they read as 0
  ArrayMetadata m = src.metadata();
  m.fill_value.bytes = parse_fill_value(Json(9), DataType::int8);
  auto dst = copy_array(src, MemoryStore::create(), "", m);
  EXPECT_EQ(dst.read().to_vector<std::int8_t>(), (std::vector<std::int8_t>{5, 0, 0, 0, 0, 0}));
}

TEST(Overwrite, KeepsTheUsersEmptyFoldersAndPrunesOnlyItsOwn) {
  TempDir dir("prune");
  const auto root = dir / "a.zarr";
  auto store = FileStore::open(root.string());
  Array::create(store, {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int8}).fill<std::int8_t>(1);
  fs::create_directories(root / "mine" / "empty");
  remove_node(store, "");
  EXPECT_TRUE(fs::is_directory(root / "mine" / "empty"));
  EXPECT_FALSE(fs::exists(root / "c"));
  EXPECT_FALSE(fs::exists(root / "zarr.json"));
}
