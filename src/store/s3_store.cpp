#include "zarrpp/store/s3_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <thread>

#include "curl_util.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

namespace {

constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
constexpr std::size_t kDeleteBatch = 1000;  // DeleteObjects takes at most 1000 keys

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

bool valid_key(const std::string& k) {
  try {
    validate_key(k);
    return true;
  } catch (const StoreError&) {
    return false;
  }
}

struct S3ErrorBody {
  std::string code, message;
};

S3ErrorBody parse_error_body(const detail::HttpResponse& resp) {
  S3ErrorBody e;
  if (resp.body.empty()) return e;
  try {
    detail::parse_xml(resp.body_text(), [&](const std::vector<std::string>& path, std::string& text) {
      if (path.size() == 2 && path[0] == "Error" && path[1] == "Code") e.code = std::move(text);
      else if (path.size() == 2 && path[0] == "Error" && path[1] == "Message") e.message = std::move(text);
    });
  } catch (const std::runtime_error&) {
    // Not XML (a proxy's HTML page, ...): report the status alone.
  }
  return e;
}

std::string random_hex(std::size_t n) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::string out;
  static constexpr char digits[] = "0123456789abcdef";
  for (std::size_t i = 0; i < n; ++i) out += digits[rng() & 15];
  return out;
}

}  // namespace

struct S3Store::Impl {
  std::unique_ptr<detail::HttpClient> client;
  std::string bucket;
  std::string base;         // endpoint/bucket
  std::string root_slash;   // "" or "prefix/"
  std::string sigv4;        // "" = unsigned
  std::string access_key, secret_key, token;
  int page_size = 1000;
  std::atomic<bool> bulk_delete{true};

  std::string full_key(const std::string& key) const { return root_slash + key; }
  std::string object_url(const std::string& full) const { return base + "/" + detail::uri_encode(full, true); }

  detail::HttpRequest make(const char* method, std::string url, std::span<const std::uint8_t> body = {}) const {
    detail::HttpRequest r;
    r.method = method;
    r.url = std::move(url);
    r.body = body;
    r.headers.push_back(std::string("x-amz-content-sha256: ") + (body.empty() ? kEmptySha256 : detail::sha256_hex(body)));
    if (!token.empty()) r.headers.push_back("x-amz-security-token: " + token);
    if (!sigv4.empty()) {
      r.aws_sigv4 = sigv4;
      r.username = access_key;
      r.password = secret_key;
    }
    return r;
  }

  detail::HttpRequest put_request(const std::string& full, const Bytes& value) const {
    auto r = make("PUT", object_url(full), value);
    r.headers.push_back("Content-Type: application/octet-stream");
    return r;
  }

  [[noreturn]] void fail(const detail::HttpRequest& req, const detail::HttpResponse& resp) const {
    const auto err = parse_error_body(resp);
    std::string msg = client->failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status);
    if (!resp.reason.empty()) msg += " " + resp.reason;
    if (!err.code.empty()) msg += " (" + err.code + (err.message.empty() ? "" : ": " + err.message) + ")";
    if (err.code == "NoSuchBucket") msg += "; bucket '" + bucket + "' does not exist";
    if (resp.status == 403 && sigv4.empty())
      msg += "; the request was unsigned: no credentials in S3Store::Options or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY";
    else if (resp.status == 403 && (req.method == "GET" || req.method == "HEAD") && req.url.find('?') == std::string::npos)
      msg += "; note that S3 answers 403 rather than 404 for a missing key when the credentials may not list the bucket";
    throw StoreError(msg);
  }

  detail::HttpResponse perform(const detail::HttpRequest& req) const { return client->perform(req); }

  // A whole object with its ETag, or nullopt when it does not exist.
  std::optional<std::pair<Bytes, std::string>> get_with_etag(const std::string& full) const {
    const auto req = make("GET", object_url(full));
    auto resp = perform(req);
    if (resp.status == 404) {
      if (parse_error_body(resp).code == "NoSuchBucket") fail(req, resp);
      return std::nullopt;
    }
    if (resp.status != 200) fail(req, resp);
    const std::string* etag = resp.header("etag");
    return std::make_pair(std::move(resp.body), etag ? *etag : std::string());
  }

  struct Listing {
    std::vector<std::string> keys, prefixes;  // full object names
  };

  Listing list_objects(const std::string& full_prefix, bool delimited) const {
    Listing out;
    std::optional<std::string> continuation;
    for (;;) {
      std::vector<std::pair<std::string, std::string>> params = {
          {"list-type", "2"}, {"prefix", full_prefix}, {"max-keys", std::to_string(page_size)}};
      if (delimited) params.emplace_back("delimiter", "/");
      if (continuation) params.emplace_back("continuation-token", *continuation);
      const auto req = make("GET", base + "?" + detail::canonical_query(std::move(params)));
      const auto resp = perform(req);
      if (resp.status != 200) fail(req, resp);
      bool truncated = false, root_ok = false;
      std::optional<std::string> next;
      try {
        detail::parse_xml(resp.body_text(), [&](const std::vector<std::string>& path, std::string& text) {
          if (path[0] != "ListBucketResult") return;
          root_ok = true;
          if (path.size() == 3 && path[1] == "Contents" && path[2] == "Key") out.keys.push_back(std::move(text));
          else if (path.size() == 3 && path[1] == "CommonPrefixes" && path[2] == "Prefix") out.prefixes.push_back(std::move(text));
          else if (path.size() == 2 && path[1] == "IsTruncated") truncated = text == "true";
          else if (path.size() == 2 && path[1] == "NextContinuationToken") next = std::move(text);
        });
      } catch (const std::runtime_error& e) {
        throw StoreError(client->failure_prefix(req, resp.attempts) + "malformed ListObjectsV2 response: " + e.what());
      }
      if (!root_ok)
        throw StoreError(client->failure_prefix(req, resp.attempts) +
                         "the response is not a ListBucketResult (is the endpoint an S3 server?)");
      if (!truncated) return out;
      if (!next || next->empty())
        throw StoreError(client->failure_prefix(req, resp.attempts) +
                         "IsTruncated is true but there is no NextContinuationToken");
      if (continuation && *next == *continuation)
        throw StoreError(client->failure_prefix(req, resp.attempts) + "the server repeated continuation token '" + *next + "'");
      continuation = std::move(next);
    }
  }

  void delete_one(const std::string& full) const {
    const auto req = make("DELETE", object_url(full));
    const auto resp = perform(req);
    if (resp.status >= 200 && resp.status < 300) return;
    if (resp.status == 404 && parse_error_body(resp).code != "NoSuchBucket") return;
    fail(req, resp);
  }

  // DeleteObjects in batches; keys XML cannot carry, or servers without DeleteObjects, one by one.
  void delete_many(const std::vector<std::string>& keys) {
    std::vector<std::string> batch;
    auto flush = [&] {
      if (batch.empty()) return;
      if (!bulk_delete.load()) {
        for (const auto& k : batch) delete_one(k);
        batch.clear();
        return;
      }
      std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
                         "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>";
      for (const auto& k : batch) body += "<Object><Key>" + detail::xml_escape(k) + "</Key></Object>";
      body += "</Delete>";
      const auto bytes = detail::as_bytes(body);
      auto req = make("POST", base + "?delete=", bytes);
      req.headers.push_back("Content-Type: application/xml");
      req.headers.push_back("Content-MD5: " + detail::base64(detail::md5(bytes)));
      const auto resp = perform(req);
      if (resp.status == 501 || resp.status == 405) {
        bulk_delete = false;
        for (const auto& k : batch) delete_one(k);
        batch.clear();
        return;
      }
      if (resp.status != 200) fail(req, resp);
      struct Failed {
        std::string key, code, message;
      };
      std::vector<Failed> errors;
      Failed cur;
      try {
        // Children of <Error> close before it does: fill `cur`, then keep it.
        detail::parse_xml(resp.body_text(), [&](const std::vector<std::string>& path, std::string& text) {
          if (path.size() == 3 && path[0] == "DeleteResult" && path[1] == "Error") {
            if (path[2] == "Key") cur.key = std::move(text);
            else if (path[2] == "Code") cur.code = std::move(text);
            else if (path[2] == "Message") cur.message = std::move(text);
          } else if (path.size() == 2 && path[0] == "DeleteResult" && path[1] == "Error") {
            errors.push_back(std::move(cur));
            cur = Failed{};
          }
        });
      } catch (const std::runtime_error& e) {
        throw StoreError(client->failure_prefix(req, resp.attempts) + "malformed DeleteObjects response: " + e.what());
      }
      if (!errors.empty()) {
        std::string msg = client->failure_prefix(req, resp.attempts) + std::to_string(errors.size()) + " of " +
                          std::to_string(batch.size()) + " keys could not be deleted:";
        for (std::size_t i = 0; i < errors.size() && i < 5; ++i)
          msg += (i ? ", '" : " '") + errors[i].key + "' (" + errors[i].code +
                 (errors[i].message.empty() ? "" : ": " + errors[i].message) + ")";
        if (errors.size() > 5) msg += ", ...";
        throw StoreError(msg);
      }
      batch.clear();
    };
    for (const auto& k : keys) {
      // XML 1.0 cannot carry most control characters: such keys go one by one.
      const bool xml_safe = std::none_of(k.begin(), k.end(), [](char c) {
        return static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n' && c != '\r';
      });
      if (!xml_safe) {
        delete_one(k);
        continue;
      }
      batch.push_back(k);
      if (batch.size() == kDeleteBatch) flush();
    }
    flush();
  }
};

std::shared_ptr<S3Store> S3Store::open(Options options) { return std::make_shared<S3Store>(std::move(options)); }

S3Store::S3Store(Options options) : options_(std::move(options)), impl_(std::make_unique<Impl>()) {
  // Bucket: S3's rules are stricter (3-63 lower-case characters); S3-compatible servers vary, so
  // only what could break the URL is refused.
  const auto& b = options_.bucket;
  if (b.empty()) throw StoreError("S3Store: no bucket given");
  if (b.size() > 255 || !std::all_of(b.begin(), b.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
               c == '_';
      }))
    throw StoreError("S3Store: invalid bucket name '" + b + "' (letters, digits, '.', '-' and '_' only, at most 255)");

  std::string p = options_.prefix;
  while (!p.empty() && p.front() == '/') p.erase(p.begin());
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (!p.empty()) {
    try {
      validate_key(p);
    } catch (const StoreError& e) {
      throw StoreError("S3Store: invalid prefix '" + options_.prefix + "': " + e.what());
    }
  }
  options_.prefix = p;

  region_ = options_.region ? *options_.region : env("AWS_REGION").value_or(env("AWS_DEFAULT_REGION").value_or("us-east-1"));
  if (region_.empty() || region_.size() > 64 || !std::all_of(region_.begin(), region_.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      }))
    throw StoreError("S3Store: invalid region '" + region_ + "'");

  if (options_.endpoint) endpoint_ = *options_.endpoint;
  else if (auto e = env("AWS_ENDPOINT_URL_S3")) endpoint_ = *e;
  else if (auto e2 = env("AWS_ENDPOINT_URL")) endpoint_ = *e2;
  else endpoint_ = "https://s3." + region_ + ".amazonaws.com";
  if (endpoint_.find_first_of("?#") != std::string::npos)
    throw StoreError("S3Store: endpoint '" + endpoint_ + "' must not have a query or fragment");
  detail::check_http_url(endpoint_, "S3Store: endpoint");
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();

  if (options_.list_page_size < 1 || options_.list_page_size > 1000)
    throw StoreError("S3Store: list_page_size must be 1..1000 (got " + std::to_string(options_.list_page_size) + ")");
  if (options_.lock_ttl < std::chrono::milliseconds(40))
    throw StoreError("S3Store: lock_ttl must be at least 40 ms (got " + std::to_string(options_.lock_ttl.count()) + " ms)");
  if (options_.lock_timeout < std::chrono::milliseconds(0))
    throw StoreError("S3Store: lock_timeout must not be negative");

  auto& im = *impl_;
  if (!options_.anonymous) {
    // Credentials come as a set: the session token from the environment only goes with the
    // environment's access key.
    const bool key_from_env = !options_.access_key_id.has_value();
    const auto ak = options_.access_key_id ? options_.access_key_id : env("AWS_ACCESS_KEY_ID");
    const auto sk = options_.secret_access_key ? options_.secret_access_key : env("AWS_SECRET_ACCESS_KEY");
    if (ak.has_value() != sk.has_value())
      throw StoreError(std::string("S3Store: ") + (ak ? "an access key id" : "a secret access key") + " is set but no " +
                       (ak ? "secret access key (AWS_SECRET_ACCESS_KEY)" : "access key id (AWS_ACCESS_KEY_ID)"));
    if (ak) {
      if (ak->empty() || sk->empty()) throw StoreError("S3Store: empty access key id or secret access key");
      const auto* info = curl_version_info(CURLVERSION_NOW);
      if (info->version_num < 0x074B00)
        throw StoreError(std::string("S3Store: signing needs libcurl 7.75 or newer, this is ") + info->version);
      im.sigv4 = "aws:amz:" + region_ + ":s3";
      im.access_key = *ak;
      im.secret_key = *sk;
      im.token = options_.session_token ? *options_.session_token
                 : key_from_env           ? env("AWS_SESSION_TOKEN").value_or("")
                                          : "";
      if (im.token.find_first_of("\r\n") != std::string::npos)
        throw StoreError("S3Store: the session token contains a line break");
    }
  }
  im.client = std::make_unique<detail::HttpClient>(options_.net, "S3");
  im.bucket = options_.bucket;
  im.base = endpoint_ + "/" + options_.bucket;
  im.root_slash = options_.prefix.empty() ? "" : options_.prefix + "/";
  im.page_size = options_.list_page_size;
}

S3Store::~S3Store() = default;

std::string S3Store::url_of(const std::string& key) const {
  validate_key(key);
  return impl_->object_url(impl_->full_key(key));
}

std::string S3Store::describe() const {
  return "s3://" + options_.bucket + (options_.prefix.empty() ? "" : "/" + options_.prefix) + " (endpoint " + endpoint_ + ")";
}

std::optional<Bytes> S3Store::get(const std::string& key, const ByteRange& range) {
  validate_key(key);
  const auto plan = detail::plan_range(range);
  if (plan.empty) return exists(key) ? std::optional<Bytes>(Bytes{}) : std::nullopt;
  auto req = impl_->make("GET", impl_->object_url(impl_->full_key(key)));
  if (!plan.whole) req.headers.push_back(plan.header);
  auto resp = impl_->perform(req);
  if (resp.status == 404) {
    if (parse_error_body(resp).code == "NoSuchBucket") impl_->fail(req, resp);
    return std::nullopt;
  }
  if ((resp.status >= 200 && resp.status < 300) || (resp.status == 416 && !plan.whole))
    return detail::take_range(resp, range, impl_->client->failure_prefix(req, resp.attempts));
  impl_->fail(req, resp);
}

bool S3Store::exists(const std::string& key) {
  validate_key(key);
  const auto req = impl_->make("HEAD", impl_->object_url(impl_->full_key(key)));
  const auto resp = impl_->perform(req);
  if (resp.status == 200) return true;
  if (resp.status == 404) return false;
  impl_->fail(req, resp);
}

std::optional<std::uint64_t> S3Store::size(const std::string& key) {
  validate_key(key);
  const auto req = impl_->make("HEAD", impl_->object_url(impl_->full_key(key)));
  const auto resp = impl_->perform(req);
  if (resp.status == 404) return std::nullopt;
  if (resp.status != 200) impl_->fail(req, resp);
  if (const auto* cl = resp.header("content-length")) return std::stoull(*cl);
  return Store::size(key);
}

void S3Store::set(const std::string& key, const Bytes& value) {
  validate_key(key);
  const auto req = impl_->put_request(impl_->full_key(key), value);
  const auto resp = impl_->perform(req);
  if (resp.status != 200) impl_->fail(req, resp);
}

void S3Store::erase(const std::string& key) {
  validate_key(key);
  impl_->delete_one(impl_->full_key(key));
}

void S3Store::erase_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  // Every object under the prefix goes, store keys or not ("dir/" markers too).
  impl_->delete_many(impl_->list_objects(impl_->root_slash + prefix, false).keys);
}

std::vector<std::string> S3Store::list_prefix(const std::string& prefix) {
  validate_prefix(prefix);
  const auto& root = impl_->root_slash;
  std::vector<std::string> out;
  for (auto& k : impl_->list_objects(root + prefix, false).keys) {
    if (k.compare(0, root.size(), root) != 0) continue;
    std::string rel = k.substr(root.size());
    if (rel.compare(0, prefix.size(), prefix) == 0 && valid_key(rel)) out.push_back(std::move(rel));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

DirListing S3Store::list_dir(const std::string& prefix_in) {
  validate_prefix(prefix_in);
  std::string prefix = prefix_in;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const std::string full = impl_->root_slash + prefix;
  auto listing = impl_->list_objects(full, true);
  DirListing out;
  for (auto& k : listing.keys) {
    if (k.compare(0, full.size(), full) != 0) continue;
    std::string name = k.substr(full.size());
    if (!name.empty() && name.find('/') == std::string::npos && valid_key(prefix + name)) out.keys.push_back(std::move(name));
  }
  for (auto& cp : listing.prefixes) {
    if (cp.compare(0, full.size(), full) != 0 || cp.size() <= full.size() + 1 || cp.back() != '/') continue;
    std::string name = cp.substr(full.size(), cp.size() - full.size() - 1);
    if (valid_key(prefix + name)) out.prefixes.push_back(std::move(name));
  }
  std::sort(out.keys.begin(), out.keys.end());
  std::sort(out.prefixes.begin(), out.prefixes.end());
  return out;
}

// ---- Leases -------------------------------------------------------------------------------------

class S3Store::Lease : public StoreLock {
 public:
  using Clock = std::chrono::steady_clock;

  Lease(S3Store& store, std::string full, std::string what) : store_(store), im_(*store.impl_), full_(std::move(full)), what_(std::move(what)) {
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) != 0) host[0] = 0;
    owner_ = random_hex(16);
    about_ = std::string(host) + " pid " + std::to_string(::getpid());
    ttl_ = store.options_.lock_ttl;
  }

  ~Lease() override {
    {
      std::lock_guard lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    if (heartbeat_.joinable()) heartbeat_.join();
    if (lost_) return;
    try {
      // Delete only our own lease (checked by ETag; the If-Match is honoured by servers that can).
      const auto cur = im_.get_with_etag(full_);
      if (!cur || cur->second != etag_) return;
      auto req = im_.make("DELETE", im_.object_url(full_));
      req.headers.push_back("If-Match: " + etag_);
      const auto resp = im_.perform(req);
      (void)resp;  // 2xx, 404 or 412: in every case the lease is no longer ours
    } catch (const StoreError&) {
      // Unreachable server: the lease expires by itself after lock_ttl.
    }
  }

  void acquire() {
    const auto deadline = Clock::now() + store_.options_.lock_timeout;
    std::string seen_etag, seen_text;
    Clock::time_point seen_since{};
    std::chrono::milliseconds seen_ttl = ttl_;
    auto backoff = std::chrono::milliseconds(10);
    thread_local std::mt19937 jitter{std::random_device{}()};
    for (;;) {
      if (try_put(seen_etag.empty() ? std::nullopt : std::optional<std::string>{})) break;
      const auto cur = im_.get_with_etag(full_);
      if (cur) {
        if (cur->second.empty())
          throw StoreError("S3 GET " + im_.object_url(full_) + ": the response has no ETag, so the lease cannot be checked");
        if (cur->second != seen_etag) {  // a new holder, or the holder renewed
          seen_etag = cur->second;
          seen_text = std::string(cur->first.begin(), cur->first.end());
          seen_since = Clock::now();
          seen_ttl = ttl_of(seen_text);
        } else if (Clock::now() - seen_since > seen_ttl) {
          // Not renewed within its lease: the holder is gone. Take over (only one waiter can).
          if (try_put(seen_etag)) break;
        }
      }
      if (Clock::now() > deadline)
        throw ConflictError("S3 store " + store_.describe() + ": could not lock " + what_ + " within " +
                            std::to_string(store_.options_.lock_timeout.count()) + " ms; it is held by " +
                            (seen_text.empty() ? std::string("another process") : seen_text));
      std::uniform_int_distribution<int> d(0, static_cast<int>(backoff.count()));
      std::this_thread::sleep_for(backoff / 2 + std::chrono::milliseconds(d(jitter) / 2));
      backoff = std::min(backoff * 2, std::min(std::chrono::milliseconds(500), std::max(seen_ttl / 4, std::chrono::milliseconds(10))));
    }
    renewed_ = Clock::now();
    heartbeat_ = std::thread([this] { heartbeat(); });
  }

  void check() const override {
    if (lost_)
      throw ConflictError("S3 store " + store_.describe() + ": the lock on " + what_ + " was lost (" + lost_why_ +
                          "); nothing more is changed under it");
    if (Clock::now() - renewed_.load() > ttl_)
      throw ConflictError("S3 store " + store_.describe() + ": the lock on " + what_ + " was not renewed within " +
                          std::to_string(ttl_.count()) + " ms and may have been taken over; nothing more is changed under it");
  }

 private:
  std::string body() const {
    return "{\"zarrpp_lock\": \"" + what_ + "\", \"owner\": \"" + owner_ + "\", \"holder\": \"" + about_ +
           "\", \"ttl_ms\": " + std::to_string(ttl_.count()) + ", \"renewal\": " + std::to_string(renewals_) + "}";
  }

  // The ttl a lease object states (a waiter honours the holder's ttl); ours when unreadable.
  std::chrono::milliseconds ttl_of(const std::string& text) const {
    const auto p = text.find("\"ttl_ms\": ");
    if (p == std::string::npos) return ttl_;
    try {
      const long long v = std::stoll(text.substr(p + 10));
      if (v >= 40 && v <= 24LL * 3600 * 1000) return std::chrono::milliseconds(v);
    } catch (const std::exception&) {
    }
    return ttl_;
  }

  // PUT our lease: create it (no `match`) or replace the object with ETag *match. True when ours.
  bool try_put(const std::optional<std::string>& match) {
    const std::string text = body();
    const Bytes value(text.begin(), text.end());
    auto req = im_.put_request(full_, value);
    req.headers.push_back(match ? "If-Match: " + *match : std::string("If-None-Match: *"));
    req.extra_retry_statuses = {409};
    const auto resp = im_.perform(req);
    if (resp.status == 200) {
      const std::string* e = resp.header("etag");
      if (e && !e->empty()) {
        etag_ = *e;
        return true;
      }
      const auto cur = im_.get_with_etag(full_);
      if (cur && cur->first == value && !cur->second.empty()) {
        etag_ = cur->second;
        return true;
      }
      throw StoreError("S3 PUT " + im_.object_url(full_) + ": the response has no ETag, so the lease cannot be held");
    }
    if (resp.status == 412 || resp.status == 409 || (match && resp.status == 404)) {
      if (resp.ambiguous) {  // an earlier attempt may have succeeded before its answer was lost
        const auto cur = im_.get_with_etag(full_);
        if (cur && cur->first == value) {
          etag_ = cur->second;
          return true;
        }
      }
      return false;
    }
    im_.fail(req, resp);
  }

  void heartbeat() {
    const auto period = std::max(ttl_ / 4, std::chrono::milliseconds(10));
    std::unique_lock lk(mu_);
    while (!stop_) {
      cv_.wait_for(lk, period, [&] { return stop_; });
      if (stop_) return;
      lk.unlock();
      try {
        ++renewals_;
        if (try_put(etag_)) {
          renewed_ = Clock::now();
        } else {
          lost_why_ = "another process took it over after it was not renewed for " + std::to_string(ttl_.count()) + " ms";
          lost_ = true;
          return;
        }
      } catch (const std::exception& e) {
        // Keep trying until the lease runs out; check() reports an expired lease.
        if (Clock::now() - renewed_.load() > ttl_) {
          lost_why_ = std::string("renewing it failed: ") + e.what();
          lost_ = true;
          return;
        }
      }
      lk.lock();
    }
  }

  S3Store& store_;
  Impl& im_;
  std::string full_, what_, owner_, about_;
  std::chrono::milliseconds ttl_{};
  std::string etag_;  // of our current lease object; written before the heartbeat starts, then only by it
  std::uint64_t renewals_ = 0;
  std::atomic<Clock::time_point> renewed_{};
  std::atomic<bool> lost_{false};
  std::string lost_why_;  // written before lost_ is set
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread heartbeat_;
};

std::unique_ptr<StoreLock> S3Store::lock(const std::string& key) {
  validate_key(key);
  const auto c = conditional();
  if (!c.create_only || !c.replace) return nullptr;
  const auto slash = key.rfind('/');
  const std::string dir = slash == std::string::npos ? "" : key.substr(0, slash + 1);
  const std::string name = slash == std::string::npos ? key : key.substr(slash + 1);
  auto lease = std::make_unique<Lease>(*this, impl_->full_key(dir + ".zarrpp-lock." + name), "'" + key + "'");
  lease->acquire();
  return lease;
}

bool S3Store::supports_conditional_writes() {
  const auto c = conditional();
  return c.create_only && c.replace;
}

S3Store::Conditional S3Store::conditional() {
  switch (options_.conditional_writes) {
    case ConditionalWrites::On: return {true, true};
    case ConditionalWrites::Off: return {false, false};
    case ConditionalWrites::Auto: break;
  }
  std::lock_guard lk(probe_mu_);
  if (conditional_) return *conditional_;
  auto& im = *impl_;
  const std::string probe = im.root_slash + ".zarrpp-probe-" + random_hex(16);
  const std::string text = "zarrpp conditional-write probe";
  const Bytes body(text.begin(), text.end());
  struct Cleanup {
    Impl& im;
    const std::string& key;
    bool armed = false;
    ~Cleanup() {
      if (!armed) return;
      try {
        im.delete_one(key);
      } catch (const StoreError&) {
        // Best effort: a leftover probe object is invisible to the store (reserved name).
      }
    }
  } cleanup{im, probe};
  auto put = [&](const std::string& condition) {
    auto req = im.put_request(probe, body);
    req.headers.push_back(condition);
    auto resp = im.perform(req);
    return std::make_pair(std::move(req), std::move(resp));
  };
  // A server that rejects the header outright (400, 501) does not support it either.
  auto unsupported = [](long s) { return s == 400 || s == 501; };
  Conditional c;
  auto [req1, first] = put("If-None-Match: *");
  if (unsupported(first.status)) {
    conditional_ = c;
    return c;
  }
  if (first.status != 200 && first.status != 412) im.fail(req1, first);
  cleanup.armed = true;
  auto [req2, second] = put("If-None-Match: *");
  if (second.status == 412) c.create_only = true;
  else if (second.status != 200 && !unsupported(second.status)) im.fail(req2, second);
  auto [req3, third] = put("If-Match: \"00000000000000000000000000000000\"");
  if (third.status == 412) c.replace = true;
  else if (third.status != 200 && !unsupported(third.status)) im.fail(req3, third);
  conditional_ = c;
  return c;
}

bool S3Store::compare_and_set(const std::string& key, const std::optional<Bytes>& expected, const Bytes& value) {
  validate_key(key);
  const auto c = conditional();
  const bool ok = expected ? c.replace : c.create_only;
  if (!ok)
    throw ConflictError("S3 store " + describe() + " does not support conditional writes (" +
                        (expected ? "If-Match" : "If-None-Match: *") + " on PUT " +
                        (options_.conditional_writes == ConditionalWrites::Off ? "is switched off by conditional_writes = Off"
                                                                               : "was ignored or refused by the server") +
                        "), so compare_and_set on '" + key + "' cannot be atomic");
  auto& im = *impl_;
  const std::string full = im.full_key(key);
  auto req = im.put_request(full, value);
  if (expected) {
    const auto cur = im.get_with_etag(full);
    if (!cur || cur->first != *expected) return false;
    if (cur->second.empty())
      throw StoreError("S3 GET " + im.object_url(full) + ": the response has no ETag, so compare_and_set cannot be conditional");
    req.headers.push_back("If-Match: " + cur->second);
  } else {
    req.headers.push_back("If-None-Match: *");
  }
  req.extra_retry_statuses = {409};  // ConditionalRequestConflict: a concurrent conditional write; retry
  const auto resp = im.perform(req);
  if (resp.status == 200) return true;
  if (resp.status == 412 || resp.status == 409 || (expected && resp.status == 404)) {
    // An earlier attempt may have succeeded before its answer was lost: then the value is ours.
    if (resp.ambiguous) {
      const auto now = im.get_with_etag(full);
      return now && now->first == value;
    }
    return false;
  }
  im.fail(req, resp);
}

}  // namespace zarrpp
