// The transport seam: HttpClient's decisions over a scripted transport (retries, lost replies,
// the shared backoff, limits), and what the libcurl transport reports and honours.
#include <fstream>
#include <future>

#include "harness.hpp"
#include "scripted_transport.hpp"
#include "store/remote/http_client.hpp"

using namespace zarrpp;
using namespace zarrpp::test;
using namespace std::chrono_literals;
using detail::TransferError;

namespace {

RemoteOptions fast_retries() {
  RemoteOptions o;
  o.retry_initial_delay = 20ms;
  o.retry_max_delay = 2s;
  o.max_attempts = 3;
  return o;
}

detail::HttpRequest put(const std::string& url) {
  detail::HttpRequest r;
  r.method = "PUT";
  r.url = url;
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

TEST(HttpClientDecisions, ARetriedRequestThatMayHaveRunSaysSo) {
  auto t = std::make_shared<ScriptedTransport>([](const detail::HttpRequest&, int attempt) {
    return attempt == 0 ? broken(TransferError::reset) : answer(412);
  });
  detail::HttpClient c(fast_retries(), "S3", t);
  const auto r = c.perform(put("http://x/a"));
  EXPECT_EQ(r.status, 412);
  EXPECT_EQ(r.attempts, 2);
  EXPECT_TRUE(r.ambiguous) << "the first attempt went out and its reply was lost";
  EXPECT_EQ(t->seen().size(), 2u);
}

TEST(HttpClientDecisions, ARequestThatNeverWentOutIsNotAmbiguous) {
  auto t = std::make_shared<ScriptedTransport>([](const detail::HttpRequest&, int attempt) {
    return attempt == 0 ? broken(TransferError::connect, 0) : answer(200, "ok");
  });
  detail::HttpClient c(fast_retries(), "S3", t);
  const auto r = c.perform(put("http://x/a"));
  EXPECT_EQ(r.status, 200);
  EXPECT_FALSE(r.ambiguous);
  // libcurl re-sent it by itself on a fresh connection: ambiguous although one attempt.
  auto t2 = std::make_shared<ScriptedTransport>([](const detail::HttpRequest&, int) {
    auto e = answer(200);
    e.sends = 2;
    return e;
  });
  EXPECT_TRUE(detail::HttpClient(fast_retries(), "S3", t2).perform(put("http://x/a")).ambiguous);
}

TEST(HttpClientDecisions, GivingUpNamesTheAttemptsAndWhetherAWriteMayHaveLanded) {
  auto t = std::make_shared<ScriptedTransport>(
      [](const detail::HttpRequest&, int) { return broken(TransferError::timeout); });
  detail::HttpClient c(fast_retries(), "S3", t);
  try {
    c.perform(put("http://x/a"));
    FAIL() << "expected HttpFailure";
  } catch (const detail::HttpFailure& e) {
    EXPECT_NE(std::string(e.what()).find("S3 PUT http://x/a failed after 3 attempts: scripted failure"),
              std::string::npos)
        << e.what();
    EXPECT_TRUE(e.maybe_applied());
  }
  EXPECT_EQ(t->seen().size(), 3u);
}

TEST(HttpClientDecisions, ATooLargeBodyIsALimitNotRetried) {
  auto t = std::make_shared<ScriptedTransport>(
      [](const detail::HttpRequest&, int) { return broken(TransferError::too_large); });
  detail::HttpClient c(fast_retries(), "HTTP", t);
  detail::HttpRequest r;
  r.url = "http://x/a";
  r.max_body = 10;
  try {
    c.perform(r);
    FAIL() << "expected HttpFailure";
  } catch (const detail::HttpFailure& e) {
    EXPECT_EQ(e.code(), ErrorCode::limit_exceeded);
    EXPECT_NE(std::string(e.what()).find("larger than the 10 bytes expected"), std::string::npos) << e.what();
  }
  EXPECT_EQ(t->seen().size(), 1u);
}

// A 503 asks the whole store to slow down: a request started while that backoff runs waits for
// it, instead of hitting the server at once.
TEST(HttpClientDecisions, SlowDownHoldsEveryRequestOfTheStore) {
  auto t = std::make_shared<ScriptedTransport>([](const detail::HttpRequest& r, int attempt) {
    if (r.url.ends_with("/a") && attempt == 0) {
      auto e = answer(503);
      e.retry_after = 1s;
      return e;
    }
    return answer(200);
  });
  detail::HttpClient c(fast_retries(), "S3", t);
  auto a = c.start(put("http://x/a"));
  while (t->holds().empty()) std::this_thread::sleep_for(1ms);
  const auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(c.perform(put("http://x/b")).status, 200);
  EXPECT_GE(seconds_since(begin), 0.4) << "b waited for the backoff a's 503 asked for (0.5-1 s)";
  EXPECT_EQ(a->wait().status, 200);
}

// Retries are scheduled, not slept on a thread: 50 requests whose first attempts fail all retry
// within about one delay.
TEST(HttpClientDecisions, RetriesHoldNoThread) {
  auto t = std::make_shared<ScriptedTransport>(
      [](const detail::HttpRequest&, int attempt) { return attempt == 0 ? answer(500) : answer(200); });
  RemoteOptions o = fast_retries();
  o.retry_initial_delay = 300ms;
  detail::HttpClient c(o, "S3", t);
  const auto begin = std::chrono::steady_clock::now();
  std::vector<std::shared_ptr<detail::PendingResponse>> pending;
  for (int i = 0; i < 50; ++i) pending.push_back(c.start(put("http://x/" + std::to_string(i))));
  for (auto& p : pending) EXPECT_EQ(p->wait().status, 200);
  EXPECT_LT(seconds_since(begin), 2.0);
}

TEST(HttpClientDecisions, AClosedTransportFailsWhatWaits) {
  auto t = std::make_shared<ScriptedTransport>([](const detail::HttpRequest&, int) {
    auto e = broken(TransferError::closed, 0);
    e.error_text = "the store was closed while the request waited";
    return e;
  });
  detail::HttpClient c(fast_retries(), "HTTP", t);
  expect_throw_with<StoreError>([&] { c.perform(put("http://x/a")); }, {"closed"});
  EXPECT_EQ(t->seen().size(), 1u) << "not retried";
}

// The libcurl transport: no request starts during a hold, and a refused connection is reported as
// such, never sent.
TEST_F(HttpStoreNginx, TheCurlTransportHonoursHoldsAndClassifiesErrors) {
  auto t = detail::make_curl_transport({});
  auto run = [&](const std::string& url) {
    auto req = std::make_shared<detail::HttpRequest>();
    req->url = url;
    std::promise<detail::Exchange> got;
    t->start(req, {}, detail::Transport::Clock::now(), [&](detail::Exchange&& e) { got.set_value(std::move(e)); });
    return got.get_future().get();
  };
  std::ofstream(nginx().root() / "held") << "x";
  t->hold_until(detail::Transport::Clock::now() + 400ms);
  const auto begin = std::chrono::steady_clock::now();
  const auto e = run(nginx().url("held"));
  EXPECT_GE(seconds_since(begin), 0.35);
  EXPECT_EQ(e.error, TransferError::none);
  EXPECT_EQ(e.response.status, 200);
  EXPECT_EQ(e.sends, 1);
  int port = 0;
  const int fd = listen_loopback("closed port", port);
  ::close(fd);  // nothing listens there now
  const auto refused = run("http://127.0.0.1:" + std::to_string(port) + "/x");
  EXPECT_EQ(refused.error, TransferError::connect);
  EXPECT_EQ(refused.sends, 0);
  EXPECT_LE(t->most_in_flight(), 1u);
}

// Found by the simulated object store: an unconditional PUT whose first attempt reached the server
// (its answer lost) and whose retries met 503s failed as if nothing had been written.
namespace {

// An S3Store whose requests go to `script` (through the transport factory).
std::shared_ptr<S3Store> scripted_s3(ScriptedTransport::Script script,
                                     ConditionalWrites conditional = ConditionalWrites::Off) {
  detail::set_transport_factory([script] { return std::make_shared<ScriptedTransport>(script); });
  S3Store::Options o;
  o.bucket = "b";
  o.endpoint = "http://s3.invalid";
  o.region = "us-east-1";
  o.anonymous = true;
  o.conditional_writes = conditional;
  o.net = fast_retries();
  auto s = S3Store::open(o);
  detail::set_transport_factory(nullptr);
  return s;
}

// The first PUT is carried out and its answer lost; every later PUT gets 503. GET answers `stored`.
ScriptedTransport::Script lost_then_slow_down(std::shared_ptr<std::string> stored, bool another_writer) {
  return [stored, another_writer](const detail::HttpRequest& r, int attempt) {
    if (r.method == "PUT") {
      if (attempt > 0) return answer(503, "<Error><Code>SlowDown</Code></Error>");
      *stored = another_writer ? "theirs" : std::string(r.body.begin(), r.body.end());
      return broken(TransferError::reset);
    }
    auto e = answer(200, *stored);
    e.response.headers.emplace_back("etag", "\"1\"");
    return e;
  };
}

}  // namespace

TEST(LostReplies, APlainPutWhoseAnswerWasLostIsDecidedByWhatIsStored) {
  auto stored = std::make_shared<std::string>();
  auto s = scripted_s3(lost_then_slow_down(stored, false));
  EXPECT_NO_THROW(s->set("k", B("ours"))) << "the value is ours: the write took effect";
  EXPECT_EQ(*stored, "ours");

  auto other = std::make_shared<std::string>();
  auto s2 = scripted_s3(lost_then_slow_down(other, true));
  try {
    s2->set("k", B("ours"));
    FAIL() << "another value is stored: the write may still take effect, which must be said";
  } catch (const UncertainWriteError& e) {
    EXPECT_NE(std::string(e.what()).find("may still take effect"), std::string::npos) << e.what();
  }
}

// Found by the simulated object store: a conditional PUT whose first copy landed (its answer lost)
// and whose retry was refused because another writer had replaced the value meanwhile — possibly
// building on this one — was "not written", so the caller applied its change again on top.
TEST(LostReplies, AConditionalPutRefusedAfterALostAnswerAndAnotherWriterIsUncertain) {
  auto stored = std::make_shared<std::string>("old");
  auto s = scripted_s3(
      [stored](const detail::HttpRequest& r, int attempt) {
        if (r.method == "PUT") {
          if (attempt > 0) return answer(412, "<Error><Code>PreconditionFailed</Code></Error>");
          *stored = "theirs, built on ours";  // ours landed, then another writer's
          return broken(TransferError::reset);
        }
        auto e = answer(200, *stored);
        e.response.headers.emplace_back("etag", "\"2\"");
        return e;
      },
      ConditionalWrites::On);
  try {
    (void)s->set("k", B("ours"), WriteOptions::if_equal(std::optional<Version>("\"1\"")));
    FAIL() << "the write may have landed: neither 'written' nor 'not written' is true";
  } catch (const UncertainWriteError& e) {
    EXPECT_NE(std::string(e.what()).find("may have taken effect"), std::string::npos) << e.what();
  }
}

// Found by the simulated object store: on a server that ignores If-Match on DELETE, a lease
// release re-sent after a lost answer deleted the next holder's lease (two holders, chunks of one
// deleted by the other's clean-up). Such a lease is released by a conditional PUT instead.
TEST(LostReplies, WithoutConditionalDeletesALeaseIsReleasedByAConditionalPut) {
  struct Object {
    std::string bytes, etag;
  };
  auto objects = std::make_shared<std::map<std::string, Object>>();
  auto methods = std::make_shared<std::vector<std::string>>();
  auto mu = std::make_shared<std::mutex>();
  auto s = scripted_s3(
      [objects, methods, mu](const detail::HttpRequest& r, int) {
        std::lock_guard lk(*mu);
        methods->push_back(r.method);
        auto it = objects->find(r.url);
        auto header = [&](const std::string& name) -> std::optional<std::string> {
          for (const auto& h : r.headers)
            if (h.rfind(name + ": ", 0) == 0) return h.substr(name.size() + 2);
          return std::nullopt;
        };
        if (r.method == "PUT") {
          if (header("If-None-Match") && it != objects->end()) return answer(412);
          if (const auto m = header("If-Match"); m && (it == objects->end() || it->second.etag != *m))
            return answer(412);
          auto& o = (*objects)[r.url];
          o.bytes.assign(r.body.begin(), r.body.end());
          o.etag = "\"" + std::to_string(methods->size()) + "\"";
          auto e = answer(200);
          e.response.headers.emplace_back("etag", o.etag);
          return e;
        }
        if (r.method == "DELETE") {  // conditions ignored
          objects->erase(r.url);
          return answer(204);
        }
        if (it == objects->end()) return answer(404, "<Error><Code>NoSuchKey</Code></Error>");
        auto e = answer(200, it->second.bytes);
        e.response.headers.emplace_back("etag", it->second.etag);
        return e;
      },
      ConditionalWrites::On);  // conditional PUTs asserted; conditional DELETEs not
  {
    auto first = s->lock("a/zarr.json");
  }
  {
    std::lock_guard lk(*mu);
    EXPECT_EQ(std::count(methods->begin(), methods->end(), "DELETE"), 0) << "no DELETE on such a server";
    ASSERT_EQ(objects->size(), 1u);
    EXPECT_NE(objects->begin()->second.bytes.find("\"released\":true"), std::string::npos)
        << objects->begin()->second.bytes;
  }
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto second = s->lock("a/zarr.json");
  }
  EXPECT_LT(seconds_since(t0), 5.0) << "a released lease is taken over at once, not after lock_ttl";
}
