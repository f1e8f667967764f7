// gs:// URLs: public data over GCS's HTTPS layout (nginx serving /bucket/path, pointed at by
// STORAGE_EMULATOR_HOST), and GCS's S3-compatible API with HMAC keys (moto standing in), where
// conditional writes and growth are refused.
#include "harness.hpp"
#include "zarrpp/store/gcs.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;

class GcsUrls : public HttpStoreNginx {};

TEST_F(GcsUrls, PublicDataIsReadOverHttpsWithoutListing) {
  // Laid out as GCS serves objects: ENDPOINT/bucket/object.
  auto local = FileStore::open(nginx().root() / "era5-bucket" / "ar" / "t2m.zarr", {.create = true});
  auto g = Group::create(local, "", {{"title", "gcs"}});
  auto a = g.create_array(
      "t2m", {.shape = {6, 4}, .chunks = {2, 4}, .dtype = DataType::int32, .compressor = codec::Zstd{.level = 1}});
  a.write({}, iota_i32({6, 4}));
  a.prepend(NDArray::full<std::int32_t>({2, 4}, -3));
  const std::string host = nginx().url();
  EnvVar emu("STORAGE_EMULATOR_HOST", host.substr(0, host.size() - 1));
  EnvVar id("GS_ACCESS_KEY_ID", std::nullopt);
  auto store = open_store("gs://era5-bucket/ar/t2m.zarr");
  ASSERT_TRUE(std::dynamic_pointer_cast<HttpStore>(store)) << "public data: HTTPS, no keys";
  const auto back = Group::open(store);
  EXPECT_EQ(back.attributes()["title"], "gcs");
  const auto t = back.open_array("t2m");
  EXPECT_EQ(t.domain(), (Domain{{-2, 6}, {0, 4}}));
  EXPECT_EQ(t.read({slice(2, 8)}), iota_i32({6, 4}));
  expect_throw_with<StoreError>([&] { Array::open(store, "t2m").write({}, iota_i32({8, 4})); }, {"read-only"});
  // The default endpoint is Google's, addressed by path.
  EnvVar none("STORAGE_EMULATOR_HOST", std::nullopt);
  EXPECT_EQ(open_store("gs://pub/a b/c")->location(), "https://storage.googleapis.com/pub/a%20b/c");
  expect_throw_with<StoreError>([] { open_store("gs:///x"); }, {"names no bucket"});
}

class GcsHmac : public S3StoreMoto {};

TEST_F(GcsHmac, WritesWorkAndConditionalWritesAreRefusedSayingWhy) {
  EnvVar emu("STORAGE_EMULATOR_HOST", moto().endpoint());
  const auto o = moto().options("");
  EnvVar id("GS_ACCESS_KEY_ID", o.access_key_id);
  EnvVar secret("GS_SECRET_ACCESS_KEY", o.secret_access_key);
  const std::string url = std::string("gs://") + kBucket + "/t/gcs/series.zarr";
  auto store = open_store(url);
  ASSERT_TRUE(std::dynamic_pointer_cast<S3Store>(store)) << "HMAC keys: GCS's S3-compatible API";
  EXPECT_FALSE(store->confirm_capabilities().conditional_writes);
  auto a = Array::create(store, "", {.shape = {4, 3}, .chunks = {2, 3}, .dtype = DataType::int32});
  a.write({}, iota_i32({4, 3}));
  EXPECT_EQ(Array::open(open_store(url)).read(), iota_i32({4, 3}));
  std::vector<std::string> before = store->list_prefix("");
  expect_throw_with<ConflictError>(
      [&] { a.prepend(NDArray::full<std::int32_t>({2, 3}, 9)); },
      {"gs://zarrpp-test/t/gcs/series.zarr (GCS's", "generation conditions", "cannot lock"});
  expect_throw_with<ConflictError>([&] { store->compare_and_set("zarr.json", std::nullopt, B("{}")); },
                                   {"x-goog-if-generation-match", "refused rather than done unconditionally"});
  EXPECT_EQ(store->list_prefix(""), before) << "nothing written";
  EXPECT_EQ(Array::open(open_store(url)).read(), iota_i32({4, 3}));
  // The same server under s3:// keeps the S3 rules (conditional writes probed and used).
  EXPECT_TRUE(S3Store::open(moto().options("t/gcs"))->confirm_capabilities().conditional_writes);
  // One HMAC half without the other is refused, naming the missing one.
  EnvVar no_secret("GS_SECRET_ACCESS_KEY", std::nullopt);
  expect_throw_with<StoreError>([&] { open_store(url); }, {"GS_SECRET_ACCESS_KEY"});
}
