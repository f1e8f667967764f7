// Remote stores under a misbehaving network: a fault-injecting proxy between the object stores and
// their servers (S3Store and moto; AzureStore and Azurite: the scenarios that apply to both run on
// both).
// A lost reply to a conditional write must never apply a change twice or lose one; one glitch
// must not change a store's behaviour for good; a stalled server fails within the set bound.
#include <random>

#include "azurite.hpp"
#include "fault_proxy.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
using namespace std::chrono_literals;
using K = Fault::Kind;

namespace {

// The object path a request is for ("/bucket/t/x/zarr.json", without the query).
std::string path_of(const SeenRequest& r) { return r.target.substr(0, r.target.find('?')); }
bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}
bool is(const SeenRequest& r, const char* method, const std::string& tail) {
  return r.method == method && ends_with(path_of(r), tail);
}
bool conditional(const SeenRequest& r) { return r.headers.count("if-match") || r.headers.count("if-none-match"); }

// A rule that gives `fault` to the first request matching `pick` (and `later` to the next ones).
FaultProxy::Rule first(std::function<bool(const SeenRequest&)> pick, Fault fault, Fault later = {}) {
  auto hits = std::make_shared<int>(0);
  return [=](const SeenRequest& r, int) { return pick(r) ? ((*hits)++ == 0 ? fault : later) : Fault{}; };
}

std::size_t count_seen(const FaultProxy& p, const std::function<bool(const SeenRequest&)>& pick) {
  std::size_t n = 0;
  for (const auto& [r, k] : p.seen()) n += pick(r) ? 1 : 0;
  return n;
}

// A server fixture (S3StoreMoto, AzureStoreAzurite) with stores on it directly and through a proxy.
template <class Server>
class ObjectFaults : public Server {
 protected:
  static constexpr bool kS3 = std::is_same_v<Server, S3StoreMoto>;
  std::string prefix() const {
    return std::string("t/faults/") + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  }
  auto options() {
    if constexpr (kS3)
      return this->moto().options(prefix());
    else
      return this->azurite().options(kContainer, prefix());
  }
  static StorePtr open(auto o) {
    if constexpr (kS3)
      return S3Store::open(std::move(o));
    else
      return AzureStore::open(std::move(o));
  }
  int port() {
    if constexpr (kS3)
      return this->moto().port();
    else
      return this->azurite().port();
  }
  // A store on the server directly (to set up and to check what is really stored).
  StorePtr direct() { return open(options()); }
  // A store whose requests go through the proxy; `tweak` adjusts its options (net, lock_ttl).
  template <class Tweak = std::nullptr_t>
  StorePtr through(const FaultProxy& p, Tweak tweak = nullptr) {
    auto o = options();
    o.endpoint = kS3 ? p.endpoint() : p.endpoint() + "/" + detail::kAzuriteAccount;
    if constexpr (!std::is_same_v<Tweak, std::nullptr_t>) tweak(o);
    return open(o);
  }
  // An 8x6 int32 array "a" holding 0..47, chunks of 4x3.
  void make_array() {
    auto a = Array::create(direct(), "a", {.shape = {8, 6}, .chunks = {4, 3}, .dtype = DataType::int32});
    a.write({}, iota_i32({8, 6}));
  }
  // The array as stored: `rows` rows of -1 in front of the 0..47 it was made with.
  void expect_prepended_once(std::int64_t rows) {
    const Array a = Array::open(direct(), "a");
    ASSERT_EQ(a.shape(), (Shape{8 + rows, 6})) << "the prepend must be stored exactly once";
    EXPECT_EQ(a.domain()[0].inclusive_min, -rows);
    const auto v = a.read<std::int32_t>().to_vector<std::int32_t>();
    for (std::int64_t i = 0; i < rows * 6; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)], -1) << i;
    for (std::int64_t i = 0; i < 48; ++i) EXPECT_EQ(v[static_cast<std::size_t>(rows * 6 + i)], i) << i;
  }
};

// The scenarios of the S3 store only (its options, moto's answers).
class S3Faults : public ObjectFaults<S3StoreMoto> {
 protected:
  std::shared_ptr<S3Store> through(const FaultProxy& p, const std::function<void(S3Store::Options&)>& tweak = {}) {
    auto o = moto().options(prefix());
    o.endpoint = p.endpoint();
    if (tweak) tweak(o);
    return S3Store::open(o);
  }
  FaultProxy proxy(FaultProxy::Rule rule) { return FaultProxy(moto().port(), std::move(rule)); }
};

using ObjectServers = ::testing::Types<S3StoreMoto, AzureStoreAzurite>;
struct ServerName {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, S3StoreMoto> ? "S3" : "Azure";
  }
};
TYPED_TEST_SUITE(ObjectFaults, ObjectServers, ServerName);

auto growth_switch = [](const SeenRequest& r) { return is(r, "PUT", "/a/zarr.json") && r.headers.count("if-match"); };

}  // namespace

// The case: the conditional PUT of zarr.json is carried out, its reply lost. On a reused
// connection libcurl re-sends it by itself (the re-send gets 412); on a fresh one zarrpp retries.
// Either way the prepend is stored once.
TYPED_TEST(ObjectFaults, LostReplyToTheGrowthSwitchAppliesItOnce) {
  for (const bool reuse : {true, false}) {
    SCOPED_TRACE(reuse ? "reused connection" : "fresh connections");
    this->make_array();
    FaultProxy p(this->port(), first(growth_switch, {.kind = K::lose_reply}));
    auto s = this->through(p, [&](auto& o) { o.net.max_idle_connections = reuse ? 16 : 0; });
    auto a = Array::open(s, "a");
    a.prepend(NDArray::full<std::int32_t>({3, 6}, -1));
    EXPECT_EQ(a.shape(), (Shape{11, 6}));
    EXPECT_EQ(count_seen(p, growth_switch), 2u) << "the switch was sent again after its reply was lost";
    this->expect_prepended_once(3);
    this->direct()->erase_prefix("");
  }
}

// Between the lost reply and the retry another writer updates the attributes: the stored bytes
// are no longer this writer's, yet its growth is there and must not be applied again.
TYPED_TEST(ObjectFaults, LostReplyThenAnAttributeUpdateStillAppliesTheGrowthOnce) {
  this->make_array();
  Fault f{.kind = K::lose_reply,
          .then = [this] { Array::open(this->direct(), "a").update_attributes(Json{{"note", "meanwhile"}}); }};
  FaultProxy p(this->port(), first(growth_switch, f));
  auto a = Array::open(this->through(p), "a");
  a.append(NDArray::full<std::int32_t>({2, 6}, 5));
  const auto b = Array::open(this->direct(), "a");
  EXPECT_EQ(b.shape(), (Shape{10, 6}));
  EXPECT_EQ(b.attributes().value("note", ""), "meanwhile");
  EXPECT_EQ(b.read({slice(8, 10)}), NDArray::full<std::int32_t>({2, 6}, 5));
}

// Every attempt after the lost reply fails too: the store reads back what is stored and finds
// the write there (success, once); when it cannot even read back, the error says the outcome is
// unknown and nothing the growth wrote is deleted.
TYPED_TEST(ObjectFaults, LostReplyAndFailingRetriesNeverApplyTwiceOrLoseData) {
  this->make_array();
  {
    FaultProxy p(this->port(), first(growth_switch, {.kind = K::lose_reply}, {.kind = K::refuse}));
    auto a = Array::open(this->through(p, [](auto& o) { o.net.max_idle_connections = 0; }), "a");
    a.prepend(NDArray::full<std::int32_t>({3, 6}, -1));
    EXPECT_GE(count_seen(p, growth_switch), 2u);
    this->expect_prepended_once(3);
  }
  {
    // The switch's reply is lost, then every request fails: the prepend is there (once), and
    // the error says so is unknown, without deleting its chunks.
    auto lost = std::make_shared<std::atomic<bool>>(false);
    FaultProxy p(this->port(), [lost](const SeenRequest& r, int) -> Fault {
      if (*lost) return {.kind = K::refuse};
      if (growth_switch(r)) {
        *lost = true;
        return {.kind = K::lose_reply};
      }
      return {};
    });
    auto a = Array::open(this->through(p,
                                       [](auto& o) {
                                         o.net.max_idle_connections = 0;
                                         o.lock_ttl = 500ms;
                                       }),
                         "a");
    expect_throw_with<StoreError>([&] { a.prepend(NDArray::full<std::int32_t>({2, 6}, -1)); },
                                  {"took effect is unknown", "the chunks it wrote are kept"});
    std::this_thread::sleep_for(600ms);  // the unreleased lease expires
    this->expect_prepended_once(5);
  }
  {
    // Every copy of the switch is cut off after it was sent (it never reaches the server here,
    // but the writer cannot know): the array reads as before, and the error does not claim the
    // change was undone, nor delete what it wrote.
    FaultProxy p(this->port(),
                 [](const SeenRequest& r, int) { return growth_switch(r) ? Fault{.kind = K::refuse} : Fault{}; });
    auto a = Array::open(this->through(p), "a");
    expect_throw_with<UncertainWriteError>(
        [&] { a.prepend(NDArray::full<std::int32_t>({4, 6}, -1)); },
        {"whether the change took effect is unknown", "may still take effect", "chunks it wrote are kept"});
    this->expect_prepended_once(5);
    EXPECT_TRUE(this->direct()->exists("a/c/-3/0")) << "the chunks the growth wrote are kept";
  }
}

// Create-only writes and conditional deletes whose replies are lost report what happened.
TYPED_TEST(ObjectFaults, LostRepliesToCreateOnlyWritesAndConditionalDeletes) {
  auto d = this->direct();
  FaultProxy p(this->port(), [](const SeenRequest& r, int) -> Fault {
    return conditional(r) && ends_with(path_of(r), "/k") ? Fault{.kind = K::lose_reply} : Fault{};
  });
  auto s = this->through(p);
  ASSERT_TRUE(s->confirm_capabilities().conditional_writes);
  p.set_rule(first([](const SeenRequest& r) { return is(r, "PUT", "/k") && conditional(r); }, {.kind = K::lose_reply}));
  EXPECT_TRUE(s->set("k", B("mine"), WriteOptions::if_equal(std::nullopt))) << "created, though the reply was lost";
  EXPECT_EQ(*d->get("k"), B("mine"));
  EXPECT_FALSE(s->set("k", B("again"), WriteOptions::if_equal(std::nullopt))) << "it exists now";
  const auto v = d->get_versioned("k");
  p.set_rule(first([](const SeenRequest& r) { return is(r, "PUT", "/k") && conditional(r); }, {.kind = K::lose_reply}));
  EXPECT_TRUE(s->set("k", B("next"), WriteOptions::if_equal(v->version)));
  EXPECT_EQ(*d->get("k"), B("next"));
  const auto v2 = d->get_versioned("k");
  p.set_rule(
      first([](const SeenRequest& r) { return is(r, "DELETE", "/k") && conditional(r); }, {.kind = K::lose_reply}));
  EXPECT_TRUE(s->erase("k", WriteOptions::if_equal(v2->version))) << "deleted, though the reply was lost";
  EXPECT_FALSE(d->get("k").has_value());
}

// A lost reply to the lease's own PUT does not make its process wait out the lease (30 s) for
// itself; lost replies to renewals do not lose the lease.
TYPED_TEST(ObjectFaults, LostLeaseRepliesNeitherBlockNorLoseTheLease) {
  auto lease_put = [](const SeenRequest& r) {
    return r.method == "PUT" && path_of(r).find(".zarrpp-lock.") != std::string::npos;
  };
  {
    FaultProxy p(this->port(), first(lease_put, {.kind = K::lose_reply}));
    auto s = this->through(p);
    ASSERT_TRUE(s->confirm_capabilities().conditional_writes);
    const auto t0 = std::chrono::steady_clock::now();
    auto lk = s->lock("x/zarr.json");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s) << "waited for its own lease";
    EXPECT_NO_THROW(lk->check());
  }
  {
    // Renewals: the 2nd and 3rd lease PUTs (renewals) lose their replies.
    auto n = std::make_shared<std::atomic<int>>(0);
    FaultProxy p(this->port(), [&, n](const SeenRequest& r, int) -> Fault {
      if (!lease_put(r)) return {};
      const int i = (*n)++;
      return i == 1 || i == 2 ? Fault{.kind = K::lose_reply} : Fault{};
    });
    auto s = this->through(p, [](auto& o) { o.lock_ttl = 1500ms; });
    auto lk = s->lock("y/zarr.json");
    std::this_thread::sleep_for(2000ms);
    EXPECT_GE(n->load(), 4);
    EXPECT_NO_THROW(lk->check()) << "the lease was taken as lost after a lost renewal reply";
  }
}

// One refused probe (501) does not switch conditional writes off for the store's life.
TEST_F(S3Faults, OneRefusedProbeDoesNotSwitchConditionalWritesOff) {
  auto probe = [](const SeenRequest& r) {
    return r.method == "PUT" && path_of(r).find(".zarrpp-probe-") != std::string::npos;
  };
  FaultProxy p(moto().port(), first(probe, {.kind = K::status, .status = 501}));
  auto s = through(p);
  EXPECT_TRUE(s->set("m", B("v"), WriteOptions::if_equal(std::nullopt)));
  EXPECT_TRUE(s->confirm_capabilities().conditional_writes);
  make_array();
  Array::open(s, "a").prepend(NDArray::full<std::int32_t>({1, 6}, -1));
  expect_prepended_once(1);
  // A server that keeps refusing is believed, and said so.
  FaultProxy q(moto().port(),
               [&](const SeenRequest& r, int) { return probe(r) ? Fault{.kind = K::status, .status = 501} : Fault{}; });
  auto t = through(q);
  expect_throw_with<ConflictError>([&] { t->set("m2", B("v"), WriteOptions::if_equal(std::nullopt)); },
                                   {"does not support conditional writes"});
  EXPECT_EQ(count_seen(q, probe), 3u) << "three probes, not one";
}

// A stalled server fails a read within the configured bound: stall_timeout per attempt, and no
// new attempt once retry_window has passed.
TEST_F(S3Faults, AStalledServerFailsWithinTheBound) {
  make_array();
  FaultProxy p(moto().port(), [](const SeenRequest& r, int) {
    return r.method == "GET" && ends_with(path_of(r), "/c/0/0") ? Fault{.kind = K::stall, .stall = 60s} : Fault{};
  });
  auto s = through(p, [](S3Store::Options& o) {
    o.net.stall_timeout = 1s;
    o.net.max_attempts = 20;
    o.net.retry_window = 2500ms;
  });
  auto a = Array::open(s, "a");
  const auto t0 = std::chrono::steady_clock::now();
  expect_throw_with<StoreError>([&] { a.read({slice(0, 2), slice(0, 2)}); }, {"GET", "/c/0/0", "retry_window"});
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_LT(took, 9s) << "curl checks stalls once a second: about 1-2 s per attempt";
  EXPECT_GE(took, 2s);
  // The defaults bound a stalled request well under a minute.
  const RemoteOptions d;
  EXPECT_LE(d.retry_window + d.stall_timeout + d.retry_max_delay, 50s);
}

// A 416 is believed only for a range the object cannot hold; otherwise the error names the
// answer (not "the shard is too small"). A real 416 (a range past the end) still reads as empty.
TEST_F(S3Faults, ASpurious416IsNamedAndARealOneIsEmpty) {
  auto d = direct();
  Array::create(d, "sh", {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::uint16, .shards = Shape{4, 8}})
      .write({}, NDArray::full<std::uint16_t>({8, 8}, 9));
  FaultProxy p(moto().port(), [](const SeenRequest& r, int) {
    return r.method == "GET" && r.headers.count("range") && path_of(r).find("/sh/c/") != std::string::npos
               ? Fault{.kind = K::status, .status = 416}
               : Fault{};
  });
  auto a = Array::open(through(p), "sh");
  expect_throw_with<StoreError>([&] { a.read({slice(0, 2), slice(0, 2)}); },
                                {"416 Range Not Satisfiable for bytes=", "which holds that range", "/sh/c/0/0"});
  d->set("small", B("abc"));
  EXPECT_EQ(through(p)->get("small", ByteRange::from(10)), std::optional<Bytes>(Bytes{}));
  EXPECT_EQ(d->get("small", ByteRange::from(10)), std::optional<Bytes>(Bytes{}));
}

// A reply whose Content-Length and body are cut short looks complete to HTTP: when the bytes then
// fail to parse or decode, the error names the response, not corrupt data.
TEST_F(S3Faults, ACutResponseIsNamedNotTakenForCorruptData) {
  auto d = direct();
  Array::create(d, "z",
                {.shape = {64}, .chunks = {64}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}})
      .write({}, iota_i32({64}));
  {
    FaultProxy p(moto().port(),
                 first([](const SeenRequest& r) { return is(r, "GET", "/z/zarr.json"); }, {.kind = K::short_length}));
    expect_throw_with<MetadataError>([&] { Array::open(through(p), "z"); },
                                     {"malformed JSON", "cut in transit", "Content-Length", "/z/zarr.json", "(HEAD)"});
  }
  {
    FaultProxy p(moto().port(),
                 first([](const SeenRequest& r) { return is(r, "GET", "/z/c/0"); }, {.kind = K::short_length}));
    auto a = Array::open(through(p), "z");
    expect_throw_with<CodecError>([&] { a.read({slice(0, 4)}); }, {"chunk 'z/c/0'", "cut in transit", "HTTP 200"});
    EXPECT_EQ(a.read({slice(0, 4)}).to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 1, 2, 3}))
        << "the data itself is fine";
  }
}

namespace {
std::size_t env_count(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? static_cast<std::size_t>(std::stoul(v)) : fallback;
}

// Random faults for every kind of request, at `rate`: lost replies, refused connections, 500s and
// 503s, and for reads cut and lying bodies, changed and dropped ETags.
FaultProxy::Rule random_faults(std::uint32_t seed, double rate) {
  auto rng = std::make_shared<std::mt19937>(seed);
  auto mu = std::make_shared<std::mutex>();
  return [=](const SeenRequest& r, int) -> Fault {
    std::lock_guard lk(*mu);
    if (std::uniform_real_distribution<double>(0, 1)(*rng) >= rate) return {};
    const bool get = r.method == "GET" || r.method == "HEAD";
    static const K kinds[] = {K::lose_reply, K::refuse,       K::status,    K::status,
                              K::cut_body,   K::short_length, K::drop_etag, K::change_etag};
    const K k = kinds[std::uniform_int_distribution<int>(0, 7)(*rng)];
    if (k == K::status)
      return {.kind = K::status, .status = std::uniform_int_distribution<int>(0, 1)(*rng) ? 503 : 500};
    if (!get && (k == K::cut_body || k == K::short_length || k == K::drop_etag || k == K::change_etag))
      return {.kind = K::lose_reply};
    return {.kind = k};
  };
}

// One growth of one row holding `tag`, and what became of it.
struct Outcome {
  std::int32_t tag;
  bool ok;
  std::string error;
};

// Checks the array "r" as stored (2 rows of 0, then one row per stored growth): no row torn,
// every growth that succeeded there once, every one that said "not applied" absent, none twice.
// Returns a summary line for the logs and docs/reliability.md.
std::string check_growths(const Array& a, const std::vector<Outcome>& outcomes, const FaultProxy& p) {
  const auto v = a.read<std::int32_t>().to_vector<std::int32_t>();
  std::map<std::int32_t, int> rows;
  for (std::size_t r = 0; r < v.size() / 4; ++r) {
    for (int c = 1; c < 4; ++c) EXPECT_EQ(v[r * 4 + c], v[r * 4]) << "row " << r << " is torn";
    ++rows[v[r * 4]];
  }
  EXPECT_EQ(rows[0], 2) << "the original rows";
  std::size_t ok = 0, failed = 0, not_applied = 0;
  std::set<std::string> errors;
  for (const auto& o : outcomes) {
    const int n = rows.count(o.tag) ? rows[o.tag] : 0;
    EXPECT_LE(n, 1) << "growth " << o.tag << " is stored " << n << " times";
    if (o.ok) {
      ++ok;
      EXPECT_GE(n, 1) << "growth " << o.tag << " succeeded but is not stored";
    } else {
      ++failed;
      errors.insert(o.error.substr(0, 160));
      if (o.error.find("not applied") != std::string::npos) {
        ++not_applied;
        EXPECT_EQ(n, 0) << "growth " << o.tag << " said 'not applied' but is stored: " << o.error;
      }
    }
  }
  for (const auto& [tag, n] : rows)
    EXPECT_TRUE(tag == 0 ||
                std::any_of(outcomes.begin(), outcomes.end(), [&](const Outcome& o) { return o.tag == tag; }))
        << "a row nobody wrote: " << tag;
  std::ostringstream summary;
  summary << "growths " << outcomes.size() << " (" << ok << " ok, " << failed << " failed, " << not_applied
          << " of them 'not applied'), requests " << p.requests() << ", injected faults " << p.injected() << ":";
  for (const auto& [k, n] : p.injected_by_kind()) summary << " " << k << " " << n;
  for (const auto& e : errors) summary << "\n  error: " << e;
  EXPECT_GT(ok, outcomes.size() / 3) << "most growths should succeed despite the faults";
  return summary.str();
}
}  // namespace

// Several writers grow one array at both ends through a proxy that injects random faults into
// every kind of request. Every growth that succeeded is stored exactly once, every one that said
// "not applied" is absent, and none is stored twice. Scale with ZARRPP_SOAK_REMOTE_WRITERS,
// ZARRPP_SOAK_REMOTE_OPS and ZARRPP_SOAK_REMOTE_SEED (the reliability soak does).
TYPED_TEST(ObjectFaults, ConcurrentWritersUnderRandomFaultsLoseNothingAndApplyNothingTwice) {
  const std::size_t writers = env_count("ZARRPP_SOAK_REMOTE_WRITERS", 3), ops = env_count("ZARRPP_SOAK_REMOTE_OPS", 8);
  const auto seed = static_cast<std::uint32_t>(env_count("ZARRPP_SOAK_REMOTE_SEED", 20261201));
  Array::create(this->direct(), "r", {.shape = {2, 4}, .chunks = {2, 4}, .dtype = DataType::int32})
      .write({}, NDArray::full<std::int32_t>({2, 4}, 0));
  FaultProxy p(this->port(), random_faults(seed, 0.08));
  p.keep_requests(false);
  std::mutex out_mu;
  std::vector<Outcome> outcomes;
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      auto s = this->through(p, [](auto& o) {
        o.lock_ttl = 2s;
        o.net.stall_timeout = 5s;
      });
      std::optional<Array> a;
      for (std::size_t i = 0; i < ops; ++i) {
        const auto tag = static_cast<std::int32_t>((w + 1) * 10000 + i + 1);
        Outcome o{tag, false, ""};
        try {
          if (!a) a = Array::open(s, "r");
          if ((w + i) % 2)
            a->prepend(NDArray::full<std::int32_t>({1, 4}, tag));
          else
            a->append(NDArray::full<std::int32_t>({1, 4}, tag));
          o.ok = true;
        } catch (const Error& e) {
          o.error = e.what();
          a.reset();  // open again: the handle may hold what a failed step left
        }
        std::lock_guard lk(out_mu);
        outcomes.push_back(o);
      }
    });
  for (auto& t : threads) t.join();
  const std::string summary =
      "writers " + std::to_string(writers) + ", " + check_growths(Array::open(this->direct(), "r"), outcomes, p);
  std::cout << summary << std::endl;
  ::testing::Test::RecordProperty("summary", summary);
}

#ifdef ZARRPP_CLI_PATH
// The same from the CLI: processes (one per command) prepend and append through the proxy.
TEST_F(S3Faults, CliProcessesUnderRandomFaultsLoseNothingAndApplyNothingTwice) {
  const std::size_t writers = 3, ops = 4;
  Array::create(direct(), "r", {.shape = {2, 4}, .chunks = {2, 4}, .dtype = DataType::int32})
      .write({}, NDArray::full<std::int32_t>({2, 4}, 0));
  FaultProxy p(moto().port(), random_faults(7, 0.08));
  TempDir dir{"npy"};
  const auto o = moto().options("");
  const std::string url = std::string("s3://") + kBucket + "/" + prefix() + "/r";
  std::mutex out_mu;
  std::vector<Outcome> outcomes;
  std::vector<std::thread> threads;
  for (std::size_t w = 0; w < writers; ++w)
    threads.emplace_back([&, w] {
      for (std::size_t i = 0; i < ops; ++i) {
        const auto tag = static_cast<std::int32_t>((w + 1) * 10000 + i + 1);
        const auto file = dir.path() / (std::to_string(tag) + ".npy");
        npy::save(file, NDArray::full<std::int32_t>({1, 4}, tag).view());
        const auto r = run({"timeout", "120", ZARRPP_CLI_PATH, "--stall-timeout", "5",
                            (w + i) % 2 ? "prepend" : "append", url, "--axis", "0", "--from", file.string()},
                           {{"AWS_ENDPOINT_URL", p.endpoint()},
                            {"AWS_REGION", "us-east-1"},
                            {"AWS_ACCESS_KEY_ID", *o.access_key_id},
                            {"AWS_SECRET_ACCESS_KEY", *o.secret_access_key}});
        std::lock_guard lk(out_mu);
        outcomes.push_back({tag, r.status == 0, r.err});
      }
    });
  for (auto& t : threads) t.join();
  const std::string summary = "CLI processes, " + check_growths(Array::open(direct(), "r"), outcomes, p);
  std::cout << summary << std::endl;
}
#endif

// The read-only HTTP store (nginx behind the proxy) names a cut response and a spurious 416 too,
// and a lost reply to a read is just retried.
TEST(HttpFaults, CutResponsesAndSpurious416AreNamed) {
  Nginx nginx;
  auto local = FileStore::open(nginx.root() / "h.zarr");
  Array::create(local, {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::uint16, .shards = Shape{4, 8}})
      .write({}, NDArray::full<std::uint16_t>({8, 8}, 9));
  FaultProxy p(nginx.port(), [](const SeenRequest& r, int) {
    if (r.method == "GET" && ends_with(path_of(r), "/h.zarr/zarr.json")) return Fault{.kind = K::short_length};
    return Fault{};
  });
  HttpStore::Options o;
  o.net = quick_net();
  auto remote = [&] { return HttpStore::open(p.endpoint() + "/h.zarr", o); };
  expect_throw_with<MetadataError>([&] { Array::open(remote()); }, {"malformed JSON", "cut in transit", "(HEAD)"});
  p.set_rule([](const SeenRequest& r, int) {
    return r.method == "GET" && r.headers.count("range") ? Fault{.kind = K::status, .status = 416} : Fault{};
  });
  const auto a = Array::open(remote());
  expect_throw_with<StoreError>([&] { a.read({slice(0, 2), slice(0, 2)}); },
                                {"HTTP 416 Range Not Satisfiable", "which holds that range"});
  p.set_rule(first([](const SeenRequest& r) { return r.method == "GET" && r.headers.count("range"); },
                   {.kind = K::lose_reply}));
  EXPECT_EQ(Array::open(remote()).read({slice(0, 2), slice(0, 2)}), NDArray::full<std::uint16_t>({2, 2}, 9));
}

// A copy onto S3 under random faults ends with an exact copy, or with an error after which the
// destination holds no array (what it wrote was removed, or it never opens) and a second try
// succeeds; the source is never touched.
TEST_F(S3Faults, CopiesUnderRandomFaultsAreWholeOrAbsent) {
  auto src_store = MemoryStore::create();
  auto src = Array::create(
      src_store, "s",
      {.shape = {24, 20}, .chunks = {4, 5}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}});
  src.write({}, iota_i32({24, 20}));
  std::size_t whole = 0, refused = 0;
  for (std::uint32_t seed = 1; seed <= 6; ++seed) {
    FaultProxy p(moto().port(), random_faults(seed, 0.2));
    auto dst = through(p);
    ArrayMetadata m = src.metadata();
    m.chunk_grid.chunk_shape = {6, 10};
    const std::string path = "copy" + std::to_string(seed);
    try {
      copy_array(src, dst, path, m);
      ++whole;
    } catch (const Error& e) {
      ++refused;
      std::optional<Array> left;
      try {
        left = Array::open(direct(), path);
      } catch (const Error&) {
      }
      // A copy that failed after its zarr.json landed must still be a whole copy.
      if (left) {
        EXPECT_EQ(left->read(), src.read()) << "seed " << seed << ": " << e.what();
      }
      copy_array(src, direct(), path, m, {.overwrite = true});
    }
    EXPECT_EQ(Array::open(direct(), path).read(), src.read()) << "seed " << seed;
  }
  EXPECT_EQ(src.read(), iota_i32({24, 20}));
  std::cout << "copies: " << whole << " whole under faults, " << refused << " refused and redone" << std::endl;
}
