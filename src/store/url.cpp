#include "zarrpp/store/url.hpp"

#include <algorithm>

#include "remote/encoding.hpp"
#include "zarrpp/core/error.hpp"
#include "zarrpp/store/local_path.hpp"
#include "zarrpp/store/memory_store.hpp"
#include "zarrpp/store/prefix_store.hpp"

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

// file://[localhost]/path, percent-decoded.
std::string file_url_path(const std::string& url, const std::string& rest) {
  if (rest.find_first_of("?#") != std::string::npos)
    throw StoreError("open_store: '" + url + "': file URLs take no query or fragment");
  const std::size_t slash = rest.find('/');
  const std::string host = rest.substr(0, slash);
  if (!host.empty() && host != "localhost")
    throw StoreError("open_store: '" + url + "': file URLs on another host ('" + host + "') are not supported");
  if (slash == std::string::npos)
    throw StoreError("open_store: '" + url + "' has no path (write file:///absolute/path)");
  std::string path = detail::percent_decode(rest.substr(slash), "open_store: '" + url + "'");
  if (path.find('\0') != std::string::npos)
    throw StoreError("open_store: '" + url + "' decodes to a path with a NUL byte");
  return path;
}

// Whether an http(s) URL is an Azure blob service's ("https://ACCOUNT.blob.core.windows.net/...").
bool azure_blob_url(const std::string& rest) {
  const std::string host = rest.substr(0, rest.find_first_of("/?#"));
  constexpr std::string_view suffix = ".blob.core.windows.net";
  return host.size() > suffix.size() && host.ends_with(suffix);
}

// The AzureStore an az://, abfs:// or Azure https URL names, `o` filling in the rest.
StorePtr open_azure(const std::string& url, AzureStore::Options o) {
  const std::string scheme = scheme_of(url);
  std::string rest = url.substr(scheme.size() + 3);
  if (scheme == "https" || scheme == "http") {
    const auto q = rest.find('?');
    if (q != std::string::npos) {
      if (!o.sas_token) o.sas_token = rest.substr(q + 1);
      rest.resize(q);
    }
    const auto slash = rest.find('/');
    const std::string host = rest.substr(0, slash);
    if (!o.account_name) o.account_name = host.substr(0, host.find('.'));
    if (!o.endpoint) o.endpoint = scheme + "://" + host;
    // The URL's path is percent-encoded ("my%20dir" names the folder "my dir").
    rest = slash == std::string::npos
               ? ""
               : detail::percent_decode(rest.substr(slash + 1), "open_store: '" + detail::redact_url(url) + "'");
  } else if (rest.find_first_of("?#") != std::string::npos) {
    throw StoreError("open_store: '" + detail::redact_url(url) + "': " + scheme +
                     " URLs take no query or fragment (set AzureStore::Options instead)");
  }
  const std::size_t slash = rest.find('/');
  std::string container = rest.substr(0, slash);
  // abfs://container@ACCOUNT.dfs.core.windows.net/path (adlfs's spelling): the account from the host.
  if (const auto at = container.find('@'); at != std::string::npos) {
    const std::string host = container.substr(at + 1);
    if (!o.account_name) o.account_name = host.substr(0, host.find('.'));
    container.resize(at);
  }
  if (container.empty())
    throw StoreError("open_store: '" + detail::redact_url(url) + "' names no container (write az://container/path)");
  o.container = container;
  o.prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
  return AzureStore::open(std::move(o));
}

}  // namespace

StorePtr open_store(const std::string& url) { return open_store(url, OpenStoreOptions{}); }

StorePtr open_store(const std::string& url, const OpenStoreOptions& options) {
  return resolve_store(url, options).store;
}

StoreLocation locate_store(const std::string& url, bool new_zip_files) {
  if (url.empty()) throw StoreError("open_store: empty URL");
  const std::string scheme = scheme_of(url);
  std::string path = url;
  if (scheme.empty() && url.rfind("file:", 0) == 0)
    throw StoreError("open_store: '" + url + "' is not a usable file URL (write file:///absolute/path)");
  const std::string rest = scheme.empty() ? "" : url.substr(scheme.size() + 3);
  if (scheme == "file") {
    path = file_url_path(url, rest);
  } else if (scheme == "memory") {
    const std::size_t slash = rest.find('/');
    StoreLocation m{.kind = StoreLocation::Kind::memory, .name = rest.substr(0, slash)};
    if (m.name.empty())
      throw StoreError("open_store: '" + url + "' names no store (write memory://NAME or memory://NAME/PATH)");
    std::string inner = slash == std::string::npos ? "" : rest.substr(slash + 1);
    while (!inner.empty() && inner.back() == '/') inner.pop_back();
    while (!inner.empty() && inner.front() == '/') inner.erase(0, 1);
    m.inner = inner;
    return m;
  } else if (scheme == "http" || scheme == "https") {
    return {.kind = azure_blob_url(rest) ? StoreLocation::Kind::azure : StoreLocation::Kind::http};
  } else if (scheme == "az" || scheme == "abfs" || scheme == "abfss") {
    return {.kind = StoreLocation::Kind::azure};
  } else if (scheme == "gs" || scheme == "gcs") {
    return {.kind = StoreLocation::Kind::gcs};
  } else if (scheme == "s3") {
    return {.kind = StoreLocation::Kind::s3};
  } else if (!scheme.empty()) {
    throw StoreError(
        "open_store: unsupported URL scheme '" + scheme + "' in '" + detail::redact_url(url) +
        "' (supported: s3://, az://, abfs://, gs://, http://, https://, file://, memory:// and plain paths)");
  }
  if (const auto z = find_zip_path(path, new_zip_files))
    return {.kind = StoreLocation::Kind::zip,
            .path = z->archive,
            .inner = z->inner,
            .new_zip = z->new_archive,
            .missing_dirs = z->missing_dirs};
  return {.kind = StoreLocation::Kind::directory, .path = os_path(path)};
}

namespace {

// The zip file `at` names, opened (the folders above a new one made), at its folder.
ResolvedStore open_zip(const StoreLocation& at, const OpenStoreOptions& options) {
  ResolvedStore r{.zip_made = at.new_zip};
  for (const auto& dir : at.missing_dirs) {
    std::error_code ec;
    if (!std::filesystem::create_directory(dir, ec) && ec)
      throw StoreError("cannot create the folder " + dir.string() + ": " + ec.message());
    r.made_dirs.insert(r.made_dirs.begin(), dir);
  }
  ZipStore::Options zo = options.zip;
  if (options.file.read_only) zo.mode = ZipStore::Mode::read;
  r.zip = ZipStore::open(at.path, zo);
  r.store = at.inner.empty() ? StorePtr(r.zip) : PrefixStore::at(r.zip, at.inner);
  return r;
}

}  // namespace

ResolvedStore resolve_store(const std::string& url, const OpenStoreOptions& options) {
  return open_location(locate_store(url, options.new_zip_files && options.file.create), url, options);
}

ResolvedStore open_location(const StoreLocation& at, const std::string& url, const OpenStoreOptions& options) {
  switch (at.kind) {
    case StoreLocation::Kind::directory:
      // The path as typed: FileStore resolves it as the OS does, and names it so in its messages.
      return {.store = FileStore::open(scheme_of(url).empty() ? std::filesystem::path(url) : at.path, options.file)};
    case StoreLocation::Kind::zip:
      return open_zip(at, options);
    case StoreLocation::Kind::memory: {
      if (!options.memory)
        throw StoreError(
            "'" + url +
            "': a memory:// store lives only as long as its process, so it is not taken here (nothing would be kept)");
      StorePtr s = MemoryStore::named(at.name);
      return {.store = at.inner.empty() ? s : PrefixStore::at(s, at.inner)};
    }
    case StoreLocation::Kind::http:
      return {.store = HttpStore::open(url, options.http)};
    case StoreLocation::Kind::azure:
      return {.store = open_azure(url, options.azure)};
    case StoreLocation::Kind::gcs: {
      std::string rest = url.substr(url.find("://") + 3);
      if (rest.find_first_of("?#") != std::string::npos)
        throw StoreError("open_store: '" + url + "': gs URLs take no query or fragment (set GcsOptions instead)");
      const std::size_t slash = rest.find('/');
      std::string path = slash == std::string::npos ? "" : rest.substr(slash + 1);
      while (!path.empty() && path.back() == '/') path.pop_back();
      return {.store = open_gcs(rest.substr(0, slash), path, options.gcs)};
    }
    case StoreLocation::Kind::s3:
      break;
  }
  const std::string rest = url.substr(5);  // after "s3://"
  if (rest.find_first_of("?#") != std::string::npos)
    throw StoreError("open_store: '" + url + "': s3 URLs take no query or fragment (set S3Store::Options instead)");
  const std::size_t slash = rest.find('/');
  S3Store::Options o = options.s3;
  o.bucket = rest.substr(0, slash);
  o.prefix = slash == std::string::npos ? "" : rest.substr(slash + 1);
  if (o.bucket.empty()) throw StoreError("open_store: '" + url + "' names no bucket (write s3://bucket/path)");
  return {.store = S3Store::open(std::move(o))};
}

}  // namespace zarrpp
