// The conformance suite (store_conformance.cpp) on the memory and file stores, plus FileStore's
// atomicity and key safety, and the test wrappers.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "core/temp_names.hpp"
#include "store_conformance.hpp"
#include "zarrpp/testing/store_doubles.hpp"
#include "zarrpp/zarrpp.hpp"

using namespace zarrpp;
namespace fs = std::filesystem;

using namespace zarrpp::test;

INSTANTIATE_TEST_SUITE_P(Stores, StoreConformance,
                         ::testing::Values(StoreFactory{"memory", [] { return StorePtr(MemoryStore::create()); }},
                                           StoreFactory{"memory_at_a_path",
                                                        [] {
                                                          // Beside keys of its own the prefix must not show.
                                                          auto mem = MemoryStore::create();
                                                          mem->set("a/bc", B("not mine"));
                                                          mem->set("ab/c", B("not mine"));
                                                          return PrefixStore::at(mem, "a/b");
                                                        }},
                                           StoreFactory{"file",
                                                        [] {
                                                          // The directory lives as long as the store.
                                                          auto dir = std::make_shared<TempDir>("conformance");
                                                          auto fs = FileStore::open(dir->path());
                                                          return StorePtr(fs.get(), [fs, dir](Store*) mutable {
                                                            fs.reset();
                                                            dir.reset();
                                                          });
                                                        }},
                                           StoreFactory{"zip",
                                                        [] {
                                                          // Writes staged beside the archive until commit.
                                                          auto dir = std::make_shared<TempDir>("conformance");
                                                          auto zs = ZipStore::open(dir->path() / "s.zip",
                                                                                   {.mode = ZipStore::Mode::append});
                                                          return StorePtr(zs.get(), [zs, dir](Store*) mutable {
                                                            zs.reset();
                                                            dir.reset();
                                                          });
                                                        }},
                                           StoreFactory{"file_not_made_yet",
                                                        [] {
                                                          // A root that does not exist: the first write makes it.
                                                          auto dir = std::make_shared<TempDir>("conformance");
                                                          auto fs = FileStore::open(dir->path() / "new" / "store.zarr");
                                                          return StorePtr(fs.get(), [fs, dir](Store*) mutable {
                                                            fs.reset();
                                                            dir.reset();
                                                          });
                                                        }}),
                         name_of);

TEST(PrefixStore, IsTheInnerStoresKeysUnderItsPathAndKnowsItsParent) {
  auto mem = MemoryStore::create();
  auto sub = PrefixStore::at(mem, "/a/b/");
  sub->set("x/zarr.json", B("1"));
  EXPECT_EQ(mem->get("a/b/x/zarr.json"), B("1"));
  mem->set("a/b2", B("2"));  // a sibling that starts alike is not under a/b/
  EXPECT_EQ(sub->list_prefix(""), std::vector<std::string>{"x/zarr.json"});
  EXPECT_EQ(sub->list_dir("").prefixes, std::vector<std::string>{"x"});
  auto deeper = PrefixStore::at(sub, "x");  // one prefix over the memory store, not two
  ASSERT_NE(dynamic_cast<PrefixStore*>(deeper.get()), nullptr);
  EXPECT_EQ(dynamic_cast<PrefixStore&>(*deeper).prefix(), "a/b/x");
  EXPECT_EQ(dynamic_cast<PrefixStore&>(*deeper).inner(), mem);
  EXPECT_EQ(PrefixStore::at(mem, ""), mem);
  const auto up = deeper->parent();
  ASSERT_TRUE(up);
  EXPECT_EQ(up->name, "x");
  EXPECT_EQ(up->store->location(), sub->location());
  const auto top = sub->parent()->store->parent();
  ASSERT_TRUE(top);
  EXPECT_EQ(top->store, mem);
  EXPECT_EQ(top->name, "a");
  EXPECT_THROW(PrefixStore::at(mem, "a/../b"), ArgumentError);
  // A hierarchy opened below its root keeps the consolidated metadata above it current.
  Group::create(mem, "", Json::object(), false, 2);
  mem->set(".zmetadata", B(R"({"metadata": {".zgroup": {"zarr_format": 2}}, "zarr_consolidated_format": 1})"));
  Array::create(PrefixStore::at(mem, "v"), {.shape = {2}, .chunks = {2}, .dtype = DataType::int8, .zarr_format = 2});
  EXPECT_TRUE(Json::parse(S(*mem->get(".zmetadata")))["metadata"].contains("v/.zarray"));
}

// A read-only view (zarr-python's with_read_only) sees every write of the store it views and
// refuses every write of its own, through each entry point, leaving the data as it was.
void expect_every_write_refused(Store& view) {
  EXPECT_FALSE(view.capabilities().writable);
  auto refused = [](const auto& f) {
    try {
      f();
      ADD_FAILURE() << "a write through a read-only view was not refused";
    } catch (const StoreError& e) {
      EXPECT_EQ(e.code(), ErrorCode::read_only);
    }
  };
  refused([&] { view.set("k", B("3")); });
  refused([&] { view.set("n", B("3"), WriteOptions::if_equal(std::nullopt)); });
  refused([&] { view.erase("k"); });
  refused([&] { view.erase_prefix(""); });
  refused([&] { view.compare_and_set("k", B("2"), B("3")); });
}

TEST(MemoryStore, ReadOnlyViewsShareTheDataAndRefuseWrites) {
  auto mem = MemoryStore::create();
  auto view = mem->with_read_only(true);
  mem->set("k", B("2"));
  EXPECT_EQ(view->get("k"), B("2"));
  expect_every_write_refused(*view);
  EXPECT_EQ(mem->get("k"), B("2"));
  EXPECT_FALSE(mem->exists("n"));
  auto writable = view->with_read_only(false);
  writable->set("k", B("4"));
  EXPECT_EQ(mem->get("k"), B("4"));
  EXPECT_TRUE(writable->shares_data_with(*mem) && view->shares_data_with(*mem));
  EXPECT_FALSE(MemoryStore::create()->shares_data_with(*mem));
  EXPECT_EQ(view->location(), mem->location());
  EXPECT_THROW(Array::create(view, {.shape = {2}, .chunks = {2}, .dtype = DataType::int8}), StoreError);
  EXPECT_EQ(mem->list_prefix(""), std::vector<std::string>{"k"});
}

TEST(PrefixStore, ReadOnlyPrefixesRefuseWritesAndPassItOnToParentsAndDeeperFolders) {
  auto mem = MemoryStore::create();
  auto sub = std::make_shared<PrefixStore>(mem, "a/b", true);
  mem->set("a/b/k", B("2"));
  EXPECT_EQ(sub->get("k"), B("2"));
  expect_every_write_refused(*sub);
  expect_every_write_refused(*PrefixStore::at(sub, "c"));
  expect_every_write_refused(*sub->parent()->store);
  EXPECT_EQ(mem->list_prefix(""), std::vector<std::string>{"a/b/k"});
  // Over a read-only inner store, a writable prefix is read-only too.
  expect_every_write_refused(*PrefixStore::at(mem->with_read_only(true), "a"));
}

// Files beside an archive other than the archive itself (staging folders, temporaries).
std::vector<std::string> litter_beside(const fs::path& archive) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(archive.parent_path()))
    if (e.path() != archive) out.push_back(e.path().filename().string());
  return out;
}

TEST(ZipStore, CommitsWriteTheArchiveAnewAndReadersSeeTheLastCommit) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  auto w = ZipStore::open(path, {.mode = ZipStore::Mode::exclusive});
  EXPECT_EQ(fs::file_size(path), 22u);  // an empty archive from the start
  // Opening takes no lock; a change does (one writer at a time), and this one does not wait.
  auto other = ZipStore::open(path, {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::milliseconds(0)});
  w->set("x/zarr.json", B("{}"));
  EXPECT_THROW(other->set("y", B("1")), ConflictError);
  EXPECT_FALSE(other->exists("y"));
  w->set("k", B("one"));
  auto r = ZipStore::open(path, {});
  EXPECT_FALSE(r->exists("k"));  // staged: not in the archive yet
  EXPECT_EQ(w->get("k"), B("one"));
  w->commit();
  EXPECT_TRUE(litter_beside(path).empty());
  EXPECT_TRUE(r->exists("k"));  // a reader follows the file to the last commit
  EXPECT_EQ(ZipStore::open(path, {})->get("k"), B("one"));
  w->set("k", B("two"));
  w->erase("x/zarr.json");
  EXPECT_EQ(w->list_prefix(""), std::vector<std::string>{"k"});
  EXPECT_EQ(w->get("k", ByteRange::last(2)), B("wo"));
  w->close();
  EXPECT_TRUE(w->closed());
  auto again = ZipStore::open(path, {});
  EXPECT_EQ(again->list_prefix(""), std::vector<std::string>{"k"});
  EXPECT_EQ(again->get("k"), B("two"));
  EXPECT_THROW(again->set("k", B("3")), StoreError);
  w->set("later", B("3"));  // a closed writer reopens to add, never to replace what it wrote
  w->close();
  EXPECT_EQ(ZipStore::open(path, {})->list_prefix(""), (std::vector<std::string>{"k", "later"}));
  other->set("y", B("1"));  // the first writer closed: the other writes, seeing what it committed
  EXPECT_EQ(other->list_prefix(""), (std::vector<std::string>{"k", "later", "y"}));
  other->close();
  EXPECT_THROW(ZipStore::open(path, {.mode = ZipStore::Mode::exclusive}), StoreError);
  EXPECT_THROW(ZipStore::open(dir.path() / "missing.zip", {}), NotFoundError);
  EXPECT_THROW(ZipStore::parse_mode("rw"), ArgumentError);
}

TEST(ZipStore, ModeWReplacesTheArchiveOnlyWhenItCommits) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  ZipStore::open(path, {.mode = ZipStore::Mode::write})->set("old", B("1"));  // committed as it goes
  auto w = ZipStore::open(path, {.mode = ZipStore::Mode::write});
  EXPECT_FALSE(w->exists("old"));
  EXPECT_TRUE(w->list_prefix("").empty());
  EXPECT_TRUE(ZipStore::open(path, {})->exists("old"));  // still on disk until the commit
  w->close();
  EXPECT_TRUE(ZipStore::open(path, {})->list_prefix("").empty());
  EXPECT_EQ(fs::file_size(path), 22u);
}

TEST(ZipStore, AFailedCommitLeavesTheArchiveWholeAndNamesWhereTheValuesAre) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  {
    auto w = ZipStore::open(path, {.mode = ZipStore::Mode::write, .compression = ZipStore::Compression::deflated});
    w->set("kept", Bytes(5000, 7));
  }  // the destructor commits
  const auto before = fs::file_size(path);
  auto w = ZipStore::open(path, {.mode = ZipStore::Mode::append});
  w->set("new", B("x"));
  w->set("gone", B("y"));
  const auto staged = litter_beside(path);
  ASSERT_EQ(staged.size(), 1u);
  for (const auto& e : fs::directory_iterator(dir.path() / staged[0])) fs::remove(e.path());  // lost under it
  try {
    w->commit();
    ADD_FAILURE() << "the commit did not fail";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(staged[0]), std::string::npos) << e.what();
  }
  EXPECT_EQ(fs::file_size(path), before);
  auto r = ZipStore::open(path, {});
  EXPECT_EQ(r->get("kept"), Bytes(5000, 7));
  EXPECT_EQ(r->get("kept", ByteRange::range(4000, 3)), Bytes(3, 7));  // a deflated member, read from inside
  EXPECT_EQ(litter_beside(path), staged);                             // no temporary left, the staging folder kept
}

TEST(ZipStore, AWriterComparesWithTheArchiveAsItIsWhenItFirstChangesIt) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  ZipStore::open(path, {.mode = ZipStore::Mode::write})->close();
  auto a = ZipStore::open(path, {.mode = ZipStore::Mode::append});
  const auto seen = a->get_versioned("k");  // nothing there yet, as a saw it
  EXPECT_FALSE(seen);
  auto b = ZipStore::open(path, {.mode = ZipStore::Mode::append});
  b->set("k", B("from b"));
  b->close();
  EXPECT_FALSE(a->set("k", B("from a"), WriteOptions::if_equal(std::nullopt)));  // b's value is there now
  a->close();
  EXPECT_EQ(ZipStore::open(path, {})->get("k"), B("from b"));
}

TEST(ZipStore, CommitsKeepTheArchivesModeStoredMembersFoldersAndSymlink) {
  TempDir dir("zip");
  const auto target = dir.path() / "target.zip";
  ZipStore::open(target, {.mode = ZipStore::Mode::write})->set("a", Bytes(4000, 1));  // stored
  ::chmod(target.c_str(), 0640);
  fs::create_symlink(target, dir.path() / "link.zip");
  {
    auto w = ZipStore::open(dir.path() / "link.zip", {.mode = ZipStore::Mode::append});
    w->set("b", B("x"));
  }
  EXPECT_TRUE(fs::is_symlink(dir.path() / "link.zip"));  // the file it points to was replaced
  EXPECT_EQ(ZipStore::open(target, {})->list_prefix(""), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(fs::status(target).permissions() & fs::perms::all, fs::perms(0640));
  EXPECT_GE(fs::file_size(target), 4000u);  // the stored member was not compressed by the commit
}

TEST(ZipStore, WritesFromOtherThreadsDuringCloseAreNeverDropped) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  auto w = ZipStore::open(path, {.mode = ZipStore::Mode::write});
  std::atomic<bool> done{false};
  std::thread closer([&] {
    while (!done) w->close();
  });
  for (int i = 0; i < 300; ++i) w->set("k" + std::to_string(i), B("v"));
  done = true;
  closer.join();
  w->close();
  EXPECT_EQ(ZipStore::open(path, {})->list_prefix("").size(), 300u);
}

TEST(ZipStore, ASecondWriterWaitsForTheFirstAndBuildsOnItsCommit) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  auto first = ZipStore::open(path, {.mode = ZipStore::Mode::write});
  first->set("k", B("first"));  // holds the archive's lock until it closes
  auto second = ZipStore::open(path, {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::seconds(20)});
  std::atomic<bool> done{false};
  std::thread t([&] {
    // A conditional write: compared with the archive as the first writer left it.
    EXPECT_FALSE(second->set("k", B("second"), WriteOptions::if_equal(std::nullopt)));
    second->set("k2", B("second"));
    done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(done.load());  // waiting for the lock
  first->commit();            // a new file at the path; the lock moves with it
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(done.load());
  first->close();
  t.join();
  // The second holds the lock of the file at the path now (not the one the commit replaced):
  // a third writer is refused while it does.
  auto third = ZipStore::open(path, {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::milliseconds(0)});
  EXPECT_THROW(third->set("k3", B("third")), ConflictError);
  second->close();
  third->set("k3", B("third"));
  third->close();
  auto r = ZipStore::open(path, {});
  EXPECT_EQ(r->list_prefix(""), (std::vector<std::string>{"k", "k2", "k3"}));
  EXPECT_EQ(r->get("k"), B("first"));
  EXPECT_TRUE(litter_beside(path).empty());
}

TEST(ZipStore, ALockTakenForGrowthIsTheArchivesAndReadsItAgain) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  ZipStore::open(path, {.mode = ZipStore::Mode::write})->set("zarr.json", B("old"));
  auto a = ZipStore::open(path, {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::milliseconds(0)});
  EXPECT_EQ(a->get("zarr.json"), B("old"));
  {
    auto b = ZipStore::open(path, {.mode = ZipStore::Mode::append});
    b->set("zarr.json", B("new"));
  }  // b commits
  auto held = a->lock("zarr.json");  // before a reads what it will change
  EXPECT_EQ(a->get("zarr.json"), B("new"));
  auto c = ZipStore::open(path, {.mode = ZipStore::Mode::append, .lock_timeout = std::chrono::milliseconds(0)});
  EXPECT_THROW(c->set("zarr.json", B("c")), ConflictError);  // the lock reaches other writers
  EXPECT_THROW(c->lock("zarr.json"), ConflictError);
  held.reset();
  a->close();
  EXPECT_THROW(ZipStore::open(path, {})->lock("x"), ConflictError);  // read-only: no locks
}

// A temporary's writer is a process id and its start time: an id the system gave again to another
// process (pid_max may be 32768) does not keep a dead writer's files alive; names without the
// start time (earlier versions) still read by the id alone.
TEST(TempNames, AProcessIdGivenAgainDoesNotKeepADeadWritersFiles) {
  const std::string tag = detail::host_tag();
  const std::string me = detail::writer_tag();
  ASSERT_EQ(me.rfind(std::to_string(::getpid()) + ".", 0), 0u) << me;
  EXPECT_FALSE(detail::made_by_dead_writer(tag + "-" + me + "-x"));                          // this process
  EXPECT_FALSE(detail::made_by_dead_writer(tag + "-" + std::to_string(::getpid()) + "-x"));  // id alone: alive
  const std::string reused = tag + "-" + std::to_string(::getpid()) + ".1-x";                // this id, another start
  EXPECT_TRUE(detail::made_by_dead_writer(reused));
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);
  EXPECT_TRUE(detail::made_by_dead_writer(tag + "-" + std::to_string(gone) + "-x"));
  EXPECT_TRUE(detail::made_by_dead_writer(tag + "-" + std::to_string(gone) + ".123-x"));
  EXPECT_FALSE(detail::made_by_dead_writer("0badf00d-" + std::to_string(gone) + ".1-x"));  // another machine
  EXPECT_FALSE(detail::made_by_dead_writer(tag + "-" + std::to_string(gone) + ".-x"));     // not a name of ours
  // a writer that has ended but is not reaped yet (a zombie) is gone too
  pid_t zombie = ::fork();
  if (zombie == 0) ::_exit(0);
  for (int i = 0; i < 500 && !detail::made_by_dead_writer(tag + "-" + std::to_string(zombie) + "-x"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // until it has ended
  EXPECT_EQ(::kill(zombie, 0), 0);                              // still there, unreaped
  EXPECT_TRUE(detail::made_by_dead_writer(tag + "-" + std::to_string(zombie) + "-x"));
  ::waitpid(zombie, nullptr, 0);
  // a forked child names itself, not its parent
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = ::fork();
  if (child == 0) {
    const std::string t = detail::writer_tag();
    const bool ok = t.rfind(std::to_string(::getpid()) + ".", 0) == 0;
    [[maybe_unused]] auto w = ::write(fds[1], ok ? "1" : "0", 1);
    ::_exit(0);
  }
  char c = 0;
  ASSERT_EQ(::read(fds[0], &c, 1), 1);
  ::waitpid(child, nullptr, 0);
  ::close(fds[0]);
  ::close(fds[1]);
  EXPECT_EQ(c, '1');
}

TEST(ZipStore, TheNextWriterRemovesWhatDeadWritersLeft) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  ZipStore::open(path, {.mode = ZipStore::Mode::write})->set("k", B("1"));
  const std::string tag = detail::host_tag();
  pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ::waitpid(gone, nullptr, 0);  // a process id no one has now
  const std::string dead = "-" + tag + "-" + std::to_string(gone) + "-";
  const std::string live = "-" + tag + "-" + std::to_string(::getppid()) + "-";
  const auto beside = [&](const std::string& n) { return dir.path() / n; };
  std::ofstream(beside(".a.zip.zarrpp-new" + dead + "AbCdEf")) << "copy";
  std::ofstream(beside(".a.zip.zarrpp-new" + dead + "AbCdEf.XyZ123")) << "libzip's copy";
  fs::create_directory(beside(".a.zip.zarrpp-staged" + dead + "QwErTy"));
  std::ofstream(beside(".a.zip.zarrpp-staged" + dead + "QwErTy") / "1") << "value";
  std::ofstream(beside(".a.zip.zarrpp-new" + live + "LiVeOn")) << "a live writer's";
  std::ofstream(beside(".a.zip.zarrpp-new-0badf00d-" + std::to_string(gone) + "-OtHeRs")) << "another machine's";
  std::ofstream(beside(".b.zip.zarrpp-new" + dead + "AbCdEf")) << "another archive's";
  std::ofstream(beside("mine.txt")) << "not zarrpp's";
  EXPECT_EQ(litter_beside(path).size(), 7u);
  auto reader = ZipStore::open(path, {});
  EXPECT_EQ(reader->get("k"), B("1"));
  EXPECT_EQ(litter_beside(path).size(), 7u);  // readers remove nothing
  auto w = ZipStore::open(path, {.mode = ZipStore::Mode::append});
  w->set("k", B("2"));
  // What stays: the new writer's own staged folder, and what is not a dead writer's of this archive.
  std::set<std::string> left;
  for (const auto& n : litter_beside(path))
    if (n.rfind(".a.zip.zarrpp-staged-" + tag + "-" + detail::writer_tag() + "-", 0) != 0) left.insert(n);
  EXPECT_EQ(left, (std::set<std::string>{".a.zip.zarrpp-new" + live + "LiVeOn",
                                         ".a.zip.zarrpp-new-0badf00d-" + std::to_string(gone) + "-OtHeRs",
                                         ".b.zip.zarrpp-new" + dead + "AbCdEf", "mine.txt"}));
  EXPECT_EQ(litter_beside(path).size(), 5u);
  w->close();
}

TEST(ZipStore, ListingsSeeStagedChangesAndSkipWhatLiesBelow) {
  TempDir dir("zip");
  const auto path = dir.path() / "a.zip";
  {
    auto w = ZipStore::open(path, {.mode = ZipStore::Mode::write});
    for (const char* k : {"zarr.json", "a/zarr.json", "a/c/0", "a/c/1", "b/x/y/z", "b0", "c/only", "d/zarr.json"})
      w->set(k, B("v"));
  }
  auto w = ZipStore::open(path, {.mode = ZipStore::Mode::append});
  const auto dir_of = [&](const std::string& p) {
    const auto l = w->list_dir(p);
    std::string s;
    for (const auto& k : l.keys) s += k + " ";
    s += "|";
    for (const auto& d : l.prefixes) s += " " + d;
    return s;
  };
  EXPECT_EQ(dir_of(""), "b0 zarr.json | a b c d");
  EXPECT_EQ(dir_of("a/"), "zarr.json | c");
  EXPECT_EQ(dir_of("b/"), "| x");
  w->erase("c/only");  // a folder whose keys are all erased is gone
  w->set("e/new", B("v"));
  w->erase("a/c/0");
  EXPECT_EQ(dir_of(""), "b0 zarr.json | a b d e");
  EXPECT_EQ(dir_of("a/c/"), "1 |");
  EXPECT_EQ(w->list_prefix("a/"), (std::vector<std::string>{"a/c/1", "a/zarr.json"}));
  EXPECT_EQ(w->list_prefix("b"), (std::vector<std::string>{"b/x/y/z", "b0"}));
  EXPECT_TRUE(w->list_prefix("zz").empty());
  w->close();
  auto r = ZipStore::open(path, {});
  EXPECT_EQ(r->list_prefix(""),
            (std::vector<std::string>{"a/c/1", "a/zarr.json", "b/x/y/z", "b0", "d/zarr.json", "e/new", "zarr.json"}));
}

TEST(FileStore, KeysNeverEscapeTheRoot) {
  TempDir root_dir("escape");
  const auto root = root_dir.path();
  auto s = FileStore::open(root / "inner");
  EXPECT_THROW(s->set("../outside", B("x")), StoreError);
  EXPECT_FALSE(fs::exists(root / "outside"));
  s->set("ok/key", B("x"));
  EXPECT_TRUE(fs::exists(root / "inner" / "ok" / "key"));
  EXPECT_EQ(s->path_of("ok/key"), root / "inner" / "ok" / "key");
}

TEST(FileStore, SymlinksNeverLeadOutOfTheRoot) {
  TempDir base_dir("symlink");
  const auto base = base_dir.path();
  fs::create_directories(base / "outside");
  {
    std::ofstream(base / "outside" / "secret") << "top secret";
  }
  fs::create_directories(base / "root");
  auto s = FileStore::open(base / "root");
  fs::create_symlink(base / "outside", base / "root" / "link");             // a directory link out
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
  EXPECT_THROW(s->list_prefix("link/"), StoreError);  // listing never leaves the root either
  // Every entry reading sees is listed: the in-root link (a value), the links out (reading them
  // is an error naming the link), never what lies outside.
  EXPECT_EQ(s->list_prefix(""), (std::vector<std::string>{"file", "in/alias", "in/real", "link"}));
  EXPECT_EQ(s->get("in/alias"), B("inside"));
}

TEST(FileStore, TempAndLockFilesAreInvisible) {
  TempDir tmp("filestore");
  auto s = FileStore::open(tmp.path());
  s->set("a/zarr.json", B("{}"));
  {
    auto lk = s->lock("a/zarr.json");
  }
  EXPECT_TRUE(s->compare_and_set("a/zarr.json", B("{}"), B("{ }")));
  EXPECT_EQ(s->list_prefix(""), (std::vector<std::string>{"a/zarr.json"}));
  EXPECT_EQ(s->list_dir("a/").keys, (std::vector<std::string>{"zarr.json"}));
}

// The folder of lock files is made by the first lock a write takes, never by opening a store to
// read it (a reader writes nothing, and opening stays one stat cheaper).
TEST(FileStore, TheLockFolderIsMadeByTheFirstLockNotByOpening) {
  TempDir tmp("filestore");
  const fs::path locks = tmp / "locks";
  const char* before = std::getenv("ZARRPP_LOCK_DIR");
  const std::string saved = before ? before : "";
  ::setenv("ZARRPP_LOCK_DIR", locks.c_str(), 1);
  {
    fs::create_directories(tmp / "store");  // an existing root is opened at once
    auto s = FileStore::open(tmp / "store");
    EXPECT_FALSE(s->get("a/zarr.json"));
    EXPECT_FALSE(fs::exists(locks));
    s->set("a/zarr.json", B("{}"));
    {
      auto lk = s->lock("a/zarr.json");
    }
    EXPECT_TRUE(fs::is_directory(locks));
    EXPECT_EQ(fs::status(locks).permissions() & fs::perms::sticky_bit, fs::perms::sticky_bit);
  }
  if (before)
    ::setenv("ZARRPP_LOCK_DIR", saved.c_str(), 1);
  else
    ::unsetenv("ZARRPP_LOCK_DIR");
}

TEST(FileStore, MissingRootWithoutCreateIsAnError) {
  TempDir tmp("filestore");
  EXPECT_THROW(FileStore::open(tmp / "x", FileStore::Options{.create = false}), NotFoundError);
}

// Opening for reading never creates anything: a mistyped path leaves no folder behind, and saying
// that nothing is there names the missing directory.
TEST(FileStore, OpeningAndReadingCreateNothing) {
  TempDir tmp("filestore");
  const fs::path root = tmp / "typo.zarr";
  auto s = FileStore::open(root);
  EXPECT_FALSE(s->get("zarr.json"));
  EXPECT_FALSE(s->exists("c/0"));
  EXPECT_FALSE(s->size("c/0"));
  EXPECT_TRUE(s->list_prefix("").empty());
  EXPECT_TRUE(s->list_dir("").keys.empty());
  s->erase("zarr.json");
  EXPECT_TRUE(s->erase("zarr.json", WriteOptions::if_equal(std::nullopt)));
  s->erase_prefix("");
  try {
    (void)Array::open(s);
    FAIL() << "opened an array in a directory that does not exist";
  } catch (const NotFoundError& e) {
    EXPECT_NE(std::string(e.what()).find("the directory '" + root.string() + "' does not exist"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW((void)Group::open(s), NotFoundError);
  EXPECT_FALSE(fs::exists(root));
  // A read-only store refuses the first write and makes nothing.
  auto ro = FileStore::open(root, FileStore::Options{.read_only = true});
  EXPECT_THROW(ro->set("k", Bytes{1}), StoreError);
  EXPECT_FALSE(fs::exists(root));
}

// The first write makes the root (with its parents); a second store opened on the same path
// before it existed sees it, and both lock the same way.
TEST(FileStore, FirstWriteMakesTheRoot) {
  TempDir tmp("filestore");
  const fs::path root = tmp / "a" / "b.zarr";
  auto early = FileStore::open(root);
  auto writer = FileStore::open(root);
  auto z = Array::create(writer, ArraySpec{.shape = {4}, .chunks = {2}, .dtype = DataType::int32});
  EXPECT_TRUE(fs::is_directory(root));
  EXPECT_EQ(Array::open(early).shape(), (Shape{4}));
  const auto v = early->get_versioned("zarr.json");
  ASSERT_TRUE(v);
  EXPECT_TRUE(writer->set("zarr.json", v->bytes, WriteOptions::if_equal(v->version)));
  EXPECT_FALSE(early->set("zarr.json", v->bytes, WriteOptions::if_equal(v->version)));  // the version moved on
}

TEST(FileStore, ReadersNeverSeeHalfAValue) {
  TempDir tmp("filestore");
  auto s = FileStore::open(tmp.path());
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
  TempDir root_dir("cas-procs");
  const auto root = root_dir.path();
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
