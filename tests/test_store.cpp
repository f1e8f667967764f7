// One conformance suite run against every store, plus FileStore's atomicity and key safety.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <filesystem>
#include <thread>

#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
namespace fs = std::filesystem;

namespace {
Bytes B(const std::string& s) { return Bytes(s.begin(), s.end()); }

fs::path temp_dir(const std::string& name) {
  const auto p = fs::temp_directory_path() / ("zarrpp-test-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(p);
  return p;
}

struct StoreFactory {
  std::string name;
  std::function<StorePtr()> make;
};
std::ostream& operator<<(std::ostream& o, const StoreFactory& f) { return o << f.name; }

class StoreConformance : public ::testing::TestWithParam<StoreFactory> {
 protected:
  void SetUp() override { store = GetParam().make(); }
  StorePtr store;
};
}  // namespace

TEST_P(StoreConformance, GetSetEraseExists) {
  EXPECT_FALSE(store->get("a/b").has_value());
  EXPECT_FALSE(store->exists("a/b"));
  store->set("a/b", B("hello"));
  EXPECT_TRUE(store->exists("a/b"));
  EXPECT_EQ(store->get("a/b"), B("hello"));
  store->set("a/b", B(""));
  EXPECT_EQ(store->get("a/b"), B(""));
  store->erase("a/b");
  EXPECT_FALSE(store->exists("a/b"));
  EXPECT_NO_THROW(store->erase("a/b"));  // erasing a missing key is fine
  EXPECT_FALSE(store->exists("a"));      // a directory-like prefix is not a key
}

TEST_P(StoreConformance, ByteRanges) {
  store->set("k", B("0123456789"));
  EXPECT_EQ(store->get("k", ByteRange::range(2, 3)), B("234"));
  EXPECT_EQ(store->get("k", ByteRange::range(8, 100)), B("89"));
  EXPECT_EQ(store->get("k", ByteRange::range(20, 5)), B(""));
  EXPECT_EQ(store->get("k", ByteRange::from(7)), B("789"));
  EXPECT_EQ(store->get("k", ByteRange::last(4)), B("6789"));
  EXPECT_EQ(store->get("k", ByteRange::last(40)), B("0123456789"));
  EXPECT_FALSE(store->get("missing", ByteRange::last(4)).has_value());
}

// Streamed reads: pieces in order, at multiples of the piece size from the range's start, with
// the value's whole size; the store's own or the default (get, then size() for a partial range).
TEST_P(StoreConformance, StreamedReadsDeliverPiecesInOrder) {
  store->set("s/k", B("0123456789"));
  auto collect = [&](const ByteRange& r, std::size_t piece) {
    std::vector<std::pair<std::uint64_t, std::string>> got;
    const bool found = store->get_streamed("s/k", r, piece, [&](std::uint64_t total, std::uint64_t off, std::span<const std::uint8_t> b) {
      EXPECT_EQ(total, 10u);
      got.emplace_back(off, std::string(b.begin(), b.end()));
    });
    EXPECT_TRUE(found);
    return got;
  };
  using V = std::vector<std::pair<std::uint64_t, std::string>>;
  EXPECT_EQ(collect(ByteRange::all(), 4), (V{{0, "0123"}, {4, "4567"}, {8, "89"}}));
  EXPECT_EQ(collect(ByteRange::range(3, 5), 2), (V{{3, "34"}, {5, "56"}, {7, "7"}}));
  EXPECT_EQ(collect(ByteRange::range(20, 5), 4), V{});
  EXPECT_FALSE(store->get_streamed("s/missing", ByteRange::all(), 4, [](std::uint64_t, std::uint64_t, std::span<const std::uint8_t>) {
    ADD_FAILURE() << "no piece for a missing key";
  }));
  EXPECT_THROW(store->get_streamed("../x", ByteRange::all(), 4, [](std::uint64_t, std::uint64_t, std::span<const std::uint8_t>) {}),
               StoreError);
}

TEST_P(StoreConformance, CompareAndSet) {
  EXPECT_TRUE(store->compare_and_set("m", std::nullopt, B("v1")));
  EXPECT_FALSE(store->compare_and_set("m", std::nullopt, B("v2")));
  EXPECT_EQ(store->get("m"), B("v1"));
  EXPECT_FALSE(store->compare_and_set("m", B("other"), B("v2")));
  EXPECT_EQ(store->get("m"), B("v1"));
  EXPECT_TRUE(store->compare_and_set("m", B("v1"), B("v2")));
  EXPECT_EQ(store->get("m"), B("v2"));
}

// Versioned reads and writes conditioned on a version: what read-modify-write builds on.
TEST_P(StoreConformance, WritesConditionedOnTheVersionRead) {
  ASSERT_TRUE(store->capabilities().conditional_writes);
  EXPECT_FALSE(store->get_versioned("v/k").has_value());
  EXPECT_TRUE(store->set_if("v/k", B("one"), std::nullopt));    // create: only if absent
  EXPECT_FALSE(store->set_if("v/k", B("two"), std::nullopt));   // it exists now
  const auto a = store->get_versioned("v/k");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bytes, B("one"));
  EXPECT_FALSE(a->version.empty());
  EXPECT_EQ(store->get_versioned("v/k", ByteRange::range(1, 1))->version, a->version);  // a range names the whole value
  store->set("v/k", B("one"));  // the same bytes written again: a new version all the same
  const auto b = store->get_versioned("v/k");
  EXPECT_NE(b->version, a->version);
  EXPECT_FALSE(store->set_if("v/k", B("stale"), a->version));  // conditioned on an old version: refused
  EXPECT_EQ(store->get("v/k"), B("one"));
  EXPECT_TRUE(store->set_if("v/k", B("three"), b->version));
  EXPECT_EQ(store->get("v/k"), B("three"));
  EXPECT_FALSE(store->set_if("v/k", B("four"), b->version));  // used up
  store->erase("v/k");
  EXPECT_FALSE(store->set_if("v/k", B("five"), b->version));  // gone
  EXPECT_FALSE(store->exists("v/k"));
}

TEST_P(StoreConformance, CompareAndSetFromManyThreadsLosesNothing) {
  store->set("counter", B("0"));
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 25; ++i) {
        for (;;) {
          auto cur = store->get("counter");
          const int v = std::stoi(std::string(cur->begin(), cur->end()));
          if (store->compare_and_set("counter", cur, B(std::to_string(v + 1)))) break;
        }
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(store->get("counter"), B("100"));
}

TEST_P(StoreConformance, ListingAndPrefixErase) {
  for (const char* k : {"zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/-1/0", "ab/x", "b/zarr.json"})
    store->set(k, B(k));
  EXPECT_EQ(store->list_prefix("a/"), (std::vector<std::string>{"a/c/-1/0", "a/c/0/0", "a/c/0/1", "a/zarr.json"}));
  EXPECT_EQ(store->list_prefix("a/c/0/"), (std::vector<std::string>{"a/c/0/0", "a/c/0/1"}));
  EXPECT_EQ(store->list_prefix("a"), (std::vector<std::string>{"a/c/-1/0", "a/c/0/0", "a/c/0/1", "a/zarr.json", "ab/x"}));
  EXPECT_EQ(store->list_prefix("").size(), 7u);
  EXPECT_TRUE(store->list_prefix("nope/").empty());
  auto root = store->list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a", "ab", "b"}));
  auto a = store->list_dir("a/");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(a.prefixes, (std::vector<std::string>{"c"}));
  store->erase_prefix("a/");
  EXPECT_TRUE(store->list_prefix("a/").empty());
  EXPECT_TRUE(store->exists("ab/x"));
  store->erase_prefix("");
  EXPECT_TRUE(store->list_prefix("").empty());
}

TEST_P(StoreConformance, HostileKeysAreRefused) {
  for (const char* k : {"../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "", "a/", "a\\b", "..", ".",
                        "a/.zarrpp-lock.x"}) {
    EXPECT_THROW(store->set(k, B("x")), StoreError) << k;
    EXPECT_THROW(store->get(k), StoreError) << k;
    EXPECT_THROW(store->erase(k), StoreError) << k;
  }
  EXPECT_THROW(store->set(std::string("a\0b", 3), B("x")), StoreError);
  EXPECT_THROW(store->list_prefix("../"), StoreError);
  EXPECT_THROW(store->erase_prefix("../"), StoreError);
}

TEST_P(StoreConformance, LocksExcludeEachOther) {
  std::atomic<int> inside{0}, max_inside{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20; ++i) {
        auto lk = store->lock("arr/zarr.json");
        const int now = ++inside;
        max_inside = std::max(max_inside.load(), now);
        std::this_thread::yield();
        --inside;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(max_inside.load(), 1);
}

INSTANTIATE_TEST_SUITE_P(Stores, StoreConformance,
                         ::testing::Values(StoreFactory{"memory", [] { return StorePtr(MemoryStore::create()); }},
                                           StoreFactory{"file", [] {
                                                          static int n = 0;
                                                          return StorePtr(FileStore::open(temp_dir("conf" + std::to_string(n++))));
                                                        }}),
                         [](const auto& info) { return info.param.name; });

TEST(FileStore, KeysNeverEscapeTheRoot) {
  const auto root = temp_dir("escape");
  auto s = FileStore::open(root / "inner");
  EXPECT_THROW(s->set("../outside", B("x")), StoreError);
  EXPECT_FALSE(fs::exists(root / "outside"));
  s->set("ok/key", B("x"));
  EXPECT_TRUE(fs::exists(root / "inner" / "ok" / "key"));
  EXPECT_EQ(s->path_of("ok/key"), root / "inner" / "ok" / "key");
}

TEST(FileStore, SymlinksNeverLeadOutOfTheRoot) {
  const auto base = temp_dir("symlink");
  fs::create_directories(base / "outside");
  {
    std::ofstream(base / "outside" / "secret") << "top secret";
  }
  auto s = FileStore::open(base / "root");
  fs::create_symlink(base / "outside", base / "root" / "link");           // a directory link out
  fs::create_symlink(base / "outside" / "secret", base / "root" / "file");  // a file link out
  fs::create_directories(base / "root" / "in");
  s->set("in/real", B("inside"));
  fs::create_symlink("real", base / "root" / "in" / "alias");  // stays inside: allowed
  for (const char* k : {"link/secret", "file"}) {
    try {
      s->get(k);
      ADD_FAILURE() << k;
    } catch (const StoreError& e) {
      EXPECT_NE(std::string(e.what()).find("outside the store root"), std::string::npos) << e.what();
    }
    EXPECT_THROW(s->exists(k), StoreError) << k;
  }
  EXPECT_THROW(s->set("link/new", B("x")), StoreError);
  EXPECT_FALSE(fs::exists(base / "outside" / "new"));
  EXPECT_THROW(s->erase_prefix("link/"), StoreError);
  EXPECT_TRUE(fs::exists(base / "outside" / "secret"));
  EXPECT_THROW(s->erase("link/secret"), StoreError);  // the parent resolves outside: refused
  EXPECT_TRUE(fs::exists(base / "outside" / "secret"));
  EXPECT_TRUE(s->list_prefix("link/").empty());
  EXPECT_EQ(s->list_prefix(""), (std::vector<std::string>{"in/real"}));  // symlinks are not listed
  EXPECT_EQ(s->get("in/alias"), B("inside"));
}

TEST(FileStore, TempAndLockFilesAreInvisible) {
  auto s = FileStore::open(temp_dir("hidden"));
  s->set("a/zarr.json", B("{}"));
  { auto lk = s->lock("a/zarr.json"); }
  EXPECT_TRUE(s->compare_and_set("a/zarr.json", B("{}"), B("{ }")));
  EXPECT_EQ(s->list_prefix(""), (std::vector<std::string>{"a/zarr.json"}));
  EXPECT_EQ(s->list_dir("a/").keys, (std::vector<std::string>{"zarr.json"}));
}

TEST(FileStore, MissingRootWithoutCreateIsAnError) {
  EXPECT_THROW(FileStore::open(temp_dir("nope") / "x", FileStore::Options{.create = false}), NotFoundError);
}

TEST(FileStore, ReadersNeverSeeHalfAValue) {
  auto s = FileStore::open(temp_dir("atomic"));
  const Bytes a(1 << 20, 'a'), b(1 << 20, 'b');
  s->set("k", a);
  std::atomic<bool> stop{false};
  std::atomic<int> torn{0}, reads{0};
  std::thread reader([&] {
    while (!stop) {
      auto v = s->get("k");
      ++reads;
      if (!v || (*v != a && *v != b)) ++torn;
    }
  });
  for (int i = 0; i < 200; ++i) s->set("k", i % 2 ? a : b);
  stop = true;
  reader.join();
  EXPECT_GT(reads.load(), 0);
  EXPECT_EQ(torn.load(), 0);
}

TEST(FileStore, CompareAndSetAcrossProcesses) {
  const auto root = temp_dir("cas-procs");
  FileStore::open(root)->set("n", B("0"));
  constexpr int kProcs = 3, kIncrements = 30;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcs; ++p) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      auto s = FileStore::open(root);
      for (int i = 0; i < kIncrements; ++i)
        for (;;) {
          auto cur = s->get("n");
          const int v = std::stoi(std::string(cur->begin(), cur->end()));
          if (s->compare_and_set("n", cur, B(std::to_string(v + 1)))) break;
        }
      ::_exit(0);
    }
    pids.push_back(pid);
  }
  for (auto pid : pids) {
    int st = 0;
    ::waitpid(pid, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  EXPECT_EQ(FileStore::open(root)->get("n"), B(std::to_string(kProcs * kIncrements)));
}

TEST(TestStores, RecordingStoreRecordsAndFaultyStoreFailsTheNth) {
  auto mem = MemoryStore::create();
  auto rec = std::make_shared<RecordingStore>(mem);
  rec->set("a", B("1"));
  rec->get("a", ByteRange::last(1));
  rec->erase("a");
  const auto ops = rec->ops();
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].kind, StoreOp::Kind::Set);
  EXPECT_EQ(ops[1].kind, StoreOp::Kind::Get);
  EXPECT_EQ(ops[1].range.kind, ByteRange::Kind::Suffix);
  EXPECT_EQ(rec->keys({StoreOp::Kind::Erase}), (std::vector<std::string>{"a"}));

  auto faulty = std::make_shared<FaultyStore>(mem, 1);
  faulty->set("x", B("1"));
  EXPECT_THROW(faulty->set("y", B("2")), StoreError);
  EXPECT_TRUE(faulty->fired());
  EXPECT_FALSE(mem->exists("y"));
  faulty->set("y", B("2"));  // works again afterwards
  EXPECT_TRUE(mem->exists("y"));
}
