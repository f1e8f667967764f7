#pragma once
/// @file
/// Opening a store from a URL.
///
///   "s3://bucket"                  S3Store on the whole bucket
///   "s3://bucket/path/in/bucket"   S3Store rooted at that prefix (endpoint, region and credentials
///                                  from OpenStoreOptions::s3, else the AWS_* environment variables)
///   "az://container/path"          AzureStore rooted at that prefix ("abfs://" too, and
///                                  "abfs://container@ACCOUNT.dfs.core.windows.net/path"; account,
///                                  endpoint and credentials from OpenStoreOptions::azure, else a
///                                  connection string or the AZURE_STORAGE_* environment variables)
///   "https://ACCOUNT.blob.core.windows.net/container/path"
///                                  AzureStore on that account (a "?SAS" query is its token)
///   "gs://bucket/path"             Google Cloud Storage ("gcs://" too; see gcs.hpp): public data
///                                  read over HTTPS, or an S3Store on GCS's XML API with HMAC keys
///   "http://host:port/path"        HttpStore (read-only) rooted at the URL
///   "https://host/path?query"      HttpStore; the query is sent with every request
///   "file:///abs/path"             a local path ("file://localhost/..." too; percent-escapes are
///                                  decoded), as below
///   "/abs/path", "rel/path"        FileStore on that directory; a zip file, or a folder inside one
///                                  ("data.zip/group/array"), is a ZipStore (under a PrefixStore)
///   "memory://NAME/path"           the process-wide MemoryStore NAME (MemoryStore::named), at path
///
/// Local paths mean what the operating system says (os_path: ".." after a symbolic link goes up
/// from its target). The URL always names the store root, which is the node itself:
/// Array::open(open_store(url)) opens the array the URL points at. Anything else, e.g. "hdfs://..."
/// or "s3://" without a bucket, throws StoreError naming the URL. This is the one reading of a
/// store string: the CLI's arguments and Python's store= strings are resolved here.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "zarrpp/store/azure_store.hpp"
#include "zarrpp/store/file_store.hpp"
#include "zarrpp/store/gcs.hpp"
#include "zarrpp/store/http_store.hpp"
#include "zarrpp/store/s3_store.hpp"
#include "zarrpp/store/store.hpp"
#include "zarrpp/store/zip_store.hpp"

namespace zarrpp {

/// What open_store needs besides the URL: credentials, endpoint, headers and network bounds.
struct OpenStoreOptions {
  FileStore::Options file{};    ///< file:// and plain paths (by default a missing directory is made by the first write)
  HttpStore::Options http{};    ///< http:// and https://
  S3Store::Options s3{};        ///< s3:// (bucket and prefix come from the URL)
  AzureStore::Options azure{};  ///< az://, abfs:// and Azure blob URLs (container and prefix come from the URL)
  GcsOptions gcs{};             ///< gs:// (bucket and path come from the URL)
  /// Paths into zip files (read-only when `file.read_only`).
  ZipStore::Options zip{ZipStore::Mode::append};
  /// With `file.create`: a path whose first missing part ends in ".zip" is a new zip file (made
  /// at its first commit; the folders above it now), as zarr-python 2 and the CLI take such paths;
  /// otherwise it is a directory of that name, as zarr-python 3 takes it.
  bool new_zip_files = false;
  bool memory = true;  ///< memory:// is taken (the CLI refuses it: its stores end with the process)
};

/// Where a store string points, before anything is opened (what resolve_store opens; front ends
/// that make their own store objects, as Python does, make them from this).
struct StoreLocation {
  /// What kind of store the string names.
  enum class Kind : std::uint8_t {
    directory,  ///< a local directory: `path`
    zip,        ///< a zip file `path`, at the folder `inner` inside it
    memory,     ///< the named memory store `name`, at the folder `inner`
    http,       ///< http:// or https://: the string itself
    s3,         ///< s3://: the string itself
    azure,      ///< az://, abfs://, https://ACCOUNT.blob.core.windows.net/...: the string itself
    gcs         ///< gs://, gcs://: the string itself
  };
  Kind kind = Kind::directory;                        ///< which of them
  std::filesystem::path path{};                       ///< directory, zip: the local path (an os_path)
  std::string inner{};                                ///< zip, memory: the folder inside ("" for the root)
  std::string name{};                                 ///< memory: the store's name
  bool new_zip = false;                               ///< zip: the file does not exist yet
  std::vector<std::filesystem::path> missing_dirs{};  ///< zip: folders to make above a new file
};

/// Where `url` points (see the top of this file): local paths through os_path, paths into zip
/// files (a new one only with `new_zip_files`), file:// decoded. Throws StoreError for a string
/// that names no store (an unknown scheme, a file URL on another host, memory:// without a name).
StoreLocation locate_store(const std::string& url, bool new_zip_files = false);

/// What a store string resolved to.
struct ResolvedStore {
  StorePtr store{};                                ///< the store at the node the string names
  std::shared_ptr<ZipStore> zip{};                 ///< the zip file the path goes into, for its owner to close; or null
  bool zip_made = false;                           ///< that zip file is new (OpenStoreOptions::new_zip_files)
  std::vector<std::filesystem::path> made_dirs{};  ///< folders made above a new zip file, deepest first
};

/// The store a string names (see the top of this file), with what a zip file needs of its owner:
/// open_location(locate_store(url, ...), url, options).
ResolvedStore resolve_store(const std::string& url, const OpenStoreOptions& options);
/// Opens what locate_store found for `url` (for callers that look at the location first, as the
/// CLI does, without resolving the string twice).
ResolvedStore open_location(const StoreLocation& at, const std::string& url, const OpenStoreOptions& options);

/// @{
/// The store a URL names (see the top of this file); `options` for credentials, headers and the
/// network bounds.
StorePtr open_store(const std::string& url);
StorePtr open_store(const std::string& url, const OpenStoreOptions& options);
/// @}

}  // namespace zarrpp
