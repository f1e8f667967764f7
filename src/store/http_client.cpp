#include "http_client.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "../core/retry.hpp"
#include "byte_ranges.hpp"
#include "zarrpp/core/error.hpp"

#if LIBCURL_VERSION_NUM < 0x075000
#error "zarrpp's remote stores need libcurl 7.80 or newer (CURLOPT_AWS_SIGV4, CURLOPT_PREREQFUNCTION)"
#endif

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

void global_init() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) throw StoreError(std::string("cannot initialise libcurl: ") + curl_easy_strerror(rc));
}

bool transient_curl_error(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

// Whether a failed attempt moved enough data that a retry is progress, not a dead server again:
// a response body began, or a large request body went out.
constexpr curl_off_t kProgressUpload = 64 * 1024;

bool retryable_status(long s) { return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

struct Sink {
  HttpResponse* resp;
  bool head;          // HEAD: Content-Length describes a body that will not come
  std::uint64_t cap;  // the most body bytes accepted
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* sink = static_cast<Sink*>(user);
  auto* r = sink->resp;
  if (r->body.size() + size * n > sink->cap) {  // a server sending more than could be right
    r->too_large = true;
    return 0;  // aborts the transfer
  }
  r->body.insert(r->body.end(), reinterpret_cast<const std::uint8_t*>(data),
                 reinterpret_cast<const std::uint8_t*>(data) + size * n);
  return size * n;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* r = static_cast<Sink*>(user)->resp;
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    // A new response (after a redirect or a 100 Continue): start over.
    r->headers.clear();
    r->body.clear();
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    r->reason = sp2 == std::string_view::npos ? "" : trim(line.substr(sp2 + 1));
    return size * n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  std::string value = trim(line.substr(colon + 1));
  if (name == "content-length" && !static_cast<Sink*>(user)->head) {
    const auto len = parse_content_length(value);
    if (len && *len > static_cast<Sink*>(user)->cap) {  // announced too large: stop before it comes
      r->too_large = true;
      return 0;
    }
    // Reserve for the body, within reason (the length is only a hint here).
    if (len && *len <= (std::uint64_t{1} << 30)) r->body.reserve(static_cast<std::size_t>(*len));
  }
  r->headers.emplace_back(std::move(name), std::move(value));
  return size * n;
}

std::string seconds_text(std::chrono::milliseconds ms) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g s", static_cast<double>(ms.count()) / 1000.0);
  return buf;
}

}  // namespace

// What one curl_easy_perform did besides its response: how often the request went out (libcurl
// re-sends by itself when a reused connection dies before answering), and the bytes moved.
struct HttpClient::Attempt {
  int sends = 0;
  long redirects = 0;
  curl_off_t uploaded = 0, downloaded = 0;
};

namespace {
// Called by libcurl every time the request is about to go out on a connection.
int on_send(void* user, char*, char*, int, int) {
  ++static_cast<HttpClient::Attempt*>(user)->sends;
  return CURL_PREREQFUNC_OK;
}
}  // namespace

HttpClient::HttpClient(RemoteOptions options, std::string label)
    : options_(std::move(options)), label_(std::move(label)) {
  global_init();
  if (options_.max_attempts < 1)
    throw StoreError(label_ + ": max_attempts must be at least 1 (got " + std::to_string(options_.max_attempts) + ")");
  for (auto [v, name] :
       {std::pair{options_.connect_timeout, "connect_timeout"}, std::pair{options_.timeout, "timeout"},
        std::pair{options_.stall_timeout, "stall_timeout"},
        std::pair{options_.retry_initial_delay, "retry_initial_delay"},
        std::pair{options_.retry_max_delay, "retry_max_delay"}, std::pair{options_.retry_window, "retry_window"}})
    if (v.count() < 0) throw StoreError(label_ + ": " + name + " must not be negative");
}

HttpClient::~HttpClient() {
  for (CURL* h : idle_) curl_easy_cleanup(h);
}

CURL* HttpClient::acquire() const {
  {
    std::lock_guard lk(mu_);
    if (!idle_.empty()) {
      CURL* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  if (!h) throw StoreError(label_ + ": cannot create a libcurl handle");
  return h;
}

void HttpClient::release(CURL* h) const {
  {
    std::lock_guard lk(mu_);
    if (idle_.size() < options_.max_idle_connections) {
      idle_.push_back(h);
      return;
    }
  }
  curl_easy_cleanup(h);
}

std::string HttpClient::failure_prefix(const HttpRequest& req, int attempts) const {
  return label_ + " " + req.method + " " + req.url + " failed" +
         (attempts > 1 ? " after " + std::to_string(attempts) + " attempts" : std::string()) + ": ";
}

CURLcode HttpClient::perform_once(CURL* h, const HttpRequest& req, HttpResponse& resp, char* errbuf,
                                  Attempt& seen) const {
  curl_easy_reset(h);  // keeps the connection cache
  errbuf[0] = '\0';
  Sink sink{&resp, req.method == "HEAD", req.max_body ? req.max_body : options_.max_response_bytes};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  if (options_.timeout.count() > 0)
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
  if (options_.stall_timeout.count() > 0) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>((options_.stall_timeout.count() + 999) / 1000));
  }
  if (!options_.user_agent.empty()) curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);

  static const char empty_body[1] = {0};
  if (req.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (req.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (req.method == "PUT" || req.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS,
                     req.body.empty() ? empty_body : reinterpret_cast<const char*>(req.body.data()));
    if (req.method == "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }

  struct curl_slist* list = nullptr;
  for (const auto& hd : req.headers) {
    struct curl_slist* next = curl_slist_append(list, hd.c_str());
    if (!next) {
      curl_slist_free_all(list);
      return CURLE_OUT_OF_MEMORY;
    }
    list = next;
  }
  if (list) curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  if (!req.aws_sigv4.empty()) {
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, req.aws_sigv4.c_str());
    curl_easy_setopt(h, CURLOPT_USERNAME, req.username.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, req.password.c_str());
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);
  // Every send is counted: libcurl re-sends a request by itself when a reused connection dies
  // before answering. A runtime libcurl without the callback (older than the headers) cannot
  // count, so requests that change something get a fresh connection, which libcurl never re-sends on.
  const bool counted = curl_easy_setopt(h, CURLOPT_PREREQFUNCTION, on_send) == CURLE_OK &&
                       curl_easy_setopt(h, CURLOPT_PREREQDATA, &seen) == CURLE_OK;
  if (!counted && req.method != "GET" && req.method != "HEAD") curl_easy_setopt(h, CURLOPT_FRESH_CONNECT, 1L);

  const CURLcode rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_REDIRECT_COUNT, &seen.redirects);
  curl_easy_getinfo(h, CURLINFO_SIZE_UPLOAD_T, &seen.uploaded);
  curl_easy_getinfo(h, CURLINFO_SIZE_DOWNLOAD_T, &seen.downloaded);
  if (counted)
    curl_easy_setopt(h, CURLOPT_PREREQDATA, static_cast<void*>(nullptr));
  else
    seen.sends = rc != CURLE_COULDNT_RESOLVE_HOST && rc != CURLE_COULDNT_CONNECT ? 1 : 0;
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  resp.status = status;
  char* effective = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) resp.effective_url = effective;
  if (resp.reason.empty()) resp.reason = standard_reason(status);
  // Unhook everything that lives on this stack frame or in the request before the handle is
  // pooled (the header list is freed here; curl must not write to the error buffer later).
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, static_cast<struct curl_slist*>(nullptr));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
  curl_easy_setopt(h, CURLOPT_WRITEDATA, static_cast<void*>(nullptr));
  curl_easy_setopt(h, CURLOPT_HEADERDATA, static_cast<void*>(nullptr));
  curl_slist_free_all(list);
  return rc;
}

HttpResponse HttpClient::perform(const HttpRequest& req) const {
  bool ambiguous = false;
  // Retries stop once retry_window has passed since the first attempt (or the last one that made
  // progress), so a dead or stalled server fails a request within about that time.
  detail::Retry retry({.initial_delay = options_.retry_initial_delay,
                       .max_delay = options_.retry_max_delay,
                       .deadline = options_.retry_window,
                       .max_attempts = options_.max_attempts});
  for (;;) {
    const int attempt = retry.attempts();
    HttpResponse resp;
    char errbuf[CURL_ERROR_SIZE];
    CURL* h = acquire();
    CURLcode rc;
    curl_off_t retry_after = 0;
    Attempt seen;
    try {
      rc = perform_once(h, req, resp, errbuf, seen);
      curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
    } catch (...) {
      curl_easy_cleanup(h);
      throw;
    }
    if (rc != CURLE_OK) {
      // A handle whose transfer failed may hold a broken connection: do not pool it.
      curl_easy_cleanup(h);
    } else {
      release(h);
    }
    // libcurl re-sent the request by itself (a reused connection died before answering): the
    // first copy may have been carried out.
    if (seen.sends > 1 + seen.redirects) ambiguous = true;
    if (seen.uploaded >= kProgressUpload || seen.downloaded > 0) retry.progress();
    const bool out_of_window = retry.deadline_passed();
    const bool last = retry.exhausted();
    if (rc != CURLE_OK && resp.too_large)
      throw HttpFailure(ErrorCode::limit_exceeded,
                        failure_prefix(req, attempt) + "the response is larger than the " +
                            std::to_string(req.max_body ? req.max_body : options_.max_response_bytes) +
                            " bytes expected; it was not read",
                        ambiguous || seen.sends > 0);
    if (rc != CURLE_OK) {
      ambiguous = ambiguous || seen.sends > 0;
      if (!transient_curl_error(rc) || last) {
        std::string msg = failure_prefix(req, attempt) + curl_easy_strerror(rc);
        if (errbuf[0]) msg += std::string(" (") + errbuf + ")";
        if (out_of_window && attempt < options_.max_attempts)
          msg += "; not retried: the " + seconds_text(options_.retry_window) + " retry_window passed without progress";
        throw HttpFailure(ErrorCode::store_failure, msg, ambiguous);
      }
    } else {
      const bool retryable = retryable_status(resp.status) ||
                             std::find(req.extra_retry_statuses.begin(), req.extra_retry_statuses.end(), resp.status) !=
                                 req.extra_retry_statuses.end();
      // A 500, 502 or 504 may come after the server (or the one behind a gateway) carried it out.
      ambiguous = ambiguous || resp.status == 500 || resp.status == 502 || resp.status == 504;
      if (!retryable || last) {
        resp.attempts = attempt;
        resp.ambiguous = ambiguous;
        return resp;
      }
    }
    // The policy's wait (`last` decided there is another attempt), at least what the server asked
    // for (Retry-After, clamped before conversion), at most retry_max_delay.
    retry.wait(std::chrono::seconds(std::clamp<curl_off_t>(retry_after, 0, 86'400)));
  }
}

void ReadLog::record(const std::string& key, const HttpRequest& req, const HttpResponse& resp) {
  Entry e;
  e.key = key;
  e.request = req.method + " " + req.url;
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
      "retry_initial_delay", "retry_max_delay", "max_attempts"};
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
