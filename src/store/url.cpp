#include "zarrpp/store/url.hpp"

#include <algorithm>

#include "remote/encoding.hpp"
#include "zarrpp/core/error.hpp"

namespace zarrpp {

namespace {

// The scheme of "scheme://...", lower-cased; "" when `url` does not start with one.
std::string scheme_of(const std::string& url) {
  const std::size_t sep = url.find("://");
  if (sep == std::string::npos || sep == 0) return "";
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(url[0])) return "";
  for (std::size_t i = 1; i < sep; ++i) {
    const char c = url[i];
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return "";
  }
  std::string s = url.substr(0, sep);
  std::transform(s.begin(), s.end(), s.begin(),
                 [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); });
  return s;
}

}  // namespace

StorePtr open_store(const std::string& url) { return open_store(url, OpenStoreOptions{}); }

StorePtr open_store(const std::string& url, const OpenStoreOptions& options) {
  if (url.empty()) throw StoreError("open_store: empty URL");
  const std::string scheme = scheme_of(url);
  if (scheme.empty()) {
    if (url.rfind("file:", 0) == 0)
      throw StoreError("open_store: '" + url + "' is not a usable file URL (write file:///absolute/path)");
    return FileStore::open(url, options.file);
  }
  const std::string rest = url.substr(scheme.size() + 3);
  if (scheme == "http" || scheme == "https") return HttpStore::open(url, options.http);
  if (scheme == "s3") {
    if (rest.find_first_of("?#") != std::string::npos)
      throw StoreError("open_store: '" + url + "': s3 URLs take no query or fragment (set S3Store::Options instead)");
    const std::size_t slash = rest.find('/');
    S3Store::Options o = options.s3;
    o.bucket = rest.substr(0, slash);
    o.prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (o.bucket.empty()) throw StoreError("open_store: '" + url + "' names no bucket (write s3://bucket/path)");
    return S3Store::open(std::move(o));
  }
  if (scheme == "file") {
    if (rest.find_first_of("?#") != std::string::npos)
      throw StoreError("open_store: '" + url + "': file URLs take no query or fragment");
    const std::size_t slash = rest.find('/');
    const std::string host = rest.substr(0, slash);
    if (!host.empty() && host != "localhost")
      throw StoreError("open_store: '" + url + "': file URLs on another host ('" + host + "') are not supported");
    if (slash == std::string::npos)
      throw StoreError("open_store: '" + url + "' has no path (write file:///absolute/path)");
    const std::string path = detail::percent_decode(rest.substr(slash), "open_store: '" + url + "'");
    if (path.find('\0') != std::string::npos)
      throw StoreError("open_store: '" + url + "' decodes to a path with a NUL byte");
    return FileStore::open(path, options.file);
  }
  throw StoreError("open_store: unsupported URL scheme '" + scheme + "' in '" + url +
                   "' (supported: s3://, http://, https://, file:// and plain paths)");
}

}  // namespace zarrpp
