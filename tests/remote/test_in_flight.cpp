// Requests in flight and round trips: a remote read keeps many requests on the wire whatever the
// number of threads, within the store's limit, and opening and reading take the fewest requests.
#include <algorithm>
#include <fstream>

#include "fault_proxy.hpp"
#include "harness.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// An unsharded array of 32 chunks (4 × 8) of 16 × 16 int32 under nginx's root.
void write_array(const fs::path& dir, int zarr_format) {
  auto a =
      Array::create(FileStore::open(dir),
                    {.shape = {64, 128}, .chunks = {16, 16}, .dtype = DataType::int32, .zarr_format = zarr_format});
  a.write({}, iota_i32({64, 128}));
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

class InFlight : public HttpStoreNginx {};

// Every chunk GET is answered 300 ms late: 32 of them through 2 threads one at a time would take
// about 5 s; on the wire together they take about one delay. With the limit at 4 they take at
// least 8 delays: the limit holds.
TEST_F(InFlight, ChunkReadsShareTheWireWithinTheLimit) {
  write_array(nginx().root() / "slow.zarr", 3);
  FaultProxy p(nginx().port(), [](const SeenRequest& r, int) {
    Fault f;
    if (r.method == "GET" && r.target.find("/c/") != std::string::npos)
      f.then = [] { std::this_thread::sleep_for(300ms); };
    return f;
  });
  auto open = [&](std::size_t limit) {
    HttpStore::Options o;
    o.net.max_in_flight = limit;
    return Array::open(HttpStore::open(p.endpoint() + "/slow.zarr", o));
  };
  auto a = open(64);
  a.set_concurrency(2);
  auto t = std::chrono::steady_clock::now();
  EXPECT_EQ(a.read(), iota_i32({64, 128}));
  const double together = seconds_since(t);
  EXPECT_LT(together, 2.0) << "32 delayed chunk reads should overlap";
  auto b = open(4);
  t = std::chrono::steady_clock::now();
  EXPECT_EQ(b.read(), iota_i32({64, 128}));
  const double limited = seconds_since(t);
  EXPECT_GE(limited, 8 * 0.3 - 0.05) << "at most 4 requests at once";
  std::cout << "32 chunks, 300 ms each: " << together << " s at 64 in flight, " << limited << " s at 4" << std::endl;
}

// Opening a v3 array is one request (zarr.json); reading it whole is one request per chunk.
// A v2 array: zarr.json (absent), then .zarray, .zgroup and .zattrs at once; then the chunks.
TEST_F(InFlight, OpeningAndReadingTakeTheFewestRequests) {
  write_array(nginx().root() / "v3.zarr", 3);
  write_array(nginx().root() / "v2.zarr", 2);
  for (const auto& [name, docs] : {std::pair{"v3.zarr", 1}, std::pair{"v2.zarr", 4}}) {
    auto store = HttpStore::open(nginx().url(name));
    const auto m = nginx().mark();
    const auto a = Array::open(store);
    EXPECT_EQ(nginx().since(m).size(), static_cast<std::size_t>(docs)) << name << ": opening";
    const auto m2 = nginx().mark();
    EXPECT_EQ(a.read(), iota_i32({64, 128}));
    const auto log = nginx().since(m2);
    EXPECT_EQ(log.size(), 32u) << name << ": one GET per chunk";
    EXPECT_TRUE(std::all_of(log.begin(), log.end(), [](const LogLine& l) { return l.method == "GET"; }));
    const auto m3 = nginx().mark();
    std::vector<std::int32_t> want;
    for (int i = 16; i < 32; ++i)
      for (int j = 32; j < 48; ++j) want.push_back(i * 128 + j);
    EXPECT_EQ(a.read({slice(16, 32), slice(32, 48)}).to_vector<std::int32_t>(), want);
    EXPECT_EQ(nginx().since(m3).size(), 1u) << name << ": one chunk, one request";
  }
}

// A failure stops new requests: a read of 32 chunks whose third answers 403 fails naming it, and
// far fewer than 32 requests follow once it failed.
TEST_F(InFlight, AFailedReadStartsNoNewRequests) {
  write_array(nginx().root() / "bad.zarr", 3);
  HttpStore::Options o;
  o.net = quick_net();
  o.net.max_in_flight = 2;
  FaultProxy p(nginx().port(), [](const SeenRequest& r, int) {
    Fault f;
    if (r.target.ends_with("/c/0/2")) f = {.kind = Fault::Kind::status, .status = 403};
    return f;
  });
  auto a = Array::open(HttpStore::open(p.endpoint() + "/bad.zarr", o));
  a.set_concurrency(1);
  expect_throw_with<StoreError>([&] { a.read(); }, {"403", "c/0/2"});
  EXPECT_LT(p.requests(), 12u) << "requests after the failure";
}

// A shard replaced between the read of its index and the read of its data (its ETag changed) is
// read again from its new index, never decoded from the new shard at the old index's offsets.
TEST_F(InFlight, AShardReplacedWhileReadIsReadAgain) {
  auto make = [&](const fs::path& dir, const NDArray& data) {
    Array::create(FileStore::open(dir), {.shape = {16, 16},
                                         .chunks = {4, 4},
                                         .dtype = DataType::int32,
                                         .compressor = codec::Zstd{.level = 1},
                                         .shards = Shape{16, 16}})
        .write({}, data);
  };
  const fs::path served = nginx().root() / "replaced.zarr", next = nginx().root() / "next.zarr";
  make(served, iota_i32({16, 16}));
  make(next, NDArray::full<std::int32_t>({16, 16}, 7));
  ASSERT_NE(fs::file_size(served / "c/0/0"), fs::file_size(next / "c/0/0")) << "the ETags must differ";
  std::atomic<bool> swapped{false};
  FaultProxy p(nginx().port(), [&](const SeenRequest& r, int) {
    Fault f;
    if (r.method == "GET" && r.target.ends_with("/c/0/0") && !swapped.exchange(true))
      f.then = [&] { fs::rename(next / "c/0/0", served / "c/0/0"); };  // after the index was read
    return f;
  });
  const auto a = Array::open(HttpStore::open(p.endpoint() + "/replaced.zarr"));
  EXPECT_EQ(a.read({slice(4, 8), slice(8, 12)}), NDArray::full<std::int32_t>({4, 4}, 7));
  EXPECT_TRUE(swapped.load());
}

// A sharded array read whole takes one request per shard (the index comes with the data), all on
// the wire together; one inner chunk takes two (the index, then the chunk's range).
TEST_F(InFlight, ShardsReadWholeTakeOneRequestEachAndOverlap) {
  Array::create(FileStore::open(nginx().root() / "sharded.zarr"),
                {.shape = {64, 128}, .chunks = {16, 16}, .dtype = DataType::int32, .shards = Shape{32, 64}})
      .write({}, iota_i32({64, 128}));
  {
    const auto a = Array::open(HttpStore::open(nginx().url("sharded.zarr")));
    const auto m = nginx().mark();
    EXPECT_EQ(a.read(), iota_i32({64, 128}));
    EXPECT_EQ(nginx().since(m).size(), 4u) << "one GET per shard";
    const auto m2 = nginx().mark();
    std::vector<std::int32_t> want;
    for (int i = 16; i < 32; ++i)
      for (int j = 32; j < 48; ++j) want.push_back(i * 128 + j);
    EXPECT_EQ(a.read({slice(16, 32), slice(32, 48)}).to_vector<std::int32_t>(), want);
    EXPECT_EQ(nginx().since(m2).size(), 2u) << "the index, then the inner chunk";
  }
  FaultProxy p(nginx().port(), [](const SeenRequest& r, int) {
    Fault f;
    if (r.method == "GET" && r.target.find("/c/") != std::string::npos)
      f.then = [] { std::this_thread::sleep_for(300ms); };
    return f;
  });
  auto a = Array::open(HttpStore::open(p.endpoint() + "/sharded.zarr"));
  a.set_concurrency(1);
  const auto t = std::chrono::steady_clock::now();
  EXPECT_EQ(a.read(), iota_i32({64, 128}));
  // One after another they take at least 4 delays (1.2 s); together about one (margin for the
  // sanitizer build on a busy machine).
  EXPECT_LT(seconds_since(t), 3 * 0.3) << "4 delayed shard reads on one thread should overlap";
}

class InFlightS3 : public S3StoreMoto {};

// A write's chunks go to the store together too: 32 PUTs answered 300 ms late, written from one
// thread, take about one delay (one at a time: about 10 s); with the limit at 4, at least 8.
TEST_F(InFlightS3, ChunkWritesShareTheWireWithinTheLimit) {
  const std::string prefix = "t/in-flight-writes";
  Array::create(S3Store::open(moto().options(prefix)), "a",
                {.shape = {64, 128}, .chunks = {16, 16}, .dtype = DataType::int32});
  FaultProxy p(moto().port(), [](const SeenRequest& r, int) {
    Fault f;
    if (r.method == "PUT" && r.target.find("/c/") != std::string::npos)
      f.then = [] { std::this_thread::sleep_for(300ms); };
    return f;
  });
  auto write = [&](std::size_t limit, std::int32_t offset) {
    auto o = moto().options(prefix);
    o.endpoint = p.endpoint();
    o.net.max_in_flight = limit;
    auto a = Array::open(S3Store::open(o), "a");
    a.set_concurrency(1);
    NDArray values = iota_i32({64, 128});
    for (auto& v : std::span(values.data<std::int32_t>(), 64 * 128)) v += offset;
    const auto t = std::chrono::steady_clock::now();
    a.write({}, values);
    const double took = seconds_since(t);
    EXPECT_EQ(Array::open(S3Store::open(moto().options(prefix)), "a").read(), values);
    return took;
  };
  const double together = write(128, 1);
  EXPECT_LT(together, 2.0) << "32 delayed chunk writes should overlap";
  const double limited = write(4, 2);
  EXPECT_GE(limited, 8 * 0.3 - 0.05) << "at most 4 requests at once";
  std::cout << "32 chunk writes, 300 ms each: " << together << " s at 128 in flight, " << limited << " s at 4"
            << std::endl;
}

// A handle keeps the shard indexes it read: a second inner chunk of a shard read before is one
// request. A shard another writer replaced since is read as it is now (its data's version does
// not match the kept index: the index is read again), and so is an inner chunk written since
// where the kept index said "empty".
TEST_F(InFlight, KeptShardIndexesSaveARequestAndNeverServeOldData) {
  const fs::path dir = nginx().root() / "kept.zarr";
  Array::create(FileStore::open(dir),
                {.shape = {64, 64}, .chunks = {16, 16}, .dtype = DataType::int32, .shards = Shape{64, 64}})
      .write({slice(0, 32), slice()}, NDArray::full<std::int32_t>({32, 64}, 1));  // rows 32: empty
  const auto a = Array::open(HttpStore::open(nginx().url("kept.zarr")));
  const auto block = [](std::int32_t v) { return NDArray::full<std::int32_t>({16, 16}, v); };
  auto m = nginx().mark();
  EXPECT_EQ(a.read({slice(0, 16), slice(0, 16)}), block(1));
  EXPECT_EQ(nginx().since(m).size(), 2u) << "the index, then the inner chunk";
  m = nginx().mark();
  EXPECT_EQ(a.read({slice(16, 32), slice(16, 32)}), block(1));
  EXPECT_EQ(nginx().since(m).size(), 1u) << "the kept index, then one range";

  // Another writer replaces the shard: different values, and an inner chunk the kept index
  // calls empty now written.
  auto other = Array::open(FileStore::open(dir));
  other.write({slice(0, 16), slice(0, 16)}, block(5));
  other.write({slice(48, 64), slice(48, 64)}, block(9));
  EXPECT_EQ(a.read({slice(48, 64), slice(48, 64)}), block(9)) << "the kept index said empty";
  EXPECT_EQ(a.read({slice(0, 16), slice(0, 16)}), block(5)) << "the kept index is of the old shard";
  EXPECT_EQ(a.read({slice(32, 48), slice(0, 16)}), block(0)) << "still empty";
}
