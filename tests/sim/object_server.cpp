#include "object_server.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "core/xml_escape.hpp"
#include "store/remote/encoding.hpp"

namespace zarrpp::sim {

namespace {

detail::HttpResponse reply(long status, std::string body = "") {
  detail::HttpResponse r;
  r.status = status;
  r.body.assign(body.begin(), body.end());
  return r;
}

std::map<std::string, std::string> parse_query(std::string_view q) {
  std::map<std::string, std::string> out;
  while (!q.empty()) {
    const auto amp = q.find('&');
    const std::string_view part = q.substr(0, amp);
    const auto eq = part.find('=');
    out[detail::percent_decode(part.substr(0, eq), "query")] =
        eq == std::string_view::npos ? "" : detail::percent_decode(part.substr(eq + 1), "query");
    q = amp == std::string_view::npos ? std::string_view() : q.substr(amp + 1);
  }
  return out;
}

std::string xml_unescape(std::string s) {
  const std::pair<const char*, const char*> ents[] = {
      {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&apos;", "'"}, {"&amp;", "&"}};
  for (auto [from, to] : ents)
    for (std::size_t p = 0; (p = s.find(from, p)) != std::string::npos; p += std::string_view(to).size())
      s.replace(p, std::string_view(from).size(), to);
  return s;
}

}  // namespace

std::optional<std::string> header_of(const detail::HttpRequest& req, std::string_view name) {
  for (const auto& h : req.headers) {
    const auto colon = h.find(':');
    if (colon != name.size()) continue;
    if (!std::equal(name.begin(), name.end(), h.begin(),
                    [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
      continue;
    std::string v = h.substr(colon + 1);
    v.erase(0, v.find_first_not_of(' '));
    return v;
  }
  return std::nullopt;
}

detail::HttpResponse ObjectServer::error(long status, const std::string& s3_code, const std::string& azure_code) const {
  const std::string& code = options_.azure ? azure_code : s3_code;
  auto r = reply(status, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>" + code + "</Code><Message>" + code +
                             "</Message></Error>");
  if (options_.azure) r.headers.emplace_back("x-ms-error-code", code);
  return r;
}

std::uint64_t ObjectServer::seq() const {
  std::lock_guard lk(mu_);
  return seq_;
}

std::size_t ObjectServer::objects() const {
  std::lock_guard lk(mu_);
  return objects_.size();
}

std::string ObjectServer::new_etag() {
  std::ostringstream s;
  s << "\"" << std::hex << ++etags_ << "\"";
  return s.str();
}

void ObjectServer::change(const std::string& key, std::optional<Bytes> after, std::uint64_t op) {
  Change c;
  c.seq = ++seq_;
  c.key = key;
  c.op = op;
  const auto it = objects_.find(key);
  if (it != objects_.end()) c.before = it->second.data;
  if (after) {
    if (it == objects_.end()) key_changes_.emplace_back(c.seq, key, true);
    objects_[key] = Object{*after, new_etag()};
  } else if (it != objects_.end()) {
    key_changes_.emplace_back(c.seq, key, false);
    objects_.erase(it);
  }
  while (key_changes_.size() > 64) key_changes_.pop_front();
  c.after = std::move(after);
  if (observer_) observer_(c);
}

bool ObjectServer::touch(const std::string& key) {
  std::lock_guard lk(mu_);
  const auto it = objects_.find(key);
  if (it == objects_.end()) return false;
  it->second.etag = new_etag();
  return true;
}

detail::HttpResponse ObjectServer::handle(const detail::HttpRequest& req, std::uint64_t op, int list_lag) {
  const std::string base = std::string("http://sim.invalid/") + kBucket;
  if (req.url.rfind(base, 0) != 0) return error(404, "NoSuchBucket", "ContainerNotFound");
  std::string rest = req.url.substr(base.size());
  std::string query;
  if (const auto q = rest.find('?'); q != std::string::npos) {
    query = rest.substr(q + 1);
    rest.resize(q);
  }
  std::lock_guard lk(mu_);
  if (rest.empty() || rest == "/") {
    const auto params = parse_query(query);
    if (req.method == "GET" && (params.count("list-type") || params.count("comp"))) return list(params, list_lag);
    if (req.method == "POST" && params.count("delete")) return delete_many(req, op);
    return error(400, "InvalidRequest", "InvalidQueryParameterValue");
  }
  const std::string key = detail::percent_decode(std::string_view(rest).substr(1), "key");
  if (req.method == "GET" || req.method == "HEAD") return get(key, req, req.method == "HEAD");
  if (req.method == "PUT") return put(key, req, op);
  if (req.method == "DELETE") return erase(key, req, op);
  return error(405, "MethodNotAllowed", "UnsupportedHttpVerb");
}

detail::HttpResponse ObjectServer::get(const std::string& key, const detail::HttpRequest& req, bool head) {
  const auto it = objects_.find(key);
  if (it == objects_.end()) return error(404, "NoSuchKey", "BlobNotFound");
  const Bytes& d = it->second.data;
  detail::HttpResponse r = reply(200);
  r.headers.emplace_back("etag", it->second.etag);
  std::uint64_t a = 0, b = d.size();  // [a, b)
  if (const auto range = header_of(req, "Range"); range && !head) {
    const std::string spec = range->substr(std::string("bytes=").size());
    const auto dash = spec.find('-');
    const std::string from = spec.substr(0, dash), to = spec.substr(dash + 1);
    if (from.empty()) {
      a = d.size() - std::min<std::uint64_t>(d.size(), std::stoull(to));
    } else {
      a = std::stoull(from);
      if (!to.empty()) b = std::min<std::uint64_t>(b, std::stoull(to) + 1);
    }
    if (a >= d.size() || a >= b) {
      detail::HttpResponse e = error(416, "InvalidRange", "InvalidRange");
      e.headers.emplace_back("content-range", "bytes */" + std::to_string(d.size()));
      return e;
    }
    r.status = 206;
    r.headers.emplace_back("content-range",
                           "bytes " + std::to_string(a) + "-" + std::to_string(b - 1) + "/" + std::to_string(d.size()));
  }
  r.headers.emplace_back("content-length", std::to_string(head ? d.size() : b - a));
  if (!head) r.body.assign(d.begin() + static_cast<std::ptrdiff_t>(a), d.begin() + static_cast<std::ptrdiff_t>(b));
  return r;
}

detail::HttpResponse ObjectServer::put(const std::string& key, const detail::HttpRequest& req, std::uint64_t op) {
  const auto it = objects_.find(key);
  if (options_.conditional_put) {
    if (const auto m = header_of(req, "If-None-Match"); m && *m == "*" && it != objects_.end())
      return options_.azure ? error(409, "", "BlobAlreadyExists") : error(412, "PreconditionFailed", "");
    if (const auto m = header_of(req, "If-Match")) {
      if (it == objects_.end()) return error(404, "NoSuchKey", "BlobNotFound");
      if (it->second.etag != *m) return error(412, "PreconditionFailed", "ConditionNotMet");
    }
  }
  change(key, Bytes(req.body.begin(), req.body.end()), op);
  detail::HttpResponse r = reply(options_.azure ? 201 : 200);
  r.headers.emplace_back("etag", objects_[key].etag);
  return r;
}

detail::HttpResponse ObjectServer::erase(const std::string& key, const detail::HttpRequest& req, std::uint64_t op) {
  const auto it = objects_.find(key);
  if (options_.conditional_put && options_.conditional_delete) {
    if (const auto m = header_of(req, "If-Match")) {
      if (it == objects_.end()) return error(404, "NoSuchKey", "BlobNotFound");
      if (it->second.etag != *m) return error(412, "PreconditionFailed", "ConditionNotMet");
    }
  }
  if (it == objects_.end()) return options_.azure ? error(404, "", "BlobNotFound") : reply(204);
  change(key, std::nullopt, op);
  return reply(options_.azure ? 202 : 204);
}

detail::HttpResponse ObjectServer::list(const std::map<std::string, std::string>& query, int lag) const {
  std::set<std::string> keys;
  for (const auto& [k, o] : objects_) keys.insert(k);
  // A listing that lags: the latest `lag` creations and removals are not seen yet.
  int undone = 0;
  for (auto it = key_changes_.rbegin(); it != key_changes_.rend() && undone < lag; ++it, ++undone) {
    if (std::get<2>(*it))
      keys.erase(std::get<1>(*it));
    else
      keys.insert(std::get<1>(*it));
  }
  const auto get = [&](const char* n) {
    const auto i = query.find(n);
    return i == query.end() ? std::string() : i->second;
  };
  const bool az = options_.azure;
  const std::string prefix = get("prefix"), delimiter = get("delimiter"),
                    after = get(az ? "marker" : "continuation-token");
  const std::size_t page =
      std::min<std::size_t>(static_cast<std::size_t>(options_.list_page),
                            static_cast<std::size_t>(std::stoul(get(az ? "maxresults" : "max-keys"))));
  std::string body = std::string("<?xml version=\"1.0\" encoding=\"UTF-8\"?>") +
                     (az ? "<EnumerationResults><Blobs>" : "<ListBucketResult>");
  std::size_t n = 0;
  std::string last;
  bool truncated = false;
  for (auto it = keys.upper_bound(after); it != keys.end(); ++it) {
    if (it->rfind(prefix, 0) != 0) continue;
    if (n == page) {
      truncated = true;
      break;
    }
    const auto cut = delimiter.empty() ? std::string::npos : it->find(delimiter, prefix.size());
    if (cut != std::string::npos) {
      // One common prefix for all its keys: the page goes on after the last of them.
      const std::string p = it->substr(0, cut + 1);
      body += az ? "<BlobPrefix><Name>" + detail::xml_escape(p) + "</Name></BlobPrefix>"
                 : "<CommonPrefixes><Prefix>" + detail::xml_escape(p) + "</Prefix></CommonPrefixes>";
      ++n;
      while (std::next(it) != keys.end() && std::next(it)->rfind(p, 0) == 0) ++it;
    } else {
      body += az ? "<Blob><Name>" + detail::xml_escape(*it) + "</Name></Blob>"
                 : "<Contents><Key>" + detail::xml_escape(*it) + "</Key></Contents>";
      ++n;
    }
    last = *it;
  }
  if (az)
    return reply(200, body + "</Blobs><NextMarker>" + (truncated ? detail::xml_escape(last) : std::string()) +
                          "</NextMarker></EnumerationResults>");
  body += std::string("<IsTruncated>") + (truncated ? "true" : "false") + "</IsTruncated>";
  if (truncated) body += "<NextContinuationToken>" + detail::xml_escape(last) + "</NextContinuationToken>";
  return reply(200, body + "</ListBucketResult>");
}

detail::HttpResponse ObjectServer::delete_many(const detail::HttpRequest& req, std::uint64_t op) {
  const std::string text(req.body.begin(), req.body.end());
  for (std::size_t p = 0; (p = text.find("<Key>", p)) != std::string::npos;) {
    const auto end = text.find("</Key>", p);
    const std::string key = xml_unescape(text.substr(p + 5, end - p - 5));
    if (objects_.count(key)) change(key, std::nullopt, op);
    p = end;
  }
  return reply(200, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><DeleteResult></DeleteResult>");
}

}  // namespace zarrpp::sim
