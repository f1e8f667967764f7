#include "http_client.hpp"

#include <curl/curl.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "../../core/retry.hpp"
#include "byte_ranges.hpp"
#include "encoding.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

// Checks an http(s) URL with libcurl's parser; throws StoreError naming it and the problem.
void check_http_url(const std::string& url, const std::string& what) {
  CURLU* u = curl_url();
  if (!u) throw StoreError(what + ": out of memory");
  struct Guard {
    CURLU* u;
    ~Guard() { curl_url_cleanup(u); }
  } guard{u};
  const CURLUcode rc = curl_url_set(u, CURLUPART_URL, url.c_str(), 0);
  if (rc != CURLUE_OK) {
#if LIBCURL_VERSION_NUM >= 0x075000
    throw StoreError(what + " '" + url + "' is not a valid URL: " + curl_url_strerror(rc));
#else
    throw StoreError(what + " '" + url + "' is not a valid URL (curl URL error " + std::to_string(rc) + ")");
#endif
  }
  char* scheme = nullptr;
  char* host = nullptr;
  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(u, CURLUPART_HOST, &host, 0);
  const std::string s = scheme ? scheme : "", h = host ? host : "";
  curl_free(scheme);
  curl_free(host);
  if (s != "http" && s != "https")
    throw StoreError(what + " '" + url + "' must start with http:// or https:// (scheme is '" + s + "')");
  if (h.empty()) throw StoreError(what + " '" + url + "' has no host");
}

// ---- HTTP ---------------------------------------------------------------------------------------

const std::string* HttpResponse::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return &v;
  return nullptr;
}

const char* standard_reason(long status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 301:
      return "Moved Permanently";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 307:
      return "Temporary Redirect";
    case 308:
      return "Permanent Redirect";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 412:
      return "Precondition Failed";
    case 416:
      return "Range Not Satisfiable";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "";
  }
}

namespace {

// Whether a failed attempt moved enough data that a retry is progress, not a dead server again:
// a response body began, or a large request body went out.
constexpr std::uint64_t kProgressUpload = 64 * 1024;

bool retryable_status(long s) { return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

bool transient(TransferError e) {
  return e == TransferError::connect || e == TransferError::timeout || e == TransferError::reset ||
         e == TransferError::cut_body;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace

HttpResponse PendingResponse::wait() {
  std::unique_lock lk(mu_);
  cv_.wait(lk, [&] { return done_; });
  if (error_) std::rethrow_exception(error_);
  return std::move(response_);
}

bool PendingResponse::ready() const {
  std::lock_guard lk(mu_);
  return done_;
}

void PendingResponse::finish(HttpResponse r) {
  {
    std::lock_guard lk(mu_);
    response_ = std::move(r);
    done_ = true;
  }
  cv_.notify_all();
}

void PendingResponse::fail(std::exception_ptr e) {
  {
    std::lock_guard lk(mu_);
    error_ = std::move(e);
    done_ = true;
  }
  cv_.notify_all();
}

namespace {
std::mutex g_factory_mu;
TransportFactory g_factory;  // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

std::shared_ptr<Transport> transport_from_factory() {
  std::lock_guard lk(g_factory_mu);
  return g_factory ? g_factory() : nullptr;
}
}  // namespace

void set_transport_factory(TransportFactory factory) {
  std::lock_guard lk(g_factory_mu);
  g_factory = std::move(factory);
}

HttpRequest with_body_cap(HttpRequest r, std::uint64_t cap) {
  if (r.max_body == 0) r.max_body = cap;
  return r;
}

// One request's attempts: each attempt's outcome decides whether the request is answered, failed,
// or tried again after a delay (scheduled on the transport, never slept on a thread).
struct HttpClient::Call : std::enable_shared_from_this<HttpClient::Call> {
  const HttpClient& client;
  std::shared_ptr<const HttpRequest> req;
  std::shared_ptr<PendingResponse> out = std::make_shared<PendingResponse>();
  // Retries stop once retry_window has passed since the first attempt (or the last one that made
  // progress), so a dead or stalled server fails a request within about that time.
  Retry retry;
  bool ambiguous = false;

  Call(const HttpClient& c, HttpRequest r)
      : client(c),
        req(std::make_shared<const HttpRequest>(with_body_cap(std::move(r), c.options_.max_response_bytes))),
        retry({.initial_delay = c.options_.retry_initial_delay,
               .max_delay = c.options_.retry_max_delay,
               .deadline = c.options_.retry_window,
               .max_attempts = c.options_.max_attempts}) {}

  void launch(Transport::Clock::time_point when) {
    const RemoteOptions& o = client.options_;
    client.transport_->start(req, {.connect = o.connect_timeout, .total = o.timeout, .stall = o.stall_timeout}, when,
                             [self = shared_from_this()](Exchange&& e) { self->on(std::move(e)); });
  }

  void on(Exchange&& e) {
    try {
      if (decide(e)) return;
    } catch (...) {
      out->fail(std::current_exception());
      return;
    }
    // Another attempt: the policy's wait, at least what the server asked for (Retry-After), at most
    // retry_max_delay. A server asking to slow down (429, 503) holds every request of the store.
    const auto delay = retry.advance(e.retry_after);
    const auto when = steady_now() + delay;
    if (e.response.status == 429 || e.response.status == 503) client.transport_->hold_until(when);
    launch(when);
  }

  // True when the request is decided (answered, or a failure thrown); false: try again.
  bool decide(Exchange& e) {
    const int attempt = retry.attempts();
    // The request went out again by itself (a reused connection died before answering): the first
    // copy may have been carried out.
    if (e.sends > 1 + e.redirects) ambiguous = true;
    if (e.uploaded >= kProgressUpload || e.downloaded > 0) retry.progress();
    const bool out_of_window = retry.deadline_passed();
    const bool last = retry.exhausted();
    if (e.error == TransferError::too_large)
      throw HttpFailure(ErrorCode::limit_exceeded,
                        client.failure_prefix(*req, attempt) + "the response is larger than the " +
                            std::to_string(req->max_body ? req->max_body : client.options_.max_response_bytes) +
                            " bytes expected; it was not read",
                        ambiguous || e.sends > 0);
    if (e.error != TransferError::none) {
      ambiguous = ambiguous || e.sends > 0;
      if (!transient(e.error) || last) {
        std::string msg = client.failure_prefix(*req, attempt) + e.error_text;
        if (out_of_window && attempt < client.options_.max_attempts)
          msg += "; not retried: the " + seconds_text(client.options_.retry_window) +
                 " retry_window passed without progress";
        throw HttpFailure(ErrorCode::store_failure, msg, ambiguous);
      }
      return false;
    }
    HttpResponse& resp = e.response;
    if (resp.reason.empty()) resp.reason = standard_reason(resp.status);
    const auto& extra = req->extra_retry_statuses;
    const bool retryable =
        retryable_status(resp.status) || std::find(extra.begin(), extra.end(), resp.status) != extra.end();
    // A 500, 502 or 504 may come after the server (or the one behind a gateway) carried it out.
    ambiguous = ambiguous || resp.status == 500 || resp.status == 502 || resp.status == 504;
    if (retryable && !last) return false;
    resp.attempts = attempt;
    resp.ambiguous = ambiguous;
    out->finish(std::move(resp));
    return true;
  }
};

HttpClient::HttpClient(RemoteOptions options, std::string label, std::shared_ptr<Transport> transport)
    : options_(std::move(options)), label_(std::move(label)), transport_(std::move(transport)) {
  if (options_.max_attempts < 1)
    throw StoreError(label_ + ": max_attempts must be at least 1 (got " + std::to_string(options_.max_attempts) + ")");
  if (options_.max_in_flight < 1) throw StoreError(label_ + ": max_in_flight must be at least 1");
  for (auto [v, name] :
       {std::pair{options_.connect_timeout, "connect_timeout"}, std::pair{options_.timeout, "timeout"},
        std::pair{options_.stall_timeout, "stall_timeout"},
        std::pair{options_.retry_initial_delay, "retry_initial_delay"},
        std::pair{options_.retry_max_delay, "retry_max_delay"}, std::pair{options_.retry_window, "retry_window"}})
    if (v.count() < 0) throw StoreError(label_ + ": " + name + " must not be negative");
  if (!transport_) transport_ = transport_from_factory();
  if (!transport_)
    transport_ = make_curl_transport({.max_in_flight = options_.max_in_flight,
                                      .max_connections = options_.max_idle_connections,
                                      .verify_tls = options_.verify_tls,
                                      .ca_file = options_.ca_file,
                                      .user_agent = options_.user_agent});
}

// The transport goes first: its thread ends, and whatever is still pending is told so, while the
// calls it holds can still reach this client.
HttpClient::~HttpClient() { transport_.reset(); }

std::string HttpClient::failure_prefix(const HttpRequest& req, int attempts) const {
  return label_ + " " + req.method + " " + redact_url(req.url) + " failed" +
         (attempts > 1 ? " after " + std::to_string(attempts) + " attempts" : std::string()) + ": ";
}

std::shared_ptr<PendingResponse> HttpClient::start(const HttpRequest& req) const {
  auto call = std::make_shared<Call>(*this, req);
  call->launch(steady_now());
  return call->out;
}

HttpResponse HttpClient::perform(const HttpRequest& req) const { return start(req)->wait(); }

void ReadLog::record(const std::string& key, const HttpRequest& req, const HttpResponse& resp) {
  Entry e;
  e.key = key;
  e.request = req.method + " " + redact_url(req.url);
  e.status = resp.status;
  const std::string* cl = resp.header("content-length");
  e.content_length = cl ? *cl : "";
  e.received = resp.body.size();
  std::lock_guard lk(mu_);
  std::erase_if(entries_, [&](const Entry& x) { return x.key == key; });
  if (entries_.size() >= kKeep) entries_.erase(entries_.begin());
  entries_.push_back(std::move(e));
}

std::string ReadLog::explain(const std::string& key, std::optional<std::uint64_t> size_now) const {
  std::lock_guard lk(mu_);
  for (const auto& e : entries_) {
    if (e.key != key || !size_now || *size_now == e.received) continue;
    return "the response it came in was cut in transit: " + e.request + " answered HTTP " + std::to_string(e.status) +
           (e.content_length.empty() ? std::string(" without a Content-Length")
                                     : " with Content-Length " + e.content_length) +
           " and " + std::to_string(e.received) + " bytes, but the object is " + std::to_string(*size_now) +
           " bytes (HEAD); the stored data is not shown to be damaged";
  }
  return "";
}

}  // namespace zarrpp::detail

namespace zarrpp {

// ---- RemoteOptions by name ----------------------------------------------------------------------

const std::vector<std::string>& RemoteOptions::option_names() {
  static const std::vector<std::string> names = {
      "connect_timeout",     "timeout",         "stall_timeout", "retry_window",
      "retry_initial_delay", "retry_max_delay", "max_attempts",  "max_in_flight"};
  return names;
}

bool RemoteOptions::is_option(std::string_view name) {
  const auto& n = option_names();
  return std::find(n.begin(), n.end(), name) != n.end();
}

void RemoteOptions::set(std::string_view name, double value) {
  const std::string n(name);
  char got[32];
  std::snprintf(got, sizeof got, "%g", value);
  if (name == "max_in_flight") {
    if (!(value >= 1 && value <= 1024) || value != static_cast<double>(static_cast<int>(value)))
      throw ArgumentError(std::string("max_in_flight must be a whole number from 1 to 1024 (got ") + got + ")");
    max_in_flight = static_cast<std::size_t>(value);
    return;
  }
  if (name == "max_attempts") {
    if (!(value >= 1 && value <= 1000) || value != static_cast<double>(static_cast<int>(value)))
      throw ArgumentError(std::string("max_attempts must be a whole number from 1 to 1000 (got ") + got + ")");
    max_attempts = static_cast<int>(value);
    return;
  }
  std::chrono::milliseconds* target = name == "connect_timeout"       ? &connect_timeout
                                      : name == "timeout"             ? &timeout
                                      : name == "stall_timeout"       ? &stall_timeout
                                      : name == "retry_window"        ? &retry_window
                                      : name == "retry_initial_delay" ? &retry_initial_delay
                                      : name == "retry_max_delay"     ? &retry_max_delay
                                                                      : nullptr;
  if (!target) {
    std::string all;
    for (const auto& o : option_names()) all += (all.empty() ? "" : ", ") + o;
    throw ArgumentError("unknown network option '" + n + "' (the options are " + all + ")");
  }
  const bool zero_ok =
      name == "timeout" || name == "stall_timeout" || name == "retry_window" || name == "retry_initial_delay";
  if (!std::isfinite(value) || value < 0 || (value == 0 && !zero_ok) || value > 1e7)
    throw ArgumentError(n + " must be a number of seconds" + (zero_ok ? " (0 or more" : " (more than 0") +
                        ", at most 1e7; got " + got + ")");
  *target = std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(value * 1000)));
  if (*target == std::chrono::milliseconds(0) && value > 0) *target = std::chrono::milliseconds(1);
}

}  // namespace zarrpp
