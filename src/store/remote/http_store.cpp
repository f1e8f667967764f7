#include "zarrpp/store/http_store.hpp"

#include <algorithm>

#include "byte_ranges.hpp"
#include "encoding.hpp"
#include "http_client.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

namespace {

void check_header(const std::string& name, const std::string& value) {
  auto token_char = [](char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
  };
  if (name.empty() || !std::all_of(name.begin(), name.end(), token_char))
    throw StoreError("HttpStore: invalid header name '" + name + "' (letters, digits and !#$%&'*+-.^_`|~ only)");
  if (value.find_first_of("\r\n", 0) != std::string::npos || value.find('\0') != std::string::npos)
    throw StoreError("HttpStore: the value of header '" + name + "' contains a line break or NUL");
}

// Whether the server answered by redirecting to the key's URL with a '/' appended: the key names a
// directory (how nginx, Apache and most static servers answer), which is not a stored value.
bool redirected_to_directory(const detail::HttpRequest& req, const detail::HttpResponse& resp) {
  auto strip_query = [](const std::string& u) { return u.substr(0, u.find('?')); };
  const std::string dir = strip_query(req.url) + "/";
  if (resp.status >= 300 && resp.status < 400) {
    const std::string* loc = resp.header("location");
    if (!loc) return false;
    const std::string l = strip_query(*loc);
    return l == dir || (l.size() > 1 && l.front() == '/' && dir.size() >= l.size() &&
                        dir.compare(dir.size() - l.size(), l.size(), l) == 0);
  }
  return !resp.effective_url.empty() && strip_query(resp.effective_url) == dir;
}

}  // namespace

std::shared_ptr<HttpStore> HttpStore::open(const std::string& url) { return open(url, Options{}); }

std::shared_ptr<HttpStore> HttpStore::open(const std::string& url, Options options) {
  return std::make_shared<HttpStore>(url, std::move(options));
}

HttpStore::HttpStore(const std::string& url, Options options) : options_(std::move(options)) {
  if (url.find('#') != std::string::npos)
    throw StoreError("HTTP store URL '" + url + "' must not contain a fragment ('#...')");
  detail::check_http_url(url, "HTTP store URL");
  // "user:password@" in the URL becomes a Basic Authorization header (unless one is configured),
  // so that neither describe() nor error messages show it.
  std::string clean = url;
  const std::size_t authority = url.find("://") + 3;
  const std::size_t authority_end = std::min(url.find_first_of("/?", authority), url.size());
  const std::size_t at = url.rfind('@', authority_end - 1);
  if (at != std::string::npos && at >= authority) {
    const std::string userinfo = url.substr(authority, at - authority);
    clean = url.substr(0, authority) + url.substr(at + 1);
    const std::size_t colon = userinfo.find(':');
    const std::string user = detail::percent_decode(userinfo.substr(0, colon), "HTTP store URL: the user name");
    const std::string password =
        colon == std::string::npos ? ""
                                   : detail::percent_decode(userinfo.substr(colon + 1), "HTTP store URL: the password");
    const bool has_auth = std::any_of(options_.headers.begin(), options_.headers.end(), [](const auto& hd) {
      std::string n = hd.first;
      std::transform(n.begin(), n.end(), n.begin(),
                     [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
      return n == "authorization";
    });
    if (!has_auth)
      options_.headers.emplace_back("Authorization",
                                    "Basic " + detail::base64(detail::as_bytes(user + ":" + password)));
  }
  const std::size_t q = clean.find('?');
  root_ = clean.substr(0, q);
  if (q != std::string::npos && q + 1 < clean.size()) query_ = clean.substr(q);
  // Strip trailing slashes, but not the ones of "scheme://".
  while (root_.size() > authority && root_.back() == '/') root_.pop_back();
  for (const auto& [name, value] : options_.headers) check_header(name, value);
  client_ = std::make_unique<detail::HttpClient>(options_.net, "HTTP");
  reads_ = std::make_unique<detail::ReadLog>();
}

std::string HttpStore::do_explain_unreadable(const std::string& key) { return reads_->explain(key, do_size(key)); }

HttpStore::~HttpStore() = default;

std::string HttpStore::url_of(const std::string& key) const {
  validate_key(key);
  return root_ + "/" + detail::percent_encode(key, true) + query_;
}

std::string HttpStore::describe() const { return query_.empty() ? root_ : root_ + "?..."; }

std::vector<std::string> HttpStore::request_headers() const {
  std::vector<std::string> h;
  h.reserve(options_.headers.size() + 1);
  for (const auto& [name, value] : options_.headers) h.push_back(name + ": " + value);
  return h;
}

detail::HttpRequest HttpStore::get_request(const std::string& key, const ByteRange& range,
                                           std::uint64_t max_bytes) const {
  detail::HttpRequest req;
  req.method = "GET";
  req.url = url_of(key);
  req.headers = request_headers();
  req.follow_redirects = options_.follow_redirects;
  req.max_body = detail::body_cap(range, max_bytes);
  if (const auto plan = detail::plan_range(range); !plan.whole) req.headers.push_back(plan.header);
  return req;
}

std::optional<VersionedBytes> HttpStore::read_response(const std::string& key, const ByteRange& range,
                                                       const detail::HttpRequest& req, detail::HttpResponse&& resp) {
  const bool whole = detail::plan_range(range).whole;
  if (resp.status == 404 || redirected_to_directory(req, resp)) return std::nullopt;
  const std::string* etag = resp.header("etag");
  VersionedBytes out{Bytes(), etag ? *etag : std::string()};
  if (resp.status == 416 && !whole) {
    // Believed only for a range the object cannot hold: its size from a HEAD (not from the 416
    // itself, which a stale cache or proxy would vouch for).
    const auto size = do_size(key);
    if (!size) return std::nullopt;
    detail::check_unsatisfiable(range, *size, client_->failure_prefix(req, resp.attempts));
    return out;
  }
  if (resp.status >= 200 && resp.status < 300) {
    if (whole) reads_->record(key, req, resp);
    out.value_size = detail::value_size_of(resp);
    out.bytes = detail::take_range(resp, range, client_->failure_prefix(req, resp.attempts));
    return out;
  }
  throw StoreError(client_->failure_prefix(req, resp.attempts) + std::to_string(resp.status) +
                   (resp.reason.empty() ? "" : " " + resp.reason));
}

std::optional<VersionedBytes> HttpStore::do_get(const std::string& key, const ByteRange& range,
                                                std::uint64_t max_bytes) {
  if (detail::plan_range(range).empty)
    return do_size(key) ? std::optional<VersionedBytes>(VersionedBytes{}) : std::nullopt;
  const auto req = get_request(key, range, max_bytes);
  return read_response(key, range, req, client_->perform(req));
}

std::unique_ptr<PendingGet> HttpStore::do_start_get(const std::string& key, std::uint64_t max_bytes) {
  auto req = get_request(key, ByteRange::all(), max_bytes);
  auto response = client_->start(req);
  return std::make_unique<detail::PendingHttpGet>(std::move(response),
                                                  [this, key, req = std::move(req)](detail::HttpResponse&& r) {
                                                    return read_response(key, ByteRange::all(), req, std::move(r));
                                                  });
}

struct HttpStore::HeadResult {
  bool found = false;
  std::optional<std::uint64_t> length;  // from Content-Length, when the server sent one
};

HttpStore::HeadResult HttpStore::head(const std::string& key) const {
  detail::HttpRequest req;
  req.method = "HEAD";
  req.url = url_of(key);
  req.headers = request_headers();
  req.follow_redirects = options_.follow_redirects;
  auto resp = client_->perform(req);
  if (resp.status == 405 || resp.status == 501) {
    // No HEAD on this server: ask for the first byte instead.
    req.method = "GET";
    req.headers.push_back("Range: bytes=0-0");
    resp = client_->perform(req);
    if (resp.status == 416) return {true, 0};                 // exists, but empty
    if (resp.status == 200) return {true, resp.body.size()};  // the server ignored Range
    if (resp.status == 206) {
      // The total length is in Content-Range ("bytes 0-0/TOTAL"), unless the server gave "*".
      std::uint64_t a = 0, b = 0;
      std::optional<std::uint64_t> total;
      const std::string* cr = resp.header("content-range");
      if (cr && detail::parse_content_range(*cr, a, b, total)) return {true, total};
      return {true, std::nullopt};
    }
  }
  if (resp.status == 404 || redirected_to_directory(req, resp)) return {false, std::nullopt};
  if (resp.status >= 200 && resp.status < 300) {
    HeadResult r{true, std::nullopt};
    if (const auto* cl = resp.header("content-length")) {
      r.length = detail::parse_content_length(*cl);
      if (!r.length)
        throw StoreError(client_->failure_prefix(req, resp.attempts) + "unreadable Content-Length '" + *cl + "'");
    }
    return r;
  }
  throw StoreError(client_->failure_prefix(req, resp.attempts) + std::to_string(resp.status) +
                   (resp.reason.empty() ? "" : " " + resp.reason));
}

std::optional<std::uint64_t> HttpStore::do_size(const std::string& key) {
  const auto h = head(key);
  if (!h.found) return std::nullopt;
  if (h.length) return h.length;
  return Store::do_size(key);  // no length from the server: read it
}

void HttpStore::do_set(const std::string& key, const Bytes&) {
  throw StoreError(ErrorCode::read_only, "HTTP store " + describe() + " is read-only: cannot write '" + key + "'");
}

void HttpStore::do_erase(const std::string& key) {
  throw StoreError(ErrorCode::read_only, "HTTP store " + describe() + " is read-only: cannot erase '" + key + "'");
}

std::vector<std::string> HttpStore::do_list_prefix(const std::string& prefix) {
  throw StoreError("HTTP store " + describe() + " cannot list keys (prefix '" + prefix +
                   "'): HTTP has no listing; reading Zarr v3 needs none");
}

}  // namespace zarrpp
