#pragma once
// Web encodings and digests the remote stores need, done by libcurl (percent-encoding) and
// OpenSSL's libcrypto (SHA-256, MD5, base64).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zarrpp::detail {

inline std::span<const std::uint8_t> as_bytes(std::string_view s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// Lower-case hex SHA-256 of `data` (S3's x-amz-content-sha256).
std::string sha256_hex(std::span<const std::uint8_t> data);
// Base64 of the MD5 of `data` (the Content-MD5 header).
std::string md5_base64(std::span<const std::uint8_t> data);
// Standard base64 with padding.
std::string base64(std::span<const std::uint8_t> data);
// Decodes standard base64 (padding required, no whitespace); nullopt when `text` is not that.
std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text);
// Base64 of HMAC-SHA256(key, data) (Azure's Shared Key signature).
std::string hmac_sha256_base64(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data);

// RFC 3986 percent-encoding: unreserved characters (A-Z a-z 0-9 - . _ ~) stay, '/' stays when
// keep_slash, every other byte becomes %XX (upper-case hex).
std::string percent_encode(std::string_view s, bool keep_slash);
// Decodes %XX escapes; throws StoreError naming `what` on a malformed escape.
std::string percent_decode(std::string_view s, const std::string& what);
// `url` fit for messages: the values of query parameters that carry secrets (a SAS token's "sig",
// presigned URLs' "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token",
// "X-Goog-Signature" and "X-Goog-Credential") are replaced by "REDACTED".
std::string redact_url(std::string_view url);
// "k1=v1&k2=v2" with keys and values encoded and the pairs sorted (the SigV4 canonical form).
std::string canonical_query(std::vector<std::pair<std::string, std::string>> params);

}  // namespace zarrpp::detail
