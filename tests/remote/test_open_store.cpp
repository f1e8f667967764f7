// open_store(url) for every URL form, and S3 settings from the environment.
#include "harness.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(OpenStore, EveryUrlForm) {
  TempDir t{"open-store"};
  const fs::path d = t.path() / "a b";
  auto f = open_store("file://" + (t.path() / "a%20b").string());
  ASSERT_NE(dynamic_cast<FileStore*>(f.get()), nullptr);
  EXPECT_EQ(dynamic_cast<FileStore*>(f.get())->root(), d);
  EXPECT_FALSE(fs::exists(d));  // opening creates nothing; the first write makes the folder
  f->set("k", Bytes{1});
  EXPECT_TRUE(fs::is_directory(d));
  auto l = open_store("file://localhost" + d.string());
  EXPECT_EQ(dynamic_cast<FileStore*>(l.get())->root(), d);
  auto p = open_store(d.string());
  EXPECT_EQ(dynamic_cast<FileStore*>(p.get())->root(), d);
  OpenStoreOptions no_create;
  no_create.file.create = false;
  EXPECT_THROW(open_store((t.path() / "missing").string(), no_create), NotFoundError);

  auto h = open_store("https://example.com/data/x.zarr/");
  ASSERT_NE(dynamic_cast<HttpStore*>(h.get()), nullptr);
  EXPECT_EQ(h->describe(), "https://example.com/data/x.zarr");

  OpenStoreOptions so;
  so.s3.endpoint = "http://127.0.0.1:1";
  so.s3.anonymous = true;
  auto s = open_store("s3://bucket/path/in/bucket", so);
  auto* s3 = dynamic_cast<S3Store*>(s.get());
  ASSERT_NE(s3, nullptr);
  EXPECT_EQ(s3->bucket(), "bucket");
  EXPECT_EQ(s3->prefix(), "path/in/bucket");
  EXPECT_EQ(s3->url_of("zarr.json"), "http://127.0.0.1:1/bucket/path/in/bucket/zarr.json");
  EXPECT_EQ(s->describe(), "s3://bucket/path/in/bucket (endpoint http://127.0.0.1:1)");
  auto whole = open_store("s3://bucket", so);
  EXPECT_EQ(dynamic_cast<S3Store*>(whole.get())->url_of("a/b"), "http://127.0.0.1:1/bucket/a/b");

  expect_throw_with<StoreError>([] { open_store("hdfs://bucket/x"); },
                                {"unsupported URL scheme 'hdfs'", "'hdfs://bucket/x'"});
  expect_throw_with<StoreError>([&] { open_store("s3://", so); }, {"names no bucket"});
  expect_throw_with<StoreError>([&] { open_store("s3:///x", so); }, {"names no bucket"});
  expect_throw_with<StoreError>([&] { open_store("s3://b/x?versionId=1", so); }, {"no query"});
  expect_throw_with<StoreError>([&] { open_store("s3://b/../x", so); }, {"invalid prefix '../x'"});
  expect_throw_with<StoreError>([] { open_store("file://server/share"); }, {"another host ('server')"});
  expect_throw_with<StoreError>([] { open_store("file:relative"); }, {"not a usable file URL"});
  expect_throw_with<StoreError>([] { open_store(""); }, {"empty URL"});
}

// Local paths mean what the OS says (issue 68): ".." after a symbolic link goes up from its target.
TEST(OpenStore, DotDotAfterASymlinkIsTheOperatingSystems) {
  TempDir t{"open-store-dotdot"};
  fs::create_directories(t.path() / "real" / "deep");
  fs::create_directory_symlink("real/deep", t.path() / "link");
  EXPECT_EQ(os_path(t.path() / "link" / ".." / "b.zarr"), t.path() / "real" / "b.zarr");
  EXPECT_EQ(os_path(t.path() / "link" / "." / "x"), t.path() / "link" / "x");  // no "..": kept as written
  fs::create_directory(t.path() / "a");
  EXPECT_EQ(os_path(t.path() / "a" / ".." / "link"), t.path() / "link");  // the link after it stays
  auto f = open_store((t.path() / "link" / ".." / "b.zarr").string());
  EXPECT_EQ(dynamic_cast<FileStore*>(f.get())->root(), t.path() / "real" / "b.zarr");
  f->set("k", Bytes{1});
  EXPECT_TRUE(fs::exists(t.path() / "real" / "b.zarr" / "k"));
  EXPECT_FALSE(fs::exists(t.path() / "b.zarr"));
  // A dangling link before "..": the OS cannot go there, and neither does a write.
  fs::create_directory_symlink("nowhere/deep", t.path() / "dangling");
  const fs::path lost = t.path() / "dangling" / ".." / "c.zarr";
  EXPECT_EQ(os_path(lost), lost);
  EXPECT_THROW(open_store(lost.string())->set("k", Bytes{1}), StoreError);
  EXPECT_FALSE(fs::exists(t.path() / "c.zarr"));
}

// One reading of store strings: zip files and folders inside them, memory://NAME, file:// decoded.
TEST(OpenStore, ZipPathsAndNamedMemoryStores) {
  TempDir t{"open-store-zip"};
  {
    auto z = ZipStore::open(t.path() / "d.zip", {.mode = ZipStore::Mode::write});
    z->set("g/a/k", Bytes{7});
    z->close();
  }
  const auto at = locate_store("file://" + (t.path() / "d.zip").string() + "/g/a");
  EXPECT_EQ(at.kind, StoreLocation::Kind::zip);
  EXPECT_EQ(at.path, t.path() / "d.zip");
  EXPECT_EQ(at.inner, "g/a");
  OpenStoreOptions ro;
  ro.file.read_only = true;
  auto r = resolve_store((t.path() / "d.zip" / "g").string(), ro);
  ASSERT_NE(r.zip, nullptr);
  EXPECT_EQ(r.zip->mode(), ZipStore::Mode::read);
  EXPECT_EQ(r.store->get("a/k"), Bytes{7});
  EXPECT_THROW(r.store->set("a/k", Bytes{8}), StoreError);
  // A new archive only when asked (the CLI's create); otherwise a directory of that name.
  EXPECT_EQ(locate_store((t.path() / "new.zip" / "a").string()).kind, StoreLocation::Kind::directory);
  const auto made = locate_store((t.path() / "out" / "new.zip" / "a").string(), true);
  EXPECT_EQ(made.kind, StoreLocation::Kind::zip);
  EXPECT_TRUE(made.new_zip);
  EXPECT_EQ(made.missing_dirs, (std::vector<fs::path>{t.path() / "out"}));
  EXPECT_FALSE(fs::exists(t.path() / "out"));  // locating makes nothing

  auto m = open_store("memory://open-store-test/sub/");
  m->set("k", Bytes{3});
  EXPECT_EQ(open_store("memory://open-store-test")->get("sub/k"), Bytes{3});
  EXPECT_TRUE(MemoryStore::forget_named("open-store-test"));
  EXPECT_FALSE(open_store("memory://open-store-test")->exists("sub/k"));
  EXPECT_TRUE(MemoryStore::forget_named("open-store-test"));
  expect_throw_with<StoreError>([] { open_store("memory://"); }, {"names no store"});
  OpenStoreOptions no_memory;
  no_memory.memory = false;
  expect_throw_with<StoreError>([&] { open_store("memory://x", no_memory); }, {"not taken here"});
}

TEST(OpenStore, S3SettingsComeFromTheEnvironment) {
  EnvVar ep("AWS_ENDPOINT_URL", "http://127.0.0.1:9/");
  EnvVar eps3("AWS_ENDPOINT_URL_S3", std::nullopt);
  EnvVar region("AWS_REGION", "eu-west-3");
  EnvVar dregion("AWS_DEFAULT_REGION", "ignored-1");
  EnvVar ak("AWS_ACCESS_KEY_ID", "AKIAENV");
  EnvVar sk("AWS_SECRET_ACCESS_KEY", std::nullopt);
  expect_throw_with<StoreError>([] { open_store("s3://b/p"); }, {"access key id is set but no secret access key"});
  EnvVar sk2("AWS_SECRET_ACCESS_KEY", "secret");
  auto s = open_store("s3://b/p");
  auto* s3 = dynamic_cast<S3Store*>(s.get());
  EXPECT_EQ(s3->endpoint(), "http://127.0.0.1:9");
  EXPECT_EQ(s3->region(), "eu-west-3");
  {
    EnvVar special("AWS_ENDPOINT_URL_S3", "http://127.0.0.1:10");
    EnvVar noregion("AWS_REGION", std::nullopt);
    auto s2 = S3Store::open({.bucket = "b"});
    EXPECT_EQ(s2->endpoint(), "http://127.0.0.1:10");
    EXPECT_EQ(s2->region(), "ignored-1");
  }
  EnvVar noep("AWS_ENDPOINT_URL", std::nullopt);
  auto aws = S3Store::open({.bucket = "b", .region = "ap-south-1"});
  EXPECT_EQ(aws->endpoint(), "https://s3.ap-south-1.amazonaws.com");
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = ""}); }, {"no bucket"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "a/b"}); }, {"invalid bucket name 'a/b'"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "b", .region = "us east"}); },
                                {"invalid region 'us east'"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "b", .endpoint = "ftp://x"}); },
                                {"endpoint", "'ftp://x'"});
  expect_throw_with<StoreError>([] { S3Store::open({.bucket = "b", .list_page_size = 0}); },
                                {"list_page_size must be 1..1000"});
}
