// HttpStore against nginx serving a temporary directory.
#include "harness.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST_F(HttpStoreNginx, GetsRangesAndMissingKeys) {
  write_text(nginx().root() / "r" / "k", "0123456789");
  write_text(nginx().root() / "r" / "empty", "");
  write_text(nginx().root() / "r" / "dir" / "x", "x");
  auto s = HttpStore::open(nginx().url("r/"));  // a trailing '/' is ignored
  EXPECT_EQ(s->url(), nginx().url("r"));
  EXPECT_EQ(s->url_of("dir/x"), nginx().url("r/dir/x"));
  EXPECT_EQ(s->get("k"), B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::range(2, 3)), B("234"));
  EXPECT_EQ(s->get("k", ByteRange::range(8, 100)), B("89"));
  EXPECT_EQ(s->get("k", ByteRange::range(20, 5)), B(""));  // 416 → empty
  EXPECT_EQ(s->get("k", ByteRange::range(10, 1)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::range(3, 0)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::from(7)), B("789"));
  EXPECT_EQ(s->get("k", ByteRange::from(0)), B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::from(10)), B(""));
  EXPECT_EQ(s->get("k", ByteRange::last(4)), B("6789"));
  EXPECT_EQ(s->get("k", ByteRange::last(40)), B("0123456789"));
  EXPECT_EQ(s->get("k", ByteRange::last(0)), B(""));
  EXPECT_EQ(s->get("empty"), B(""));
  EXPECT_EQ(s->get("empty", ByteRange::last(3)), B(""));
  EXPECT_EQ(s->get("empty", ByteRange::range(0, 3)), B(""));
  for (const auto& r :
       {ByteRange::all(), ByteRange::range(1, 2), ByteRange::from(3), ByteRange::last(4), ByteRange::last(0)})
    EXPECT_FALSE(s->get("missing", r).has_value());
  EXPECT_TRUE(s->exists("k"));
  EXPECT_TRUE(s->exists("empty"));
  EXPECT_FALSE(s->exists("missing"));
  EXPECT_FALSE(s->exists("nested/missing"));
  // A directory is not a key (nginx redirects "dir" to "dir/", then forbids listing it).
  EXPECT_FALSE(s->exists("dir"));
  EXPECT_FALSE(s->get("dir").has_value());
  EXPECT_EQ(s->get("dir/x"), B("x"));

  // Ranges went out as Range headers and nginx answered 206 / 416.
  const auto log = nginx().log();
  auto find = [&](const std::string& range) {
    for (const auto& l : log)
      if (l.uri == "/r/k" && l.range == range) return l.status;
    return std::string("not requested");
  };
  EXPECT_EQ(find("bytes=2-4"), "206");
  EXPECT_EQ(find("bytes=-4"), "206");
  EXPECT_EQ(find("bytes=7-"), "206");
  EXPECT_EQ(find("bytes=20-24"), "416");
}

TEST_F(HttpStoreNginx, KeysArePercentEncoded) {
  const std::string key = "odd/sp ace+plus%pct&amp=eq\xc3\xa9";
  write_text(nginx().root() / "enc" / key, "found");
  auto s = HttpStore::open(nginx().url("enc"));
  EXPECT_EQ(s->get(key), B("found"));
  const auto log = nginx().log();
  ASSERT_FALSE(log.empty());
  EXPECT_EQ(log.back().uri, "/enc/odd/sp%20ace%2Bplus%25pct%26amp%3Deq%C3%A9");
}

TEST_F(HttpStoreNginx, ForbiddenIsAnErrorNotAMissingKey) {
  auto s = HttpStore::open(nginx().url("forbidden"), {.headers = {}, .follow_redirects = true, .net = quick_net()});
  const auto m = nginx().mark();
  expect_throw_with<StoreError>([&] { s->get("x"); }, {"HTTP GET", nginx().url("forbidden/x"), "403 Forbidden"});
  expect_throw_with<StoreError>([&] { s->get("x", ByteRange::last(3)); }, {"403"});
  expect_throw_with<StoreError>([&] { s->exists("x"); }, {"HTTP HEAD", "403"});
  // 403 is not retried.
  EXPECT_EQ(nginx().since(m).size(), 3u);
}

TEST_F(HttpStoreNginx, IsReadOnlyAndCannotList) {
  auto s = HttpStore::open(nginx().url("ro"));
  const auto m = nginx().mark();
  const auto caps = s->capabilities();
  EXPECT_FALSE(caps.writable || caps.listing || caps.conditional_writes || caps.locking);
  auto code_of = [](const std::function<void()>& f) {
    try {
      f();
    } catch (const Error& e) {
      return e.code();
    }
    return ErrorCode::invalid_argument;
  };
  expect_throw_with<StoreError>([&] { s->set("a", B("x")); }, {"read-only", "write", "'a'", nginx().url("ro")});
  EXPECT_EQ(code_of([&] { s->set("a", B("x")); }), ErrorCode::read_only);
  expect_throw_with<StoreError>([&] { s->compare_and_set("a", std::nullopt, B("x")); }, {"read-only", "write"});
  expect_throw_with<StoreError>([&] { s->set("a", B("x"), WriteOptions::if_equal(std::nullopt)); },
                                {"read-only", "write"});
  expect_throw_with<StoreError>([&] { s->erase("a"); }, {"read-only", "erase"});
  expect_throw_with<StoreError>([&] { s->erase_prefix("a/"); }, {"read-only", "erase", "'a/'"});
  expect_throw_with<StoreError>([&] { s->list_prefix(""); }, {"cannot list", "prefix ''"});
  expect_throw_with<StoreError>([&] { s->list_dir("a/"); }, {"cannot list", "prefix 'a/'"});
  expect_throw_with<ConflictError>([&] { s->lock("a/zarr.json"); }, {"cannot lock"});
  // Keys are validated before anything else.
  expect_throw_with<StoreError>([&] { s->get("../etc/passwd"); }, {"invalid store key"});
  expect_throw_with<StoreError>([&] { s->set("a//b", B("x")); }, {"invalid store key"});
  expect_throw_with<StoreError>([&] { s->exists("/abs"); }, {"invalid store key"});
  expect_throw_with<StoreError>([&] { s->list_prefix("../"); }, {"invalid store key"});
  EXPECT_TRUE(nginx().since(m).empty());  // none of this reached the server
}

TEST_F(HttpStoreNginx, ReadsArraysAndGroupsWrittenByFileStore) {
  const fs::path dir = nginx().root() / "zarr" / "data.zarr";
  {
    auto fsstore = FileStore::open(dir);
    auto g = Group::create(fsstore, "", {{"title", "served by nginx"}});
    auto a = g.create_array("plain", {.shape = {10, 7},
                                      .chunks = {4, 3},
                                      .dtype = DataType::int32,
                                      .fill_value = Json(-1),
                                      .compressor = codec::Zstd{.level = 3}});
    a.write({slice(0, 9), all}, iota_i32({9, 7}));
    g.create_group("sub")
        .create_array("f", {.shape = {5}, .chunks = {2}, .dtype = DataType::float64})
        .write({}, NDArray::from_vector<double>({5}, {0.5, 1.5, 2.5, 3.5, 4.5}));
  }
  auto opened = open_store(nginx().url("zarr/data.zarr"));
  EXPECT_NE(dynamic_cast<HttpStore*>(opened.get()), nullptr);
  const auto root = Group::open(opened);
  EXPECT_EQ(root.attributes()["title"], "served by nginx");
  const auto a = root.open_array("plain");
  EXPECT_EQ(a.shape(), (Shape{10, 7}));
  auto got = a.read();
  auto want = iota_i32({10, 7});
  for (std::int64_t j = 0; j < 7; ++j) want.data<std::int32_t>()[9 * 7 + j] = -1;  // the unwritten row: fill value
  EXPECT_EQ(got, want);
  EXPECT_EQ(a.read({2, slice(1, 4)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{15, 16, 17}));
  EXPECT_EQ(Array::open(opened, "sub/f").read().to_vector<double>(), (std::vector<double>{0.5, 1.5, 2.5, 3.5, 4.5}));
  expect_throw_with<NotFoundError>([&] { Array::open(opened, "nope"); }, {"nope"});
  // Writing through the HTTP store is refused.
  auto ro = Array::open(opened, "plain");
  EXPECT_THROW(ro.write({0, 0}, NDArray::full<std::int32_t>({}, 5)), StoreError);
}

TEST_F(HttpStoreNginx, ShardedReadFetchesTheIndexThenOnlyTheInnerChunk) {
  const fs::path dir = nginx().root() / "sharded.zarr";
  {
    auto a = Array::create(FileStore::open(dir), {.shape = {16, 16},
                                                  .chunks = {4, 4},
                                                  .dtype = DataType::int32,
                                                  .compressor = codec::Zstd{.level = 1},
                                                  .crc32c = true,
                                                  .shards = Shape{16, 16}});
    a.write({}, iota_i32({16, 16}));
  }
  auto store = HttpStore::open(nginx().url("sharded.zarr"));
  const auto m = nginx().mark();
  const auto a = Array::open(store);
  const auto part = a.read({slice(4, 8), slice(8, 12)});  // exactly inner chunk (1, 2)
  std::vector<std::int32_t> want;
  for (int i = 4; i < 8; ++i)
    for (int j = 8; j < 12; ++j) want.push_back(i * 16 + j);
  EXPECT_EQ(part.to_vector<std::int32_t>(), want);
  const auto log = nginx().since(m);
  ASSERT_EQ(log.size(), 3u) << "requests: zarr.json, the shard index, the inner chunk";
  EXPECT_EQ(log[0].method, "GET");
  EXPECT_EQ(log[0].uri, "/sharded.zarr/zarr.json");
  EXPECT_EQ(log[0].range, "-");
  EXPECT_EQ(log[1].method, "GET");
  EXPECT_EQ(log[1].uri, "/sharded.zarr/c/0/0");
  EXPECT_EQ(log[1].range, "bytes=-260");  // 16 inner chunks x (offset, nbytes) x 8 bytes + crc32c
  EXPECT_EQ(log[1].status, "206");
  // The shard's size, which bounds the index entries (an entry reaching into the index would be
  // misread), comes with the index (Content-Range): no HEAD.
  EXPECT_EQ(log[2].method, "GET");
  EXPECT_EQ(log[2].uri, "/sharded.zarr/c/0/0");
  EXPECT_EQ(log[2].status, "206");
  std::uint64_t b = 0, e = 0;
  ASSERT_EQ(std::sscanf(log[2].range.c_str(), "bytes=%lu-%lu", &b, &e), 2) << log[2].range;
  EXPECT_LT(e - b + 1, fs::file_size(dir / "c" / "0" / "0") / 4) << "only one of 16 inner chunks is fetched";
}

TEST_F(HttpStoreNginx, ReusesConnectionsAndSendsTheRootQuery) {
  for (int i = 0; i < 5; ++i) write_text(nginx().root() / "reuse" / std::to_string(i), std::to_string(i));
  auto s = HttpStore::open(nginx().url("reuse?token=abc%20def"));
  EXPECT_EQ(s->describe(), nginx().url("reuse") + "?...");  // the query may hold secrets
  EXPECT_EQ(s->url_of("3"), nginx().url("reuse/3?token=abc%20def"));
  const auto m = nginx().mark();
  for (int round = 0; round < 2; ++round)
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(s->get(std::to_string(i)), B(std::to_string(i)));
      EXPECT_TRUE(s->exists(std::to_string(i)));
    }
  const auto log = nginx().since(m);
  ASSERT_EQ(log.size(), 20u);
  for (const auto& l : log) {
    EXPECT_EQ(l.connection, log[0].connection) << "a new connection for " << l.method << " " << l.uri;
    EXPECT_NE(l.uri.find("?token=abc%20def"), std::string::npos) << l.uri;
  }
}

TEST_F(HttpStoreNginx, ConcurrentReadersEachGetTheirValue) {
  for (int i = 0; i < 32; ++i)
    write_text(nginx().root() / "conc" / std::to_string(i), std::string(1000 + i, 'a' + i % 26));
  auto s = HttpStore::open(nginx().url("conc"));
  std::atomic<int> bad{0};
  std::vector<std::thread> ts;
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < 3; ++r)
        for (int i = t; i < 32; i += 4) {
          const auto v = s->get(std::to_string(i), ByteRange::last(10));
          if (!v || *v != B(std::string(10, 'a' + i % 26))) ++bad;
        }
    });
  for (auto& t : ts) t.join();
  EXPECT_EQ(bad.load(), 0);
}
