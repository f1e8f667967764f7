#include "encoding.hpp"

#include <curl/curl.h>
#include <openssl/evp.h>

#include <algorithm>
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
