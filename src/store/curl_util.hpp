#pragma once
// Shared plumbing of the remote stores: a libcurl client with a pool of kept-alive handles and
// retries, byte-range helpers, URL encoding, hashes and a minimal XML reader for S3 responses.
#include <curl/curl.h>

#include <array>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

// ---- encodings and hashes ----------------------------------------------------------------------

std::string to_hex(std::span<const std::uint8_t> data);
std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> data);
std::string sha256_hex(std::span<const std::uint8_t> data);
std::array<std::uint8_t, 16> md5(std::span<const std::uint8_t> data);
std::string base64(std::span<const std::uint8_t> data);
inline std::span<const std::uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// RFC 3986 percent-encoding: unreserved characters (A-Z a-z 0-9 - . _ ~) stay, '/' stays when
// keep_slash, every other byte becomes %XX (upper-case hex).
std::string uri_encode(std::string_view s, bool keep_slash);
// Decodes %XX escapes; throws StoreError naming `what` on a malformed escape.
std::string percent_decode(std::string_view s, const std::string& what);
// "k1=v1&k2=v2" with keys and values encoded and the pairs sorted (the SigV4 canonical form).
std::string canonical_query(std::vector<std::pair<std::string, std::string>> params);

// Checks an http(s) URL with libcurl's parser; throws StoreError "<what> '<url>' ..." when it is
// not valid, not http(s) or has no host.
void check_http_url(const std::string& url, const std::string& what);

// ---- XML ----------------------------------------------------------------------------------------

// Calls on_element(path, text) when each element closes; path holds the local names (namespace
// prefixes dropped) from the root to the element, text its decoded character data (entities,
// character references and CDATA). Throws std::runtime_error describing malformed input.
void parse_xml(std::string_view xml,
               const std::function<void(const std::vector<std::string>& path, std::string& text)>& on_element);
// Escapes text for element content.
std::string xml_escape(std::string_view s);

// ---- HTTP ---------------------------------------------------------------------------------------

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::string> headers;       // "Name: value"
  std::span<const std::uint8_t> body{};   // sent with PUT and POST
  bool follow_redirects = false;
  // AWS Signature V4 through libcurl: "aws:amz:REGION:SERVICE"; empty = unsigned.
  std::string aws_sigv4;
  std::string username, password;
  std::vector<long> extra_retry_statuses;  // statuses retried besides the standard transient ones
};

struct HttpResponse {
  long status = 0;
  std::string reason;  // the status line's reason phrase ("" with HTTP/2)
  Bytes body;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string effective_url;  // the last URL fetched (differs from the request's after redirects)
  int attempts = 1;
  // An earlier attempt failed in a way that may have reached the server (reset, timeout, 5xx), so
  // a non-idempotent request may already have taken effect.
  bool ambiguous = false;

  const std::string* header(std::string_view lower_name) const;
  std::string body_text() const { return std::string(body.begin(), body.end()); }
};

// "Not Found" for 404, ... ("" when unknown).
const char* standard_reason(long status);

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
  // StoreError when no response could be had (connection failure, timeout, ...) after the
  // allowed attempts.
  HttpResponse perform(const HttpRequest& req) const;

  const RemoteOptions& options() const { return options_; }
  const std::string& label() const { return label_; }

  // "<label> <METHOD> <url> failed[ after N attempts]: " (a message prefix).
  std::string failure_prefix(const HttpRequest& req, int attempts) const;

 private:
  CURL* acquire() const;
  void release(CURL* h) const;
  CURLcode perform_once(CURL* h, const HttpRequest& req, HttpResponse& resp, char* errbuf) const;

  RemoteOptions options_;
  std::string label_;
  mutable std::mutex mu_;
  mutable std::vector<CURL*> idle_;
};

// ---- byte ranges --------------------------------------------------------------------------------

struct RangePlan {
  bool whole = false;   // no Range header
  bool empty = false;   // zero bytes asked for: only existence matters
  std::string header;   // "Range: bytes=..." otherwise
};
RangePlan plan_range(const ByteRange& r);
// The requested bytes from a 2xx or 416 response to a request made with plan_range(r): slices a
// 200 (server ignored Range), checks a 206's Content-Range, and gives empty bytes for 416. Throws
// StoreError prefixed with `what` when the server sent other bytes than asked for.
Bytes take_range(HttpResponse& resp, const ByteRange& r, const std::string& what);

}  // namespace zarrpp::detail
