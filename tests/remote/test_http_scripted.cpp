// HttpStore (and S3Store) against a scripted server: retries, timeouts, odd servers.
#include "harness.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(HttpStoreScripted, RetriesTransientStatusesWithBackoff) {
  ScriptedServer srv([](const SeenRequest&, int n) {
    if (n < 2) return Reply{.status = n == 0 ? 503 : 502, .body = "busy"};
    return Reply{.status = 200, .body = "ok"};
  });
  auto net = quick_net();
  net.retry_initial_delay = 40ms;
  auto s = HttpStore::open(srv.url("root"), {.headers = {}, .follow_redirects = true, .net = net});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->get("k"), B("ok"));
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 40ms) << "backoff: at least half of 40ms + half of 80ms";
  EXPECT_EQ(srv.requests().size(), 3u);

  ScriptedServer down([](const SeenRequest&, int) { return Reply{.status = 503}; });
  net.max_attempts = 2;
  net.retry_initial_delay = 5ms;
  auto d = HttpStore::open(down.url(), {.headers = {}, .follow_redirects = true, .net = net});
  expect_throw_with<StoreError>([&] { d->get("a/b"); }, {"HTTP GET", down.url("a/b"), "after 2 attempts", "503"});
  EXPECT_EQ(down.requests().size(), 2u);
}

TEST(HttpStoreScripted, RetriesResetConnectionsAndHonoursRetryAfter) {
  ScriptedServer srv([](const SeenRequest&, int n) {
    if (n == 0) return Reply{.hang_up = true};
    if (n == 1) return Reply{.status = 429, .headers = {{"Retry-After", "1"}}};
    return Reply{.status = 200, .body = "fine"};
  });
  auto net = quick_net();
  net.retry_max_delay = 150ms;  // caps the server's Retry-After: 1 s
  auto s = HttpStore::open(srv.url(), {.headers = {}, .follow_redirects = true, .net = net});
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(s->get("k"), B("fine"));
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(took, 75ms);
  EXPECT_LT(took, 900ms);
  EXPECT_EQ(srv.requests().size(), 3u);
}

TEST(HttpStoreScripted, TimesOutAndReportsIt) {
  ScriptedServer srv([](const SeenRequest&, int) { return Reply{.status = 200, .body = "late", .delay = 3s}; });
  auto net = quick_net();
  net.timeout = 200ms;
  net.max_attempts = 2;
  auto s = HttpStore::open(srv.url(), {.headers = {}, .follow_redirects = true, .net = net});
  const auto t0 = std::chrono::steady_clock::now();
  expect_throw_with<StoreError>([&] { s->get("slow"); }, {"HTTP GET", srv.url("slow"), "after 2 attempts", "Timeout"});
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(srv.requests().size(), 2u);
}

TEST(HttpStoreScripted, ConnectionRefusedIsAStoreError) {
  const int port = free_port();  // nothing listens there
  auto net = quick_net();
  net.max_attempts = 2;
  auto s = HttpStore::open("http://127.0.0.1:" + std::to_string(port) + "/x",
                           {.headers = {}, .follow_redirects = true, .net = net});
  expect_throw_with<StoreError>([&] { s->get("k"); },
                                {"HTTP GET", "127.0.0.1:" + std::to_string(port), "after 2 attempts", "connect"});
}

TEST(HttpStoreScripted, ServersIgnoringRangeAreSliced) {
  ScriptedServer srv([](const SeenRequest& r, int) {
    if (r.target == "/k") return Reply{.status = 200, .body = "0123456789"};
    if (r.target == "/partial")
      return Reply{.status = 206, .body = "789", .headers = {{"Content-Range", "bytes 7-9/*"}}};
    if (r.target == "/wrong")
      return Reply{.status = 206, .body = "012", .headers = {{"Content-Range", "bytes 0-2/10"}}};
    return Reply{.status = 404};
  });
  auto s = HttpStore::open(srv.url());
  EXPECT_EQ(s->get("k", ByteRange::range(2, 3)), B("234"));
  EXPECT_EQ(s->get("k", ByteRange::last(3)), B("789"));
  EXPECT_EQ(s->get("k", ByteRange::from(20)), B(""));
  EXPECT_EQ(s->get("partial", ByteRange::last(3)), B("789"));
  expect_throw_with<StoreError>([&] { s->get("wrong", ByteRange::range(5, 2)); },
                                {"asked for bytes 5..7", "bytes 0-2/10"});
  EXPECT_FALSE(s->get("missing").has_value());
  const auto reqs = srv.requests();
  ASSERT_GE(reqs.size(), 3u);
  EXPECT_EQ(reqs[0].headers.at("range"), "bytes=2-4");
  EXPECT_EQ(reqs[1].headers.at("range"), "bytes=-3");
  EXPECT_EQ(reqs[2].headers.at("range"), "bytes=20-");
}

TEST(HttpStoreScripted, SendsConfiguredHeadersAndFallsBackWithoutHead) {
  ScriptedServer srv([](const SeenRequest& r, int) {
    if (r.method == "HEAD") return Reply{.status = 405};
    if (r.target == "/k") return Reply{.status = 206, .body = "0", .headers = {{"Content-Range", "bytes 0-0/10"}}};
    if (r.target == "/base/forbidden") return Reply{.status = 403};
    return Reply{.status = 404};
  });
  HttpStore::Options o;
  o.headers = {{"Authorization", "Bearer s3cret"}, {"X-Extra", "1"}};
  auto s = HttpStore::open(srv.url(), o);
  EXPECT_TRUE(s->exists("k"));
  EXPECT_FALSE(s->exists("nope"));
  const auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 4u);
  for (const auto& r : reqs) {
    EXPECT_EQ(r.headers.at("authorization"), "Bearer s3cret");
    EXPECT_EQ(r.headers.at("x-extra"), "1");
  }
  EXPECT_EQ(reqs[1].method, "GET");
  EXPECT_EQ(reqs[1].headers.at("range"), "bytes=0-0");
  // Credentials in the URL become a Basic Authorization header and stay out of messages.
  const std::string with_user = "http://us%40er:p%3Ass@" + srv.url().substr(7) + "base";
  auto u = HttpStore::open(with_user);
  EXPECT_EQ(u->describe(), srv.url("base"));
  EXPECT_EQ(u->url_of("k"), srv.url("base/k"));
  try {
    u->get("forbidden");
    ADD_FAILURE() << "403 must throw";
  } catch (const StoreError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find(srv.url("base/forbidden")), std::string::npos) << msg;
    EXPECT_EQ(msg.find("p%3Ass"), std::string::npos) << msg;
  }
  const auto last = srv.requests().back();
  EXPECT_EQ(last.target, "/base/forbidden");
  EXPECT_EQ(last.headers.at("authorization"), "Basic " + detail::base64(detail::as_bytes("us@er:p:ss")));
  expect_throw_with<StoreError>([&] { HttpStore::open(srv.url(), {.headers = {{"Bad Name", "x"}}}); },
                                {"invalid header name 'Bad Name'"});
  expect_throw_with<StoreError>([&] { HttpStore::open(srv.url(), {.headers = {{"X", "a\r\nInjected: 1"}}}); },
                                {"line break"});
}

TEST(HttpStoreScripted, RejectsUnusableUrlsAndOptions) {
  expect_throw_with<StoreError>([] { HttpStore::open("ftp://example.com/x"); },
                                {"'ftp://example.com/x'", "http:// or https://"});
  expect_throw_with<StoreError>([] { HttpStore::open("http://"); }, {"'http://'"});
  expect_throw_with<StoreError>([] { HttpStore::open("not a url"); }, {"'not a url'"});
  expect_throw_with<StoreError>([] { HttpStore::open("http://h/x#frag"); }, {"fragment"});
  HttpStore::Options o;
  o.net.max_attempts = 0;
  expect_throw_with<StoreError>([&] { HttpStore::open("http://127.0.0.1/x", o); }, {"max_attempts"});
  o.net.max_attempts = 1;
  o.net.timeout = -1ms;
  expect_throw_with<StoreError>([&] { HttpStore::open("http://127.0.0.1/x", o); }, {"timeout must not be negative"});
}

// An S3 server that ignores If-None-Match / If-Match: compare_and_set must refuse, not race.
TEST(HttpStoreScripted, S3ServerIgnoringConditionalWritesIsDetected) {
  ScriptedServer srv([](const SeenRequest& r, int) {
    if (r.method == "PUT") return Reply{.status = 200, .headers = {{"ETag", "\"abc\""}}};
    if (r.method == "DELETE") return Reply{.status = 204};
    return Reply{.status = 404};
  });
  S3Store::Options o;
  o.bucket = "b";
  o.prefix = "root";
  o.endpoint = srv.url();
  o.access_key_id = "AKIDEXAMPLE";
  o.secret_access_key = "secret";
  o.session_token = "";
  auto s = S3Store::open(o);
  expect_throw_with<ConflictError>([&] { s->compare_and_set("zarr.json", std::nullopt, B("{}")); },
                                   {"does not support conditional writes", "If-None-Match", "'zarr.json'"});
  EXPECT_FALSE(
      s->confirm_capabilities().conditional_writes);  // probed (three rounds, in case one was a glitch), remembered
  auto reqs = srv.requests();
  ASSERT_EQ(reqs.size(), 12u);
  EXPECT_EQ(reqs[0].method, "PUT");
  EXPECT_EQ(reqs[0].headers.at("if-none-match"), "*");
  EXPECT_EQ(reqs[0].target.rfind("/b/root/.zarrpp-probe-", 0), 0u) << reqs[0].target;
  EXPECT_EQ(reqs[1].headers.at("if-none-match"), "*");
  EXPECT_EQ(reqs[2].headers.count("if-match"), 1u);
  EXPECT_EQ(reqs[3].method, "DELETE");
  EXPECT_EQ(reqs[3].target, reqs[0].target);
  // Requests are signed, with the payload hash S3 requires.
  EXPECT_EQ(reqs[0].headers.at("authorization").rfind("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/", 0), 0u);
  EXPECT_EQ(reqs[0].headers.at("x-amz-content-sha256"),
            detail::sha256_hex(detail::as_bytes("zarrpp conditional-write probe")));
  EXPECT_EQ(reqs[0].headers.count("x-amz-date"), 1u);

  o.conditional_writes = ConditionalWrites::Off;
  auto off = S3Store::open(o);
  expect_throw_with<ConflictError>([&] { off->compare_and_set("k", B("a"), B("b")); },
                                   {"does not support conditional writes", "If-Match", "switched off"});
  EXPECT_EQ(srv.requests().size(), 12u);  // no request at all
  // Without conditional writes there is no lease either: growth refuses (see ArraysThroughAnS3Url).
  EXPECT_FALSE(off->capabilities().locking);
  expect_throw_with<ConflictError>([&] { s->lock("a/zarr.json"); }, {"cannot lock", "conditional PUTs"});
  expect_throw_with<ConflictError>([&] { off->lock("a/zarr.json"); }, {"cannot lock"});
  EXPECT_EQ(srv.requests().size(), 12u);
}
