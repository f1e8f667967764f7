// Consolidated metadata never goes silently stale (issue 30, item 4): whatever node a FileStore is
// opened at, every consolidated ancestor — .zmetadata (zarr-python 2) and the inline
// consolidated_metadata of zarr.json (zarr-python 3), inside the store and above its root — follows
// every change of metadata, attributes, shape, children or deletion; the walk up stops at the first
// folder that is not a group and goes up the real parents of the canonical root; a refresh that
// fails warns naming the document; a remote store below its root warns once that it did not look.
// The same against zarr-python 2 and xarray themselves: python/tests/test_consolidated.py.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "common.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
using zarrpp::test::TempDir;
namespace fs = std::filesystem;

namespace {

// Compared without regard to key order (consolidation lists keys sorted, a refresh adds new ones last).
nlohmann::json canon(const Json& j) { return nlohmann::json::parse(j.dump()); }

Json read_json(const fs::path& p) {
  std::ifstream f(p);
  return Json::parse(f);
}
void write_json(const fs::path& p, const Json& j) {
  std::ofstream f(p);
  f << j.dump();
}

// What zarr.consolidate_metadata (zarr-python 2) writes for the folder `dir`: every .zarray,
// .zgroup and .zattrs under it.
Json consolidate_v2(const fs::path& dir) {
  auto st = FileStore::open(dir, FileStore::Options{.create = false});
  Json md = Json::object();
  for (const auto& k : st->list_prefix("")) {
    const auto name = k.substr(k.rfind('/') + 1);
    if (name == ".zarray" || name == ".zgroup" || name == ".zattrs") md[k] = read_json(dir / k);
  }
  return md;
}
void write_zmetadata(const fs::path& dir) {
  write_json(dir / ".zmetadata", Json{{"metadata", consolidate_v2(dir)}, {"zarr_consolidated_format", 1}});
}
Json zmetadata(const fs::path& dir) { return read_json(dir / ".zmetadata")["metadata"]; }

// What zarr-python 3's consolidate_metadata writes into dir/zarr.json: every node below, keyed by
// its path, a consolidated child group's entry listing no members of its own.
Json consolidate_v3(const fs::path& dir) {
  auto st = FileStore::open(dir, FileStore::Options{.create = false});
  Json md = Json::object();
  for (const auto& k : st->list_prefix("")) {
    if (k == "zarr.json" || k.size() < 10 || k.substr(k.size() - 10) != "/zarr.json") continue;
    Json e = read_json(dir / k);
    if (e.contains("consolidated_metadata") && e["consolidated_metadata"].is_object())
      e["consolidated_metadata"]["metadata"] = Json::object();
    md[k.substr(0, k.size() - 10)] = e;
  }
  return md;
}
void write_inline(const fs::path& dir) {
  Json g = read_json(dir / "zarr.json");
  g["consolidated_metadata"] = Json{{"kind", "inline"}, {"must_understand", false}, {"metadata", consolidate_v3(dir)}};
  write_json(dir / "zarr.json", g);
}
Json inline_md(const fs::path& dir) { return read_json(dir / "zarr.json")["consolidated_metadata"]["metadata"]; }

// Collects warnings while alive (and restores the handler before).
class Warnings {
 public:
  Warnings() {
    prev_ = set_warning_handler([this](const std::string& m) {
      std::lock_guard lk(mu_);
      got_.push_back(m);
    });
  }
  ~Warnings() { set_warning_handler(prev_); }
  std::vector<std::string> got() const {
    std::lock_guard lk(mu_);
    return got_;
  }
  std::string all() const {
    std::string out;
    for (const auto& m : got()) out += m + "\n";
    return out;
  }

 private:
  WarningHandler prev_;
  mutable std::mutex mu_;
  std::vector<std::string> got_;
};

NDArray rows(std::int64_t n, std::int32_t v) { return NDArray::full<std::int32_t>({n, 2}, v); }

StorePtr at(const fs::path& p, bool create = false) { return FileStore::open(p, FileStore::Options{.create = create}); }

ArraySpec spec(int format) {
  ArraySpec s{.shape = {3, 2}, .chunks = {2, 2}, .dtype = DataType::int32};
  s.zarr_format = format;
  s.attributes = {{"units", "m"}};
  return s;
}

// ds.zarr (a group, consolidated), ds.zarr/sub (a group, consolidated), ds.zarr/sub/var (an array).
struct Nested {
  TempDir tmp{"consolidated"};
  fs::path ds = tmp / "ds.zarr";
  fs::path sub = ds / "sub";
  int format;
  explicit Nested(int f) : format(f) {
    auto st = at(ds, true);
    Group::create(st, "", {{"title", "ds"}}, false, format);
    Group::create(st, "sub", Json::object(), false, format);
    Array::create(st, "sub/var", spec(format));
    consolidate();
  }
  void consolidate() {
    if (format == 2) {
      write_zmetadata(sub);
      write_zmetadata(ds);
    } else {
      write_inline(sub);
      write_inline(ds);
    }
  }
  // Every consolidated document as a fresh consolidation would write it now.
  void expect_current(const std::string& when) {
    if (format == 2) {
      EXPECT_EQ(canon(zmetadata(ds)), canon(consolidate_v2(ds))) << when;
      EXPECT_EQ(canon(zmetadata(sub)), canon(consolidate_v2(sub))) << when;
    } else {
      EXPECT_EQ(canon(inline_md(ds)), canon(consolidate_v3(ds))) << when;
      EXPECT_EQ(canon(inline_md(sub)), canon(consolidate_v3(sub))) << when;
    }
  }
  Json var_entry(const fs::path& dir, const std::string& rel) {
    return format == 2 ? zmetadata(dir)[rel + "/.zarray"] : inline_md(dir)[rel];
  }
};

void every_change_reaches_the_ancestors(int format) {
  Nested n(format);
  Warnings w;
  // Opened at the array itself: both consolidated ancestors lie above the store's root.
  auto var = Array::open(at(n.sub / "var"));
  var.append(rows(2, 7).view());
  n.expect_current("append");
  EXPECT_EQ(n.var_entry(n.ds, "sub/var")["shape"], Json::array({5, 2}));
  EXPECT_EQ(n.var_entry(n.sub, "var")["shape"], Json::array({5, 2}));
  var.resize({2, 2});
  n.expect_current("shrink");
  EXPECT_EQ(n.var_entry(n.ds, "sub/var")["shape"], Json::array({2, 2}));
  var.update_attributes({{"note", "x"}});
  n.expect_current("attributes");
  if (format == 3) {
    var.convert_to_regular_bounded();
    n.expect_current("convert_to_regular_bounded");
    var.prepend(rows(1, 1).view());
    n.expect_current("prepend");
    var.expand_domain(0, 2, 1);
    n.expect_current("expand_domain");
    EXPECT_EQ(n.var_entry(n.ds, "sub/var")["shape"], Json::array({6, 2}));
  }
  // A new array made by opening its (new) folder, then replaced with overwrite.
  auto fresh = at(n.sub / "new", true);
  Array::create(fresh, "", spec(format));
  n.expect_current("create");
  ArraySpec bigger = spec(format);
  bigger.shape = {8, 2};
  auto meta = Array::create(MemoryStore::create(), "", bigger).metadata();
  Array::create(fresh, "", meta, /*overwrite=*/true);
  n.expect_current("create with overwrite");
  EXPECT_EQ(n.var_entry(n.ds, "sub/new")["shape"], Json::array({8, 2}));
  // Replaced by a node of the other format: this format's documents forget it; and back.
  ArraySpec other = spec(5 - format);
  other.overwrite = true;
  Array::create(fresh, "", other);
  n.expect_current("replaced by the other format");
  EXPECT_FALSE(format == 2 ? zmetadata(n.ds).contains("sub/new/.zarray") : inline_md(n.ds).contains("sub/new"));
  Group::create(fresh, "", Json::object(), /*overwrite=*/true, format);
  n.expect_current("replaced by a group of this format");
  // Parents a create makes are listed too.
  Array::create(at(n.sub), "p/q/deep", spec(format));
  n.expect_current("create with new parents");
  // Groups: created below a store opened at sub, attributes set, removed.
  auto sub = at(n.sub);
  auto g = Group::create(sub, "g", {{"a", 1}}, false, format);
  n.expect_current("group create");
  g.update_attributes({{"b", 2}});
  n.expect_current("group attributes");
  Group::open(at(n.sub)).update_attributes({{"sub", true}});
  n.expect_current("attributes of the store's root group");
  // Copied into the hierarchy.
  ArrayMetadata cm = var.metadata();
  copy_array(var, sub, "g/copy", cm);
  n.expect_current("copy");
  remove_node(sub, "g");
  n.expect_current("remove a group");
  remove_node(at(n.sub / "new"), "");
  n.expect_current("remove the store's own node");
  EXPECT_TRUE(w.got().empty()) << w.all();
}

}  // namespace

TEST(Consolidated, V2EveryChangeReachesZmetadataAboveTheStoreRoot) { every_change_reaches_the_ancestors(2); }

TEST(Consolidated, V3EveryChangeReachesInlineConsolidatedMetadataAboveTheStoreRoot) {
  every_change_reaches_the_ancestors(3);
}

TEST(Consolidated, ConvertingIntoAndInsideAHierarchyRefreshesIt) {
  // In place: the .zmetadata above a converted node forgets it; into a v3 hierarchy: listed there.
  Nested v2(2);
  convert_to_v3(at(v2.sub / "var"));
  EXPECT_FALSE(zmetadata(v2.ds).contains("sub/var/.zarray"));
  EXPECT_FALSE(zmetadata(v2.sub).contains("var/.zarray"));
  Nested v3(3);
  Array::create(at(v2.tmp / "plain.zarr", true), "", spec(2));
  convert_to_v3(at(v2.tmp / "plain.zarr"), "", at(v3.sub / "converted", true), "");
  v3.expect_current("convert into");
  EXPECT_TRUE(inline_md(v3.ds).contains("sub/converted"));
}

TEST(Consolidated, TheWalkStopsAtAFolderThatIsNotAGroup) {
  TempDir tmp{"consolidated-stop"};
  auto st = at(tmp / "ds.zarr", true);
  Group::create(st, "", Json::object(), false, 2);
  Array::create(st, "plain/var", spec(2));
  fs::remove(tmp / "ds.zarr/plain/.zgroup");  // a folder, not a group
  write_zmetadata(tmp / "ds.zarr");
  const Json before = zmetadata(tmp / "ds.zarr");
  Warnings w;
  Array::open(at(tmp / "ds.zarr/plain/var")).resize({9, 2});
  EXPECT_EQ(zmetadata(tmp / "ds.zarr"), before);  // not a member of ds.zarr's hierarchy: left alone
  EXPECT_TRUE(w.got().empty()) << w.all();
}

TEST(Consolidated, TheWalkGoesUpTheRealParentsNotThroughASymlink) {
  TempDir tmp{"consolidated-link"};
  for (const char* name : {"real.zarr", "other.zarr"}) {
    auto st = at(tmp / name, true);
    Group::create(st, "", Json::object(), false, 2);
  }
  Array::create(at(tmp / "real.zarr"), "var", spec(2));
  write_zmetadata(tmp / "real.zarr");
  write_zmetadata(tmp / "other.zarr");
  fs::create_directory_symlink(tmp / "real.zarr/var", tmp / "other.zarr/link");
  const Json other = zmetadata(tmp / "other.zarr");
  Array::open(at(tmp / "other.zarr/link")).resize({7, 2});
  EXPECT_EQ(zmetadata(tmp / "real.zarr")["var/.zarray"]["shape"], Json::array({7, 2}));  // where the files are
  EXPECT_EQ(zmetadata(tmp / "other.zarr"), other);  // the folder the link is in is not its parent
}

namespace {
// Fails every write in the stores above the one wrapped (depth > 0);
// the parents it hands out are wrapped the same way, so the walk up goes through it.
class FailingAncestors : public StoreWrapper {
 public:
  FailingAncestors(StorePtr inner, int depth) : StoreWrapper(std::move(inner)), depth_(depth) {}
  std::string describe() const override { return "failing-ancestors(" + inner()->describe() + ")"; }
  std::optional<Parent> parent() const override {
    auto p = inner()->parent();
    if (p) p->store = std::make_shared<FailingAncestors>(p->store, depth_ + 1);
    return p;
  }

 protected:
  void do_set(const std::string& key, const Bytes& value) override {
    check(key);
    StoreWrapper::do_set(key, value);
  }
  bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override {
    check(key);
    return StoreWrapper::do_set_if(key, value, expected);
  }

 private:
  void check(const std::string& key) const {
    // Above the store's root zarrpp writes nothing but consolidated documents.
    if (depth_ > 0) throw StoreError("cannot write '" + key + "': read-only file system (injected)");
  }
  int depth_;
};
}  // namespace

TEST(Consolidated, ARefreshThatFailsWarnsNamingTheDocumentAndTheChangeStands) {
  for (int format : {2, 3}) {
    Nested n(format);
    Warnings w;
    auto var = Array::open(std::make_shared<FailingAncestors>(at(n.sub / "var"), 0));
    var.append(rows(2, 7).view());
    EXPECT_EQ(Array::open(at(n.sub / "var")).shape(), (Shape{5, 2}));  // the change stands
    const auto got = w.got();
    ASSERT_EQ(got.size(), 2u) << w.all();  // one per stale document, sub's and ds's
    const std::string doc = format == 2 ? ".zmetadata" : "zarr.json";
    const std::string ds = fs::canonical(n.ds).string(), sub = fs::canonical(n.sub).string();
    const std::string all = w.all();
    EXPECT_NE(all.find("'" + ds + "/" + doc + "' is stale"), std::string::npos) << all;
    EXPECT_NE(all.find("'" + sub + "/" + doc + "' is stale"), std::string::npos) << all;
    EXPECT_NE(all.find("read-only file system (injected)"), std::string::npos) << all;
    EXPECT_NE(all.find("zarr.consolidate_metadata('" + ds + "')"), std::string::npos) << all;
  }
}

TEST(Consolidated, ARefreshInsideTheStoreThatFailsWarnsToo) {
  // The store opened at the hierarchy's root, its own .zmetadata unwritable (a FaultyStore-like
  // wrapper at depth 1 is not needed: fail the root's writes of .zmetadata here).
  class FailZmetadata : public StoreWrapper {
   public:
    using StoreWrapper::StoreWrapper;
    std::string describe() const override { return "fail-zmetadata"; }

   protected:
    bool do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) override {
      if (key == ".zmetadata") throw StoreError("injected failure");
      return StoreWrapper::do_set_if(key, value, expected);
    }
  };
  Nested n(2);
  Warnings w;
  auto st = std::make_shared<FailZmetadata>(at(n.ds));
  Array::open(st, "sub/var").resize({4, 2});
  ASSERT_EQ(w.got().size(), 1u) << w.all();
  EXPECT_NE(
      w.all().find(fs::canonical(n.ds).string() + "/.zmetadata' is stale: refreshing it failed (injected failure)"),
      std::string::npos)
      << w.all();
  EXPECT_EQ(zmetadata(n.sub)["var/.zarray"]["shape"], Json::array({4, 2}));  // the others still are refreshed
}

TEST(Consolidated, ARemoteStoreBelowItsRootWarnsOnceThatItDidNotLook) {
  // A store that says, as S3Store with a prefix does, that keys above its root exist unseen.
  class BelowRoot : public StoreWrapper {
   public:
    BelowRoot(StorePtr inner, std::string loc) : StoreWrapper(std::move(inner)), loc_(std::move(loc)) {}
    std::string describe() const override { return loc_; }
    std::string location() const override { return loc_; }
    bool parent_unseen() const override { return true; }

   private:
    std::string loc_;
  };
  const std::string loc = "s3://bucket/below-root-" + std::to_string(::getpid());
  auto st = std::make_shared<BelowRoot>(MemoryStore::create(), loc);
  Warnings w;
  auto a = Array::create(st, "", spec(3));
  a.resize({5, 2});
  a.update_attributes({{"k", 1}});
  ASSERT_EQ(w.got().size(), 1u) << w.all();
  EXPECT_NE(w.got()[0].find("consolidated metadata in groups above " + loc + " "), std::string::npos) << w.all();
  EXPECT_NE(w.got()[0].find("was not checked"), std::string::npos);
  // S3Store declares it exactly when it has a prefix.
  EXPECT_TRUE(S3Store(S3Store::Options{.bucket = "b", .prefix = "data/ds.zarr/var"}).parent_unseen());
  EXPECT_FALSE(S3Store(S3Store::Options{.bucket = "b"}).parent_unseen());
  // Local and memory stores are not remote: no such warning.
  EXPECT_FALSE(MemoryStore::create()->parent_unseen());
}

TEST(Consolidated, TheDefaultHandlerPrintsOneLineAndAHandlerCanBeReplaced) {
  std::vector<std::string> got;
  auto prev = set_warning_handler([&](const std::string& m) { got.push_back(m); });
  warn("one");
  auto mine = set_warning_handler(nullptr);  // back to the default
  EXPECT_TRUE(static_cast<bool>(mine));
  ::testing::internal::CaptureStderr();
  warn("two\nlines");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "zarrpp: warning: two lines\n");
  set_warning_handler(prev);
  EXPECT_EQ(got, std::vector<std::string>{"one"});
}

// Group::consolidate_metadata writes what zarr-python's consolidate_metadata does (issue 38).
TEST(Consolidated, ConsolidateMetadataWritesWhatZarrPythonWrites) {
  TempDir tmp;
  for (const int format : {2, 3}) {
    const fs::path dir = tmp.path() / ("v" + std::to_string(format));
    auto st = FileStore::open(dir);
    auto root = Group::create(st, "", Json{{"title", "t"}}, false, format);
    auto sub = root.create_group("sub", Json{{"k", 1}});
    sub.create_array("a", ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int16, .zarr_format = format});
    root.create_array("b", ArraySpec{.shape = {3}, .chunks = {3}, .dtype = DataType::float32, .zarr_format = format});
    root.consolidate_metadata();
    if (format == 2) {
      EXPECT_EQ(canon(zmetadata(dir)), canon(consolidate_v2(dir)));
      EXPECT_EQ(read_json(dir / ".zmetadata")["zarr_consolidated_format"], 1);
      continue;
    }
    const Json cm = read_json(dir / "zarr.json")["consolidated_metadata"];
    EXPECT_EQ(cm["kind"], "inline");
    EXPECT_EQ(cm["must_understand"], false);
    std::vector<std::string> keys;
    for (auto it = cm["metadata"].begin(); it != cm["metadata"].end(); ++it) keys.push_back(it.key());
    EXPECT_EQ(keys, (std::vector<std::string>{"b", "sub", "sub/a"}));
    EXPECT_EQ(cm["metadata"]["sub"]["consolidated_metadata"]["metadata"], Json::object());
    EXPECT_EQ(cm["metadata"]["sub/a"]["shape"], Json::array({4}));
    EXPECT_EQ(cm["metadata"]["sub"]["attributes"]["k"], 1);
    // Kept current from then on.
    auto b = Array::open(st, "b");
    b.resize({7});
    EXPECT_EQ(read_json(dir / "zarr.json")["consolidated_metadata"]["metadata"]["b"]["shape"], Json::array({7}));
  }
  auto arr_store = FileStore::open(tmp.path() / "arr");
  Array::create(arr_store, "", ArraySpec{.shape = {2}, .chunks = {2}, .dtype = DataType::int8});
  EXPECT_THROW(Group::open(arr_store, "").consolidate_metadata(), Error);  // an array is no group
}

// What a group says of itself: whether it has consolidated metadata, in either format, and its
// metadata document (what Python's Group.metadata and is_consolidated() show).
TEST(Consolidated, AGroupSaysWhetherItIsConsolidated) {
  for (const int format : {2, 3}) {
    auto store = MemoryStore::create();
    auto g = Group::create(store, "", Json{{"k", 1}}, false, format);
    g.create_group("inner");
    EXPECT_FALSE(g.is_consolidated()) << format;
    g.consolidate_metadata();
    EXPECT_TRUE(g.is_consolidated()) << format;
    EXPECT_TRUE(Group::open(store).is_consolidated()) << format;
    const Json doc = g.metadata_document();
    EXPECT_EQ(doc["zarr_format"], format);
    EXPECT_EQ(doc["node_type"], "group");
    EXPECT_EQ(doc["attributes"], (Json{{"k", 1}}));
    if (format == 3) {
      EXPECT_TRUE(doc["consolidated_metadata"].is_object());
    } else {
      store->erase(".zmetadata");
      EXPECT_FALSE(g.is_consolidated());  // read from the store each time
    }
  }
}
