// AzureStore against Azurite, the Azure Storage emulator.
#include "azurite.hpp"
#include "fault_proxy.hpp"
#include "store_conformance.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The store conformance suite over Azure Blob Storage (Azurite): every store behaves the same.
namespace {
std::shared_ptr<Azurite> conformance_azurite() {
  static std::weak_ptr<Azurite> shared;
  static std::mutex mu;
  std::lock_guard lk(mu);
  auto a = shared.lock();
  if (!a) {
    shared = a = std::make_shared<Azurite>();
    a->create_container(kContainer);
  }
  return a;
}

// The version (ETag) of every key under `prefix`.
std::map<std::string, Version> versions(Store& s, const std::string& prefix) {
  std::map<std::string, Version> out;
  for (const auto& k : s.list_prefix(prefix)) out[k] = s.get_versioned(k)->version;
  return out;
}
}  // namespace

INSTANTIATE_TEST_SUITE_P(Azure, StoreConformance,
                         ::testing::Values(StoreFactory{"azurite",
                                                        [] {
                                                          static int n = 0;
                                                          auto az = conformance_azurite();  // kept alive by the store
                                                          auto s = AzureStore::open(az->options(
                                                              kContainer, "conformance/" + std::to_string(n++)));
                                                          return StorePtr(s.get(), [s, az](Store*) mutable {
                                                            s.reset();
                                                            az.reset();
                                                          });
                                                        },
                                                        /*slowness=*/5}),
                         name_of);

// The main job through Azure: create, write, prepend, append, read back; the new chunks' keys are
// signed (c/-1/0) and the chunks that were there keep their ETags (never rewritten).
TEST_F(AzureStoreAzurite, PrependWalkthroughThroughAnAzUrl) {
  EnvVar cs("AZURE_STORAGE_CONNECTION_STRING", azurite().connection_string());
  const std::string url = std::string("az://") + kContainer + "/t/walkthrough/series.zarr";
  auto opened = open_store(url);
  auto a = Array::create(opened, "", {.shape = {4, 6}, .chunks = {2, 3}, .dtype = DataType::int32});
  a.write({}, iota_i32({4, 6}));
  const auto before = versions(*opened, "c/");
  ASSERT_EQ(before.size(), 4u);
  a.prepend(NDArray::full<std::int32_t>({2, 6}, -1));
  a.append(NDArray::full<std::int32_t>({2, 6}, 99));
  const auto after = versions(*opened, "c/");
  for (const auto& [k, v] : before) EXPECT_EQ(after.at(k), v) << k << " was rewritten";
  std::vector<std::string> keys;
  for (const auto& [k, v] : after) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"c/-1/0", "c/-1/1", "c/0/0", "c/0/1", "c/1/0", "c/1/1", "c/2/0", "c/2/1"}));
  // A fresh store (new connections, nothing cached) reads it all back; the blobs are there by name.
  const auto back = Array::open(open_store(url));
  EXPECT_EQ(back.domain(), (Domain{{-2, 6}, {0, 6}}));
  EXPECT_EQ(back.read({slice(0, 2)}), NDArray::full<std::int32_t>({2, 6}, -1));
  EXPECT_EQ(back.read({slice(2, 6)}), iota_i32({4, 6}));
  EXPECT_EQ(back.read({slice(6, 8)}), NDArray::full<std::int32_t>({2, 6}, 99));
  const auto whole = AzureStore::open(azurite().options(kContainer, ""));
  EXPECT_TRUE(whole->exists("t/walkthrough/series.zarr/c/-1/0"));
  EXPECT_EQ(whole->list_prefix("t/walkthrough/series.zarr/.zarrpp"), std::vector<std::string>{})
      << "no lease or probe object is left behind";
}

TEST_F(AzureStoreAzurite, ConditionalWritesAndLeasesHold) {
  auto s = store("");
  EXPECT_TRUE(s->confirm_capabilities().conditional_writes);
  EXPECT_TRUE(s->confirm_capabilities().conditional_erase);
  EXPECT_TRUE(s->compare_and_set("m", std::nullopt, B("v1")));
  EXPECT_FALSE(s->compare_and_set("m", std::nullopt, B("v2"))) << "If-None-Match: * on a blob that exists";
  const auto v1 = s->get_versioned("m")->version;
  EXPECT_TRUE(s->set("m", B("v3"), WriteOptions::if_equal(v1)));
  EXPECT_FALSE(s->set("m", B("v4"), WriteOptions::if_equal(v1))) << "If-Match on a replaced ETag";
  EXPECT_FALSE(s->erase("m", WriteOptions::if_equal(v1)));
  EXPECT_TRUE(s->erase("m", WriteOptions::if_equal(s->get_versioned("m")->version)));
  {
    auto lk = s->lock("zarr.json");
    EXPECT_NO_THROW(lk->check());
    auto o = azurite().options(kContainer, "t/ConditionalWritesAndLeasesHold");
    o.lock_timeout = 300ms;
    expect_throw_with<ConflictError>([&] { AzureStore::open(o)->lock("zarr.json"); },
                                     {"Azure store", "could not lock 'zarr.json'", "pid"});
  }
  EXPECT_EQ(s->list_prefix(""), std::vector<std::string>{});
  EXPECT_EQ(AzureStore::open(azurite().options(kContainer, ""))->list_prefix("t/ConditionalWritesAndLeasesHold/"),
            std::vector<std::string>{})
      << "the lease and the probe leave nothing";
}

#ifdef ZARRPP_EXAMPLE_DISTRIBUTED
// Processes write disjoint regions of one Azure array and grow it at both ends concurrently.
TEST_F(AzureStoreAzurite, ProcessesWriteAndGrowOneArrayTogether) {
  const std::string url = std::string("az://") + kContainer + "/t/Distributed/series.zarr";
  const auto r = run({ZARRPP_EXAMPLE_DISTRIBUTED, url, "4", "5"},
                     {{"AZURE_STORAGE_CONNECTION_STRING", azurite().connection_string()}});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("complete: 4 workers, 20 growth steps"), std::string::npos) << r.out;
  const auto a = Array::open(AzureStore::open(azurite().options(kContainer, "t/Distributed")), "series.zarr");
  EXPECT_EQ(a.shape(), (Shape{4 * 16 + 20 * 4, 32}));
  const auto v = a.read<std::int32_t>();
  std::set<std::int32_t> tags;
  for (std::int64_t row = 0; row < 144; ++row) tags.insert(v.data<std::int32_t>()[row * 32] / 100);
  EXPECT_EQ(tags.size(), 144u) << "every row is a different write";
}
#endif

#ifdef ZARRPP_CLI_PATH
// The command-line tool on an az:// URL, credentials from the connection string in the environment.
TEST_F(AzureStoreAzurite, TheCliGrowsAnArrayInFront) {
  const std::string url = std::string("az://") + kContainer + "/t/cli/a";
  const std::vector<std::pair<std::string, std::string>> env = {
      {"AZURE_STORAGE_CONNECTION_STRING", azurite().connection_string()}};
  auto cli = [&](std::vector<std::string> args) {
    args.insert(args.begin(), ZARRPP_CLI_PATH);
    const auto r = run(args, env);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    return r.out;
  };
  cli({"create", url, "--shape", "4,3", "--chunks", "2,3", "--dtype", "int32"});
  cli({"set", url, "--value", "7"});
  TempDir dir{"cli"};
  npy::save(dir.path() / "front.npy", NDArray::full<std::int32_t>({2, 3}, -5).view());
  cli({"prepend", url, "--axis", "0", "--from", (dir.path() / "front.npy").string()});
  const std::string keys = cli({"ls", url});
  EXPECT_NE(keys.find("c/-1/0"), std::string::npos) << keys;
  const auto a = Array::open(AzureStore::open(azurite().options(kContainer, "t/cli")), "a");
  EXPECT_EQ(a.domain(), (Domain{{-2, 4}, {0, 3}}));
  EXPECT_EQ(a.read({slice(0, 2)}), NDArray::full<std::int32_t>({2, 3}, -5));
  EXPECT_EQ(a.read({slice(2, 6)}), NDArray::full<std::int32_t>({4, 3}, 7));
  // Without credentials the tool says what to set, and changes nothing.
  const auto r = run({ZARRPP_CLI_PATH, "get", std::string("az://") + kContainer + "/t/cli/a", "[0, 0]"},
                     {{"AZURE_STORAGE_CONNECTION_STRING", ""}, {"AZURE_STORAGE_ACCOUNT_NAME", ""}});
  EXPECT_NE(r.status, 0);
  EXPECT_NE(r.err.find("no account given"), std::string::npos) << r.err;
}
#endif

TEST_F(AzureStoreAzurite, SasTokensAndBlobUrls) {
  const std::string sas = azurite().account_sas(std::time(nullptr) + 3600);
  AzureStore::Options o;
  o.container = kContainer;
  o.prefix = "t/SasTokensAndBlobUrls";
  o.endpoint = azurite().endpoint();
  o.account_name = detail::kAzuriteAccount;
  o.sas_token = "?" + sas;
  o.net = quick_net();
  auto s = AzureStore::open(o);
  auto a = Array::create(s, "a", {.shape = {4}, .chunks = {2}, .dtype = DataType::int32});
  a.write({}, iota_i32({4}));
  a.prepend(NDArray::full<std::int32_t>({2}, 5));
  EXPECT_EQ(Array::open(store(""), "a").read().to_vector<std::int32_t>(), (std::vector<std::int32_t>{5, 5, 0, 1, 2, 3}))
      << "what the SAS store wrote, read with the account key";
  // An expired token: refused, the error says to check it and never shows its signature.
  o.sas_token = azurite().account_sas(std::time(nullptr) - 60);
  try {
    Array::open(AzureStore::open(o), "a");
    FAIL() << "an expired SAS token was accepted";
  } catch (const StoreError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("check the SAS token"), std::string::npos) << m;
    EXPECT_NE(m.find("403"), std::string::npos) << m;
    EXPECT_NE(m.find("sig=REDACTED"), std::string::npos) << m;
  }
}

TEST_F(AzureStoreAzurite, ErrorsNameWhatWentWrong) {
  auto o = azurite().options("no-such-container", "x");
  auto missing = AzureStore::open(o);
  expect_throw_with<StoreError>([&] { missing->get("k"); }, {"Azure GET", "ContainerNotFound", "no-such-container"});
  expect_throw_with<StoreError>([&] { missing->set("k", B("v")); }, {"Azure PUT", "does not exist"});
  expect_throw_with<StoreError>([&] { missing->list_prefix(""); }, {"comp=list", "ContainerNotFound"});
  expect_throw_with<StoreError>([&] { missing->exists("k"); }, {"Azure HEAD", "ContainerNotFound"});
  EXPECT_TRUE(missing->create_container()) << "made when asked";
  EXPECT_FALSE(missing->create_container()) << "kept when there";
  missing->set("k", B("v"));
  EXPECT_EQ(missing->get("k"), B("v"));

  auto wrong = azurite().options(kContainer, "t/errors");
  wrong.connection_string = std::nullopt;
  wrong.endpoint = azurite().endpoint();
  wrong.account_name = detail::kAzuriteAccount;
  wrong.account_key = "d3Jvbmcga2V5IHdyb25nIGtleQ==";
  expect_throw_with<StoreError>([&] { AzureStore::open(wrong)->get("k"); },
                                {"403", "AuthorizationFailure", "check the account name and key"});
  wrong.account_key = "not base64!";
  expect_throw_with<StoreError>([&] { AzureStore::open(wrong); }, {"account key is not base64"});
  expect_throw_with<StoreError>([&] { AzureStore::open(azurite().options("Bad_Name", "")); },
                                {"invalid container name 'Bad_Name'"});
  expect_throw_with<StoreError>([&] { open_store("az:///x"); }, {"names no container"});
  {
    EnvVar cs("AZURE_STORAGE_CONNECTION_STRING", std::nullopt);
    EnvVar an("AZURE_STORAGE_ACCOUNT_NAME", std::nullopt);
    expect_throw_with<StoreError>([&] { open_store("az://c0ntainer/x"); }, {"no account given"});
  }
}

// Something on the way that drops If-Match and If-None-Match (a proxy, a gateway): the probe sees
// it, conditional writes and growth are refused, and nothing is written unconditionally.
TEST_F(AzureStoreAzurite, AServerThatDropsConditionsIsRefusedAndNothingIsWritten) {
  auto a = Array::create(store(""), "a", {.shape = {4}, .chunks = {2}, .dtype = DataType::int32});
  a.write({}, iota_i32({4}));
  const auto before = versions(*store(""), "");
  FaultProxy proxy(azurite().port(),
                   [](const SeenRequest&, int) { return Fault{.kind = Fault::Kind::strip_conditions}; });
  AzureStore::Options o;  // a SAS token: the stripped headers are not part of its signature
  o.container = kContainer;
  o.prefix = "t/AServerThatDropsConditionsIsRefusedAndNothingIsWritten";
  o.endpoint = proxy.endpoint() + "/" + detail::kAzuriteAccount;
  o.account_name = detail::kAzuriteAccount;
  o.sas_token = azurite().account_sas(std::time(nullptr) + 3600);
  o.net = quick_net();
  auto through = AzureStore::open(o);
  EXPECT_FALSE(through->confirm_capabilities().conditional_writes);
  expect_throw_with<ConflictError>([&] { through->compare_and_set("a/zarr.json", std::nullopt, B("x")); },
                                   {"ignored or refused", "cannot be atomic"});
  auto via = Array::open(through, "a");
  expect_throw_with<ConflictError>([&] { via.prepend(NDArray::full<std::int32_t>({2}, 9)); }, {"cannot lock"});
  expect_throw_with<ConflictError>([&] { via.append(NDArray::full<std::int32_t>({2}, 9)); }, {"cannot lock"});
  auto after = versions(*store(""), "");
  EXPECT_EQ(after, before) << "nothing written";
  EXPECT_EQ(Array::open(store(""), "a").read(), iota_i32({4}));
}

TEST(AzureSettings, ConnectionStringsEnvironmentAndUrls) {
  const auto cs = detail::parse_connection_string(
      "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5;EndpointSuffix=core.windows.net;");
  EXPECT_EQ(cs.at("AccountKey"), "a2V5");
  auto none = [](const char*) { return std::optional<std::string>(); };
  const auto a = detail::resolve_azure_access(
      {.connection_string = "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=a2V5"}, none);
  EXPECT_EQ(a.endpoint, "https://acct.blob.core.windows.net");
  EXPECT_EQ(a.account, "acct");
  EXPECT_EQ(a.key, (std::vector<std::uint8_t>{'k', 'e', 'y'}));
  const auto dev = detail::resolve_azure_access({.connection_string = "UseDevelopmentStorage=true"}, none);
  EXPECT_EQ(dev.endpoint, "http://127.0.0.1:10000/devstoreaccount1");
  EXPECT_EQ(dev.account, "devstoreaccount1");
  const auto anon = detail::resolve_azure_access({.account = "pub", .anonymous = true},
                                                 [](const char* n) -> std::optional<std::string> {
                                                   if (std::string(n) == "AZURE_STORAGE_ACCOUNT_KEY") return "a2V5";
                                                   return std::nullopt;
                                                 });
  EXPECT_TRUE(anon.key.empty()) << "anonymous: no key even when the environment has one";
  EXPECT_THROW(detail::parse_connection_string("AccountName"), StoreError);
  EXPECT_EQ(locate_store("az://c/p").kind, StoreLocation::Kind::azure);
  EXPECT_EQ(locate_store("abfs://c@acct.dfs.core.windows.net/p").kind, StoreLocation::Kind::azure);
  EXPECT_EQ(locate_store("https://acct.blob.core.windows.net/c/p").kind, StoreLocation::Kind::azure);
  EXPECT_EQ(locate_store("https://example.org/c/p").kind, StoreLocation::Kind::http);
  auto https = std::dynamic_pointer_cast<AzureStore>(
      open_store("https://pubacct.blob.core.windows.net/data/era5.zarr?sv=1&sig=abc"));
  ASSERT_TRUE(https);
  EXPECT_EQ(https->account(), "pubacct");
  EXPECT_EQ(https->container(), "data");
  EXPECT_EQ(https->prefix(), "era5.zarr");
  auto spaced =
      std::dynamic_pointer_cast<AzureStore>(open_store("https://pubacct.blob.core.windows.net/data/my%20dir/x"));
  ASSERT_TRUE(spaced);
  EXPECT_EQ(spaced->prefix(), "my dir/x") << "the URL's path is percent-decoded";
  EXPECT_EQ(spaced->url_of("k"), "https://pubacct.blob.core.windows.net/data/my%20dir/x/k");
  auto abfs = std::dynamic_pointer_cast<AzureStore>(open_store("abfs://box@acct2.dfs.core.windows.net/a/b"));
  ASSERT_TRUE(abfs);
  EXPECT_EQ(abfs->account(), "acct2");
  EXPECT_EQ(abfs->endpoint(), "https://acct2.blob.core.windows.net");
  EXPECT_EQ(detail::redact_url("https://h/p?sv=1&sig=abc%2B&se=2"), "https://h/p?sv=1&sig=REDACTED&se=2");
  try {
    open_store("https://acct.blob.core.windows.net/?sv=1&sig=SECRET");
    ADD_FAILURE() << "a URL naming no container was taken";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()).find("SECRET"), std::string::npos) << e.what();
  }
}

// Credentials found in a connection string or the environment go only to the account they name;
// one credential is used (the key over a SAS token).
TEST(AzureSettings, CredentialsGoOnlyToTheirAccount) {
  const std::map<std::string, std::string> vars = {{"AZURE_STORAGE_ACCOUNT_NAME", "mine"},
                                                   {"AZURE_STORAGE_ACCOUNT_KEY", "a2V5"},
                                                   {"AZURE_STORAGE_SAS_TOKEN", "sv=1&sig=x"}};
  auto env = [&](const char* n) -> std::optional<std::string> {
    const auto it = vars.find(n);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  const auto mine = detail::resolve_azure_access({}, env);
  EXPECT_EQ(mine.account, "mine");
  EXPECT_FALSE(mine.key.empty());
  EXPECT_EQ(mine.sas, "") << "the key signs; the SAS token is not sent too";
  const auto other = detail::resolve_azure_access({.account = "stranger"}, env);
  EXPECT_TRUE(other.key.empty() && other.sas.empty()) << "another account's URL gets no credentials of ours";
  EXPECT_EQ(other.endpoint, "https://stranger.blob.core.windows.net");
  auto none = [](const char*) { return std::optional<std::string>(); };
  const auto cs = detail::resolve_azure_access(
      {.account = "stranger",
       .connection_string = "AccountName=mine;AccountKey=a2V5;BlobEndpoint=https://mine.example"},
      none);
  EXPECT_TRUE(cs.key.empty());
  EXPECT_EQ(cs.endpoint, "https://stranger.blob.core.windows.net") << "nor its endpoint";
  EXPECT_EQ(detail::resolve_azure_access({.connection_string = "UseDevelopmentStorage=True"}, none).account,
            "devstoreaccount1");
  expect_throw_with<StoreError>(
      [&] { detail::resolve_azure_access({.connection_string = "DefaultEndpointsProtocol=https"}, none); },
      {"no account given"});
}

// A read-only store writes nothing: no probe object, no lease.
TEST_F(AzureStoreAzurite, AReadOnlyStoreAsksNothingOfTheServerThatWrites) {
  auto o = azurite().options(kContainer, "t/AReadOnlyStoreAsksNothingOfTheServerThatWrites");
  o.read_only = true;
  auto s = AzureStore::open(o);
  EXPECT_FALSE(s->confirm_capabilities().conditional_writes);
  EXPECT_FALSE(s->capabilities().locking);
  EXPECT_EQ(store("")->list_prefix(""), std::vector<std::string>{});
}
