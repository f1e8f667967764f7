#pragma once
// The transport seam: every HTTP request of the HTTP and S3 stores goes through a Transport, one
// attempt per call. A transport sends what it is given and reports what happened (status,
// headers, body, bytes moved, how often the request went out on the wire, an error class); it
// decides nothing. Retries, backoff, write conditions and lost-reply handling live above it, in
// HttpClient. The libcurl implementation (transport_curl.cpp) keeps many requests in flight on
// one thread; tests put a scripted transport in its place.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zarrpp/store/store.hpp"

namespace zarrpp::detail {

struct HttpRequest {
  std::string method = "GET";  // GET, HEAD, PUT, POST, DELETE
  std::string url;
  std::vector<std::string> headers;      // "Name: value"
  std::span<const std::uint8_t> body{};  // sent with PUT and POST; the caller keeps it alive
  bool follow_redirects = false;
  // AWS Signature V4: "aws:amz:REGION:SERVICE"; empty = unsigned.
  std::string aws_sigv4;
  std::string username, password;
  std::vector<long> extra_retry_statuses;  // statuses retried besides the standard transient ones
  // The most body bytes to accept (announced by Content-Length or arriving): more ends the attempt
  // with TransferError::too_large before they are all held. 0 = the client's max_response_bytes.
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
  // attempt failed in a way that may have reached the server (reset, timeout, 5xx), or the
  // request itself went out again on a fresh connection after a reused one died before answering.
  // A conditional request's answer then need not describe what this request did.
  bool ambiguous = false;

  const std::string* header(std::string_view lower_name) const;
  std::string body_text() const { return std::string(body.begin(), body.end()); }
};

// Why an attempt ended without a whole response.
enum class TransferError {
  none,       // a whole response came (whatever its status)
  connect,    // no connection (refused, unresolvable host, TLS set-up): the request never went out
  timeout,    // the connection, the whole request or a stall outlasted its bound
  reset,      // the connection broke (sent or received nothing more)
  cut_body,   // the response ended before the body its headers announced
  too_large,  // the body was larger than the request's max_body
  closed,     // the transport was shut down (the store is going away)
  other,      // anything else (a bad URL, out of memory, ...): not worth another attempt
};

// What one attempt did.
struct Exchange {
  HttpResponse response;  // status 0 when no response came
  TransferError error = TransferError::none;
  std::string error_text;  // the transport's words for `error` ("" with none)
  int sends = 0;           // times the request went out (redirects count as more)
  long redirects = 0;
  std::uint64_t uploaded = 0, downloaded = 0;  // body bytes moved
  std::chrono::seconds retry_after{0};         // the server's Retry-After (0 when none)
};

// The bounds of one attempt, decided by the caller.
struct AttemptLimits {
  std::chrono::milliseconds connect{10'000};
  std::chrono::milliseconds total{0};  // 0 = none
  std::chrono::milliseconds stall{0};  // no byte moved for this long; 0 = never
};

class Transport {
 public:
  using Clock = std::chrono::steady_clock;
  using Done = std::function<void(Exchange&&)>;
  virtual ~Transport() = default;
  // Starts one attempt of `*req` no earlier than `not_before` (and no earlier than any hold_until
  // time); `done` runs exactly once with what happened, on the transport's own thread (or in the
  // caller's, when the transport is shut down): it must be quick and must not wait for another
  // request. Requests beyond the in-flight limit wait their turn, first come first served.
  virtual void start(std::shared_ptr<const HttpRequest> req, AttemptLimits limits, Clock::time_point not_before,
                     Done done) = 0;
  // No request starts before `t` (a backoff the server asked every request of the store for).
  virtual void hold_until(Clock::time_point t) = 0;
  // Requests in flight now, and the most that were at once (tests and benchmarks).
  virtual std::size_t in_flight() const = 0;
  virtual std::size_t most_in_flight() const = 0;
};

struct CurlTransportOptions {
  std::size_t max_in_flight = 64;    // requests on the wire at once
  std::size_t max_connections = 64;  // kept-alive connections
  bool verify_tls = true;
  std::string ca_file;
  std::string user_agent;
};

// The libcurl transport: the multi interface on one thread, HTTP/1.1 (the fault tests run on it),
// connections kept alive between requests.
std::shared_ptr<Transport> make_curl_transport(CurlTransportOptions options);

// Where the HTTP clients made from now on without a transport of their own take one: a
// simulation (tests/sim) routes every store of the process into its simulated object store.
// nullptr: libcurl's again.
using TransportFactory = std::function<std::shared_ptr<Transport>()>;
void set_transport_factory(TransportFactory factory);

}  // namespace zarrpp::detail
