// S3Store against moto_server, cross-checked with boto3.
#include "harness.hpp"
#include "store_conformance.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The store conformance suite over S3 (moto): every store behaves the same.
namespace {
std::shared_ptr<Moto> conformance_moto() {
  static std::weak_ptr<Moto> shared;
  static std::mutex mu;
  std::lock_guard lk(mu);
  auto m = shared.lock();
  if (!m) shared = m = std::make_shared<Moto>();
  return m;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(S3, StoreConformance,
                         ::testing::Values(StoreFactory{"s3_moto",
                                                        [] {
                                                          static int n = 0;
                                                          auto moto = conformance_moto();  // kept alive by the store
                                                          auto s = S3Store::open(
                                                              moto->options("conformance/" + std::to_string(n++)));
                                                          return StorePtr(s.get(), [s, moto](Store*) mutable {
                                                            s.reset();
                                                            moto.reset();
                                                          });
                                                        },
                                                        /*slowness=*/5}),
                         name_of);

TEST_F(S3StoreMoto, ConditionalWriteProbeLeavesNothingBehind) {
  auto s = store("");
  EXPECT_TRUE(s->confirm_capabilities().conditional_writes);
  EXPECT_TRUE(s->compare_and_set("m", std::nullopt, B("v1")));
  {
    auto lk = s->lock("zarr.json");
    EXPECT_NO_THROW(lk->check());
  }
  s->erase("m");
  const auto names =
      Json::parse(moto().python("print(json.dumps([o['Key'] for o in s3.list_objects_v2(Bucket=B, "
                                "Prefix='t/ConditionalWriteProbeLeavesNothingBehind/').get('Contents', [])]))"));
  EXPECT_TRUE(names.empty()) << names.dump();
}

TEST_F(S3StoreMoto, Boto3SeesWhatZarrppWroteAndViceVersa) {
  auto s = store("x");
  const std::vector<std::string> keys = {"plain",     "sp ace/k",          "plus+sign",
                                         "pct%20lit", "amp&lt;<gt>\"q'",   "uni\xc3\xa9\xe2\x82\xac",
                                         "tilde~-._", "eq=semi;colon:at@", "deep/er/key"};
  for (const auto& k : keys) s->set(k, B("value of " + k));
  Bytes big(3 * 1024 * 1024 + 17);  // > 1 MiB: curl sends Expect: 100-continue
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i * 31 + i / 4096);
  s->set("big", big);
  const auto out = Json::parse(moto().python(R"PY(
objs = s3.list_objects_v2(Bucket=B, Prefix="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/")["Contents"]
res = {"keys": sorted(o["Key"] for o in objs)}
res["values"] = {o["Key"]: s3.get_object(Bucket=B, Key=o["Key"])["Body"].read().decode("latin-1") for o in objs if not o["Key"].endswith("/big")}
import hashlib
res["big"] = hashlib.sha256(s3.get_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/big")["Body"].read()).hexdigest()
res["ctype"] = s3.head_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/plain")["ContentType"]
s3.put_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/from boto3/v", Body=b"\x00\x01binary\xff")
s3.put_object(Bucket=B, Key="t/Boto3SeesWhatZarrppWroteAndViceVersa/x/folder/", Body=b"")
print(json.dumps(res))
)PY"));
  std::vector<std::string> want;
  for (const auto& k : keys) want.push_back("t/Boto3SeesWhatZarrppWroteAndViceVersa/x/" + k);
  want.push_back("t/Boto3SeesWhatZarrppWroteAndViceVersa/x/big");
  std::sort(want.begin(), want.end());
  EXPECT_EQ(out["keys"].get<std::vector<std::string>>(), want);
  for (const auto& k : keys) {
    const std::string latin1 = [&] {
      std::string r;
      for (unsigned char c : "value of " + k)
        r += c < 0x80 ? std::string(1, static_cast<char>(c))
                      : std::string{static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
      return r;
    }();
    EXPECT_EQ(out["values"]["t/Boto3SeesWhatZarrppWroteAndViceVersa/x/" + k].get<std::string>(), latin1) << k;
  }
  EXPECT_EQ(out["big"], detail::sha256_hex(big));
  EXPECT_EQ(out["ctype"], "application/octet-stream");
  EXPECT_EQ(s->get("big"), big);
  EXPECT_EQ(s->get("big", ByteRange::range(1024 * 1024, 5)),
            Bytes(big.begin() + 1024 * 1024, big.begin() + 1024 * 1024 + 5));
  // What boto3 wrote, zarrpp reads; the "folder/" marker is no key but shows as a directory.
  const std::string bin(
      "\x00\x01"
      "binary\xff",
      9);
  EXPECT_EQ(s->get("from boto3/v"), B(bin));
  auto listed = s->list_prefix("");
  EXPECT_EQ(listed.size(), keys.size() + 2);
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end()));
  EXPECT_EQ(std::count(listed.begin(), listed.end(), "folder/"), 0);
  const auto top = s->list_dir("");
  EXPECT_EQ(top.prefixes, (std::vector<std::string>{"deep", "folder", "from boto3", "sp ace"}));
  EXPECT_EQ(std::count(top.keys.begin(), top.keys.end(), "amp&lt;<gt>\"q'"), 1);
  EXPECT_TRUE(s->list_dir("folder/").keys.empty());
  // erase_prefix removes everything under the root, markers included.
  s->erase_prefix("");
  const auto left = moto().python(
      "print(len(s3.list_objects_v2(Bucket=B, Prefix='t/Boto3SeesWhatZarrppWroteAndViceVersa/x/').get('Contents', "
      "[])))");
  EXPECT_EQ(left, "0\n");
}

TEST_F(S3StoreMoto, ListingPaginatesAndErasesInBulk) {
  auto o = moto().options("t/paging");
  o.list_page_size = 2;
  auto s = S3Store::open(o);
  std::vector<std::string> keys;
  for (int i = 0; i < 9; ++i)
    keys.push_back("d" + std::to_string(i % 3) + "/k" + std::to_string(i) + (i == 4 ? "&<>\"'" : ""));
  keys.push_back("top");
  for (const auto& k : keys) s->set(k, B(k));
  std::sort(keys.begin(), keys.end());
  EXPECT_EQ(s->list_prefix(""), keys);
  EXPECT_EQ(s->list_prefix("d1/"), (std::vector<std::string>{"d1/k1", "d1/k4&<>\"'", "d1/k7"}));
  const auto root = s->list_dir("");
  EXPECT_EQ(root.prefixes, (std::vector<std::string>{"d0", "d1", "d2"}));
  EXPECT_EQ(root.keys, (std::vector<std::string>{"top"}));
  // A sibling prefix sharing the root's name is not part of the store.
  auto sib = S3Store::open(moto().options("t/paging-sibling"));
  sib->set("k", B("x"));
  s->erase_prefix("d");  // string prefix: d0/, d1/, d2/
  EXPECT_EQ(s->list_prefix(""), (std::vector<std::string>{"top"}));
  s->erase_prefix("");
  EXPECT_TRUE(s->list_prefix("").empty());
  EXPECT_EQ(sib->get("k"), B("x"));
}

TEST_F(S3StoreMoto, SignaturesAreVerifiedByTheServer) {
  struct Auth {
    const Moto& m;
    explicit Auth(const Moto& mm) : m(mm) { m.require_signatures(true); }
    ~Auth() {
      try {
        m.require_signatures(false);
      } catch (const std::exception&) {
      }
    }
  };
  auto s = store("signed");
  Auth on(moto());
  // Every kind of request, signed with the IAM user's key: moto recomputes each signature.
  Bytes big(1500 * 1024);
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<std::uint8_t>(i % 251);
  s->set("big", big);
  for (int i = 0; i < 5; ++i) s->set("dir/k" + std::to_string(i), B(std::to_string(i)));
  s->set("sp ace", B("space"));
  EXPECT_EQ(s->get("big", ByteRange::range(1000, 3)), Bytes(big.begin() + 1000, big.begin() + 1003));
  EXPECT_EQ(s->get("big", ByteRange::last(2)), Bytes(big.end() - 2, big.end()));
  EXPECT_EQ(s->get("sp ace"), B("space"));
  EXPECT_TRUE(s->exists("dir/k1"));
  EXPECT_FALSE(s->exists("dir/none"));
  // Listing: moto checks signatures against the *decoded* query string, so it rejects every
  // correctly encoded '/' in a query (boto3's requests too): list flat names at the bucket root.
  auto flat_options = moto().options("");
  flat_options.list_page_size = 2;  // continuation tokens in the signed query
  auto flat = S3Store::open(flat_options);
  for (int i = 0; i < 5; ++i) flat->set("sigflat-" + std::to_string(i), B("f"));
  EXPECT_EQ(flat->list_prefix("sigflat-").size(), 5u);
  flat->erase_prefix("sigflat-");  // DeleteObjects: a signed POST with Content-MD5
  EXPECT_TRUE(flat->list_prefix("sigflat-").empty());
  EXPECT_TRUE(s->compare_and_set("cas", std::nullopt, B("1")));
  EXPECT_TRUE(s->compare_and_set("cas", B("1"), B("2")));
  EXPECT_FALSE(s->compare_and_set("cas", B("1"), B("3")));
  s->erase("sp ace");
  EXPECT_FALSE(s->exists("sp ace"));

  // Temporary credentials need their session token (x-amz-security-token).
  auto t = moto().options("t/SignaturesAreVerifiedByTheServer/signed");
  t.access_key_id = moto().temp_access_key();
  t.secret_access_key = moto().temp_secret_key();
  t.session_token = moto().session_token();
  EXPECT_EQ(S3Store::open(t)->get("cas"), B("2"));
  t.session_token = "not-the-token";
  expect_throw_with<StoreError>([&] { S3Store::open(t)->get("cas"); }, {"S3 GET", "HTTP 400", "InvalidToken"});

  auto wrong = moto().options("t/SignaturesAreVerifiedByTheServer/signed");
  wrong.secret_access_key = "not-the-secret";
  expect_throw_with<StoreError>(
      [&] { S3Store::open(wrong)->get("cas"); },
      {"S3 GET", "/zarrpp-test/t/SignaturesAreVerifiedByTheServer/signed/cas", "HTTP 403", "SignatureDoesNotMatch"});
  expect_throw_with<StoreError>([&] { S3Store::open(wrong)->set("x", B("1")); }, {"S3 PUT", "SignatureDoesNotMatch"});
  auto anon = moto().options("t/SignaturesAreVerifiedByTheServer/signed");
  anon.anonymous = true;
  expect_throw_with<StoreError>([&] { S3Store::open(anon)->get("cas"); }, {"HTTP 403", "the request was unsigned"});
}

TEST_F(S3StoreMoto, ArraysThroughAnS3Url) {
  EnvVar ep("AWS_ENDPOINT_URL", moto().endpoint());
  EnvVar eps3("AWS_ENDPOINT_URL_S3", std::nullopt);
  EnvVar region("AWS_REGION", "us-east-1");
  EnvVar ak("AWS_ACCESS_KEY_ID", "testing");
  EnvVar sk("AWS_SECRET_ACCESS_KEY", "testing");
  EnvVar tok("AWS_SESSION_TOKEN", std::nullopt);
  const std::string url = std::string("s3://") + kBucket + "/t/ArraysThroughAnS3Url/data.zarr";
  {
    auto opened = open_store(url);
    auto g = Group::create(opened, "", {{"k", 1}});
    auto a = g.create_array(
        "plain", {.shape = {12, 5}, .chunks = {5, 5}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}});
    a.write({}, iota_i32({12, 5}));
    auto sh = g.create_array("sharded",
                             {.shape = {8, 8}, .chunks = {2, 2}, .dtype = DataType::uint16, .shards = Shape{4, 8}});
    NDArray v(DataType::uint16, {8, 8});
    for (int i = 0; i < 64; ++i) v.data<std::uint16_t>()[i] = static_cast<std::uint16_t>(i * 3);
    sh.write({}, v);
    g.update_attributes({{"updated", true}});  // compare-and-set on zarr.json, no lock needed
    // Growth holds a lease (conditional PUTs); metadata-only changes need no lock.
    a.prepend(NDArray::full<std::int32_t>({5, 5}, 7));
    a.append(NDArray::full<std::int32_t>({3, 5}, 8));
    a.resize({17, 5});  // drops the appended rows again
    a.update_attributes({{"x", 1}});
    EXPECT_EQ(Array::open(opened, "plain").attributes()["x"], 1);
    EXPECT_EQ(a.domain(), (Domain{{-5, 12}, {0, 5}}));
    EXPECT_EQ(a.read({slice(0, 5)}), NDArray::full<std::int32_t>({5, 5}, 7));
    EXPECT_EQ(a.read({slice(5, 17)}), iota_i32({12, 5}));
    // A server without conditional writes has no lease: growth refuses clearly, nothing written.
    auto o = moto().options("t/ArraysThroughAnS3Url/data.zarr");
    o.conditional_writes = ConditionalWrites::Off;
    auto nolock = Array::open(S3Store::open(o), "plain");
    expect_throw_with<ConflictError>([&] { nolock.prepend(NDArray::full<std::int32_t>({5, 5}, 9)); },
                                     {"cannot lock", "s3://"});
    expect_throw_with<ConflictError>([&] { nolock.append(NDArray::full<std::int32_t>({5, 5}, 9)); }, {"cannot lock"});
    a.resize_domain({{0, 12}, {0, 5}});  // back to the original rows; chunk c/-1/0 goes
    EXPECT_EQ(a.shape(), (Shape{12, 5}));
  }
  // A fresh store (new connections, nothing cached) reads it all back.
  auto opened = open_store(url);
  const auto g = Group::open(opened);
  EXPECT_EQ(g.attributes()["k"], 1);
  EXPECT_EQ(g.attributes()["updated"], true);
  EXPECT_EQ((g.children()), (std::vector<Group::Child>{{"plain", NodeType::Array}, {"sharded", NodeType::Array}}));
  const auto a = g.open_array("plain");
  EXPECT_EQ(a.shape(), (Shape{12, 5}));
  EXPECT_EQ(a.read(), iota_i32({12, 5}));
  EXPECT_EQ(a.nshards_stored(), 3);
  const auto sh = g.open_array("sharded");
  EXPECT_EQ(sh.read({slice(2, 4), slice(6, 8)}).to_vector<std::uint16_t>(),
            (std::vector<std::uint16_t>{66, 69, 90, 93}));
  // boto3 sees the layout Zarr v3 prescribes.
  const auto out = Json::parse(moto().python(R"PY(
p = "t/ArraysThroughAnS3Url/data.zarr/"
keys = sorted(o["Key"][len(p):] for o in s3.list_objects_v2(Bucket=B, Prefix=p)["Contents"])
meta = json.loads(s3.get_object(Bucket=B, Key=p + "plain/zarr.json")["Body"].read())
print(json.dumps({"keys": keys, "node_type": meta["node_type"], "shape": meta["shape"]}))
)PY"));
  EXPECT_EQ(out["keys"].get<std::vector<std::string>>(),
            (std::vector<std::string>{"plain/c/0/0", "plain/c/1/0", "plain/c/2/0", "plain/zarr.json", "sharded/c/0/0",
                                      "sharded/c/1/0", "sharded/zarr.json", "zarr.json"}));
  EXPECT_EQ(out["node_type"], "array");
  EXPECT_EQ(out["shape"], Json::parse("[12, 5]"));
  remove_node(opened, "sharded");
  EXPECT_EQ(Group::open(opened).children(), (std::vector<Group::Child>{{"plain", NodeType::Array}}));
}

TEST_F(S3StoreMoto, LeasesExcludeExpireAndCanBeLost) {
  using namespace std::chrono_literals;
  auto o = moto().options("t/Leases");
  o.lock_ttl = 400ms;
  auto s1 = S3Store::open(o), s2 = S3Store::open(o);
  auto lease_objects = [&] {
    return Json::parse(
        moto().python("print(json.dumps(sorted(o['Key'] for o in s3.list_objects_v2(Bucket=B, "
                      "Prefix='t/Leases/').get('Contents', []))))"));
  };
  // Exclusion: s2 waits while s1 holds (and renews) the lease, for several times its ttl.
  auto l1 = s1->lock("a/zarr.json");
  ASSERT_NE(l1, nullptr);
  std::atomic<bool> got{false};
  std::thread waiter([&] {
    auto l2 = s2->lock("a/zarr.json");
    got = true;
    l2->check();
  });
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(got) << "a renewed lease must not be taken over";
  EXPECT_NO_THROW(l1->check());
  EXPECT_EQ(lease_objects(), Json::parse(R"(["t/Leases/a/.zarrpp-lock.zarr.json"])"));
  EXPECT_TRUE(s1->list_prefix("").empty()) << "lease objects are not store keys";
  const auto t0 = std::chrono::steady_clock::now();
  l1.reset();
  waiter.join();
  EXPECT_TRUE(got);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s) << "a released lease is free at once";
  EXPECT_TRUE(lease_objects().empty()) << "released leases are deleted";

  // A waiter gives up after lock_timeout, naming the holder.
  auto impatient_opts = o;
  impatient_opts.lock_timeout = 300ms;
  auto impatient = S3Store::open(impatient_opts);
  {
    auto held = s1->lock("b/zarr.json");
    expect_throw_with<ConflictError>([&] { impatient->lock("b/zarr.json"); },
                                     {"could not lock 'b/zarr.json'", "held by", "pid"});
  }

  // A crashed holder's lease (never renewed) is taken over after its own ttl.
  moto().python(
      "s3.put_object(Bucket=B, Key='t/Leases/c/.zarrpp-lock.zarr.json', "
      "Body=b'{\"owner\": \"crashed\", \"ttl_ms\": 300, \"renewal\": 0}')");
  const auto t1 = std::chrono::steady_clock::now();
  {
    auto l3 = s1->lock("c/zarr.json");
    const auto took = std::chrono::steady_clock::now() - t1;
    EXPECT_GE(took, 300ms);
    EXPECT_LT(took, 5s);
  }

  // A holder whose lease is overwritten (taken over) notices at its next renewal: check() throws.
  auto l4 = s1->lock("d/zarr.json");
  moto().python(
      "s3.put_object(Bucket=B, Key='t/Leases/d/.zarrpp-lock.zarr.json', Body=b'{\"owner\": \"someone else\"}')");
  std::this_thread::sleep_for(500ms);
  expect_throw_with<ConflictError>([&] { l4->check(); }, {"lock on 'd/zarr.json' was lost", "took it over"});
  l4.reset();  // must not delete the other holder's lease
  EXPECT_EQ(
      moto().python("print(s3.get_object(Bucket=B, Key='t/Leases/d/.zarrpp-lock.zarr.json')['Body'].read().decode())"),
      "{\"owner\": \"someone else\"}\n");
  EXPECT_THROW(S3Store::open([&] {
                 auto x = o;
                 x.lock_ttl = 1ms;
                 return x;
               }()),
               StoreError);
}

// Issue "remote stores": prepend on S3 writes only the new chunks and zarr.json, and reads no
// existing chunk when the new rows fill whole chunks.
TEST_F(S3StoreMoto, PrependWritesOnlyTheNewChunksAndMetadata) {
  using K = StoreOp::Kind;
  auto rec = std::make_shared<RecordingStore>(store(""));
  auto a = Array::create(
      rec, "ts", {.shape = {8, 6}, .chunks = {4, 3}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}});
  a.write({}, iota_i32({8, 6}));
  rec->clear();
  a.prepend(NDArray::full<std::int32_t>({4, 6}, -1));
  auto chunks = rec->keys({K::Set});  // written in parallel: in any order
  std::sort(chunks.begin(), chunks.end());
  EXPECT_EQ(chunks, (std::vector<std::string>{"ts/c/-1/0", "ts/c/-1/1"}));
  EXPECT_EQ(rec->keys({K::SetIf}), (std::vector<std::string>{"ts/zarr.json"}));
  EXPECT_EQ(rec->keys({K::Erase, K::ErasePrefix}), std::vector<std::string>{});
  // No existing chunk is read: only the array's zarr.json, and its parent group's (whose
  // consolidated metadata, if it had any, would be brought up to date).
  for (const auto& k : rec->keys({K::Get})) EXPECT_TRUE(k == "ts/zarr.json" || k == "zarr.json") << k;
  EXPECT_EQ(rec->keys({K::Lock}), (std::vector<std::string>{"ts/zarr.json"}));
  EXPECT_EQ(Array::open(store(""), "ts").read({slice(0, 5), slice(0, 2)}).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{-1, -1, -1, -1, -1, -1, -1, -1, 0, 1}));
}

#ifdef ZARRPP_EXAMPLE_DISTRIBUTED
// Issue "remote stores", distributed use: processes write disjoint regions of one S3 array and
// grow it at both ends concurrently; the example checks the result and so do we, independently.
TEST_F(S3StoreMoto, ProcessesWriteAndGrowOneArrayTogether) {
  const auto o = moto().options("");
  const std::string url = std::string("s3://") + kBucket + "/t/Distributed/series.zarr";
  const auto r = run({ZARRPP_EXAMPLE_DISTRIBUTED, url, "4", "5"}, {{"AWS_ENDPOINT_URL", moto().endpoint()},
                                                                   {"AWS_REGION", "us-east-1"},
                                                                   {"AWS_ACCESS_KEY_ID", *o.access_key_id},
                                                                   {"AWS_SECRET_ACCESS_KEY", *o.secret_access_key}});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("complete: 4 workers, 20 growth steps"), std::string::npos) << r.out;
  // Independently: 4 blocks of 16 rows plus 20 growth steps of 4 rows, around domain row 0.
  const auto a = Array::open(S3Store::open(moto().options("t/Distributed")), "series.zarr");
  EXPECT_EQ(a.shape(), (Shape{4 * 16 + 20 * 4, 32}));
  const auto d = a.domain();
  EXPECT_EQ(d[0].exclusive_max - d[0].inclusive_min, 144);
  EXPECT_LT(d[0].inclusive_min, 0);
  EXPECT_GT(d[0].exclusive_max, 64);
  const auto v = a.read<std::int32_t>();
  std::set<std::int32_t> tags;
  for (std::int64_t row = 0; row < 144; ++row) tags.insert(v.data<std::int32_t>()[row * 32] / 100);
  EXPECT_EQ(tags.size(), 144u) << "every row is a different write";
  EXPECT_EQ(v.data<std::int32_t>()[-d[0].inclusive_min * 32] / 100, 1'000'000)
      << "worker 0's block starts at domain row 0";
  // No lease is left behind.
  const auto names =
      Json::parse(moto().python("print(json.dumps([o['Key'] for o in s3.list_objects_v2(Bucket=B, "
                                "Prefix='t/Distributed/').get('Contents', []) if 'lock' in o['Key']]))"));
  EXPECT_TRUE(names.empty()) << names.dump();
}
#endif

TEST_F(S3StoreMoto, ErrorsNameWhatWentWrong) {
  auto o = moto().options("t/errors");
  o.bucket = "no-such-bucket";
  auto missing = S3Store::open(o);
  expect_throw_with<StoreError>([&] { missing->get("k"); }, {"S3 GET", "no-such-bucket", "404", "NoSuchBucket"});
  expect_throw_with<StoreError>([&] { missing->set("k", B("v")); }, {"S3 PUT", "NoSuchBucket"});
  expect_throw_with<StoreError>([&] { missing->list_prefix(""); }, {"S3 GET", "list-type=2", "NoSuchBucket"});
  expect_throw_with<StoreError>([&] { missing->erase("k"); }, {"S3 DELETE", "NoSuchBucket"});

  auto down = moto().options("t/errors");
  down.endpoint = "http://127.0.0.1:" + std::to_string(free_port());
  down.net.max_attempts = 2;
  expect_throw_with<StoreError>([&] { S3Store::open(down)->get("k"); },
                                {"S3 GET", down.endpoint.value(), "after 2 attempts"});

  auto s = store("");
  expect_throw_with<StoreError>([&] { s->get("a/../b"); }, {"invalid store key 'a/../b'"});
  expect_throw_with<StoreError>([&] { s->list_dir("/x"); }, {"invalid store key"});
}
