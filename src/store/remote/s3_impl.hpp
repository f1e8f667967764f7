#pragma once
// What S3Store's requests share (s3_store.cpp and the lease in s3_lease.cpp): signing, object
// URLs, error reports, and the multi-request operations (listing with pagination, bulk delete).
#include <algorithm>
#include <atomic>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "../../core/xml_escape.hpp"
#include "encoding.hpp"
#include "http_client.hpp"
#include "object_service.hpp"
#include "s3_responses.hpp"
#include "xml.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/store/s3_store.hpp"

namespace zarrpp {

namespace detail {
inline constexpr const char* kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
inline constexpr std::size_t kDeleteBatch = 1000;  // DeleteObjects takes at most 1000 keys

}  // namespace detail

struct S3Store::Impl final : detail::ObjectService {
  std::unique_ptr<detail::HttpClient> client;
  std::string bucket;
  std::string base;        // endpoint/bucket
  std::string root_slash;  // "" or "prefix/"
  std::string sigv4;       // "" = unsigned
  std::string access_key, secret_key, token;
  int page_size = 1000;
  std::atomic<bool> bulk_delete{true};
  detail::ReadLog reads;  // whole-value GETs, to explain bytes that fail to decode

  std::string full_key(const std::string& key) const { return root_slash + key; }
  std::string object_url(const std::string& full) const { return base + "/" + detail::percent_encode(full, true); }

  detail::HttpRequest make(const char* method, std::string url, std::span<const std::uint8_t> body = {}) const {
    detail::HttpRequest r;
    r.method = method;
    r.url = std::move(url);
    r.body = body;
    r.headers.push_back(std::string("x-amz-content-sha256: ") +
                        (body.empty() ? detail::kEmptySha256 : detail::sha256_hex(body)));
    if (!token.empty()) r.headers.push_back("x-amz-security-token: " + token);
    if (!sigv4.empty()) {
      r.aws_sigv4 = sigv4;
      r.username = access_key;
      r.password = secret_key;
    }
    return r;
  }

  detail::HttpRequest object_request(const char* method, const std::string& full, std::span<const std::uint8_t> body,
                                     std::vector<std::string> headers) const override {
    auto r = make(method, object_url(full), body);
    if (std::string_view(method) == "PUT") r.headers.push_back("Content-Type: application/octet-stream");
    for (auto& h : headers) r.headers.push_back(std::move(h));
    return r;
  }
  // 412; 409 ConditionalRequestConflict once retrying gave up; 404 for a replace.
  bool condition_failed(const detail::HttpResponse& resp, bool replacing) const override {
    return resp.status == 412 || resp.status == 409 ||
           (replacing && resp.status == 404 && detail::parse_s3_error(resp.body_text()).code != "NoSuchBucket");
  }
  std::vector<long> conditional_retry_statuses() const override { return {409}; }
  std::string failure_prefix(const detail::HttpRequest& req, int attempts) const override {
    return client->failure_prefix(req, attempts);
  }
  std::string label() const override { return "S3"; }

  [[noreturn]] void fail(const detail::HttpRequest& req, const detail::HttpResponse& resp) const override {
    const auto err = detail::parse_s3_error(resp.body_text());
    std::string msg = client->failure_prefix(req, resp.attempts) + "HTTP " + std::to_string(resp.status);
    if (!resp.reason.empty()) msg += " " + resp.reason;
    if (!err.code.empty()) msg += " (" + err.code + (err.message.empty() ? "" : ": " + err.message) + ")";
    if (err.code == "NoSuchBucket") msg += "; bucket '" + bucket + "' does not exist";
    if (resp.status == 403 && sigv4.empty())
      msg +=
          "; the request was unsigned: no credentials in S3Store::Options or AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY";
    else if (resp.status == 403 && (req.method == "GET" || req.method == "HEAD") &&
             req.url.find('?') == std::string::npos)
      msg +=
          "; note that S3 answers 403 rather than 404 for a missing key when the credentials may not list the bucket";
    throw StoreError(msg);
  }

  detail::HttpResponse perform(const detail::HttpRequest& req) const override { return client->perform(req); }

  // A whole object with its ETag, or nullopt when it does not exist.
  std::optional<std::pair<Bytes, std::string>> get_with_etag(const std::string& full) const override {
    const auto req = make("GET", object_url(full));
    auto resp = perform(req);
    if (resp.status == 404) {
      if (detail::parse_s3_error(resp.body_text()).code == "NoSuchBucket") fail(req, resp);
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
      detail::S3ListPage page;
      try {
        page = detail::parse_s3_list_page(resp.body_text());
      } catch (const ArgumentError& e) {
        throw StoreError(client->failure_prefix(req, resp.attempts) + "malformed ListObjectsV2 response: " + e.what());
      }
      for (auto& k : page.keys) out.keys.push_back(std::move(k));
      for (auto& p : page.prefixes) out.prefixes.push_back(std::move(p));
      const bool truncated = page.truncated;
      auto& next = page.next;
      if (!truncated) return out;
      if (!next || next->empty())
        throw StoreError(client->failure_prefix(req, resp.attempts) +
                         "IsTruncated is true but there is no NextContinuationToken");
      if (continuation && *next == *continuation)
        throw StoreError(client->failure_prefix(req, resp.attempts) + "the server repeated continuation token '" +
                         *next + "'");
      continuation = std::move(next);
    }
  }

  void delete_one(const std::string& full) const {
    const auto req = make("DELETE", object_url(full));
    const auto resp = perform(req);
    if (resp.status >= 200 && resp.status < 300) return;
    if (resp.status == 404 && detail::parse_s3_error(resp.body_text()).code != "NoSuchBucket") return;
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
      std::string body =
          "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
          "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>";
      for (const auto& k : batch) body += "<Object><Key>" + detail::xml_escape(k) + "</Key></Object>";
      body += "</Delete>";
      const auto bytes = detail::as_bytes(body);
      auto req = make("POST", base + "?delete=", bytes);
      req.headers.push_back("Content-Type: application/xml");
      req.headers.push_back("Content-MD5: " + detail::md5_base64(bytes));
      const auto resp = perform(req);
      if (resp.status == 501 || resp.status == 405) {
        bulk_delete = false;
        for (const auto& k : batch) delete_one(k);
        batch.clear();
        return;
      }
      if (resp.status != 200) fail(req, resp);
      std::vector<detail::S3DeleteFailure> errors;
      try {
        errors = detail::parse_s3_delete_result(resp.body_text());
      } catch (const ArgumentError& e) {
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
      if (batch.size() == detail::kDeleteBatch) flush();
    }
    flush();
  }
};

}  // namespace zarrpp
