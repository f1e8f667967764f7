#include "encoding.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "zarrpp/core/error.hpp"

namespace zarrpp::detail {

namespace {

std::string digest(const EVP_MD* md, std::span<const std::uint8_t> data, unsigned expected_len) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (EVP_Digest(data.data(), data.size(), out, &len, md, nullptr) != 1 || len != expected_len)
    throw StoreError("libcrypto: cannot compute a digest");
  return std::string(reinterpret_cast<const char*>(out), len);
}

struct CurlFree {
  void operator()(char* p) const { curl_free(p); }
};

}  // namespace

std::string sha256_hex(std::span<const std::uint8_t> data) {
  static constexpr char digits[] = "0123456789abcdef";
  const std::string d = digest(EVP_sha256(), data, 32);
  std::string out;
  out.reserve(64);
  for (unsigned char b : d) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string md5_base64(std::span<const std::uint8_t> data) { return base64(as_bytes(digest(EVP_md5(), data, 16))); }

std::string base64(std::span<const std::uint8_t> data) {
  std::string out(4 * ((data.size() + 2) / 3) + 1, '\0');
  // EVP_EncodeBlock takes an int length: encode in pieces of a multiple of 3 bytes.
  constexpr std::size_t kStep = std::size_t{3} << 28;
  std::size_t written = 0;
  for (std::size_t off = 0; off < data.size(); off += kStep) {
    const std::size_t n = std::min(kStep, data.size() - off);
    written += static_cast<std::size_t>(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + written),
                                                        data.data() + off, static_cast<int>(n)));
  }
  out.resize(written);
  return out;
}

std::optional<std::vector<std::uint8_t>> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0 || text.size() > (std::size_t{1} << 30)) return std::nullopt;
  if (!std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' ||
               c == '=';
      }))
    return std::nullopt;
  const std::size_t pad = text.ends_with("==") ? 2 : text.ends_with('=') ? 1 : 0;
  if (text.substr(0, text.size() - pad).find('=') != std::string_view::npos) return std::nullopt;
  std::vector<std::uint8_t> out(text.size() / 4 * 3);
  const int n =
      EVP_DecodeBlock(out.data(), reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  out.resize(static_cast<std::size_t>(n) - pad);
  return out;
}

std::string hmac_sha256_base64(std::span<const std::uint8_t> key, std::span<const std::uint8_t> data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (!HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), data.data(), data.size(), out, &len) || len != 32)
    throw StoreError("libcrypto: cannot compute an HMAC-SHA256");
  return base64(std::span<const std::uint8_t>(out, len));
}

std::string redact_url(std::string_view url) {
  const auto q = url.find('?');
  if (q == std::string_view::npos) return std::string(url);
  std::string out(url.substr(0, q + 1));
  std::string_view rest = url.substr(q + 1);
  bool first = true;
  while (true) {
    const auto amp = rest.find('&');
    const std::string_view part = rest.substr(0, amp);
    const auto eq = part.find('=');
    std::string name(part.substr(0, eq));
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const bool secret = name == "sig" || name == "x-amz-signature" || name == "x-amz-credential" ||
                        name == "x-amz-security-token" || name == "x-goog-signature" || name == "x-goog-credential";
    out += (first ? "" : "&");
    out +=
        secret && eq != std::string_view::npos ? std::string(part.substr(0, eq + 1)) + "REDACTED" : std::string(part);
    first = false;
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return out;
}

std::string percent_encode(std::string_view s, bool keep_slash) {
  // curl_easy_escape keeps exactly RFC 3986's unreserved characters; '/' is kept by encoding
  // the segments between slashes one by one.
  std::string out;
  out.reserve(s.size());
  std::size_t i = 0;
  for (;;) {
    const std::size_t j = keep_slash ? s.find('/', i) : std::string_view::npos;
    const std::string_view seg = s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (!seg.empty()) {
      std::unique_ptr<char, CurlFree> e(curl_easy_escape(nullptr, seg.data(), static_cast<int>(seg.size())));
      if (!e) throw StoreError("libcurl: cannot percent-encode '" + std::string(seg) + "'");
      out += e.get();
    }
    if (j == std::string_view::npos) return out;
    out += '/';
    i = j + 1;
  }
}

std::string percent_decode(std::string_view s, const std::string& what) {
  // libcurl passes malformed escapes through unchanged; refuse them first.
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  for (std::size_t i = s.find('%'); i != std::string_view::npos; i = s.find('%', i + 1))
    if (i + 2 >= s.size() || !hex(s[i + 1]) || !hex(s[i + 2]))
      throw StoreError(what + ": malformed percent-escape '" + std::string(s.substr(i, 3)) + "' at offset " +
                       std::to_string(i));
  int len = 0;
  std::unique_ptr<char, CurlFree> d(curl_easy_unescape(nullptr, s.data(), static_cast<int>(s.size()), &len));
  if (!d) throw StoreError(what + ": cannot decode percent-escapes");
  return std::string(d.get(), static_cast<std::size_t>(len));
}

std::string canonical_query(std::vector<std::pair<std::string, std::string>> params) {
  for (auto& [k, v] : params) {
    k = percent_encode(k, false);
    v = percent_encode(v, false);
  }
  std::sort(params.begin(), params.end());
  std::string out;
  for (const auto& [k, v] : params) {
    if (!out.empty()) out += '&';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

}  // namespace zarrpp::detail
