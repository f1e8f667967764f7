#include "zarrpp/store/s3_store.hpp"

#include <curl/curl.h>

#include <chrono>
#include <cstdlib>

#include "../../core/retry.hpp"
#include "byte_ranges.hpp"
#include "s3_impl.hpp"

namespace zarrpp {

namespace {

std::optional<std::string> env(const char* name) { return detail::env_value(name); }

}  // namespace

std::shared_ptr<S3Store> S3Store::open(Options options) { return std::make_shared<S3Store>(std::move(options)); }

S3Store::S3Store(Options options)
    : options_(std::move(options)),
      impl_(std::make_unique<Impl>()),
      probe_(std::make_unique<detail::ConditionalProbe>()) {
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
  if (!options_.display_name.empty()) return options_.display_name;
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
  detail::put_plain(*impl_, impl_->full_key(key), value, key, describe());
}

void S3Store::do_erase(const std::string& key) { impl_->delete_one(impl_->full_key(key)); }

void S3Store::do_erase_prefix(const std::string& prefix) {
  // Every object under the prefix goes, store keys or not ("dir/" markers too).
  impl_->delete_many(impl_->list_objects(impl_->root_slash + prefix, false).keys);
}

std::vector<std::string> S3Store::do_list_prefix(const std::string& prefix) {
  return detail::keys_under(impl_->list_objects(impl_->root_slash + prefix, false).keys, impl_->root_slash, prefix);
}

DirListing S3Store::do_list_dir(const std::string& prefix_in) {
  std::string prefix = prefix_in;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const std::string full = impl_->root_slash + prefix;
  auto listing = impl_->list_objects(full, true);
  return detail::dir_of(listing.keys, listing.prefixes, full, prefix);
}

std::unique_ptr<StoreLock> S3Store::do_lock(const std::string& key) {
  if (!confirm_capabilities().locking)
    throw ConflictError("S3 store " + describe() + " cannot lock '" + key + "': " +
                        (options_.conditional_writes_off_reason.empty()
                             ? std::string("the server ignored or refused conditional PUTs, which the lease is made of")
                             : options_.conditional_writes_off_reason));
  return detail::take_lease(*impl_, impl_->full_key(detail::lease_key(key)), "'" + key + "'",
                            {.store = describe(),
                             .ttl = options_.lock_ttl,
                             .timeout = options_.lock_timeout,
                             .conditional_erase = conditional().erase});
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

detail::ConditionalSupport S3Store::conditional() {
  if (options_.read_only) return {};  // a read-only store writes nothing, not even a probe
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
  return probe_->get(*impl_, impl_->root_slash + ".zarrpp-probe-");
}

StoreCapabilities S3Store::capabilities() const {
  // Never a request here: in Auto mode the server is assumed to honour conditional writes, and
  // the first conditional write or lock finds out (and refuses clearly when it does not).
  const bool cond = options_.conditional_writes != ConditionalWrites::Off && !options_.read_only;
  return {.writable = !options_.read_only,
          .listing = true,
          .conditional_writes = cond,
          .conditional_erase = options_.conditional_writes == ConditionalWrites::Auto,
          .locking = cond,
          .native_streaming = false,
          .uncertain_writes = true,
          .reads_in_flight = options_.net.max_in_flight};
}

std::string S3Store::off_why() const {
  if (options_.conditional_writes != ConditionalWrites::Off) return "was ignored or refused by the server";
  if (!options_.conditional_writes_off_reason.empty()) return "is not used: " + options_.conditional_writes_off_reason;
  return "is switched off by conditional_writes = Off";
}

bool S3Store::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  const auto c = conditional();
  const bool ok = expected ? c.replace : c.create_only;
  if (!ok)
    throw ConflictError("S3 store " + describe() + " does not support conditional writes (" +
                        (expected ? "If-Match" : "If-None-Match: *") + " on PUT " + off_why() +
                        "), so a conditional write of '" + key + "' cannot be atomic");
  return detail::put_if(*impl_, impl_->full_key(key), value, expected, key, describe());
}

bool S3Store::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  if (!expected) return !do_size(key).has_value();  // "only if it does not exist": nothing to erase
  const auto c = conditional();
  if (!c.erase)
    throw ConflictError("S3 store " + describe() + " does not support conditional deletes (If-Match on DELETE " +
                        off_why() + "), so erasing '" + key + "' only if it is what was read cannot be atomic");
  return detail::delete_if(*impl_, impl_->full_key(key), *expected, key, describe(),
                           [&] { return do_size(key).has_value(); });
}

}  // namespace zarrpp
