#include "curl_util.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "zarrpp/core/error.hpp"

#if LIBCURL_VERSION_NUM < 0x074B00
#error "zarrpp's remote stores need libcurl 7.75 or newer (CURLOPT_AWS_SIGV4)"
#endif

namespace zarrpp::detail {

// ---- hex, base64 --------------------------------------------------------------------------------

std::string to_hex(std::span<const std::uint8_t> data) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(data.size() * 2);
  for (std::uint8_t b : data) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

std::string base64(std::span<const std::uint8_t> data) {
  static constexpr char table[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    const std::uint32_t v = (std::uint32_t{data[i]} << 16) | (std::uint32_t{data[i + 1]} << 8) | data[i + 2];
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (const std::size_t rest = data.size() - i; rest > 0) {
    std::uint32_t v = std::uint32_t{data[i]} << 16;
    if (rest == 2) v |= std::uint32_t{data[i + 1]} << 8;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
    out += rest == 2 ? table[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

// ---- SHA-256 (FIPS 180-4) -----------------------------------------------------------------------

namespace {

constexpr std::uint32_t kSha256K[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
constexpr std::uint32_t rotl(std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); }

void sha256_block(std::uint32_t h[8], const std::uint8_t* p) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) | (std::uint32_t{p[4 * i + 2]} << 8) |
           p[4 * i + 3];
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t s1 = rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25);
    const std::uint32_t ch = (e & f) ^ (~e & g);
    const std::uint32_t t1 = hh + s1 + ch + kSha256K[i] + w[i];
    const std::uint32_t s0 = rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22);
    const std::uint32_t maj = (a & b) ^ (a & c) ^ (b & c);
    const std::uint32_t t2 = s0 + maj;
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

// The final one or two blocks: the tail, 0x80, zeros and the bit length (big- or little-endian).
template <class Block>
void finish_blocks(std::span<const std::uint8_t> data, bool big_endian_length, Block&& block) {
  const std::size_t full = data.size() / 64 * 64;
  for (std::size_t i = 0; i < full; i += 64) block(data.data() + i);
  std::uint8_t tail[128] = {};
  const std::size_t rest = data.size() - full;
  if (rest) std::memcpy(tail, data.data() + full, rest);
  tail[rest] = 0x80;
  const std::size_t len = rest + 9 <= 64 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i)
    tail[big_endian_length ? len - 1 - i : len - 8 + i] = static_cast<std::uint8_t>(bits >> (8 * i));
  block(tail);
  if (len == 128) block(tail + 64);
}

constexpr std::uint32_t kMd5K[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
constexpr int kMd5S[64] = {7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
                           5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20, 5, 9,  14, 20,
                           4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
                           6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21};

void md5_block(std::uint32_t h[4], const std::uint8_t* p) {
  std::uint32_t m[16];
  for (int i = 0; i < 16; ++i)
    m[i] = std::uint32_t{p[4 * i]} | (std::uint32_t{p[4 * i + 1]} << 8) | (std::uint32_t{p[4 * i + 2]} << 16) |
           (std::uint32_t{p[4 * i + 3]} << 24);
  std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
  for (int i = 0; i < 64; ++i) {
    std::uint32_t f;
    int g;
    if (i < 16) {
      f = (b & c) | (~b & d);
      g = i;
    } else if (i < 32) {
      f = (d & b) | (~d & c);
      g = (5 * i + 1) % 16;
    } else if (i < 48) {
      f = b ^ c ^ d;
      g = (3 * i + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * i) % 16;
    }
    const std::uint32_t t = d;
    d = c;
    c = b;
    b = b + rotl(a + f + kMd5K[i] + m[g], kMd5S[i]);
    a = t;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

}  // namespace

std::array<std::uint8_t, 32> sha256(std::span<const std::uint8_t> data) {
  std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  finish_blocks(data, true, [&](const std::uint8_t* p) { sha256_block(h, p); });
  std::array<std::uint8_t, 32> out{};
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (24 - 8 * j));
  return out;
}

std::string sha256_hex(std::span<const std::uint8_t> data) { return to_hex(sha256(data)); }

std::array<std::uint8_t, 16> md5(std::span<const std::uint8_t> data) {
  std::uint32_t h[4] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  finish_blocks(data, false, [&](const std::uint8_t* p) { md5_block(h, p); });
  std::array<std::uint8_t, 16> out{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) out[4 * i + j] = static_cast<std::uint8_t>(h[i] >> (8 * j));
  return out;
}

// ---- URL encoding -------------------------------------------------------------------------------

namespace {
bool unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
         c == '_' || c == '~';
}
int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace

std::string uri_encode(std::string_view s, bool keep_slash) {
  static constexpr char digits[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (unreserved(c) || (keep_slash && c == '/')) {
      out += ch;
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

std::string percent_decode(std::string_view s, const std::string& what) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    const int hi = i + 2 < s.size() ? hex_value(s[i + 1]) : -1;
    const int lo = i + 2 < s.size() ? hex_value(s[i + 2]) : -1;
    if (hi < 0 || lo < 0)
      throw StoreError(what + ": malformed percent-escape '" + std::string(s.substr(i, 3)) + "' at offset " +
                       std::to_string(i));
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

std::string canonical_query(std::vector<std::pair<std::string, std::string>> params) {
  for (auto& [k, v] : params) {
    k = uri_encode(k, false);
    v = uri_encode(v, false);
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

// Checks an http(s) URL with libcurl's parser; throws StoreError naming it and the problem.
void check_http_url(const std::string& url, const std::string& what) {
  CURLU* u = curl_url();
  if (!u) throw StoreError(what + ": out of memory");
  struct Guard {
    CURLU* u;
    ~Guard() { curl_url_cleanup(u); }
  } guard{u};
  const CURLUcode rc = curl_url_set(u, CURLUPART_URL, url.c_str(), 0);
  if (rc != CURLUE_OK) {
#if LIBCURL_VERSION_NUM >= 0x075000
    throw StoreError(what + " '" + url + "' is not a valid URL: " + curl_url_strerror(rc));
#else
    throw StoreError(what + " '" + url + "' is not a valid URL (curl URL error " + std::to_string(rc) + ")");
#endif
  }
  char* scheme = nullptr;
  char* host = nullptr;
  curl_url_get(u, CURLUPART_SCHEME, &scheme, 0);
  curl_url_get(u, CURLUPART_HOST, &host, 0);
  const std::string s = scheme ? scheme : "", h = host ? host : "";
  curl_free(scheme);
  curl_free(host);
  if (s != "http" && s != "https")
    throw StoreError(what + " '" + url + "' must start with http:// or https:// (scheme is '" + s + "')");
  if (h.empty()) throw StoreError(what + " '" + url + "' has no host");
}

// ---- XML ----------------------------------------------------------------------------------------

namespace {

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Decodes character data (entities and character references) onto `out`.
void decode_text(std::string_view s, std::string& out) {
  for (std::size_t i = 0; i < s.size();) {
    if (s[i] != '&') {
      const std::size_t amp = s.find('&', i);
      const std::size_t end = amp == std::string_view::npos ? s.size() : amp;
      out.append(s.substr(i, end - i));
      i = end;
      continue;
    }
    const std::size_t semi = s.find(';', i);
    if (semi == std::string_view::npos || semi - i > 12)
      throw std::runtime_error("unterminated entity reference '" + std::string(s.substr(i, 12)) + "'");
    const std::string_view name = s.substr(i + 1, semi - i - 1);
    if (name == "amp") out += '&';
    else if (name == "lt") out += '<';
    else if (name == "gt") out += '>';
    else if (name == "quot") out += '"';
    else if (name == "apos") out += '\'';
    else if (name.size() >= 2 && name[0] == '#') {
      const bool hex = name[1] == 'x' || name[1] == 'X';
      const std::string_view digits = name.substr(hex ? 2 : 1);
      if (digits.empty()) throw std::runtime_error("empty character reference '&" + std::string(name) + ";'");
      std::uint32_t cp = 0;
      for (char c : digits) {
        const int v = hex ? hex_value(c) : (c >= '0' && c <= '9' ? c - '0' : -1);
        if (v < 0) throw std::runtime_error("malformed character reference '&" + std::string(name) + ";'");
        cp = cp * (hex ? 16 : 10) + static_cast<std::uint32_t>(v);
        if (cp > 0x10FFFF) throw std::runtime_error("character reference '&" + std::string(name) + ";' is out of range");
      }
      if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF))
        throw std::runtime_error("character reference '&" + std::string(name) + ";' is not a character");
      append_utf8(out, cp);
    } else {
      throw std::runtime_error("unknown entity '&" + std::string(name) + ";'");
    }
    i = semi + 1;
  }
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

}  // namespace

void parse_xml(std::string_view x,
               const std::function<void(const std::vector<std::string>& path, std::string& text)>& on_element) {
  std::vector<std::string> path;
  std::vector<std::string> texts;
  bool seen_root = false;
  auto expect = [&](std::size_t pos, std::string_view what) {
    if (pos == std::string_view::npos) throw std::runtime_error("unterminated " + std::string(what));
    return pos;
  };
  auto local = [](std::string_view qname) {
    const std::size_t colon = qname.find(':');
    return std::string(colon == std::string_view::npos ? qname : qname.substr(colon + 1));
  };
  std::size_t i = 0;
  while (i < x.size()) {
    if (x[i] != '<') {
      const std::size_t lt = x.find('<', i);
      const std::size_t end = lt == std::string_view::npos ? x.size() : lt;
      const std::string_view chunk = x.substr(i, end - i);
      if (path.empty()) {
        if (!std::all_of(chunk.begin(), chunk.end(), is_space))
          throw std::runtime_error("text outside the root element");
      } else {
        decode_text(chunk, texts.back());
      }
      i = end;
      continue;
    }
    const std::string_view rest = x.substr(i);
    if (rest.starts_with("<?")) {
      i = expect(x.find("?>", i + 2), "processing instruction") + 2;
    } else if (rest.starts_with("<!--")) {
      i = expect(x.find("-->", i + 4), "comment") + 3;
    } else if (rest.starts_with("<![CDATA[")) {
      const std::size_t end = expect(x.find("]]>", i + 9), "CDATA section");
      if (path.empty()) throw std::runtime_error("CDATA outside the root element");
      texts.back().append(x.substr(i + 9, end - i - 9));
      i = end + 3;
    } else if (rest.starts_with("<!")) {
      throw std::runtime_error("document type declarations are not supported");
    } else if (rest.starts_with("</")) {
      const std::size_t gt = expect(x.find('>', i), "end tag");
      std::string_view name = x.substr(i + 2, gt - i - 2);
      while (!name.empty() && is_space(name.back())) name.remove_suffix(1);
      if (path.empty() || local(name) != path.back())
        throw std::runtime_error("end tag </" + std::string(name) + "> does not match " +
                                 (path.empty() ? std::string("any open element") : "<" + path.back() + ">"));
      on_element(path, texts.back());
      path.pop_back();
      texts.pop_back();
      i = gt + 1;
    } else {
      std::size_t j = i + 1;
      while (j < x.size() && !is_space(x[j]) && x[j] != '>' && x[j] != '/') ++j;
      const std::string_view name = x.substr(i + 1, j - i - 1);
      if (name.empty()) throw std::runtime_error("empty tag name at offset " + std::to_string(i));
      // Skip attributes, minding quoted values that may hold '>' or '/'.
      char quote = 0;
      for (; j < x.size(); ++j) {
        if (quote) {
          if (x[j] == quote) quote = 0;
        } else if (x[j] == '"' || x[j] == '\'') {
          quote = x[j];
        } else if (x[j] == '>') {
          break;
        }
      }
      if (j >= x.size()) throw std::runtime_error("unterminated start tag <" + std::string(name) + ">");
      if (path.empty() && seen_root) throw std::runtime_error("more than one root element");
      seen_root = true;
      path.push_back(local(name));
      texts.emplace_back();
      if (x[j - 1] == '/') {
        on_element(path, texts.back());
        path.pop_back();
        texts.pop_back();
      }
      i = j + 1;
    }
  }
  if (!path.empty()) throw std::runtime_error("element <" + path.back() + "> is not closed");
  if (!seen_root) throw std::runtime_error("no root element");
}

std::string xml_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\r': out += "&#13;"; break;
      default: out += c;
    }
  }
  return out;
}

// ---- HTTP ---------------------------------------------------------------------------------------

const std::string* HttpResponse::header(std::string_view lower_name) const {
  for (const auto& [k, v] : headers)
    if (k == lower_name) return &v;
  return nullptr;
}

const char* standard_reason(long status) {
  switch (status) {
    case 200: return "OK";
    case 204: return "No Content";
    case 206: return "Partial Content";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 416: return "Range Not Satisfiable";
    case 429: return "Too Many Requests";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    default: return "";
  }
}

namespace {

void global_init() {
  static const CURLcode rc = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (rc != CURLE_OK) throw StoreError(std::string("cannot initialise libcurl: ") + curl_easy_strerror(rc));
}

bool transient_curl_error(CURLcode rc) {
  switch (rc) {
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_CONNECT:
    case CURLE_OPERATION_TIMEDOUT:
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
      return true;
    default:
      return false;
  }
}

// Whether a failed attempt may still have been carried out by the server.
bool maybe_applied(CURLcode rc) { return rc != CURLE_COULDNT_RESOLVE_HOST && rc != CURLE_COULDNT_CONNECT; }

bool retryable_status(long s) { return s == 408 || s == 429 || s == 500 || s == 502 || s == 503 || s == 504; }

struct Sink {
  HttpResponse* resp;
  bool head;  // HEAD: Content-Length describes a body that will not come
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* r = static_cast<Sink*>(user)->resp;
  r->body.insert(r->body.end(), reinterpret_cast<const std::uint8_t*>(data),
                 reinterpret_cast<const std::uint8_t*>(data) + size * n);
  return size * n;
}

std::string trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* r = static_cast<Sink*>(user)->resp;
  const std::string_view line(data, size * n);
  if (line.starts_with("HTTP/")) {
    // A new response (after a redirect or a 100 Continue): start over.
    r->headers.clear();
    r->body.clear();
    const std::size_t sp1 = line.find(' ');
    const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
    r->reason = sp2 == std::string_view::npos ? "" : trim(line.substr(sp2 + 1));
    return size * n;
  }
  const std::size_t colon = line.find(':');
  if (colon == std::string_view::npos) return size * n;
  std::string name = trim(line.substr(0, colon));
  std::transform(name.begin(), name.end(), name.begin(), [](char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  std::string value = trim(line.substr(colon + 1));
  if (name == "content-length" && !static_cast<Sink*>(user)->head) {
    // Reserve for the body, within reason (the length is only a hint here).
    try {
      const auto len = std::stoull(value);
      if (len <= (std::uint64_t{1} << 30)) r->body.reserve(static_cast<std::size_t>(len));
    } catch (const std::exception&) {
    }
  }
  r->headers.emplace_back(std::move(name), std::move(value));
  return size * n;
}

thread_local std::minstd_rand jitter_rng{std::random_device{}()};

}  // namespace

HttpClient::HttpClient(RemoteOptions options, std::string label) : options_(std::move(options)), label_(std::move(label)) {
  global_init();
  if (options_.max_attempts < 1)
    throw StoreError(label_ + ": max_attempts must be at least 1 (got " + std::to_string(options_.max_attempts) + ")");
  for (auto [v, name] : {std::pair{options_.connect_timeout, "connect_timeout"}, std::pair{options_.timeout, "timeout"},
                         std::pair{options_.stall_timeout, "stall_timeout"},
                         std::pair{options_.retry_initial_delay, "retry_initial_delay"},
                         std::pair{options_.retry_max_delay, "retry_max_delay"}})
    if (v.count() < 0) throw StoreError(label_ + ": " + name + " must not be negative");
}

HttpClient::~HttpClient() {
  for (CURL* h : idle_) curl_easy_cleanup(h);
}

CURL* HttpClient::acquire() const {
  {
    std::lock_guard lk(mu_);
    if (!idle_.empty()) {
      CURL* h = idle_.back();
      idle_.pop_back();
      return h;
    }
  }
  CURL* h = curl_easy_init();
  if (!h) throw StoreError(label_ + ": cannot create a libcurl handle");
  return h;
}

void HttpClient::release(CURL* h) const {
  {
    std::lock_guard lk(mu_);
    if (idle_.size() < options_.max_idle_connections) {
      idle_.push_back(h);
      return;
    }
  }
  curl_easy_cleanup(h);
}

std::string HttpClient::failure_prefix(const HttpRequest& req, int attempts) const {
  return label_ + " " + req.method + " " + req.url + " failed" +
         (attempts > 1 ? " after " + std::to_string(attempts) + " attempts" : std::string()) + ": ";
}

CURLcode HttpClient::perform_once(CURL* h, const HttpRequest& req, HttpResponse& resp, char* errbuf) const {
  curl_easy_reset(h);  // keeps the connection cache
  errbuf[0] = '\0';
  Sink sink{&resp, req.method == "HEAD"};
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
#else
  curl_easy_setopt(h, CURLOPT_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
  curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, static_cast<long>(CURLPROTO_HTTP | CURLPROTO_HTTPS));
#endif
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(options_.connect_timeout.count()));
  if (options_.timeout.count() > 0) curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout.count()));
  if (options_.stall_timeout.count() > 0) {
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
    curl_easy_setopt(h, CURLOPT_LOW_SPEED_TIME, static_cast<long>((options_.stall_timeout.count() + 999) / 1000));
  }
  if (!options_.user_agent.empty()) curl_easy_setopt(h, CURLOPT_USERAGENT, options_.user_agent.c_str());
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, options_.verify_tls ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, options_.verify_tls ? 2L : 0L);
  if (!options_.ca_file.empty()) curl_easy_setopt(h, CURLOPT_CAINFO, options_.ca_file.c_str());
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, req.follow_redirects ? 1L : 0L);
  curl_easy_setopt(h, CURLOPT_MAXREDIRS, 5L);

  static const char empty_body[1] = {0};
  if (req.method == "GET") {
    curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  } else if (req.method == "HEAD") {
    curl_easy_setopt(h, CURLOPT_NOBODY, 1L);
  } else if (req.method == "PUT" || req.method == "POST") {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    curl_easy_setopt(h, CURLOPT_POSTFIELDS,
                     req.body.empty() ? empty_body : reinterpret_cast<const char*>(req.body.data()));
    if (req.method == "PUT") curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "PUT");
  } else {
    curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
  }

  struct curl_slist* list = nullptr;
  for (const auto& hd : req.headers) {
    struct curl_slist* next = curl_slist_append(list, hd.c_str());
    if (!next) {
      curl_slist_free_all(list);
      return CURLE_OUT_OF_MEMORY;
    }
    list = next;
  }
  if (list) curl_easy_setopt(h, CURLOPT_HTTPHEADER, list);
  if (!req.aws_sigv4.empty()) {
    curl_easy_setopt(h, CURLOPT_AWS_SIGV4, req.aws_sigv4.c_str());
    curl_easy_setopt(h, CURLOPT_USERNAME, req.username.c_str());
    curl_easy_setopt(h, CURLOPT_PASSWORD, req.password.c_str());
  }
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &sink);

  const CURLcode rc = curl_easy_perform(h);
  long status = 0;
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
  resp.status = status;
  char* effective = nullptr;
  if (curl_easy_getinfo(h, CURLINFO_EFFECTIVE_URL, &effective) == CURLE_OK && effective) resp.effective_url = effective;
  if (resp.reason.empty()) resp.reason = standard_reason(status);
  // Unhook everything that lives on this stack frame or in the request before the handle is
  // pooled (the header list is freed here; curl must not write to the error buffer later).
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, static_cast<struct curl_slist*>(nullptr));
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, static_cast<char*>(nullptr));
  curl_easy_setopt(h, CURLOPT_WRITEDATA, static_cast<void*>(nullptr));
  curl_easy_setopt(h, CURLOPT_HEADERDATA, static_cast<void*>(nullptr));
  curl_slist_free_all(list);
  return rc;
}

HttpResponse HttpClient::perform(const HttpRequest& req) const {
  bool ambiguous = false;
  auto delay = options_.retry_initial_delay;
  for (int attempt = 1;; ++attempt) {
    HttpResponse resp;
    char errbuf[CURL_ERROR_SIZE];
    CURL* h = acquire();
    CURLcode rc;
    curl_off_t retry_after = 0;
    try {
      rc = perform_once(h, req, resp, errbuf);
      curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &retry_after);
    } catch (...) {
      curl_easy_cleanup(h);
      throw;
    }
    if (rc != CURLE_OK) {
      // A handle whose transfer failed may hold a broken connection: do not pool it.
      curl_easy_cleanup(h);
    } else {
      release(h);
    }
    const bool last = attempt >= options_.max_attempts;
    if (rc != CURLE_OK) {
      if (!transient_curl_error(rc) || last) {
        std::string msg = failure_prefix(req, attempt) + curl_easy_strerror(rc);
        if (errbuf[0]) msg += std::string(" (") + errbuf + ")";
        throw StoreError(msg);
      }
      ambiguous = ambiguous || maybe_applied(rc);
    } else {
      const bool retry = retryable_status(resp.status) ||
                         std::find(req.extra_retry_statuses.begin(), req.extra_retry_statuses.end(), resp.status) !=
                             req.extra_retry_statuses.end();
      if (!retry || last) {
        resp.attempts = attempt;
        resp.ambiguous = ambiguous;
        return resp;
      }
      ambiguous = ambiguous || resp.status == 500 || resp.status == 502 || resp.status == 504;
    }
    // Exponential backoff with "equal jitter": half the delay fixed, half random.
    auto wait = delay;
    if (retry_after > 0) wait = std::max(wait, std::chrono::milliseconds(retry_after * 1000));
    wait = std::min(wait, options_.retry_max_delay);
    const auto half = wait.count() / 2;
    const auto jitter = half > 0 ? std::uniform_int_distribution<long long>(0, half)(jitter_rng) : 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(wait.count() - half + jitter));
    delay = std::min(delay * 2, options_.retry_max_delay);
  }
}

// ---- byte ranges --------------------------------------------------------------------------------

RangePlan plan_range(const ByteRange& r) {
  RangePlan p;
  switch (r.kind) {
    case ByteRange::Kind::All:
      p.whole = true;
      return p;
    case ByteRange::Kind::FromOffset:
      if (r.length && *r.length == 0) {
        p.empty = true;
      } else if (!r.length && r.offset == 0) {
        p.whole = true;
      } else if (r.length && *r.length - 1 <= std::numeric_limits<std::uint64_t>::max() - r.offset) {
        p.header = "Range: bytes=" + std::to_string(r.offset) + "-" + std::to_string(r.offset + *r.length - 1);
      } else {
        p.header = "Range: bytes=" + std::to_string(r.offset) + "-";
      }
      return p;
    case ByteRange::Kind::Suffix:
      if (r.suffix == 0) p.empty = true;
      else p.header = "Range: bytes=-" + std::to_string(r.suffix);
      return p;
  }
  p.whole = true;
  return p;
}

namespace {
Bytes slice(const Bytes& body, std::uint64_t b, std::uint64_t e) {
  return Bytes(body.begin() + static_cast<std::ptrdiff_t>(b), body.begin() + static_cast<std::ptrdiff_t>(e));
}

// "bytes a-b/total" or "bytes a-b/*".
bool parse_content_range(std::string_view v, std::uint64_t& a, std::uint64_t& b, std::optional<std::uint64_t>& total) {
  auto number = [](std::string_view s, std::uint64_t& out) {
    if (s.empty() || s.size() > 20) return false;
    out = 0;
    for (char c : s) {
      if (c < '0' || c > '9') return false;
      const std::uint64_t d = static_cast<std::uint64_t>(c - '0');
      if (out > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
      out = out * 10 + d;
    }
    return true;
  };
  if (!v.starts_with("bytes ")) return false;
  v.remove_prefix(6);
  const std::size_t dash = v.find('-'), slash = v.find('/');
  if (dash == std::string_view::npos || slash == std::string_view::npos || dash > slash) return false;
  if (!number(v.substr(0, dash), a) || !number(v.substr(dash + 1, slash - dash - 1), b) || b < a) return false;
  const std::string_view t = v.substr(slash + 1);
  if (t == "*") {
    total.reset();
  } else {
    std::uint64_t n = 0;
    if (!number(t, n) || n <= b) return false;
    total = n;
  }
  return true;
}
}  // namespace

Bytes take_range(HttpResponse& resp, const ByteRange& r, const std::string& what) {
  if (resp.status == 416) return {};
  if (resp.status != 206) {
    // The whole value (the server ignored Range, or none was sent).
    if (r.kind == ByteRange::Kind::All) return std::move(resp.body);
    const auto [b, e] = r.resolve(resp.body.size());
    return slice(resp.body, b, e);
  }
  const std::string* cr = resp.header("content-range");
  std::uint64_t a = 0, last = 0;
  std::optional<std::uint64_t> total;
  if (!cr || !parse_content_range(*cr, a, last, total))
    throw StoreError(what + "206 Partial Content with " +
                     (cr ? "an unreadable Content-Range '" + *cr + "'" : std::string("no Content-Range")));
  if (resp.body.size() != last - a + 1)
    throw StoreError(what + "Content-Range '" + *cr + "' announces " + std::to_string(last - a + 1) + " bytes, got " +
                     std::to_string(resp.body.size()));
  std::uint64_t want_b = a, want_e = last + 1;
  if (total) {
    std::tie(want_b, want_e) = r.resolve(*total);
  } else if (r.kind == ByteRange::Kind::FromOffset) {
    want_b = r.offset;
    if (r.length && want_b < want_e && *r.length < want_e - want_b) want_e = want_b + *r.length;
  }
  if (want_b >= want_e) return {};
  if (want_b < a || want_e > last + 1)
    throw StoreError(what + "asked for bytes " + std::to_string(want_b) + ".." + std::to_string(want_e) +
                     ", the server sent Content-Range '" + *cr + "'");
  return slice(resp.body, want_b - a, want_e - a);
}

}  // namespace zarrpp::detail
