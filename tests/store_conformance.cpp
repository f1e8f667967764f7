// The store conformance suite (see store_conformance.hpp): get/set/erase, ranges, streaming,
// versions and conditional writes, compare-and-swap under contention, listing, hostile keys, locks.
#include "store_conformance.hpp"

#include <atomic>
#include <thread>

using namespace zarrpp;
using namespace zarrpp::test;

// Which binary instantiates it depends on the stores it has: this suite may have no
// instantiation in a binary without stores of its own.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(StoreConformance);

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
  EXPECT_EQ(store->get("k", ByteRange::range(4, 0)), B(""));
  EXPECT_EQ(store->get("k", ByteRange::from(10)), B(""));
  EXPECT_EQ(store->get("k", ByteRange::from(7)), B("789"));
  EXPECT_EQ(store->get("k", ByteRange::last(4)), B("6789"));
  EXPECT_EQ(store->get("k", ByteRange::last(40)), B("0123456789"));
  EXPECT_FALSE(store->get("missing", ByteRange::last(4)).has_value());
  EXPECT_FALSE(store->get("missing", ByteRange::range(0, 0)).has_value());
  store->set("e", B(""));
  EXPECT_EQ(store->get("e", ByteRange::last(3)), B(""));
}

// Streamed reads: pieces in order, at multiples of the piece size from the range's start, with
// the value's whole size; the store's own or the default (get, then size() for a partial range).
TEST_P(StoreConformance, StreamedReadsDeliverPiecesInOrder) {
  store->set("s/k", B("0123456789"));
  auto collect = [&](const ByteRange& r, std::size_t piece) {
    std::vector<std::pair<std::uint64_t, std::string>> got;
    const bool found = store->get_streamed(
        "s/k", r, piece, [&](std::uint64_t total, std::uint64_t off, std::span<const std::uint8_t> b) {
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
  EXPECT_FALSE(store->get_streamed("s/missing", ByteRange::all(), 4,
                                   [](std::uint64_t, std::uint64_t, std::span<const std::uint8_t>) {
                                     ADD_FAILURE() << "no piece for a missing key";
                                   }));
  EXPECT_THROW(store->get_streamed("../x", ByteRange::all(), 4,
                                   [](std::uint64_t, std::uint64_t, std::span<const std::uint8_t>) {}),
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
  EXPECT_FALSE(store->compare_and_set("never", B("x"), B("y")));
  EXPECT_FALSE(store->exists("never"));
}

// Versioned reads and writes conditioned on a version: what read-modify-write builds on.
TEST_P(StoreConformance, WritesConditionedOnTheVersionRead) {
  ASSERT_TRUE(store->capabilities().conditional_writes);
  EXPECT_FALSE(store->get_versioned("v/k").has_value());
  EXPECT_TRUE(store->set("v/k", B("one"), WriteOptions::if_equal(std::nullopt)));   // create: only if absent
  EXPECT_FALSE(store->set("v/k", B("two"), WriteOptions::if_equal(std::nullopt)));  // it exists now
  const auto a = store->get_versioned("v/k");
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->bytes, B("one"));
  EXPECT_FALSE(a->version.empty());
  EXPECT_EQ(store->get_versioned("v/k", ByteRange::range(1, 1))->version, a->version);  // a range names the whole value
  // A write of other bytes makes a new version. (The same bytes written again may keep it: S3's
  // ETag is their digest. A write conditioned on it then replaces exactly what was read, which is
  // all read-modify-write needs.)
  store->set("v/k", B("ONE"));
  const auto b = store->get_versioned("v/k");
  EXPECT_NE(b->version, a->version);
  EXPECT_FALSE(
      store->set("v/k", B("stale"), WriteOptions::if_equal(a->version)));  // conditioned on an old version: refused
  EXPECT_EQ(store->get("v/k"), B("ONE"));
  EXPECT_TRUE(store->set("v/k", B("three"), WriteOptions::if_equal(b->version)));
  EXPECT_EQ(store->get("v/k"), B("three"));
  EXPECT_FALSE(store->set("v/k", B("four"), WriteOptions::if_equal(b->version)));  // used up
  store->erase("v/k");
  EXPECT_FALSE(store->set("v/k", B("five"), WriteOptions::if_equal(b->version)));  // gone
  EXPECT_FALSE(store->exists("v/k"));
}

TEST_P(StoreConformance, CompareAndSetFromManyThreadsLosesNothing) {
  store->set("counter", B("0"));
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 25 / GetParam().slowness; ++i) {
        for (;;) {
          auto cur = store->get("counter");
          const int v = std::stoi(std::string(cur->begin(), cur->end()));
          if (store->compare_and_set("counter", cur, B(std::to_string(v + 1)))) break;
        }
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(store->get("counter"), B(std::to_string(4 * (25 / GetParam().slowness))));
}

TEST_P(StoreConformance, ListingAndPrefixErase) {
  for (const char* k : {"zarr.json", "a/zarr.json", "a/c/0/0", "a/c/0/1", "a/c/-1/0", "ab/x", "b/zarr.json"})
    store->set(k, B(k));
  EXPECT_EQ(store->list_prefix("a/"), (std::vector<std::string>{"a/c/-1/0", "a/c/0/0", "a/c/0/1", "a/zarr.json"}));
  EXPECT_EQ(store->list_prefix("a/c/0/"), (std::vector<std::string>{"a/c/0/0", "a/c/0/1"}));
  EXPECT_EQ(store->list_prefix("a"),
            (std::vector<std::string>{"a/c/-1/0", "a/c/0/0", "a/c/0/1", "a/zarr.json", "ab/x"}));
  EXPECT_EQ(store->list_prefix("").size(), 7u);
  EXPECT_TRUE(store->list_prefix("nope/").empty());
  auto root = store->list_dir("");
  EXPECT_EQ(root.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"a", "ab", "b"}));
  auto a = store->list_dir("a/");
  EXPECT_EQ(a.keys, (std::vector<std::string>{"zarr.json"}));
  EXPECT_EQ(a.prefixes, (std::vector<std::string>{"c"}));
  EXPECT_EQ(store->list_dir("a").prefixes, (std::vector<std::string>{"c"}));
  store->erase_prefix("a/");
  EXPECT_TRUE(store->list_prefix("a/").empty());
  EXPECT_TRUE(store->exists("ab/x"));
  store->erase_prefix("");
  EXPECT_TRUE(store->list_prefix("").empty());
}

TEST_P(StoreConformance, HostileKeysAreRefused) {
  for (const char* k :
       {"../x", "a/../../x", "/etc/passwd", "a//b", "a/./b", "", "a/", "a\\b", "..", ".", "a/.zarrpp-lock.x"}) {
    EXPECT_THROW(store->set(k, B("x")), StoreError) << k;
    EXPECT_THROW(store->get(k), StoreError) << k;
    EXPECT_THROW(store->erase(k), StoreError) << k;
    EXPECT_THROW(store->exists(k), StoreError) << k;
    EXPECT_THROW(store->set(k, B("x"), WriteOptions::if_equal(std::nullopt)), StoreError) << k;
  }
  EXPECT_THROW(store->set(std::string("a\0b", 3), B("x")), StoreError);
  EXPECT_THROW(store->list_prefix("../"), StoreError);
  EXPECT_THROW(store->erase_prefix("../"), StoreError);
  EXPECT_THROW(store->lock("../zarr.json"), StoreError);
}

TEST_P(StoreConformance, LocksExcludeEachOther) {
  std::atomic<int> inside{0}, max_inside{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&] {
      for (int i = 0; i < 20 / GetParam().slowness; ++i) {
        auto lk = store->lock("arr/zarr.json");
        lk->check();
        const int now = ++inside;
        max_inside = std::max(max_inside.load(), now);
        std::this_thread::yield();
        --inside;
      }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(max_inside.load(), 1);
}
