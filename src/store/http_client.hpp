#pragma once
// The HTTP client of the remote stores: libcurl easy handles pooled and kept alive between
// requests, retries of transient failures with backoff, and checks of URLs.
#include <curl/curl.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zarrpp/core/error.hpp"
#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

// Checks an http(s) URL with libcurl's parser; throws StoreError "<what> '<url>' ..." when it is
// not valid, not http(s) or has no host.
void check_http_url(const std::string& url, const std::string& what);

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::string> headers;      // "Name: value"
  std::span<const std::uint8_t> body{};  // sent with PUT and POST
  bool follow_redirects = false;
  // AWS Signature V4 through libcurl: "aws:amz:REGION:SERVICE"; empty = unsigned.
  std::string aws_sigv4;
  std::string username, password;
  std::vector<long> extra_retry_statuses;  // statuses retried besides the standard transient ones
  // The most body bytes to accept (announced by Content-Length or arriving): more is a StoreError
  // (limit_exceeded), found before they are all held. 0 = the client's max_response_bytes.
  std::uint64_t max_body = 0;
};

struct HttpResponse {
  long status = 0;
  std::string reason;  // the status line's reason phrase ("" with HTTP/2)
  Bytes body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string effective_url;  // the last URL fetched (differs from the request's after redirects)
  int attempts = 1;
  // The request may have been carried out more than once, or before this response: an earlier
  // attempt failed in a way that may have reached the server (reset, timeout, 5xx), or libcurl
  // itself re-sent the request on a fresh connection after a reused one died before answering.
  // A conditional request's answer then need not describe what this request did.
  bool ambiguous = false;
  bool too_large = false;  // the body was cut off at the request's max_body

  const std::string* header(std::string_view lower_name) const;
  std::string body_text() const { return std::string(body.begin(), body.end()); }
};

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

// Performs requests with a pool of curl easy handles (one per concurrent request, kept alive
// between requests, so connections are reused) and retries transient failures with exponential
// backoff. Thread-safe.
class HttpClient {
 public:
  // `label` starts error messages ("HTTP", "S3").
  HttpClient(RemoteOptions options, std::string label);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Returns the final response, whatever its status (after retrying retryable statuses); throws
  // HttpFailure when no response could be had (connection failure, timeout, ...) after the
  // allowed attempts, or once options().retry_window has passed without progress.
  HttpResponse perform(const HttpRequest& req) const;

  const RemoteOptions& options() const { return options_; }
  const std::string& label() const { return label_; }

  // What one attempt did besides its response (defined in http_client.cpp).
  struct Attempt;

  // "<label> <METHOD> <url> failed[ after N attempts]: " (a message prefix).
  std::string failure_prefix(const HttpRequest& req, int attempts) const;

 private:
  CURL* acquire() const;
  void release(CURL* h) const;
  CURLcode perform_once(CURL* h, const HttpRequest& req, HttpResponse& resp, char* errbuf, Attempt& seen) const;

  RemoteOptions options_;
  std::string label_;
  mutable std::mutex mu_;
  mutable std::vector<CURL*> idle_;
};

}  // namespace zarrpp::detail
