#pragma once
// The HTTP client of the remote stores: every request goes through its Transport (one attempt at a
// time), and the client decides what an attempt's outcome means: retries of transient failures
// with backoff (shared by the store's requests when the server asks to slow down), the bound on
// retrying, lost replies (`ambiguous`), and errors that name the request. Requests run
// asynchronously (start) or blocking (perform); both follow the same decisions.
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "transport.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

// Checks an http(s) URL with libcurl's parser; throws StoreError "<what> '<url>' ..." when it is
// not valid, not http(s) or has no host.
void check_http_url(const std::string& url, const std::string& what);

// No response could be had: thrown by HttpClient::perform after the allowed attempts.
// `maybe_applied` when some attempt may have reached the server (so a write may have taken effect).
class HttpFailure : public StoreError {
 public:
  HttpFailure(ErrorCode code, const std::string& what, bool maybe_applied)
      : StoreError(code, what), maybe_applied_(maybe_applied) {}
  bool maybe_applied() const noexcept { return maybe_applied_; }

 private:
  bool maybe_applied_;
};

// "Not Found" for 404, ... ("" when unknown).
const char* standard_reason(long status);

// The last whole-value responses of a store (a few dozen, by key), kept to explain bytes that
// fail to decode: a response that carried fewer bytes than the object holds (a Content-Length
// that lied, a proxy that cut it) is named, rather than letting the bytes look corrupt.
class ReadLog {
 public:
  void record(const std::string& key, const HttpRequest& req, const HttpResponse& resp);
  // The clause explaining `key`'s last response given the object's size now ("" when the sizes
  // agree, nothing is recorded, or the size is unknown).
  std::string explain(const std::string& key, std::optional<std::uint64_t> size_now) const;

 private:
  struct Entry {
    std::string key, request, content_length;
    long status = 0;
    std::uint64_t received = 0;
  };
  static constexpr std::size_t kKeep = 64;
  mutable std::mutex mu_;
  std::vector<Entry> entries_;  // oldest first
};

// A request started by HttpClient::start: its final response, or the failure perform would throw.
class PendingResponse {
 public:
  // Blocks until the request is decided; throws what HttpClient::perform would.
  HttpResponse wait();
  bool ready() const;
  void finish(HttpResponse r);
  void fail(std::exception_ptr e);

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  HttpResponse response_;
  std::exception_ptr error_;
};

// A whole-value read on the wire: its response, made into what the store's get returns by
// `finish` in the thread that waits (which may ask the store more, e.g. a HEAD after a 416).
class PendingHttpGet final : public PendingGet {
 public:
  using Finish = std::function<std::optional<VersionedBytes>(HttpResponse&&)>;
  PendingHttpGet(std::shared_ptr<PendingResponse> response, Finish finish)
      : response_(std::move(response)), finish_(std::move(finish)) {}
  std::optional<VersionedBytes> wait() override { return finish_(response_->wait()); }

 private:
  std::shared_ptr<PendingResponse> response_;
  Finish finish_;
};

// Performs requests through a transport (by default libcurl's, with options().max_in_flight
// requests on the wire at once) and retries transient failures with exponential backoff.
// Thread-safe.
class HttpClient {
 public:
  // `label` starts error messages ("HTTP", "S3"); `transport` replaces libcurl's (tests).
  HttpClient(RemoteOptions options, std::string label, std::shared_ptr<Transport> transport = nullptr);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Returns the final response, whatever its status (after retrying retryable statuses); throws
  // HttpFailure when no response could be had (connection failure, timeout, ...) after the
  // allowed attempts, or once options().retry_window has passed without progress.
  HttpResponse perform(const HttpRequest& req) const;
  // The same without blocking: the request is copied (its body must stay alive until the
  // response is decided) and runs while the caller goes on.
  std::shared_ptr<PendingResponse> start(const HttpRequest& req) const;

  const RemoteOptions& options() const { return options_; }
  const std::string& label() const { return label_; }
  Transport& transport() const { return *transport_; }

  // "<label> <METHOD> <url> failed[ after N attempts]: " (a message prefix).
  std::string failure_prefix(const HttpRequest& req, int attempts) const;

  struct Call;  // one request's attempts (http_client.cpp)

 private:
  RemoteOptions options_;
  std::string label_;
  std::shared_ptr<Transport> transport_;
};

}  // namespace zarrpp::detail
