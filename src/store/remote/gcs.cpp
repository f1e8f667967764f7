#include "zarrpp/store/gcs.hpp"

#include <cstdlib>

#include "encoding.hpp"
#include "object_service.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/store/s3_store.hpp"

namespace zarrpp {

namespace {

std::optional<std::string> env(const char* name) { return detail::env_value(name); }

// GCS's endpoint: given, else STORAGE_EMULATOR_HOST ("host:port" or a URL), else Google's.
std::string gcs_endpoint(const GcsOptions& o) {
  // An emulator's host:port is plain HTTP (as Google's libraries take it); any other endpoint
  // without a scheme is HTTPS, so signed requests never go out in clear by accident.
  std::string e;
  if (o.endpoint)
    e = o.endpoint->find("://") == std::string::npos ? "https://" + *o.endpoint : *o.endpoint;
  else if (auto emu = env("STORAGE_EMULATOR_HOST"))
    e = emu->find("://") == std::string::npos ? "http://" + *emu : *emu;
  else
    e = "https://storage.googleapis.com";
  while (!e.empty() && e.back() == '/') e.pop_back();
  return e;
}

constexpr const char* kWhyNoConditions =
    "GCS conditions writes by object generation (x-goog-if-generation-match), not by If-Match / "
    "If-None-Match, and zarrpp does not send those yet; so on gs:// growth, locks and other "
    "conditional writes are refused rather than done unconditionally";

}  // namespace

StorePtr open_gcs(const std::string& bucket, const std::string& path, const GcsOptions& options) {
  if (bucket.empty()) throw StoreError("gs:// URL names no bucket (write gs://bucket/path)");
  const std::string endpoint = gcs_endpoint(options);
  const auto id = options.hmac_key_id ? options.hmac_key_id : env("GS_ACCESS_KEY_ID");
  const auto secret = options.hmac_secret ? options.hmac_secret : env("GS_SECRET_ACCESS_KEY");
  if (!options.anonymous && (id || secret)) {
    if (!id || !secret)
      throw StoreError(std::string("gs://") + bucket + ": an HMAC " + (id ? "key id" : "secret") + " is set but no " +
                       (id ? "secret (GS_SECRET_ACCESS_KEY)" : "key id (GS_ACCESS_KEY_ID)"));
    S3Store::Options o;
    o.bucket = bucket;
    o.prefix = path;
    o.endpoint = endpoint;
    o.region = "auto";
    o.access_key_id = id;
    o.secret_access_key = secret;
    o.session_token = "";
    o.read_only = options.read_only;
    o.conditional_writes = ConditionalWrites::Off;
    o.conditional_writes_off_reason = kWhyNoConditions;
    o.display_name = "gs://" + bucket + (path.empty() ? "" : "/" + path) + " (GCS's S3-compatible API at " + endpoint +
                     ", whose generation conditions zarrpp does not use yet)";
    o.net = options.net;
    return S3Store::open(std::move(o));
  }
  HttpStore::Options h;
  h.net = options.net;
  std::string url = endpoint + "/" + detail::percent_encode(bucket, false);
  if (!path.empty()) url += "/" + detail::percent_encode(path, true);
  return HttpStore::open(url, std::move(h));
}

}  // namespace zarrpp
