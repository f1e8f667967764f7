// Data safety at the edges of each guarantee (issue 30): one node reached by two paths, failures
// part-way, and every stored object seen by every operation. The cases that need mounts or
// another user are in tests/cli/test_safety_privileged.sh.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common.hpp"
#include "node/node.hpp"
#include "zarrpp/testing/store_doubles.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;

namespace {

// A store that runs out of room after `budget` bytes of new values, as a full disk does: writes
// fail, reads and deletions work (and give the room back).
class FullStore : public StoreWrapper {
 public:
  FullStore(StorePtr inner, std::int64_t budget) : StoreWrapper(std::move(inner)), left_(budget) {}
  std::string describe() const override { return "full(" + inner()->describe() + ")"; }

 protected:
  void do_set(const std::string& key, const Bytes& value) override {
    spend(key, value);
    StoreWrapper::do_set(key, value);
  }
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override {
    spend(key, value);
    return StoreWrapper::do_set_if(key, value, expected);
  }

 private:
  void spend(const std::string& key, const Bytes& value) {
    if (key.ends_with("zarr.json")) return;  // the metadata switch is not what fills the disk
    left_ -= static_cast<std::int64_t>(value.size());
    if (left_ < 0) throw StoreError("cannot write '" + key + "': No space left on device");
  }
  std::atomic<std::int64_t> left_;
};

std::vector<std::string> chunk_keys(Store& s) {
  std::vector<std::string> out;
  for (auto& k : s.list_prefix("c/")) out.push_back(k);
  return out;
}

}  // namespace

// ---- 1. one node reached by two paths ----------------------------------------------------------

TEST(Aliases, IdentityChainsSeeThroughSymlinksAndDotDot) {
  TempDir dir("alias");
  auto real = FileStore::open((dir / "data").string());
  Array::create(real, "a.zarr", {.shape = {2}, .chunks = {2}, .dtype = DataType::int8});
  fs::create_directory_symlink(dir / "data", dir / "view");
  auto via_link = FileStore::open((dir / "view").string());
  auto via_dots = FileStore::open((dir / "data" / "a.zarr" / ".." / "a.zarr").string());
  EXPECT_EQ(node::overlap(*real, "a.zarr", *via_link, "a.zarr"), node::Overlap::same);
  EXPECT_EQ(node::overlap(*real, "a.zarr", *via_dots, ""), node::Overlap::same);
  EXPECT_EQ(node::overlap(*real, "a.zarr", *via_link, "a.zarr/new/deeper"), node::Overlap::second_inside_first);
  EXPECT_EQ(node::overlap(*via_link, "", *real, "a.zarr"), node::Overlap::second_inside_first);
  EXPECT_EQ(node::overlap(*real, "a.zarr", *via_link, "b.zarr"), node::Overlap::none);
  EXPECT_EQ(node::overlap(*real, "a.zarr", *via_link, "a.zarrx"), node::Overlap::none);
}

TEST(Aliases, UrlsAreComparedNormalised) {
  EXPECT_EQ(normalize_url("HTTP://Example.ORG:80//a//b/"), "http://example.org/a/b");
  EXPECT_EQ(normalize_url("https://h:443/%7Euser/%41%2Fx"), "https://h/~user/A%2Fx");  // %2F is not unreserved
  EXPECT_EQ(normalize_url("http://h:8080/a"), "http://h:8080/a");
  auto a = MemoryStore::create();
  const auto chain = a->identity_chain("g/arr");
  ASSERT_EQ(chain.size(), 3u);
  EXPECT_EQ(chain[1] + "/arr", chain[0]);
  EXPECT_EQ(node::overlap(*a, "g", *a, "g/arr"), node::Overlap::second_inside_first);
  EXPECT_EQ(node::overlap(*a, "g", *MemoryStore::create(), "g"), node::Overlap::none);
}

TEST(Aliases, CopyAndConvertOntoAnAliasOfTheSourceAreRefused) {
  TempDir dir("alias");
  auto real = FileStore::open((dir / "data").string());
  auto src = Array::create(real, "a.zarr", {.shape = {4}, .chunks = {2}, .dtype = DataType::int16});
  src.fill<std::int16_t>(7);
  fs::create_directory_symlink(dir / "data", dir / "view");
  auto view = FileStore::open((dir / "view").string());
  expect_error<ArgumentError>([&] { copy_array(src, view, "a.zarr", src.metadata(), {.overwrite = true}); },
                              ErrorCode::invalid_argument, {"same node"});
  expect_error<ArgumentError>([&] { copy_array(src, view, "a.zarr/inner", src.metadata(), {.overwrite = true}); },
                              ErrorCode::invalid_argument, {"destination lies inside"});
  expect_error<ArgumentError>([&] { convert_to_v3(real, "a.zarr", view, "a.zarr", true); }, ErrorCode::invalid_argument,
                              {"overlaps the source"});
  EXPECT_EQ(Array::open(real, "a.zarr").read().to_vector<std::int16_t>(), (std::vector<std::int16_t>{7, 7, 7, 7}));
}

// ---- 2. failures part-way ----------------------------------------------------------------------

TEST(FailedGrowth, AFullStoreLeavesTheArrayAndTheStoreAsTheyWere) {
  // append, prepend and a resize that must rewrite the edge chunk, each running out of room after
  // every possible number of chunks.
  for (int op = 0; op < 3; ++op) {
    for (std::int64_t budget = 0;; budget += 8) {
      auto mem = MemoryStore::create();
      auto z = Array::create(mem, {.shape = {5, 2}, .chunks = {2, 2}, .dtype = DataType::int16});
      z.fill<std::int16_t>(3);
      const auto before = chunk_keys(*mem);
      auto full = std::make_shared<FullStore>(mem, budget);
      auto f = Array::open(full);
      const auto rows = NDArray::full<std::int16_t>({7, 2}, 9);
      const auto c = catch_error([&] {
        if (op == 0) f.append(rows.view(), 0);
        if (op == 1) f.prepend(rows.view(), 0);
        if (op == 2) f.resize({12, 2});
      });
      if (!c.thrown) break;
      ASSERT_LT(budget, 1000) << "never succeeded";
      EXPECT_TRUE(c.has("not applied; the array is unchanged (domain [0:5, 0:2])")) << c.what;
      EXPECT_FALSE(c.has("of this write were written")) << c.what;
      EXPECT_EQ(c.code, ErrorCode::store_failure) << c.what;
      auto now = Array::open(mem);
      EXPECT_EQ(now.shape(), (Shape{5, 2}));
      EXPECT_EQ(now.read().to_vector<std::int16_t>(), std::vector<std::int16_t>(10, 3));
      EXPECT_EQ(chunk_keys(*mem), before) << c.what;  // nothing new outside the domain takes room
    }
  }
}

TEST(Overwrite, AnInterruptedCopyLeavesNoNodeOrAWholeOne) {
  auto src_store = MemoryStore::create();
  auto src = Array::create(src_store, {.shape = {8}, .chunks = {2}, .dtype = DataType::int8});
  src.fill<std::int8_t>(5);
  auto base = MemoryStore::create();
  Array::create(base, {.shape = {8}, .chunks = {2}, .dtype = DataType::int8}).fill<std::int8_t>(1);
  for (std::int64_t at = 0; at < 200; ++at) {
    auto dst = MemoryStore::create();
    for (const auto& k : base->list_prefix("")) dst->set(k, *base->get(k));
    auto faulty = std::make_shared<FaultyStore>(dst, at, true);
    const auto c = catch_error([&] { copy_array(src, faulty, "", src.metadata(), {.overwrite = true}); });
    if (!c.thrown) break;
    if (!dst->exists("zarr.json")) continue;  // no node: nothing reads as data
    const auto v = Array::open(dst).read().to_vector<std::int8_t>();
    EXPECT_TRUE(v == std::vector<std::int8_t>(8, 1) || v == std::vector<std::int8_t>(8, 5))
        << "torn at " << at << ": " << c.what;
  }
}

TEST(Overwrite, AFailedRemovalSaysWhatIsGone) {
  auto mem = MemoryStore::create();
  Array::create(mem, {.shape = {8}, .chunks = {2}, .dtype = DataType::int8}).fill<std::int8_t>(1);
  // Operations: read zarr.json, list, erase zarr.json, erase c/0, erase c/1 (fails here).
  std::int64_t at = 0;
  Caught c;
  for (; at < 40; ++at) {
    auto copy = MemoryStore::create();
    for (const auto& k : mem->list_prefix("")) copy->set(k, *mem->get(k));
    auto faulty = std::make_shared<FaultyStore>(copy, at, true);
    c = catch_error([&] { remove_node(faulty, ""); });
    if (c.has("c/1")) break;
  }
  EXPECT_TRUE(
      c.has("removing the node at '/' stopped at 'c/1': its zarr.json and 1 of 4 chunk(s) were removed, so it no "
            "longer opens"))
      << c.what;
}

// ---- 3. every stored object is seen by every operation -----------------------------------------

TEST(Listing, ChunksThatAreSymlinksInsideTheRootAreSeenByEveryOperation) {
  TempDir dir("links");
  auto store = FileStore::open(dir.path());
  auto z = Array::create(store, "a", {.shape = {6}, .chunks = {2}, .dtype = DataType::int8});
  z.fill<std::int8_t>(4);
  // c/1 becomes a link to a shared blob elsewhere in the root (holding chunk 1's bytes).
  fs::create_directories(dir / "common");
  fs::rename(dir / "a" / "c" / "1", dir / "common" / "blob");
  fs::create_symlink("../../common/blob", dir / "a" / "c" / "1");
  EXPECT_EQ(z.read().to_vector<std::int8_t>(), std::vector<std::int8_t>(6, 4));
  EXPECT_EQ(z.nshards_stored(), 3);
  auto dst = MemoryStore::create();
  const auto copied = copy_array(z, dst, "", z.metadata(), {});
  EXPECT_EQ(copied.read().to_vector<std::int8_t>(), std::vector<std::int8_t>(6, 4));
  // Writing the chunk replaces the link, never the shared target.
  z.write(Selection{slice(2, 3)}, NDArray::full<std::int8_t>({1}, 8).view());
  EXPECT_FALSE(fs::is_symlink(dir / "a" / "c" / "1"));
  fs::remove(dir / "a" / "c" / "1");
  fs::create_symlink("../../common/blob", dir / "a" / "c" / "1");
  // An overwrite removes the link, never its target.
  auto fresh = Array::create(store, "a", {.shape = {6}, .chunks = {2}, .dtype = DataType::int8, .overwrite = true});
  EXPECT_EQ(fresh.read().to_vector<std::int8_t>(), std::vector<std::int8_t>(6, 0));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "a" / "c" / "1")));
  EXPECT_TRUE(fs::exists(dir / "common" / "blob"));
}

TEST(Listing, WhatStandsWhereAChunkShouldBeIsAnErrorForEveryOperation) {
  TempDir outside("outside");
  {
    std::ofstream(outside / "blob") << "xx";
  }
  struct Case {
    const char* name;
    std::function<void(const fs::path&)> make;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"an empty directory", [](const fs::path& p) { fs::create_directory(p); }, "is a directory"},
      {"a directory with a file",
       [](const fs::path& p) {
         fs::create_directory(p);
         std::ofstream(p / "x") << "x";
       },
       "is a directory"},
      {"a FIFO", [](const fs::path& p) { ASSERT_EQ(::mkfifo(p.c_str(), 0644), 0); }, "is a FIFO"},
      {"a symlink out of the root", [&](const fs::path& p) { fs::create_symlink(outside / "blob", p); },
       "leading outside the store root"},
      {"a symlink to nothing", [](const fs::path& p) { fs::create_symlink("nowhere", p); }, "symlink to nothing"},
  };
  for (const auto& k : cases) {
    SCOPED_TRACE(k.name);
    TempDir dir("odd");
    auto store = FileStore::open(dir.path());
    auto z = Array::create(store, {.shape = {6}, .chunks = {2}, .dtype = DataType::int8});
    z.fill<std::int8_t>(4);
    fs::remove(dir / "c" / "1");
    k.make(dir / "c" / "1");
    const auto r = catch_error([&] { (void)z.read(); });
    EXPECT_TRUE(r.has(k.says)) << r.what;
    const auto c = catch_error([&] { copy_array(z, MemoryStore::create(), "", z.metadata(), {}); });
    EXPECT_TRUE(c.has(k.says) && c.has("c/1")) << c.what;
    const auto conv = catch_error([&] {
      auto m = z.metadata();
      m.chunk_grid.chunk_shape = {3};
      copy_array(z, MemoryStore::create(), "", m, {});
    });
    EXPECT_TRUE(conv.thrown) << "a re-chunking copy skipped it";
    // An overwrite removes what is the node's (a link itself, an empty directory, a FIFO), and
    // refuses, deleting nothing, where a directory holds other files.
    const auto o = catch_error(
        [&] { Array::create(store, {.shape = {6}, .chunks = {2}, .dtype = DataType::int8, .overwrite = true}); });
    if (std::string(k.name) == "a directory with a file") {
      EXPECT_TRUE(o.has("is a directory where a chunk should be")) << o.what;
      EXPECT_TRUE(fs::exists(dir / "c" / "0"));
      EXPECT_TRUE(fs::exists(dir / "zarr.json"));
    } else {
      EXPECT_FALSE(o.thrown) << o.what;
      EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "c" / "1")));
      EXPECT_TRUE(fs::exists(outside / "blob"));
    }
  }
}

TEST(Listing, FolderSymlinksAreListedAndNeverWrittenThrough) {
  TempDir dir("dirlinks");
  auto store = FileStore::open(dir.path());
  auto z = Array::create(store, {.shape = {4, 4}, .chunks = {2, 2}, .dtype = DataType::int8});
  z.fill<std::int8_t>(2);
  fs::remove_all(dir / "c" / "1");
  fs::create_directory_symlink("0", dir / "c" / "1");  // row 1 of chunks aliases row 0
  EXPECT_EQ(z.nshards_stored(), 4);
  EXPECT_EQ(z.read().to_vector<std::int8_t>(), std::vector<std::int8_t>(16, 2));
  const auto w =
      catch_error([&] { z.write(Selection{slice(2, 3), slice(0, 1)}, NDArray::full<std::int8_t>({1, 1}, 9).view()); });
  EXPECT_TRUE(w.has("is a symlink") && w.has("never writes or deletes through one")) << w.what;
  EXPECT_EQ(z.read().to_vector<std::int8_t>(), std::vector<std::int8_t>(16, 2));  // chunk (0, 0) unchanged
  fs::create_directory_symlink(".", dir / "c" / "loop");
  EXPECT_THROW(store->list_prefix("c/"), StoreError);
}
