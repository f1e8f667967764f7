#include "zarrpp/store/s3_store.hpp"

#include <curl/curl.h>

#include <chrono>
#include <cstdlib>

#include "../../core/retry.hpp"
#include "byte_ranges.hpp"
#include "s3_impl.hpp"

namespace zarrpp {

namespace {

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

}  // namespace

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

  region_ =
      options_.region ? *options_.region : env("AWS_REGION").value_or(env("AWS_DEFAULT_REGION").value_or("us-east-1"));
  if (region_.empty() || region_.size() > 64 || !std::all_of(region_.begin(), region_.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
      }))
    throw StoreError("S3Store: invalid region '" + region_ + "'");

  if (options_.endpoint)
    endpoint_ = *options_.endpoint;
  else if (auto e = env("AWS_ENDPOINT_URL_S3"))
    endpoint_ = *e;
  else if (auto e2 = env("AWS_ENDPOINT_URL"))
    endpoint_ = *e2;
  else
    endpoint_ = "https://s3." + region_ + ".amazonaws.com";
  if (endpoint_.find_first_of("?#") != std::string::npos)
    throw StoreError("S3Store: endpoint '" + endpoint_ + "' must not have a query or fragment");
  detail::check_http_url(endpoint_, "S3Store: endpoint");
  while (!endpoint_.empty() && endpoint_.back() == '/') endpoint_.pop_back();

  if (options_.list_page_size < 1 || options_.list_page_size > 1000)
    throw StoreError("S3Store: list_page_size must be 1..1000 (got " + std::to_string(options_.list_page_size) + ")");
  if (options_.lock_ttl < std::chrono::milliseconds(40))
    throw StoreError("S3Store: lock_ttl must be at least 40 ms (got " + std::to_string(options_.lock_ttl.count()) +
                     " ms)");
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
      throw StoreError(std::string("S3Store: ") + (ak ? "an access key id" : "a secret access key") +
                       " is set but no " +
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
                 : key_from_env         ? env("AWS_SESSION_TOKEN").value_or("")
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
  return "s3://" + options_.bucket + (options_.prefix.empty() ? "" : "/" + options_.prefix) + " (endpoint " +
         endpoint_ + ")";
}

std::optional<VersionedBytes> S3Store::read_response(const std::string& key, const ByteRange& range,
                                                     const detail::HttpRequest& req, detail::HttpResponse&& resp) {
  const bool whole = detail::plan_range(range).whole;
  if (resp.status == 404) {
    if (detail::parse_s3_error(resp.body_text()).code == "NoSuchBucket") impl_->fail(req, resp);
    return std::nullopt;
  }
  const std::string* etag = resp.header("etag");
  VersionedBytes out{Bytes(), etag ? *etag : std::string()};
  if (resp.status == 416 && !whole) {
    // Believed only for a range the object cannot hold: its size from a HEAD (not from the 416
    // itself, which a stale cache or proxy would vouch for).
    const auto size = do_size(key);
    if (!size) return std::nullopt;
    detail::check_unsatisfiable(range, *size, impl_->client->failure_prefix(req, resp.attempts));
    return out;
  }
  if (resp.status < 200 || resp.status >= 300) impl_->fail(req, resp);
  if (whole) impl_->reads.record(key, req, resp);
  out.value_size = detail::value_size_of(resp);
  out.bytes = detail::take_range(resp, range, impl_->client->failure_prefix(req, resp.attempts));
  return out;
}

std::optional<VersionedBytes> S3Store::do_get(const std::string& key, const ByteRange& range, std::uint64_t max_bytes) {
  const auto plan = detail::plan_range(range);
  if (plan.empty) return do_size(key) ? std::optional<VersionedBytes>(VersionedBytes{}) : std::nullopt;
  auto req = impl_->make("GET", impl_->object_url(impl_->full_key(key)));
  req.max_body = detail::body_cap(range, max_bytes);
  if (!plan.whole) req.headers.push_back(plan.header);
  return read_response(key, range, req, impl_->perform(req));
}

std::unique_ptr<PendingGet> S3Store::do_start_get(const std::string& key, std::uint64_t max_bytes) {
  auto req = impl_->make("GET", impl_->object_url(impl_->full_key(key)));
  req.max_body = detail::body_cap(ByteRange::all(), max_bytes);
  auto response = impl_->client->start(req);
  return std::make_unique<detail::PendingHttpGet>(std::move(response),
                                                  [this, key, req = std::move(req)](detail::HttpResponse&& r) {
                                                    return read_response(key, ByteRange::all(), req, std::move(r));
                                                  });
}

std::string S3Store::do_explain_unreadable(const std::string& key) { return impl_->reads.explain(key, do_size(key)); }

std::optional<std::uint64_t> S3Store::do_size(const std::string& key) {
  const auto req = impl_->make("HEAD", impl_->object_url(impl_->full_key(key)));
  const auto resp = impl_->perform(req);
  if (resp.status == 404) return std::nullopt;
  if (resp.status != 200) impl_->fail(req, resp);
  if (const auto* cl = resp.header("content-length")) {
    if (const auto n = detail::parse_content_length(*cl)) return n;
    throw StoreError(impl_->client->failure_prefix(req, resp.attempts) + "unreadable Content-Length '" + *cl + "'");
  }
  return Store::do_size(key);
}

void S3Store::do_set(const std::string& key, const Bytes& value) {
  const auto req = impl_->put_request(impl_->full_key(key), value);
  const auto resp = impl_->perform(req);
  if (resp.status != 200) impl_->fail(req, resp);
}

void S3Store::do_erase(const std::string& key) { impl_->delete_one(impl_->full_key(key)); }

void S3Store::do_erase_prefix(const std::string& prefix) {
  // Every object under the prefix goes, store keys or not ("dir/" markers too).
  impl_->delete_many(impl_->list_objects(impl_->root_slash + prefix, false).keys);
}

std::vector<std::string> S3Store::do_list_prefix(const std::string& prefix) {
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

DirListing S3Store::do_list_dir(const std::string& prefix_in) {
  std::string prefix = prefix_in;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const std::string full = impl_->root_slash + prefix;
  auto listing = impl_->list_objects(full, true);
  DirListing out;
  for (auto& k : listing.keys) {
    if (k.compare(0, full.size(), full) != 0) continue;
    std::string name = k.substr(full.size());
    if (!name.empty() && name.find('/') == std::string::npos && valid_key(prefix + name))
      out.keys.push_back(std::move(name));
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

std::unique_ptr<StoreLock> S3Store::do_lock(const std::string& key) {
  if (!confirm_capabilities().locking)
    throw ConflictError("S3 store " + describe() + " cannot lock '" + key +
                        "': the server ignored or refused conditional PUTs, which the lease is made of");
  return make_lease(key);
}

StoreCapabilities S3Store::confirm_capabilities() {
  const auto c = conditional();
  const bool cond = c.create_only && c.replace;
  return {.writable = !options_.read_only,
          .listing = true,
          .conditional_writes = cond,
          .conditional_erase = cond && c.erase,
          .locking = cond,
          .native_streaming = false,
          .uncertain_writes = true,
          .reads_in_flight = options_.net.max_in_flight};
}

S3Store::Conditional S3Store::conditional() {
  switch (options_.conditional_writes) {
    // Asserting conditional writes says nothing of conditional deletes: without a probe, a chunk
    // that became empty is overwritten with the fill value conditionally instead of erased.
    case ConditionalWrites::On:
      return {true, true, false};
    case ConditionalWrites::Off:
      return {false, false, false};
    case ConditionalWrites::Auto:
      break;
  }
  using Clock = std::chrono::steady_clock;
  // One refusal may be a glitch (a proxy, a node being replaced): a server is taken not to
  // support conditional writes only when every probe of a round says so, and that finding is
  // asked again after kReprobeAfter, so a long-lived process recovers. Support, once seen, stays.
  constexpr int kRounds = 3;
  constexpr auto kReprobeAfter = std::chrono::minutes(5);
  auto complete = [](const Conditional& x) { return x.create_only && x.replace && x.erase; };
  std::lock_guard lk(probe_mu_);
  if (conditional_ && (complete(*conditional_) || Clock::now() - probed_at_ < kReprobeAfter)) return *conditional_;
  Conditional c = conditional_.value_or(Conditional{});
  detail::Retry retry({.initial_delay = std::chrono::milliseconds(200),
                       .max_delay = std::chrono::seconds(1),
                       .deadline = std::chrono::milliseconds(0),
                       .max_attempts = kRounds});
  do {
    const Conditional r = probe_conditional();
    c = {c.create_only || r.create_only, c.replace || r.replace, c.erase || r.erase};
  } while (!complete(c) && retry.next());
  conditional_ = c;
  probed_at_ = Clock::now();
  return c;
}

// PUTs a probe object twice with If-None-Match: * and once with a wrong If-Match (then DELETEs
// it with a wrong If-Match); what the server answers says what it honours. Throws StoreError when
// the server fails otherwise (nothing is concluded then).
S3Store::Conditional S3Store::probe_conditional() {
  auto& im = *impl_;
  const std::string probe = im.root_slash + ".zarrpp-probe-" + detail::random_hex(16);
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
  cleanup.armed = true;  // even a refused or failed PUT may have created the object
  auto [req1, first] = put("If-None-Match: *");
  if (unsupported(first.status)) return c;
  if (first.status != 200 && first.status != 412) im.fail(req1, first);
  auto [req2, second] = put("If-None-Match: *");
  if (second.status == 412)
    c.create_only = true;
  else if (second.status != 200 && !unsupported(second.status))
    im.fail(req2, second);
  auto [req3, third] = put("If-Match: \"00000000000000000000000000000000\"");
  if (third.status == 412)
    c.replace = true;
  else if (third.status != 200 && !unsupported(third.status))
    im.fail(req3, third);
  // DELETE with a wrong If-Match: 412 when honoured; a server that ignores it deletes the probe.
  // (Asked only of servers with conditional writes: without them nothing is erased conditionally.)
  if (!(c.create_only && c.replace)) return c;
  auto del = im.make("DELETE", im.object_url(probe));
  del.headers.push_back("If-Match: \"00000000000000000000000000000000\"");
  const auto fourth = im.perform(del);
  if (fourth.status == 412)
    c.erase = true;
  else if (!(fourth.status >= 200 && fourth.status < 300) && fourth.status != 404 && !unsupported(fourth.status))
    im.fail(del, fourth);
  return c;
}

StoreCapabilities S3Store::capabilities() const {
  // Never a request here: in Auto mode the server is assumed to honour conditional writes, and
  // the first conditional write or lock finds out (and refuses clearly when it does not).
  const bool cond = options_.conditional_writes != ConditionalWrites::Off;
  return {.writable = !options_.read_only,
          .listing = true,
          .conditional_writes = cond,
          .conditional_erase = options_.conditional_writes == ConditionalWrites::Auto,
          .locking = cond,
          .native_streaming = false,
          .uncertain_writes = true,
          .reads_in_flight = options_.net.max_in_flight};
}

bool S3Store::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  const auto c = conditional();
  const bool ok = expected ? c.replace : c.create_only;
  if (!ok)
    throw ConflictError("S3 store " + describe() + " does not support conditional writes (" +
                        (expected ? "If-Match" : "If-None-Match: *") + " on PUT " +
                        (options_.conditional_writes == ConditionalWrites::Off
                             ? "is switched off by conditional_writes = Off"
                             : "was ignored or refused by the server") +
                        "), so a conditional write of '" + key + "' cannot be atomic");
  auto& im = *impl_;
  const std::string full = im.full_key(key);
  auto req = im.put_request(full, value);
  if (expected) {
    if (expected->empty())
      throw StoreError("S3 store " + describe() + ": '" + key +
                       "' was read without an ETag, so a write conditioned on it cannot be made");
    req.headers.push_back("If-Match: " + *expected);
  } else {
    req.headers.push_back("If-None-Match: *");
  }
  req.extra_retry_statuses = {409};  // ConditionalRequestConflict: a concurrent conditional write; retry
  // When the request may have been carried out without this writer seeing the answer (a lost
  // reply, a re-send, a 5xx), what is stored now decides: the write took effect when it holds our
  // bytes. When it does not, the write may still be carried out later (a request the server holds):
  // that is said (UncertainWriteError), never taken as "not written".
  auto stored_is_ours = [&](const std::string& why) {
    try {
      const auto now = im.get_with_etag(full);
      return now && now->first == value;
    } catch (const StoreError& e) {
      throw UncertainWriteError("S3 store " + describe() + ": whether the conditional write of '" + key +
                                "' took effect is unknown (" + why + "; reading it back failed: " + e.what() + ")");
    }
  };
  auto uncertain = [&](const std::string& why) {
    return UncertainWriteError(why + "; '" + key +
                               "' does not hold this write now, but the request reached the server and may still "
                               "take effect");
  };
  detail::HttpResponse resp;
  try {
    resp = im.perform(req);
  } catch (const detail::HttpFailure& e) {
    if (!e.maybe_applied()) throw;
    if (stored_is_ours(e.what())) return true;
    throw uncertain(e.what());
  }
  if (resp.status == 200) return true;
  if (resp.status == 412 || resp.status == 409 || (expected && resp.status == 404)) {
    // An earlier copy may have succeeded before its answer was lost: then the value is ours. (If
    // another writer replaced it since, false is still right for this call: the condition no
    // longer holds, so no copy of it can take effect any more; a relative change must recognise
    // its own result, as growth does.)
    if (resp.ambiguous)
      return stored_is_ours("the answer was HTTP " + std::to_string(resp.status) +
                            " to a request that may have been sent twice");
    return false;
  }
  if (resp.ambiguous && resp.status >= 500) {
    const std::string why = im.client->failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status);
    if (stored_is_ours(why)) return true;
    throw uncertain(why);
  }
  im.fail(req, resp);
}

bool S3Store::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  auto& im = *impl_;
  const std::string full = im.full_key(key);
  if (!expected) return !do_size(key).has_value();  // "only if it does not exist": nothing to erase
  const auto c = conditional();
  if (!c.erase)
    throw ConflictError("S3 store " + describe() + " does not support conditional deletes (If-Match on DELETE " +
                        (options_.conditional_writes == ConditionalWrites::Off
                             ? "is switched off by conditional_writes = Off"
                             : "was ignored or refused by the server") +
                        "), so erasing '" + key + "' only if it is what was read cannot be atomic");
  if (expected->empty())
    throw StoreError("S3 store " + describe() + ": '" + key +
                     "' was read without an ETag, so a delete conditioned on it cannot be made");
  auto req = im.make("DELETE", im.object_url(full));
  req.headers.push_back("If-Match: " + *expected);
  req.extra_retry_statuses = {409};
  detail::HttpResponse resp;
  try {
    resp = im.perform(req);
  } catch (const detail::HttpFailure& e) {
    // The DELETE may have been carried out before the failure: gone now means gone as asked.
    if (!e.maybe_applied()) throw;
    if (!do_size(key).has_value()) return true;
    throw UncertainWriteError(std::string(e.what()) + "; '" + key +
                              "' is still there, but the request reached the server and may still take effect");
  }
  if (resp.status >= 200 && resp.status < 300) return true;
  if (resp.status == 412 || resp.status == 409 || resp.status == 404) {
    // An earlier copy may have deleted it before its answer was lost (a server may then answer
    // 412 as well as 404): gone now means gone as asked.
    if (resp.ambiguous) return !do_size(key).has_value();
    return false;
  }
  if (resp.ambiguous && resp.status >= 500 && !do_size(key).has_value()) return true;
  im.fail(req, resp);
}

}  // namespace zarrpp
