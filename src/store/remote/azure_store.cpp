#include "zarrpp/store/azure_store.hpp"

#include <algorithm>
#include <cstdlib>

#include "azure_auth.hpp"
#include "byte_ranges.hpp"
#include "encoding.hpp"
#include "object_service.hpp"
#include "s3_responses.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

namespace {

std::optional<std::string> env(const char* name) { return detail::env_value(name); }

// Azure's rule: 3-63 lower-case letters, digits and single hyphens, starting with a letter or digit.
void check_container(const std::string& c) {
  const bool ok = c.size() >= 3 && c.size() <= 63 && c.front() != '-' && c.back() != '-' &&
                  c.find("--") == std::string::npos && std::all_of(c.begin(), c.end(), [](char ch) {
                    return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-';
                  });
  if (!ok && c != "$root" && c != "$web")
    throw StoreError("AzureStore: invalid container name '" + c +
                     "' (3-63 lower-case letters, digits and single hyphens)");
}

// Azurite answers a range that starts at the blob's end with 206 and "bytes N-(N-1)/N" (where Azure
// answers 416): the range holds no bytes. The blob's size N when `resp` is that answer.
std::optional<std::uint64_t> empty_range_at_end(const detail::HttpResponse& resp, const ByteRange& range) {
  const std::string* cr = resp.header("content-range");
  if (resp.status != 206 || !cr || range.kind != ByteRange::Kind::FromOffset || range.offset == 0) return std::nullopt;
  const std::string want = "bytes " + std::to_string(range.offset) + "-" + std::to_string(range.offset - 1) + "/" +
                           std::to_string(range.offset);
  if (*cr != want || !resp.body.empty()) return std::nullopt;
  return range.offset;
}

}  // namespace

struct AzureStore::Impl final : detail::ObjectService {
  std::unique_ptr<detail::HttpClient> client;
  detail::AzureAccess access;
  std::string container;
  std::string base;        // endpoint/container
  std::string root_slash;  // "" or "prefix/"
  int page_size = 5000;
  detail::ReadLog reads;

  std::string full_key(const std::string& key) const { return root_slash + key; }
  std::string object_url(const std::string& full) const { return base + "/" + detail::percent_encode(full, true); }
  // The URL with the SAS token, when there is one.
  std::string with_sas(std::string url) const {
    if (access.sas.empty()) return url;
    return url + (url.find('?') == std::string::npos ? "?" : "&") + access.sas;
  }

  detail::HttpRequest make(const char* method, const std::string& url, std::span<const std::uint8_t> body,
                           std::vector<std::string> headers) const {
    detail::HttpRequest r;
    r.method = method;
    r.url = with_sas(url);
    r.body = body;
    r.headers = std::move(headers);
    detail::azure_sign(r, access);
    return r;
  }

  detail::HttpRequest object_request(const char* method, const std::string& full, std::span<const std::uint8_t> body,
                                     std::vector<std::string> headers) const override {
    if (std::string_view(method) == "PUT") {
      headers.emplace_back("x-ms-blob-type: BlockBlob");
      headers.emplace_back("Content-Type: application/octet-stream");
    }
    return make(method, object_url(full), body, std::move(headers));
  }

  detail::HttpResponse perform(const detail::HttpRequest& req) const override { return client->perform(req); }

  std::optional<std::pair<Bytes, std::string>> get_with_etag(const std::string& full) const override {
    const auto req = object_request("GET", full, {}, {});
    auto resp = perform(req);
    if (resp.status == 404) {
      if (error_code(resp) == "ContainerNotFound") fail(req, resp);
      return std::nullopt;
    }
    if (resp.status != 200) fail(req, resp);
    const std::string* etag = resp.header("etag");
    return std::make_pair(std::move(resp.body), etag ? *etag : std::string());
  }

  // 412 ConditionNotMet; 409 BlobAlreadyExists (Azurite's answer to If-None-Match: * on a blob that
  // exists); 404 for a replace.
  bool condition_failed(const detail::HttpResponse& resp, bool replacing) const override {
    if (resp.status == 412) {
      // Not a lease another tool holds (LeaseIdMissing, ...): that is no answer to our condition.
      const std::string code = error_code(resp);
      return code.empty() || code == "ConditionNotMet";
    }
    if (resp.status == 409) return error_code(resp) == "BlobAlreadyExists";
    return replacing && resp.status == 404 && error_code(resp) != "ContainerNotFound";
  }
  std::vector<long> conditional_retry_statuses() const override { return {}; }
  std::string failure_prefix(const detail::HttpRequest& req, int attempts) const override {
    return client->failure_prefix(req, attempts);
  }
  std::string label() const override { return "Azure"; }

  // The service's error code: the x-ms-error-code header (HEAD answers have no body), else the body's.
  static std::string error_code(const detail::HttpResponse& resp) {
    if (const auto* h = resp.header("x-ms-error-code")) return *h;
    return detail::parse_s3_error(resp.body_text()).code;
  }

  [[noreturn]] void fail(const detail::HttpRequest& req, const detail::HttpResponse& resp) const override {
    const auto err = detail::parse_s3_error(resp.body_text());
    const std::string code = error_code(resp);
    std::string msg = client->failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status);
    if (!resp.reason.empty()) msg += " " + resp.reason;
    if (!code.empty()) msg += " (" + code + (err.message.empty() ? "" : ": " + first_line(err.message)) + ")";
    if (code == "ContainerNotFound") msg += "; container '" + container + "' does not exist";
    if (code == "AuthenticationFailed" || code == "AuthorizationFailure" || resp.status == 403)
      msg += access.key.empty() && access.sas.empty()
                 ? "; the request was anonymous: give an account key, a SAS token or a connection string"
             : access.key.empty() ? "; check the SAS token (its expiry, permissions and resource)"
                                  : "; check the account name and key";
    throw StoreError(msg);
  }

  static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

  detail::S3ListPage list_page(const std::string& full_prefix, bool delimited,
                               const std::optional<std::string>& marker) const {
    std::vector<std::pair<std::string, std::string>> params = {
        {"restype", "container"}, {"comp", "list"}, {"prefix", full_prefix}, {"maxresults", std::to_string(page_size)}};
    if (delimited) params.emplace_back("delimiter", "/");
    if (marker) params.emplace_back("marker", *marker);
    const auto req = make("GET", base + "?" + detail::canonical_query(std::move(params)), {}, {});
    const auto resp = perform(req);
    if (resp.status != 200) fail(req, resp);
    try {
      return detail::parse_azure_list_page(resp.body_text());
    } catch (const ArgumentError& e) {
      throw StoreError(client->failure_prefix(req, resp.attempts) + "malformed List Blobs response: " + e.what());
    }
  }

  struct Listing {
    std::vector<std::string> keys, prefixes;
  };
  Listing list(const std::string& full_prefix, bool delimited) const {
    Listing out;
    std::optional<std::string> marker;
    for (;;) {
      auto page = list_page(full_prefix, delimited, marker);
      for (auto& k : page.keys) out.keys.push_back(std::move(k));
      for (auto& p : page.prefixes) out.prefixes.push_back(std::move(p));
      if (!page.next) return out;
      if (marker && *page.next == *marker)
        throw StoreError("Azure: the server repeated the listing marker '" + *marker + "'");
      marker = std::move(page.next);
    }
  }

  void delete_one(const std::string& full) const {
    const auto req = object_request("DELETE", full, {}, {});
    const auto resp = perform(req);
    if (resp.status >= 200 && resp.status < 300) return;
    if (resp.status == 404 && error_code(resp) != "ContainerNotFound") return;
    fail(req, resp);
  }
};

std::shared_ptr<AzureStore> AzureStore::open(Options options) {
  return std::make_shared<AzureStore>(std::move(options));
}

AzureStore::AzureStore(Options options)
    : options_(std::move(options)),
      impl_(std::make_unique<Impl>()),
      probe_(std::make_unique<detail::ConditionalProbe>()) {
  check_container(options_.container);
  std::string p = options_.prefix;
  while (!p.empty() && p.front() == '/') p.erase(p.begin());
  while (!p.empty() && p.back() == '/') p.pop_back();
  if (!p.empty()) {
    try {
      validate_key(p);
    } catch (const StoreError& e) {
      throw StoreError("AzureStore: invalid prefix '" + options_.prefix + "': " + e.what());
    }
  }
  options_.prefix = p;
  if (options_.list_page_size < 1 || options_.list_page_size > 5000)
    throw StoreError("AzureStore: list_page_size must be 1..5000 (got " + std::to_string(options_.list_page_size) +
                     ")");
  if (options_.lock_ttl < std::chrono::milliseconds(40))
    throw StoreError("AzureStore: lock_ttl must be at least 40 ms (got " + std::to_string(options_.lock_ttl.count()) +
                     " ms)");
  if (options_.lock_timeout < std::chrono::milliseconds(0))
    throw StoreError("AzureStore: lock_timeout must not be negative");
  auto& im = *impl_;
  im.access = detail::resolve_azure_access({.account = options_.account_name,
                                            .key = options_.account_key,
                                            .sas = options_.sas_token,
                                            .connection_string = options_.connection_string,
                                            .endpoint = options_.endpoint,
                                            .anonymous = options_.anonymous},
                                           env);
  endpoint_ = im.access.endpoint;
  account_ = im.access.account;
  if (endpoint_.find_first_of("?#") != std::string::npos)
    throw StoreError("AzureStore: endpoint '" + endpoint_ + "' must not have a query or fragment");
  detail::check_http_url(endpoint_, "AzureStore: endpoint");
  im.client = std::make_unique<detail::HttpClient>(options_.net, "Azure");
  im.container = options_.container;
  im.base = endpoint_ + "/" + options_.container;
  im.root_slash = options_.prefix.empty() ? "" : options_.prefix + "/";
  im.page_size = options_.list_page_size;
}

AzureStore::~AzureStore() = default;

bool AzureStore::create_container() {
  if (options_.read_only)
    throw StoreError(ErrorCode::read_only, "store " + describe() + " is read-only: cannot create its container");
  const auto req = impl_->make("PUT", impl_->base + "?restype=container", {}, {});
  const auto resp = impl_->perform(req);
  if (resp.status == 201) return true;
  if (resp.status == 409 && Impl::error_code(resp) == "ContainerAlreadyExists") return false;
  impl_->fail(req, resp);
}

std::string AzureStore::url_of(const std::string& key) const {
  validate_key(key);
  return impl_->object_url(impl_->full_key(key));
}

std::string AzureStore::describe() const {
  return "az://" + options_.container + (options_.prefix.empty() ? "" : "/" + options_.prefix) + " (endpoint " +
         endpoint_ + ")";
}

std::optional<VersionedBytes> AzureStore::read_response(const std::string& key, const ByteRange& range,
                                                        const detail::HttpRequest& req, detail::HttpResponse&& resp) {
  const bool whole = detail::plan_range(range).whole;
  if (resp.status == 404) {
    if (Impl::error_code(resp) == "ContainerNotFound") impl_->fail(req, resp);
    return std::nullopt;
  }
  const std::string* etag = resp.header("etag");
  VersionedBytes out{Bytes(), etag ? *etag : std::string()};
  if (resp.status == 416 && !whole) {
    const auto size = do_size(key);
    if (!size) return std::nullopt;
    detail::check_unsatisfiable(range, *size, impl_->client->failure_prefix(req, resp.attempts));
    return out;
  }
  if (resp.status < 200 || resp.status >= 300) impl_->fail(req, resp);
  if (const auto end = empty_range_at_end(resp, range)) {
    out.value_size = end;
    return out;
  }
  if (whole) impl_->reads.record(key, req, resp);
  out.value_size = detail::value_size_of(resp);
  out.bytes = detail::take_range(resp, range, impl_->client->failure_prefix(req, resp.attempts));
  return out;
}

std::optional<VersionedBytes> AzureStore::do_get(const std::string& key, const ByteRange& range_in,
                                                 std::uint64_t max_bytes) {
  if (range_in.kind == ByteRange::Kind::Suffix && range_in.suffix > 0) {
    // The Blob service takes "bytes=A-B" and "bytes=A-" only: the last N bytes are found from the
    // size, and read again if the blob changed size in between (its total in Content-Range).
    for (int attempt = 0;; ++attempt) {
      const auto size = do_size(key);
      if (!size) return std::nullopt;
      const auto n = std::min(range_in.suffix, *size);
      if (n == 0) return do_get(key, ByteRange::range(0, 0), max_bytes);
      auto got = do_get(key, ByteRange::range(*size - n, n), max_bytes);
      if (!got || !got->value_size || *got->value_size == *size) return got;
      if (attempt == 2)
        throw StoreError("Azure store " + describe() + ": '" + key +
                         "' changed size while its last bytes were read, three times");
    }
  }
  const ByteRange range = range_in;
  const auto plan = detail::plan_range(range);
  if (plan.empty) return do_size(key) ? std::optional<VersionedBytes>(VersionedBytes{}) : std::nullopt;
  std::vector<std::string> headers;
  if (!plan.whole) headers.push_back(plan.header);
  auto req = impl_->object_request("GET", impl_->full_key(key), {}, std::move(headers));
  req.max_body = detail::body_cap(range, max_bytes);
  return read_response(key, range, req, impl_->perform(req));
}

std::unique_ptr<PendingGet> AzureStore::do_start_get(const std::string& key, std::uint64_t max_bytes) {
  auto req = impl_->object_request("GET", impl_->full_key(key), {}, {});
  req.max_body = detail::body_cap(ByteRange::all(), max_bytes);
  auto response = impl_->client->start(req);
  return std::make_unique<detail::PendingHttpGet>(std::move(response),
                                                  [this, key, req = std::move(req)](detail::HttpResponse&& r) {
                                                    return read_response(key, ByteRange::all(), req, std::move(r));
                                                  });
}

std::string AzureStore::do_explain_unreadable(const std::string& key) {
  return impl_->reads.explain(key, do_size(key));
}

std::optional<std::uint64_t> AzureStore::do_size(const std::string& key) {
  const auto req = impl_->object_request("HEAD", impl_->full_key(key), {}, {});
  const auto resp = impl_->perform(req);
  if (resp.status == 404 && Impl::error_code(resp) != "ContainerNotFound") return std::nullopt;
  if (resp.status != 200) impl_->fail(req, resp);
  if (const auto* cl = resp.header("content-length")) {
    if (const auto n = detail::parse_content_length(*cl)) return n;
    throw StoreError(impl_->client->failure_prefix(req, resp.attempts) + "unreadable Content-Length '" + *cl + "'");
  }
  return Store::do_size(key);
}

void AzureStore::do_set(const std::string& key, const Bytes& value) {
  detail::put_plain(*impl_, impl_->full_key(key), value, key, describe());
}

void AzureStore::do_erase(const std::string& key) { impl_->delete_one(impl_->full_key(key)); }

void AzureStore::do_erase_prefix(const std::string& prefix) {
  // Every blob under the prefix goes, store keys or not.
  for (const auto& k : impl_->list(impl_->root_slash + prefix, false).keys) impl_->delete_one(k);
}

std::vector<std::string> AzureStore::do_list_prefix(const std::string& prefix) {
  return detail::keys_under(impl_->list(impl_->root_slash + prefix, false).keys, impl_->root_slash, prefix);
}

DirListing AzureStore::do_list_dir(const std::string& prefix_in) {
  std::string prefix = prefix_in;
  if (!prefix.empty() && prefix.back() != '/') prefix += '/';
  const std::string full = impl_->root_slash + prefix;
  auto listing = impl_->list(full, true);
  return detail::dir_of(listing.keys, listing.prefixes, full, prefix);
}

std::unique_ptr<StoreLock> AzureStore::do_lock(const std::string& key) {
  if (!confirm_capabilities().locking)
    throw ConflictError("Azure store " + describe() + " cannot lock '" + key +
                        "': the server ignored or refused conditional PUTs, which the lease is made of");
  return detail::take_lease(*impl_, impl_->full_key(detail::lease_key(key)), "'" + key + "'",
                            {.store = describe(),
                             .ttl = options_.lock_ttl,
                             .timeout = options_.lock_timeout,
                             .conditional_erase = conditional().erase});
}

detail::ConditionalSupport AzureStore::conditional() {
  if (options_.read_only) return {};  // a read-only store writes nothing, not even a probe
  return probe_->get(*impl_, impl_->root_slash + ".zarrpp-probe-");
}

StoreCapabilities AzureStore::capabilities() const {
  // Never a request here: the first conditional write or lock asks the server (and refuses
  // clearly when something on the way drops the conditions).
  return {.writable = !options_.read_only,
          .listing = true,
          .conditional_writes = !options_.read_only,
          .conditional_erase = !options_.read_only,
          .locking = !options_.read_only,
          .native_streaming = false,
          .uncertain_writes = true,
          .reads_in_flight = options_.net.max_in_flight};
}

StoreCapabilities AzureStore::confirm_capabilities() {
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

bool AzureStore::do_set_if(const std::string& key, const Bytes& value, const std::optional<Version>& expected) {
  const auto c = conditional();
  if (!(expected ? c.replace : c.create_only))
    throw ConflictError("Azure store " + describe() + ": the server (or something on the way) ignored or refused " +
                        (expected ? "If-Match" : "If-None-Match: *") + " on PUT, so a conditional write of '" + key +
                        "' cannot be atomic");
  return detail::put_if(*impl_, impl_->full_key(key), value, expected, key, describe());
}

bool AzureStore::do_erase_if(const std::string& key, const std::optional<Version>& expected) {
  if (!expected) return !do_size(key).has_value();  // "only if it does not exist": nothing to erase
  if (!conditional().erase)
    throw ConflictError("Azure store " + describe() +
                        ": the server (or something on the way) ignored or refused If-Match on DELETE, so erasing '" +
                        key + "' only if it is what was read cannot be atomic");
  return detail::delete_if(*impl_, impl_->full_key(key), *expected, key, describe(),
                           [&] { return do_size(key).has_value(); });
}

}  // namespace zarrpp
