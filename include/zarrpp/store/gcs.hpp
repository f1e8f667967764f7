#pragma once
/// @file
/// Google Cloud Storage: `gs://bucket/path` (and `gcs://`), opened as one of the stores that speak
/// GCS's two APIs, since GCS has no store of its own here:
///
/// - public data (no HMAC keys): an HttpStore on GCS's HTTPS endpoint,
///   ENDPOINT/bucket/path (https://storage.googleapis.com unless an endpoint is given, or
///   STORAGE_EMULATOR_HOST names one, as Google's libraries and gcsfs read it). Read-only, and no
///   listing: Zarr v3 nodes and consolidated v2 open by their paths.
/// - private buckets: an S3Store on GCS's S3-compatible XML API with HMAC keys (GcsOptions, else
///   GS_ACCESS_KEY_ID and GS_SECRET_ACCESS_KEY, gsutil's names for them), signed for region
///   "auto". GCS conditions writes by object generation (x-goog-if-generation-match), not by
///   If-Match / If-None-Match, and zarrpp does not send those yet: conditional writes, growth and
///   locks are refused on gs:// with an error saying so, never done unconditionally. Plain
///   writes, reads and listings work.
#include <optional>
#include <string>

#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/store.hpp"

namespace zarrpp {

/// How a gs:// URL is opened (bucket and path come from the URL).
struct GcsOptions {
  std::optional<std::string> endpoint = std::nullopt;     ///< unset: STORAGE_EMULATOR_HOST, else GCS's
  std::optional<std::string> hmac_key_id = std::nullopt;  ///< unset: GS_ACCESS_KEY_ID
  std::optional<std::string> hmac_secret = std::nullopt;  ///< unset: GS_SECRET_ACCESS_KEY
  bool anonymous = false;                                 ///< public data over HTTPS even when HMAC keys are found
  bool read_only = false;                                 ///< refuse every write
  RemoteOptions net{};                                    ///< timeouts, retries and limits of the requests
};

/// The store for gs://`bucket`/`path` (see the top of this file). Throws StoreError naming what is
/// wrong; makes no request.
StorePtr open_gcs(const std::string& bucket, const std::string& path, const GcsOptions& options);

}  // namespace zarrpp
